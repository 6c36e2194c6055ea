"""The fast paths of :func:`pipeline.nlp.parse` give what the library calls they replace give.

* the Chinese tokenizer (``_JiebaDocMaker``) walks jieba's pieces itself and keeps each Han
  block's words: its words and spaces are those of jieba's ``Tokenizer.cut`` over the whole text
  aligned by spaCy's ``get_words_and_spaces`` (what spaCy's own ``ChineseTokenizer`` does);
* :func:`pipeline.nlp.token_spans` cuts tokens to segments without a loop over ``Token`` objects;
* the generic award scan runs only on texts holding ``Award``/``Prize``/``奖``/``獎``.

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
    words = [w for w in nlp._jieba_tokenizer().cut(text, cut_all=False, HMM=nlp.JIEBA_HMM) if w]
    return get_words_and_spaces(words, text)


def test_jieba_pieces_are_jiebas_blocks() -> None:
    assert jieba.re_han_default.pattern == f"([{nlp._JIEBA_HAN_CLASS}]+)"
    assert jieba.re_skip_default.pattern == "(\r\n|\\s)"  # every whitespace character is a piece


@settings(max_examples=400, deadline=None)
@given(_texts)
def test_zh_tokenizer_makes_the_words_and_spaces_of_jieba_and_spacy(text: str) -> None:
    tokenizer = nlp.zh_nlp().tokenizer
    want = _spacy_words_and_spaces(text)
    assert tokenizer.words_and_spaces(text) == want
    assert tokenizer.words_and_spaces(text) == want  # the second time from the block cache
    doc = nlp.zh_nlp().make_doc(text)
    assert doc.text == text
    assert ([t.text for t in doc], [bool(t.whitespace_) for t in doc]) == want


def test_zh_tokenizer_on_edge_texts() -> None:
    for text in ["", " ", "\n", "  \n ", "扩散模型", " 扩散模型 ", "a b", "a  b", "x＋y ", "共形预测（CP）。\n\n  下一行"]:
        assert nlp.zh_nlp().tokenizer.words_and_spaces(text) == _spacy_words_and_spaces(text)


def _token_spans_by_tokens(doc, segments):
    """:func:`pipeline.nlp.token_spans` read off the ``Token`` objects one by one."""
    text = doc.text
    spans, pos = [], 0
    for s, e in segments:
        for tok in doc:
            a, b = max(tok.idx, s), min(tok.idx + len(tok), e)
            if b > a and not tok.is_space:
                spans.append((a - s + pos, b - s + pos))
        pos += e - s + 1
    return "\n".join(text[s:e] for s, e in segments), spans


@settings(max_examples=200, deadline=None)
@given(_texts, st.lists(st.integers(min_value=0, max_value=200), max_size=8), st.sampled_from(["zh-Hans", "en"]))
def test_token_spans_are_the_tokens_cut_to_the_segments(text: str, cuts: list[int], lang: str) -> None:
    doc = nlp.parse(text, lang)
    bounds = sorted({min(c, len(text)) for c in cuts})
    segments = list(zip(bounds[::2], bounds[1::2], strict=False))  # in order, not overlapping
    segments += [(0, len(text))] if not segments else []
    assert nlp.token_spans(doc, segments) == _token_spans_by_tokens(doc, segments)


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
