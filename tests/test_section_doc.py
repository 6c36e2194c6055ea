"""The extract stage reads a section as :func:`pipeline.nlp.parse_section` gives it: entities,
sentence spans and (Chinese) jieba tokens.

jieba, spaCy and OpenCC run for real; nothing is mocked. One test wraps jieba's ``cut`` in a
counter that calls the real function, one the entity finder in a filter of the real one's entities.
"""

from __future__ import annotations

import pytest

from pipeline import keywords as kw
from pipeline import nlp
from pipeline.config import Config
from pipeline.extract import extract_fields

SECTION = """论文 1：Visual Autoregressive Modeling

作者：田柯宇、蒋毅、袁泽寰

机构：北京大学、字节跳动

🏆 NeurIPS 2024 · Best Paper Runner-Up

本文提出视觉自回归建模（VAR），将图像上的自回归学习重新定义为从粗到细的“下一尺度预测”。VAR 首次使类 GPT 的自回归模型在图像生成上超越扩散 Transformer。"""


def _row(text: str, lang: str = "zh-Hans", **extra: object) -> dict:
    return {"heading": text.split("\n", 1)[0], "text": text, "ctx_award_raw": None, "lead_award_raw": None,
            "doc_venue": None, "doc_year": None, "lang": lang, **extra}


def _lines(text: str) -> str:
    return "\n".join(ln.strip() for ln in text.split("\n") if ln.strip())


def test_key_entity_line_becomes_the_authors_field(monkeypatch: pytest.MonkeyPatch) -> None:
    section = nlp.parse_section(_lines(SECTION), "zh-Hans")
    keys = {e.value: e for e in section.entities if e.label == "KEY"}
    assert keys["authors"].text == "作者" and section.text[keys["authors"].start - 1] == "\n"  # at a line start
    out = extract_fields(_row(SECTION), "zh-Hans", Config())
    assert out["authors"] == ["田柯宇", "蒋毅", "袁泽寰"]
    assert out["institutions"] == ["北京大学", "字节跳动"]
    # without KEY entities the line is body text
    real = nlp._find_entities
    monkeypatch.setattr(nlp, "_find_entities", lambda text: [e for e in real(text) if e.label != "KEY"])
    bare = extract_fields(_row(SECTION), "zh-Hans", Config())
    assert bare["authors"] == [] and "作者：田柯宇" in bare["summary"]


def test_award_and_venue_entities_of_an_award_header_line() -> None:
    found = [(e.label, e.text, e.value) for e in nlp.parse_section(_lines(SECTION), "zh-Hans").entities
             if e.label != "KEY"]
    assert ("VENUE", "NeurIPS 2024", "NeurIPS 2024") in found
    assert ("AWARD", "Best Paper Runner-Up", "best_paper_runner_up") in found
    out = extract_fields(_row(SECTION), "zh-Hans", Config())
    assert (out["venue"], out["year"]) == ("NeurIPS", 2024)
    assert (out["award_raw"], out["award"]) == ("Best Paper Runner-Up", "best_paper_runner_up")


def test_award_stated_in_the_first_paragraph_is_an_award_entity() -> None:
    text = "Some Paper Title\n该论文获得了 ICML 2025 杰出论文奖，研究者提出了一种新的采样方法。\n第二段。"
    section = nlp.parse_section(_lines(text), "zh-Hans")
    line = section.text.index("该论文")
    stated = nlp.stated_award(section, line, section.text.index("\n", line))
    assert stated is not None and stated.text == "杰出论文奖"
    out = extract_fields(_row(text), "zh-Hans", Config())
    assert (out["award_raw"], out["award"]) == ("杰出论文奖", "outstanding_paper")


def test_traditional_section_doc_is_simplified_with_entities_as_written() -> None:
    text = "論文 2：Vision Transformers Need Registers\n機構：Meta、Inria\n論文連結：https://arxiv.org/abs/2309.16588\n" \
           "研究者發現 ViT 會把一些背景 patch 挪作內部計算之用，並加入可學習的「暫存器」token。"
    section = nlp.parse_section(_lines(text), "zh-Hant")
    assert "机构" in section.text and len(section.text) == len(_lines(text))  # jieba sees zh-Hans, same offsets
    keys = [(e.text, e.value) for e in section.entities if e.label == "KEY"]
    assert ("機構", "institutions") in keys and ("論文連結", "paper_url") in keys  # as written
    out = extract_fields(_row(text, "zh-Hant"), "zh-Hant", Config())
    assert "論文連結" not in (out["summary"] or "")  # a metadata line, not body
    assert out["arxiv_id"] == "2309.16588"


def test_summary_cut_keeps_book_titles_and_urls_whole() -> None:
    first = "研究者在《走向通用智能。第二版！》中回顾了强化学习的进展。"
    second = "代码见 https://example.org/repo?id=1.2!x 并已开源。"
    third = "第三句话很长，" * 20 + "到此为止。"
    text = f"Some Paper Title\n{first}{second}{third}"
    config = Config()
    config.extract.summary_max_chars = len(first + second) + 5
    out = extract_fields(_row(text), "zh-Hans", config)
    assert out["summary"] == first + second
    section = nlp.parse_section(_lines(text), "zh-Hans")
    assert [section.text[a:b] for a, b in section.sentence_spans()][1:3] == [first, second]


def test_keywords_read_the_section_tokens_and_jieba_runs_once_per_section(monkeypatch: pytest.MonkeyPatch) -> None:
    import jieba

    tok = nlp._jieba_tokenizer()
    calls: list[str] = []
    real_cut = tok.cut

    def counting_cut(sentence, *args, **kwargs):
        calls.append(sentence)
        return real_cut(sentence, *args, **kwargs)

    monkeypatch.setattr(tok, "cut", counting_cut)
    out = extract_fields(_row(SECTION), "zh-Hans", Config())
    # the tokenizer cuts Han blocks of the section, each once (blocks cut before: not again)
    assert all(jieba.re_han_default.fullmatch(s) and s in _lines(SECTION) for s in calls)
    assert len(calls) == len(set(calls))
    calls.clear()
    assert extract_fields(_row(SECTION), "zh-Hans", Config()) == out
    assert calls == []
    assert {"自回归模型", "下一尺度预测"} <= set(out["keywords"])
    # the section's tokens give the keywords jieba gives the text
    text = _lines(SECTION)
    topic, tokens = nlp.parse_section(text, "zh-Hans").topic([(0, len(text))])
    calls.clear()
    from_tokens = kw.keywords(topic, "zh-Hans", 8, tokens)
    assert calls == []
    assert from_tokens == kw.keywords(text, "zh-Hans", 8)


def test_english_pipeline_is_built_once_per_process() -> None:
    en = nlp.en_nlp()
    extract_fields(_row(SECTION), "zh-Hans", Config())
    extract_fields(_row("A Title\nAuthors: Ann Lee, Bo Chen\nWe study things. It works."), "zh-Hans", Config())
    assert nlp.en_nlp() is en and nlp.en_nlp.cache_info().currsize == 1


def test_topic_cuts_tokens_to_segments() -> None:
    text, spans = nlp.parse_section("标题：扩散模型\n作者：张三", "zh-Hans").topic([(3, 7)])
    assert text == "扩散模型"
    assert [text[a:b] for a, b in spans] == ["扩散模型"]


# English sentences come from the rules without tokens where they can: the same spans as over
# spaCy's tokens

ENGLISH_EDGES = [
    "Won the Outstanding Paper Award at ICML 2025. The authors (e.g. J. Smith et al.) show it.\nnext line goes on",
    "Authors: Ann Lee, Bo Chen\nAbstract: We study X.  Then Y!  \n\nA new paragraph? Yes. ",
    " Leading space. Then more.\tTabbed start. End.",
    "Quoted \"Stop.\" Next. (Aside.) After. See https://arxiv.org/abs/2501.00001. Done.",
    "Non-breaking.\u00a0Next one.\u2003Em space. Ideographic.\u3000Last.",
    "x ",
    "",
]


@pytest.mark.parametrize("text", ENGLISH_EDGES)
def test_english_sentence_spans_without_tokens_are_those_over_the_tokens(text: str) -> None:
    doc = nlp.en_nlp().make_doc(text)
    starts = [t.idx for t in doc]
    want = nlp._spans_of_tokens(text, starts, [t.idx + len(t) for t in doc])
    assert nlp.parse_section(text, "en").sentence_spans() == want


def test_english_sentences_come_from_the_rules_where_every_start_follows_whitespace() -> None:
    text = "First one. Second one!  Third?\nfourth goes on.\n\nFifth."
    # one space after a sentence is its last token's whitespace; a second space, "\n" or "\n\n"
    # is a token of its own, which ends the sentence (spaCy's tokens: ..., "!", " ", "Third", ...)
    assert nlp.ParsedSection(text, [], None)._spans_without_tokens() == [(0, 10), (11, 24), (24, 48), (48, 54)]
    glued = "First。Second."  # a start glued to the mark before it: read from the tokens
    assert nlp.ParsedSection(glued, [], None)._spans_without_tokens() is None
    assert nlp.parse_section(glued, "en").sentence_spans() == [(0, 13)]  # "First。Second" is one token


def test_an_english_award_sentence_gives_the_stated_award() -> None:
    text = "A Title\nThe paper won the Outstanding Paper Award at ICML 2025. It is about sampling."
    section = nlp.parse_section(text, "en")
    line = text.index("The paper")
    stated = nlp.stated_award(section, line, len(text))
    assert stated is not None and (stated.text, stated.value) == ("Outstanding Paper Award", "outstanding_paper")
    assert nlp.stated_award(section, text.index("It is"), len(text)) is None  # no award in that sentence
