"""The fast paths of :mod:`pipeline.nlp` give what the library calls they replace give.

* :func:`pipeline.nlp.zh_words_and_spaces` walks jieba's pieces itself and keeps each Han
  block's words: its words and spaces are those of jieba's ``Tokenizer.cut`` over the whole text
  aligned by spaCy's ``get_words_and_spaces`` (what spaCy's own ``ChineseTokenizer`` does);
* :meth:`pipeline.nlp.ParsedSection.topic` cuts tokens to segments without a loop per token;
* the award scans run only where a label can start.

jieba and spaCy run for real; texts are generated (hypothesis) from dictionary words and
characters of every class jieba's patterns tell apart.
"""

from __future__ import annotations

import jieba
from hypothesis import given, settings
from hypothesis import strategies as st
from spacy.util import get_words_and_spaces

from pipeline import nlp
from pipeline.fields import _GENERIC_AWARD_LABEL

#: Words of jieba's dictionary and of the user dictionary, so that generated texts hold real
#: multi-character words (and prefixes of them) next to each other.
_WORDS = ["扩散模型", "共形预测", "强化学习", "神经网络", "最佳论文奖", "杰出论文", "时间检验奖",
          "研究", "团队", "提出", "方法", "模型", "大语言模型", "注意力机制", "我们", "的", "了"]
#: Characters of each class: Han of jieba's range and outside it (CJK extension A, U+9FD6..,
#: compatibility ideographs, extension B), ASCII that jieba keeps in a block, other ASCII,
#: full-width forms, CJK punctuation, emoji and combining marks.
_CHARS = ("\u4e00\u9fd5\u9fd6\u9fff\u3400\u4db5\uf900\U00020000〇々"
          "aZ09+#&._%-" "!?,;:/()[]{}'\"@*" "ＡＺ０９＋" "，。！？；：「」《》“”（）、…—·"
          "😀🏆📄\ufe0f\u0301éαд한ひカ")
#: Whitespace pieces: jieba splits at each whitespace character (``\r\n`` together), spaCy
#: keeps one space after a word as its ``whitespace_``.
_SPACES = [" ", "  ", "\t", "\n", "\r\n", "\n\n", " \n ", "\u3000", "\xa0", "\x1c", "\u2028"]

_texts = st.lists(
    st.one_of(st.sampled_from(_WORDS), st.text(alphabet=_CHARS, min_size=1, max_size=4), st.sampled_from(_SPACES)),
    max_size=40,
).map("".join)


def _spacy_words_and_spaces(text: str) -> tuple[list[str], list[bool]]:
    """What spaCy's jieba ``ChineseTokenizer`` makes of ``text`` with our jieba tokenizer."""
    # (technical tokens such as "GPT-3.5" or "0.5" are kept whole: nlp.cut_protected)
    words = [w for w in nlp.cut_protected(nlp._jieba_tokenizer(), text, hmm=nlp.JIEBA_HMM) if w]
    return get_words_and_spaces(words, text)


def test_jieba_pieces_are_jiebas_blocks() -> None:
    assert jieba.re_han_default.pattern == f"([{nlp._JIEBA_HAN_CLASS}]+)"
    assert jieba.re_skip_default.pattern == "(\r\n|\\s)"  # every whitespace character is a piece


@settings(max_examples=400, deadline=None)
@given(_texts)
def test_zh_tokenizer_makes_the_words_and_spaces_of_jieba_and_spacy(text: str) -> None:
    want = _spacy_words_and_spaces(text)
    assert nlp.zh_words_and_spaces(text) == want
    assert nlp.zh_words_and_spaces(text) == want  # the second time from the block cache


def test_zh_tokenizer_on_edge_texts() -> None:
    for text in ["", " ", "\n", "  \n ", "扩散模型", " 扩散模型 ", "a b", "a  b", "x＋y ", "共形预测（CP）。\n\n  下一行"]:
        assert nlp.zh_words_and_spaces(text) == _spacy_words_and_spaces(text)


def _topic_by_tokens(section, segments):
    """:meth:`pipeline.nlp.ParsedSection.topic` read token by token."""
    text = section.text
    spans, pos = [], 0
    for s, e in segments:
        for a0, b0, sp in zip(*section.tokens, strict=True):
            a, b = max(a0, s), min(b0, e)
            if b > a and not sp:
                spans.append((a - s + pos, b - s + pos))
        pos += e - s + 1
    return "\n".join(text[s:e] for s, e in segments), spans


@settings(max_examples=200, deadline=None)
@given(_texts, st.lists(st.integers(min_value=0, max_value=200), max_size=8))
def test_topic_is_the_tokens_cut_to_the_segments(text: str, cuts: list[int]) -> None:
    section = nlp.parse_section(text, "zh-Hans")
    bounds = sorted({min(c, len(text)) for c in cuts})
    segments = list(zip(bounds[::2], bounds[1::2], strict=False))  # in order, not overlapping
    segments += [(0, len(text))] if not segments else []
    assert section.topic(segments) == _topic_by_tokens(section, segments)


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet="ABPaiprzwdeoz奖獎学金励获得最佳论文 \t\n-'’", max_size=40))
def test_generic_award_labels_hold_their_head(text: str) -> None:
    found = [m.group() for m in _GENERIC_AWARD_LABEL.finditer(text)]
    assert not found or nlp._GENERIC_AWARD_HEAD.search(text)
    assert all(nlp._GENERIC_AWARD_HEAD.search(f) for f in found)


def test_award_entities_with_and_without_generic_labels() -> None:
    assert [e.value for e in nlp._award_entities("荣获最佳论文奖，另获 Turing Award 提名")][:1] == ["best_paper"]
    assert nlp._award_entities("没有任何 award 字样") == []
    assert [e.text for e in nlp._award_entities("He received the Gordon Bell Prize.")] == ["Gordon Bell Prize"]


#: Pieces of award labels and their look-alikes, in both scripts and in English with odd case,
#: and characters that case-fold oddly (İ lower-cases to two characters; ı and ſ match i and s
#: under ``re.IGNORECASE``).
_AWARD_PIECES = ["最佳", "杰出", "傑出", "优秀", "優秀", "时间", "時間", "荣誉", "榮譽", "论文", "論文", "奖",
                 "獎", "亚军", "提名", "检验", "學生", "best", "BEST", "Best", "outstanding", "Outstanding",
                 "distinguished", "test", "Test", "of", "time", "Time", "honorable", "Honourable", "mention",
                 "runner", "Runners", "up", "-up", "paper", "Papers", "award", "Award", "Prize", "prize",
                 "bestest", "contest", "Turing", "Gordon Bell", "İ", "ı", "ſ", "beſt", "dıstinguished",
                 " ", "  ", "\n", "\t", "-", "（", "）", "(", ")", "，", "。", "x", "9", "_"]
_award_texts = st.lists(st.sampled_from(_AWARD_PIECES), max_size=30).map("".join)


@settings(max_examples=600, deadline=None)
@given(_award_texts)
def test_award_label_scans_find_what_finditer_finds(text: str) -> None:
    from pipeline.fields import _AWARD_LABEL

    def spans(ms):
        return [(m.start(), m.end(), m.group()) for m in ms]

    assert spans(nlp._award_label_matches(text)) == spans(_AWARD_LABEL.finditer(text))
    assert spans(nlp._generic_award_matches(text)) == spans(_GENERIC_AWARD_LABEL.finditer(text))


def test_award_label_scans_on_edge_texts() -> None:
    from pipeline.fields import _AWARD_LABEL

    for text in ["", "best", "xbest paper", "the Best Paper", "BEST PAPER AWARD", "beſt paper", "İ best paper",
                 "Outstanding Paper\nAward", "Runner-up", "最佳论文奖（Best Paper）", "Test of Time Award\n",
                 "获奖\n杰出论文奖励", "Gordon Bell Prize\nTuring Award", "ACM\nAward"]:
        assert [m.span() for m in nlp._award_label_matches(text)] == [m.span() for m in _AWARD_LABEL.finditer(text)]
        assert [m.span() for m in nlp._generic_award_matches(text)] == [
            m.span() for m in _GENERIC_AWARD_LABEL.finditer(text)]


_GENERIC_PIECES = ["奖", "獎", "奖励", "奖金", "获奖", "学", "年度", "最佳论文", "图灵", "诺贝尔物理学", "一二三四五六七",
                   "Award", "Awards", "Prize", "Gordon", "Bell", "ACM", "Test", "of", "the", "a", "'s", "’",
                   " ", "\t", "\n", "-", "，", "。", "1", "x"]


@settings(max_examples=600, deadline=None)
@given(st.lists(st.sampled_from(_GENERIC_PIECES), max_size=30).map("".join))
def test_generic_award_scan_finds_what_finditer_finds(text: str) -> None:
    want = [(m.start(), m.end()) for m in _GENERIC_AWARD_LABEL.finditer(text)]
    assert [(m.start(), m.end()) for m in nlp._generic_award_matches(text)] == want


@settings(max_examples=400, deadline=None)
@given(st.text(alphabet="中國国这這a1，。 \n\u3400\uf900😀", max_size=20), st.data())
def test_han_split_tells_a_han_for_han_rendering(text: str, data) -> None:
    # parse_section keeps a zh-Hans rendering of the same length when _HAN.split gives the same pieces:
    # exactly when every changed character is a Han one replaced by a Han one
    over = "".join(data.draw(st.sampled_from([c, "国", "x", "，"])) for c in text)
    by_char = not any(a != b and not (nlp._HAN.match(a) and nlp._HAN.match(b)) for a, b in zip(text, over, strict=True))
    assert (nlp._HAN.split(text) == nlp._HAN.split(over)) == by_char
