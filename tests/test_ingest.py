"""Tests of pipeline.ingest with real files in tmp_path and the real charset-normalizer (no mocks).

Chinese test texts are written in each encoding with Python's own codecs and must decode back to
exactly the original string. charset-normalizer needs some text to tell GB18030 from Big5,
CP949 (Korean) or BOM-less UTF-16: the 17-character sentences and the two-sentence paragraphs
below decode right, while a five-character title such as 最佳论文奖 in GB18030 comes back as
CP949 (and 最佳論文獎 as UTF-16-BE) without the plausibility ranking. The "short" texts of the
encoding matrix are two sentences (at most 200 bytes), the "long" ones over 2 KB.

The problem-corpus test writes a 50 MB file and runs the whole pipeline on it (about 50-100 s,
nearly all in clean and segment).
"""

from __future__ import annotations

import codecs
import hashlib
import random
from collections import Counter
from pathlib import Path

import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pipeline.config import Config, load_config
from pipeline.decoding import decode
from pipeline.ingest import (
    BIDI_CONTROLS,
    CJK_COMPATIBILITY,
    DOCUMENT_COLUMNS,
    FULLWIDTH_ALNUM,
    FULLWIDTH_SYMBOLS,
    KANGXI_RADICALS,
    LISTING_COLUMNS,
    SPACE_SEPARATORS,
    STAGE,
    list_corpus,
    normalize_newlines,
    normalize_unicode,
    read_document,
    repair_mojibake,
)
from pipeline.run_tables import errors_table

from conftest import require_seeds

# One sentence each (17 characters), and a realistic two-sentence paragraph with Latin and digits.
HANS_SENTENCE = "论文摘要：本文提出视觉自回归建模。"
HANT_SENTENCE = "論文摘要：本文提出視覺自迴歸建模。"
HANS_PARAGRAPH = (
    "刚刚，NeurIPS 2024 公布了今年的最佳论文奖项。今年共有两篇论文获得最佳论文奖，"
    "另有两篇论文获得最佳论文亚军。"
)
HANT_PARAGRAPH = (
    "剛剛，NeurIPS 2024 公布了今年的最佳論文獎項。今年共有兩篇論文獲得最佳論文獎，"
    "另有兩篇論文獲得最佳論文亞軍。"
)
EXTENSIONS = [".txt", ".md"]


def _write(path: Path, data: bytes) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data)
    return path


def _read(tmp_path: Path, name: str, data: bytes) -> dict:
    path = _write(tmp_path / name, data)
    return read_document(name, str(path))


# --- list_corpus -----------------------------------------------------------------------------


def test_list_corpus_recursive_sorted_hidden_and_skipped(tmp_path: Path) -> None:
    for rel in ("b/z.md", "a.txt", "a/b/c.txt", "a/a.md", "C.TXT", "b/notes.pdf", "README",
                ".hidden.txt", ".git/config.txt", "a/.cache/x.md", "b/.DS_Store"):
        _write(tmp_path / rel, b"x")
    (tmp_path / "empty_dir").mkdir()

    listing, skipped = list_corpus(tmp_path, EXTENSIONS)

    assert list(listing.columns) == list(LISTING_COLUMNS)
    # Sorted by the POSIX relative path as a string ("." < "/" so "a.txt" precedes "a/..."),
    # upper-case suffix accepted, hidden files and anything under a hidden folder not read: a hidden
    # file or folder is one skipped row, the files under a hidden folder none.
    assert listing["source_path"].tolist() == ["C.TXT", "a.txt", "a/a.md", "a/b/c.txt", "b/z.md"]
    assert listing["abs_path"].tolist() == [str(tmp_path / p) for p in listing["source_path"]]
    assert list(skipped.columns) == ["source_path", "reason"]
    hidden_file, hidden_folder = "hidden file (name starts with '.'), not read", "hidden folder (name starts with '.'), not read"
    assert skipped.to_dict("records") == [
        {"source_path": ".git", "reason": hidden_folder},
        {"source_path": ".hidden.txt", "reason": hidden_file},
        {"source_path": "README", "reason": "unsupported file type (none)"},
        {"source_path": "a/.cache", "reason": hidden_folder},
        {"source_path": "b/.DS_Store", "reason": hidden_file},
        {"source_path": "b/notes.pdf", "reason": "unsupported file type .pdf"},
    ]


def test_list_corpus_honours_extensions(tmp_path: Path) -> None:
    for rel in ("a.txt", "b.md", "c.MD"):
        _write(tmp_path / rel, b"x")
    listing, skipped = list_corpus(tmp_path, [".md"])
    assert listing["source_path"].tolist() == ["b.md", "c.MD"]
    assert skipped["source_path"].tolist() == ["a.txt"]
    assert skipped["reason"].tolist() == ["unsupported file type .txt"]


def test_list_corpus_empty_folder(tmp_path: Path) -> None:
    listing, skipped = list_corpus(tmp_path, EXTENSIONS)
    assert len(listing) == 0 and list(listing.columns) == list(LISTING_COLUMNS)
    assert len(skipped) == 0 and list(skipped.columns) == ["source_path", "reason"]


def test_list_corpus_missing_or_not_a_folder(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError, match="does not exist or is not a folder"):
        list_corpus(tmp_path / "nope", EXTENSIONS)
    a_file = _write(tmp_path / "a.txt", b"x")
    with pytest.raises(FileNotFoundError, match="a.txt"):
        list_corpus(a_file, EXTENSIONS)


# --- decode ------------------------------------------------------------------------------------


def decode_bytes(data: bytes) -> tuple[str, str]:
    decoded = decode(data)
    return decoded.text, decoded.encoding


@pytest.mark.parametrize(
    ("text", "data", "encoding"),
    [
        (HANS_SENTENCE, HANS_SENTENCE.encode("utf-8"), "utf-8"),
        (HANS_SENTENCE, codecs.BOM_UTF8 + HANS_SENTENCE.encode("utf-8"), "utf-8-sig"),
        (HANS_SENTENCE, codecs.BOM_UTF16_LE + HANS_SENTENCE.encode("utf-16-le"), "utf-16"),
        (HANT_SENTENCE, codecs.BOM_UTF16_BE + HANT_SENTENCE.encode("utf-16-be"), "utf-16"),
        # The UTF-32 LE BOM starts with the UTF-16 LE one: it must be checked first.
        (HANT_SENTENCE, codecs.BOM_UTF32_LE + HANT_SENTENCE.encode("utf-32-le"), "utf-32"),
        (HANS_SENTENCE, codecs.BOM_UTF32_BE + HANS_SENTENCE.encode("utf-32-be"), "utf-32"),
        (HANS_SENTENCE, HANS_SENTENCE.encode("gb18030"), "gb18030"),
        (HANS_PARAGRAPH, HANS_PARAGRAPH.encode("gb18030"), "gb18030"),
        (HANT_PARAGRAPH, HANT_PARAGRAPH.encode("gb18030"), "gb18030"),
        (HANS_PARAGRAPH, HANS_PARAGRAPH.encode("gbk"), "gb18030"),
        (HANT_SENTENCE, HANT_SENTENCE.encode("big5"), "big5hkscs"),
        (HANT_PARAGRAPH, HANT_PARAGRAPH.encode("big5"), "big5hkscs"),
    ],
    ids=["utf8", "utf8-bom", "utf16le-bom", "utf16be-bom", "utf32le-bom", "utf32be-bom",
         "gb18030-sentence", "gb18030-paragraph", "gb18030-hant-paragraph", "gbk-paragraph",
         "big5-sentence", "big5-paragraph"],
)
def test_decode_bytes(text: str, data: bytes, encoding: str) -> None:
    assert decode_bytes(data) == (text, encoding)


def test_decode_cp950_is_not_widened_to_big5hkscs() -> None:
    # Windows Big5 (CP950) maps the euro sign and the full-width tilde where Big5-HKSCS has no
    # or another character: widening lost the file (euro) or changed the text (tilde).
    euro = HANT_PARAGRAPH + "會議註冊費為 500 €。"
    tilde = HANT_PARAGRAPH + "會議於 12 月 10 日～15 日舉行。"
    assert decode_bytes(euro.encode("cp950")) == (euro, "cp950")
    assert decode_bytes(tilde.encode("cp950")) == (tilde, "cp950")


def test_decode_big5_falls_back_when_big5hkscs_cannot_decode() -> None:
    # Python's big5 maps byte pairs such as C6CF (に) that Big5-HKSCS leaves undefined.
    text = HANT_PARAGRAPH + "日文標題為「にほんご」。"
    data = text.encode("big5")
    with pytest.raises(UnicodeDecodeError):
        data.decode("big5hkscs")
    assert decode_bytes(data) == (text, "big5")


@pytest.mark.parametrize(
    "data",
    [bytes(range(256)) * 4, b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR" + random.Random(0).randbytes(4096)],
    ids=["all-bytes", "png"],
)
def test_decode_bytes_rejects_binary(data: bytes) -> None:
    with pytest.raises(ValueError, match="no character encoding decodes these bytes"):
        decode_bytes(data)


@settings(max_examples=200, deadline=None)
@given(st.text(alphabet=st.characters(codec="utf-8", exclude_characters="\x00")))
def test_decode_bytes_roundtrips_unicode_with_bom(text: str) -> None:
    # NUL is left out: FF FE + UTF-16-LE "\x00..." is the UTF-32-LE BOM (inherent to BOMs), and
    # text with NUL is rejected by read_document anyway.
    for bom, codec in ((codecs.BOM_UTF8, "utf-8"), (codecs.BOM_UTF16_LE, "utf-16-le"),
                       (codecs.BOM_UTF16_BE, "utf-16-be")):
        decoded, _ = decode_bytes(bom + text.encode(codec))
        assert decoded == text


# --- normalize_newlines ----------------------------------------------------------------------


def test_normalize_newlines() -> None:
    assert normalize_newlines("\ufeff一\r\n二\r三\n四\r\n\r\n") == "一\n二\n三\n四\n\n"
    assert normalize_newlines("\r\r\n") == "\n\n"  # a lone CR, then a CRLF


@settings(max_examples=200, deadline=None)
@given(st.lists(st.sampled_from(["\r", "\n", "\r\n", "a", "论", "\ufeff"])).map("".join))
def test_normalize_newlines_properties(text: str) -> None:
    out = normalize_newlines(text)
    assert "\r" not in out
    assert not out.startswith("\ufeff")
    assert normalize_newlines(out) == out
    body = text.lstrip("\ufeff")
    # every CRLF, lone CR and lone LF becomes exactly one LF; nothing else changes
    assert out.count("\n") == body.count("\r") + body.count("\n") - body.count("\r\n")
    assert out.replace("\n", "") == body.replace("\r", "").replace("\n", "")


# --- read_document ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("name", "data", "encoding"),
    [
        ("utf8.txt", HANS_SENTENCE.encode("utf-8"), "utf-8"),
        ("bom.txt", codecs.BOM_UTF8 + HANS_SENTENCE.encode("utf-8"), "utf-8-sig"),
        ("le.txt", codecs.BOM_UTF16_LE + HANS_SENTENCE.encode("utf-16-le"), "utf-16"),
        ("be.md", codecs.BOM_UTF16_BE + HANS_SENTENCE.encode("utf-16-be"), "utf-16"),
        ("gb.txt", HANS_PARAGRAPH.encode("gb18030"), "gb18030"),
        ("big5.txt", HANT_PARAGRAPH.encode("big5"), "big5hkscs"),
    ],
)
def test_read_document_decodes(tmp_path: Path, name: str, data: bytes, encoding: str) -> None:
    row = _read(tmp_path, f"sub/{name}", data)
    digest = hashlib.sha256(data).hexdigest()
    expected_text = HANT_PARAGRAPH if name == "big5.txt" else HANS_PARAGRAPH if name == "gb.txt" else HANS_SENTENCE
    assert row == {
        "doc_id": digest[:16], "source_path": f"sub/{name}", "content_sha256": digest, "encoding": encoding,
        "n_bytes": len(data), "n_chars": len(expected_text), "text": expected_text, "status": "ok", "error": None,
        "raw_text": None, "title": None, "url": None, "published": None, "notes": None, "paper_record": None,
    }


@pytest.mark.parametrize("codec", ["utf-8", "utf-16", "gb18030"])
def test_read_document_normalizes_newlines(tmp_path: Path, codec: str) -> None:
    raw = HANS_PARAGRAPH.replace("。", "。\r\n", 1) + "\r" + HANS_SENTENCE + "\r\n"
    row = _read(tmp_path, "a.txt", raw.encode(codec))
    expected = HANS_PARAGRAPH.replace("。", "。\n", 1) + "\n" + HANS_SENTENCE + "\n"
    assert row["text"] == expected
    assert row["n_chars"] == len(expected)
    assert row["status"] == "ok"


def test_doc_id_is_sha256_prefix_and_stable(tmp_path: Path) -> None:
    data = HANS_SENTENCE.encode("utf-8")
    a = _read(tmp_path, "a.txt", data)
    b = _read(tmp_path, "other/name.md", data)
    c = _read(tmp_path, "c.txt", HANS_SENTENCE.encode("utf-8") + b"\n")
    assert a["doc_id"] == b["doc_id"] == hashlib.sha256(data).hexdigest()[:16]
    assert len(a["doc_id"]) == 16 and int(a["doc_id"], 16) >= 0
    assert c["doc_id"] != a["doc_id"]
    # Same text, other bytes (encoding): another id, as the id hashes bytes.
    d = _read(tmp_path, "d.txt", codecs.BOM_UTF8 + data)
    assert d["text"] == a["text"] and d["doc_id"] != a["doc_id"]


@pytest.mark.parametrize(
    "data",
    [bytes(range(256)) * 4, b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR" + random.Random(0).randbytes(4096)],
    ids=["all-bytes", "png"],
)
def test_read_document_undecodable_is_error_row(tmp_path: Path, data: bytes) -> None:
    row = _read(tmp_path, "bin/image.txt", data)
    digest = hashlib.sha256(data).hexdigest()
    assert row["status"] == "error"
    assert row["error"] == (
        "could not decode bin/image.txt: BinaryContentError: no character encoding decodes these bytes "
        "(binary content, not text)"
    )
    assert (row["doc_id"], row["content_sha256"], row["n_bytes"]) == (digest[:16], digest, len(data))
    assert (row["text"], row["n_chars"], row["encoding"]) == ("", 0, None)


def test_read_document_nul_characters_is_error_row(tmp_path: Path) -> None:
    # Valid UTF-8, but a NUL byte: a binary file, not an article.
    row = _read(tmp_path, "a.txt", b"PK\x03\x04\x00\x00abc")
    assert row["status"] == "error"
    assert row["error"] == "a.txt decodes to text with NUL characters (binary file?)"
    assert (row["text"], row["encoding"], row["n_chars"]) == ("", None, 0)


def test_a_stray_nul_in_an_article_is_removed_with_a_note(tmp_path: Path) -> None:
    text = "# Attention Is All You Need\n\nAuthors: Ashish Vaswani, Noam Shazeer\n\nA NeurIPS 2017 paper.\n"
    row = _read(tmp_path, "a.md", (text + "\x00").encode())
    assert (row["status"], row["text"], row["notes"]) == ("ok", text, "removed 1 NUL character")
    page = "<html><body><article><h1>Attention Is All You Need</h1><p>" + "A NeurIPS 2017 paper. " * 20
    row = _read(tmp_path, "a.html", (page + "\x00</p></article></body></html>").encode())
    assert row["status"] == "ok" and "<" not in row["text"] and "\x00" not in row["text"]


def test_read_document_bad_bom_payload_is_error_row(tmp_path: Path) -> None:
    row = _read(tmp_path, "a.txt", codecs.BOM_UTF8 + b"\xff\xfe\xfd")
    assert row["status"] == "error"
    assert row["error"].startswith("could not decode a.txt: UnicodeDecodeError: 'utf-8")


@pytest.mark.parametrize(
    ("data", "encoding"),
    [(b"", "utf-8"), (b" \r\n\t\r\n", "utf-8"), (codecs.BOM_UTF8, "utf-8-sig"), (codecs.BOM_UTF16_LE, "utf-16")],
    ids=["zero-bytes", "whitespace", "utf8-bom-only", "utf16-bom-only"],
)
def test_read_document_empty(tmp_path: Path, data: bytes, encoding: str) -> None:
    row = _read(tmp_path, "e.md", data)
    assert row["status"] == "empty"
    assert row["error"] == "e.md has no text"
    assert row["encoding"] == encoding
    assert row["doc_id"] == hashlib.sha256(data).hexdigest()[:16]
    assert row["n_bytes"] == len(data)
    assert row["text"].strip() == ""


def test_read_document_unreadable_path(tmp_path: Path) -> None:
    missing = read_document("gone.txt", str(tmp_path / "gone.txt"))
    assert missing["status"] == "error"
    assert missing["error"].startswith("FileNotFoundError: ")
    assert "gone.txt" in missing["error"]
    assert missing["doc_id"] == hashlib.sha256(b"gone.txt").hexdigest()[:16]
    assert (missing["content_sha256"], missing["encoding"], missing["text"], missing["n_bytes"]) == (None, None, "", 0)

    (tmp_path / "folder.txt").mkdir()
    folder = read_document("folder.txt", str(tmp_path / "folder.txt"))
    assert folder["status"] == "error"
    assert folder["error"].startswith("IsADirectoryError: ")


# --- the stage -------------------------------------------------------------------------------


def test_ingest_stage_on_a_listing(tmp_path: Path) -> None:
    _write(tmp_path / "a.txt", HANS_SENTENCE.encode("utf-8"))
    _write(tmp_path / "b/b.md", HANT_PARAGRAPH.encode("big5"))
    _write(tmp_path / "c.txt", bytes(range(256)) * 4)
    _write(tmp_path / "d.txt", b"")
    listing, _ = list_corpus(tmp_path, EXTENSIONS)

    docs = STAGE(listing, Config())

    assert isinstance(docs, pd.DataFrame)
    assert list(docs.columns) == list(DOCUMENT_COLUMNS)
    assert docs["source_path"].tolist() == ["a.txt", "b/b.md", "c.txt", "d.txt"]
    assert docs["status"].tolist() == ["ok", "ok", "error", "empty"]
    assert docs["text"].tolist()[:2] == [HANS_SENTENCE, HANT_PARAGRAPH]
    assert docs["encoding"].tolist()[:2] == ["utf-8", "big5hkscs"]
    assert docs["n_bytes"].tolist() == [len(HANS_SENTENCE.encode()), len(HANT_PARAGRAPH.encode("big5")), 1024, 0]
    assert docs["n_chars"].tolist() == [len(HANS_SENTENCE), len(HANT_PARAGRAPH), 0, 0]


def test_failed_rows_carry_the_errors_tables_stage_and_type(tmp_path: Path) -> None:
    """Each error or empty row holds its errors-table stage and type from where ingest found the
    failure, whatever its path looks like (a folder and a file name with spaces)."""
    _write(tmp_path / "a dir/feed b.jsonl", b'{not json\n{"foo": 1}\n{"text": "  "}\n')
    _write(tmp_path / "c.txt", bytes(range(256)) * 4)
    _write(tmp_path / "d.txt", b"")
    listing, _ = list_corpus(tmp_path, [*EXTENSIONS, ".jsonl"])

    errors = errors_table(STAGE(listing, Config()))

    assert [(r.path, r.stage, r.error_type) for r in errors.itertuples()] == [
        ("a dir/feed b.jsonl#1", "ingest", "InvalidJSON"), ("a dir/feed b.jsonl#2", "ingest", "InvalidRecord"),
        ("a dir/feed b.jsonl#3", "ingest", "EmptyDocument"), ("c.txt", "ingest", "BinaryContent"),
        ("d.txt", "ingest", "EmptyDocument")]


@pytest.mark.parametrize(
    ("text", "codec"),
    [
        ("刚刚，NeurIPS 2024 公布了今年的最佳论文奖项。", "gb18030"),
        ("最佳论文奖", "gb18030"),
        ("最佳論文獎", "gb18030"),
        ("最佳論文獎", "big5"),
        ("今年共有 2 篇論文獲得最佳論文獎。", "big5"),
        ("本文提出了一種新的方法，用於圖像生成。", "big5"),
    ],
)
def test_short_chinese_is_decoded_by_plausibility(text, codec):
    """Short GB/Big5 strings that charset-normalizer alone reads as Korean or as the other
    Chinese codec decode right once candidates are ranked by plausibility."""
    decoded, _ = decode_bytes(text.encode(codec))
    assert decoded == text


def test_plausibility_ranks_right_decoding_above_mojibake():
    from pipeline.decoding import plausibility

    raw = "刚刚，NeurIPS 2024 公布了今年的最佳论文奖项。".encode("gb18030")
    assert plausibility(raw.decode("gb18030")) == 1.0
    assert plausibility(raw.decode("cp949")) < 0.8


# --- every encoding, short and long ------------------------------------------------------------

HANS_SENTENCES = (
    "刚刚，NeurIPS 2024 公布了今年的最佳论文奖项。",
    "今年共有两篇论文获得最佳论文奖，另有两篇论文获得最佳论文亚军。",
    "本文提出视觉自回归建模，这是一种新的生成范式，将图像上的自回归学习重新定义为从粗到细的下一尺度预测。",
    "实验表明，该方法在图像生成质量和推理速度上都超过了扩散模型。",
    "研究者还发现，视觉自回归模型表现出与大型语言模型类似的缩放定律。",
    "第二篇获奖论文介绍了一种高效的随机泰勒导数估计器，用于计算高阶微分算子。",
    "该方法可以显著降低物理信息神经网络的训练成本。",
    "会议将于十二月在加拿大温哥华举行，预计有超过一万名研究者参加。",
)
HANT_SENTENCES = (
    "剛剛，NeurIPS 2024 公布了今年的最佳論文獎項。",
    "今年共有兩篇論文獲得最佳論文獎，另有兩篇論文獲得最佳論文亞軍。",
    "本文提出視覺自迴歸建模，這是一種新的生成範式，將圖像上的自迴歸學習重新定義為從粗到細的下一尺度預測。",
    "實驗表明，該方法在圖像生成質量和推理速度上都超過了擴散模型。",
    "研究者還發現，視覺自迴歸模型表現出與大型語言模型類似的縮放定律。",
    "第二篇獲獎論文介紹了一種高效的隨機泰勒導數估計器，用於計算高階微分算子。",
    "該方法可以顯著降低物理資訊神經網路的訓練成本。",
    "會議將於十二月在加拿大溫哥華舉行，預計有超過一萬名研究者參加。",
)


def _long(sentences: tuple[str, ...]) -> str:
    return "\n\n".join(f"{i + 1}. {s}" for i, s in enumerate(sentences * 4))


HANS_LONG, HANT_LONG = _long(HANS_SENTENCES), _long(HANT_SENTENCES)
HANS_SHORT, HANT_SHORT = "".join(HANS_SENTENCES[:2]), "".join(HANT_SENTENCES[:2])
GB18030_ONLY = "日本料理店「𠮷野家」的餐券售价 5 €。"  # 𠮷 is a 4-byte GB18030 sequence; neither is in GBK
HKSCS_ONLY = "佢哋話：「呢篇論文嘅方法好啱用。」"  # 哋, 嘅, 啱 are Big5-HKSCS, not Big5
ENCODINGS = {
    # name: (short text, long text, encoder, expected codec)
    "utf-8": (HANS_SHORT, HANS_LONG, lambda t: t.encode("utf-8"), "utf-8"),
    "utf-8-bom": (HANT_SHORT, HANT_LONG, lambda t: codecs.BOM_UTF8 + t.encode("utf-8"), "utf-8-sig"),
    "utf-16-le-bom": (HANS_SHORT, HANS_LONG, lambda t: codecs.BOM_UTF16_LE + t.encode("utf-16-le"), "utf-16"),
    "utf-16-be-bom": (HANT_SHORT, HANT_LONG, lambda t: codecs.BOM_UTF16_BE + t.encode("utf-16-be"), "utf-16"),
    "gb2312": (HANS_SHORT, HANS_LONG, lambda t: t.encode("gb2312"), "gb18030"),
    "gbk": (HANT_SHORT, HANT_LONG, lambda t: t.encode("gbk"), "gb18030"),
    "gb18030": (HANS_SHORT[:40] + GB18030_ONLY, HANS_LONG + GB18030_ONLY, lambda t: t.encode("gb18030"), "gb18030"),
    "big5": (HANT_SHORT, HANT_LONG, lambda t: t.encode("big5"), "big5hkscs"),
    "big5-hkscs": (HANT_SHORT[:30] + HKSCS_ONLY, HANT_LONG + HKSCS_ONLY, lambda t: t.encode("big5hkscs"),
                   "big5hkscs"),
}


@pytest.mark.parametrize("length", ["short", "long"])
@pytest.mark.parametrize("name", list(ENCODINGS))
def test_every_encoding_round_trips(tmp_path: Path, name: str, length: str) -> None:
    short, long, encode, codec = ENCODINGS[name]
    text = short if length == "short" else long
    data = encode(text)
    assert len(data) <= 200 if length == "short" else len(data) > 2048
    row = _read(tmp_path, f"{name}.txt", data)
    assert (row["status"], row["encoding"], row["text"], row["notes"], row["raw_text"]) == ("ok", codec, text, None, None)


# --- truncated files ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "codec", "cut", "encoding"),
    [
        (HANS_LONG, "gb18030", 1, "gb18030"),  # 2-byte character cut after its lead byte
        (HANS_LONG + "𠮷", "gb18030", 1, "gb18030"),  # 4-byte character: 3 of 4 bytes left
        (HANS_LONG + "𠮷", "gb18030", 3, "gb18030"),
        (HANS_SHORT, "gb18030", 1, "gb18030"),
        (HANT_LONG, "big5", 1, "big5hkscs"),
        (HANS_LONG, "utf-8", 1, "utf-8"),
        (HANS_LONG, "utf-8", 2, "utf-8"),
    ],
)
def test_truncated_last_character_is_replaced_and_noted(tmp_path: Path, text: str, codec: str, cut: int,
                                                        encoding: str) -> None:
    full = text.encode(codec)
    data = full[:-cut]
    kept = len(text.encode(codec)) - len(text[-1].encode(codec))  # bytes of the complete characters
    row = _read(tmp_path, "cut.txt", data)
    assert (row["status"], row["encoding"], row["error"]) == ("ok", encoding, None)
    assert row["text"] == text[:-1] + "\ufffd"
    n_partial = len(data) - kept
    assert row["notes"] == (f"decode: the last {n_partial} byte(s) are an incomplete {encoding} character "
                            "(truncated file?), replaced by U+FFFD")


def test_truncation_never_hides_bad_bytes_elsewhere(tmp_path: Path) -> None:
    # A bad byte in the middle is not a truncation: the file is still an error.
    data = HANS_LONG.encode("gb18030")
    bad = data[:100] + b"\xff\xff" + data[100:-1]
    assert decode(data[:-1]).encoding == "gb18030"
    with pytest.raises(ValueError, match="no character encoding decodes these bytes"):
        decode(bad + bytes(range(256)))
    # A trailing byte that cannot start a character (0x80, 0xFF) is no partial character either.
    with pytest.raises(ValueError, match="no character encoding decodes these bytes"):
        decode(HANS_LONG.encode("gb18030") + b"\xff")


# --- mojibake -----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("mojibake", "fixed"),
    [
        ("Donâ€™t miss the best paper talk.", "Don’t miss the best paper talk."),
        ("è®ºæ–‡ï¼šè§†è§‰è‡ªå›žå½’å»ºæ¨¡", "论文：视觉自回归建模"),
        ("CafÃ© in ZÃ¼rich", "Café in Zürich"),
    ],
)
def test_mojibake_is_repaired_and_noted(tmp_path: Path, mojibake: str, fixed: str) -> None:
    text = HANS_SENTENCES[0] + "\n" + mojibake + "\n" + HANS_SENTENCES[1]
    row = _read(tmp_path, "m.txt", text.encode("utf-8"))
    assert row["text"] == HANS_SENTENCES[0] + "\n" + fixed + "\n" + HANS_SENTENCES[1]
    assert row["raw_text"] == text
    assert row["notes"] == "ftfy: repaired mojibake on 1 line(s)"
    assert row["n_chars"] == len(row["text"])


@pytest.mark.parametrize(
    "text",
    [HANS_LONG, HANT_LONG, HKSCS_ONLY, GB18030_ONLY,
     "“最佳论文”《Attention Is All You Need》——作者：Ashish Vaswani 等；机构：Google Brain…",
     "Zürich, Montréal, São Paulo, Kraków, naïve café — “quoted” ‘text’ • 1½ × 2 ≈ 3°C ±0.5 µm",
     "Привет, Αθήνα, Ελλάδα", "1 € = 7.8 ¥; © 2024 ® ™ § ¶"],
)
def test_ftfy_leaves_ordinary_text_alone(text: str) -> None:
    assert repair_mojibake(text) == (text, 0)


def test_ftfy_leaves_the_seed_articles_alone() -> None:
    for path in sorted(require_seeds().glob("*.txt")):
        text = normalize_newlines(path.read_bytes().decode("utf-8"))
        assert repair_mojibake(text) == (text, 0), path.name


def test_seed_articles_change_only_by_unicode_normalization() -> None:
    seeds = require_seeds()
    for path in sorted(seeds.glob("*.txt")):
        row = read_document(path.name, str(path))
        decoded = normalize_newlines(path.read_bytes().decode("utf-8"))
        assert (row["status"], row["encoding"]) == ("ok", "utf-8")
        assert row["text"] == decoded.replace("\u3000", " ")
        if "\u3000" in decoded:  # seed 000 indents its glued news item with two U+3000
            assert row["raw_text"] == decoded
            assert row["notes"] == f"unicode: {decoded.count(chr(0x3000))} space separators -> ' '"
        else:
            assert (row["raw_text"], row["notes"]) == (None, None)


# --- Unicode normalization ----------------------------------------------------------------------


def test_normalize_unicode_each_kind() -> None:
    assert SPACE_SEPARATORS == ("\u00a0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008\u2009"
                                "\u200a\u202f\u205f\u3000")
    assert normalize_unicode("NeurIPS\u00a02024\u3000\u3000论文\u2009奖\u202f") == ("NeurIPS 2024  论文 奖 ", {
        "space separators -> ' '": 5})
    assert normalize_unicode("论\u200b文\u200c奖\u200d项\u2060。\ufeff") == ("论文奖项。", {
        "zero-width characters removed": 5})
    assert normalize_unicode("ＮｅｕｒＩＰＳ ２０２４ ｂｅｓｔ") == ("NeurIPS 2024 best", {
        "full-width letters/digits -> ASCII": 15})
    assert "".join(normalize_unicode(FULLWIDTH_ALNUM)[0]) == (
        "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz")


def test_normalize_unicode_leaves_cjk_punctuation_and_the_rest_alone() -> None:
    text = ("论文，标题：（视觉）《自回归》「建模」『引号』。！？；、～…—“”‘’【】〔〕〈〉／｜＂＇［］｛｝．"
            "1．标题 ﬁ ① ¹ ½ ㎏ Å e\u0301 ｶﾀｶﾅ 𠮷 😀 﨑 ⺀\t\n")
    assert normalize_unicode(text) == (text, {})


def test_kangxi_radicals_fold_to_unified() -> None:
    # ⽅ U+2F45 SQUARE, ⼤ U+2F24 BIG, ⼈ U+2F08 MAN, ⽂ U+2F42 SCRIPT (Kangxi radicals)
    assert normalize_unicode("⽅法：⼤⼈⽂本") == ("方法：大人文本", {"Kangxi radicals -> unified ideographs": 4})
    folded, counts = normalize_unicode(KANGXI_RADICALS)
    assert len(KANGXI_RADICALS) == 214 and counts == {"Kangxi radicals -> unified ideographs": 214}
    assert all("\u4e00" <= ch <= "\u9fff" for ch in folded)  # each one unified ideograph
    assert folded[:3] == "一丨丶" and folded[-1] == "龠"


def test_cjk_compatibility_ideographs_fold_to_unified() -> None:
    # U+F900 豈 -> 豈 U+8C48; U+F9B5 例 -> 例 U+4F8B; U+FA11 﨑 is a unified ideograph of the block and stays
    assert normalize_unicode("\uf900\uf9b5子 﨑") == ("豈例子 﨑", {
        "CJK compatibility ideographs -> unified ideographs": 2})
    assert "\ufa11" not in CJK_COMPATIBILITY and len(CJK_COMPATIBILITY) == 460
    assert all(len(normalize_unicode(ch)[0]) == 1 for ch in CJK_COMPATIBILITY)  # offsets keep


def test_fullwidth_symbols_fold() -> None:
    assert normalize_unicode("GPT－4 提升 1000％，C＋＋ a＠b x＝y") == ("GPT-4 提升 1000%，C++ a@b x=y", {
        "full-width symbols -> ASCII": 6})
    # a full-width full stop between digits is a decimal point; elsewhere it is punctuation
    assert normalize_unicode("ＧＰＴ－３．５ 与 1．标题") == ("GPT-3.5 与 1．标题", {
        "full-width letters/digits -> ASCII": 5, "full-width symbols -> ASCII": 2})
    assert normalize_unicode(FULLWIDTH_SYMBOLS)[0] == "#$%&*+-<=>@\\^_`"


def test_bidi_controls_removed_with_a_note(tmp_path: Path) -> None:
    assert normalize_unicode("\u202bGPT-4\u202c 与 \u2067论文\u2069\u200f") == ("GPT-4 与 论文", {
        "bidi controls removed": 5})
    assert normalize_unicode(BIDI_CONTROLS) == ("", {"bidi controls removed": 12})
    raw = "⽅法：\u202eGPT－4\u202c 准确率 23．4％\n"
    row = _read(tmp_path, "b.txt", raw.encode("utf-8"))
    assert row["text"] == "方法：GPT-4 准确率 23.4%\n"
    assert row["raw_text"] == raw  # as today: raw_text keeps the decoded input, offsets point into text
    assert row["n_chars"] == len(row["text"]) == len(raw) - 2
    assert row["notes"] == ("unicode: 1 Kangxi radicals -> unified ideographs, 2 bidi controls removed, "
                            "3 full-width symbols -> ASCII")


def test_normalize_unicode_notes_and_raw_text(tmp_path: Path) -> None:
    raw = "\ufeffＮｅｕｒＩＰＳ\u00a0２０２４：最佳\u200b论文。\r\n"
    row = _read(tmp_path, "u.txt", raw.encode("utf-8"))
    assert row["text"] == "NeurIPS 2024：最佳论文。\n"
    assert row["raw_text"] == "ＮｅｕｒＩＰＳ\u00a0２０２４：最佳\u200b论文。\n"  # decoded, BOM and CRLF handled
    assert row["notes"] == ("unicode: 11 full-width letters/digits -> ASCII, 1 space separators -> ' ', "
                            "1 zero-width characters removed")
    assert row["n_chars"] == len(row["text"])


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet=st.sampled_from(list("论文，。（）《》a1 \n．") + list(SPACE_SEPARATORS)
                                        + list("\u200b\u200c\u200d\u2060\ufeff") + list(FULLWIDTH_ALNUM[:20])
                                        + list(BIDI_CONTROLS[:4]) + list("－％⽅\uf900"))))
def test_normalize_unicode_properties(text: str) -> None:
    out, counts = normalize_unicode(text)
    assert normalize_unicode(out) == (out, {})
    assert len(out) == len(text) - counts.get("zero-width characters removed", 0) - counts.get(
        "bidi controls removed", 0)
    assert (out == text) == (not counts)
    # CJK punctuation, Han characters and ASCII letters and digits are kept, in order
    keep = set("论文，。（）《》a1\n")
    text = "".join(chr(ord(c) - 0xFEE0) if c in FULLWIDTH_ALNUM else c for c in text)
    assert [c for c in out if c in keep] == [c for c in text if c in keep]


# --- a corpus of problem files through the whole pipeline ---------------------------------------


def _big_text(n_bytes: int) -> str:
    """About ``n_bytes`` of UTF-8 article-like text: numbered paragraphs of Chinese and English."""
    rng = random.Random(0)
    han = ("模型", "训练", "数据", "实验", "方法", "结果", "分析", "网络", "学习", "推理", "图像", "语言", "生成")
    latin = ("model", "training", "data", "scaling", "attention", "diffusion", "benchmark", "results")
    parts, size, i = [], 0, 0
    while size < n_bytes:
        i += 1
        line = f"第{i}段：" + "".join(rng.choices(han, k=30)) + "，" + " ".join(rng.choices(latin, k=8)) + "。\n\n"
        parts.append(line)
        size += len(line.encode("utf-8"))
    return "".join(parts)


@pytest.mark.slow
def test_problem_corpus_runs_to_the_end(tmp_path: Path, use_embedder) -> None:
    import time

    from pipeline.runner import run

    corpus = tmp_path / "corpus"
    _write(corpus / "good.txt", HANS_LONG.encode("utf-8"))
    _write(corpus / "empty.txt", b"")
    _write(corpus / "binary.txt", b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR" + random.Random(0).randbytes(4096))
    _write(corpus / "truncated_gb18030.txt", HANS_LONG.encode("gb18030")[:-1])
    big = _write(corpus / "big.txt", _big_text(50 * 1024 * 1024).encode("utf-8"))
    assert big.stat().st_size >= 50 * 1024 * 1024

    t0 = time.perf_counter()
    result = run(corpus, tmp_path / "out", load_config(), embedder=use_embedder, progress=False)
    seconds = time.perf_counter() - t0
    print(f"problem corpus: {seconds:.1f} s; per stage: "
          + ", ".join(f"{k} {v:.1f} s" for k, v in result.seconds.items()))

    docs = pd.read_parquet(tmp_path / "out" / "documents.parquet").set_index("source_path")
    assert sorted(docs.index) == ["big.txt", "binary.txt", "empty.txt", "good.txt", "truncated_gb18030.txt"]
    assert (docs.loc["empty.txt", "status"], docs.loc["empty.txt", "error"]) == ("empty", "empty.txt has no text")
    assert docs.loc["binary.txt", "status"] == "error"
    assert docs.loc["binary.txt", "error"] == (
        "could not decode binary.txt: BinaryContentError: no character encoding decodes these bytes "
        "(binary content, not text)")
    truncated = docs.loc["truncated_gb18030.txt"]
    assert (truncated["status"], truncated["encoding"]) == ("ok", "gb18030")
    assert truncated["text"] == HANS_LONG[:-1] + "\ufffd"
    assert "incomplete gb18030 character" in truncated["notes"]
    assert (docs.loc["big.txt", "status"], docs.loc["big.txt", "n_bytes"]) == ("ok", big.stat().st_size)
    assert docs.loc["good.txt", "status"] == "ok"
    assert result.summary()["failed_files"] == 1


def test_listing_records_odd_files_instead_of_losing_them(tmp_path):
    """Non-UTF-8 names, broken and looping links, links to folders and pipes each get a row."""
    import os

    corpus = tmp_path / "corpus"
    corpus.mkdir()
    (corpus / "good.txt").write_text("正文", encoding="utf-8")
    with open(os.path.join(os.fsencode(corpus), b"\xff\xfebad.txt"), "wb") as fh:
        fh.write("也是正文".encode())
    (corpus / "loop1").symlink_to(corpus / "loop2")
    (corpus / "loop2").symlink_to(corpus / "loop1")
    (corpus / "broken.txt").symlink_to(tmp_path / "missing")
    (corpus / "folder_link").symlink_to(tmp_path)
    os.mkfifo(corpus / "pipe.txt")
    listing, skipped = list_corpus(corpus, [".txt"])
    assert sorted(listing["source_path"]) == ["\\xff\\xfebad.txt", "good.txt"]
    bad = listing[listing["source_path"] == "\\xff\\xfebad.txt"].iloc[0]
    assert read_document(bad["source_path"], bad["abs_path"])["text"] == "也是正文"
    assert dict(zip(skipped["source_path"], skipped["reason"], strict=True)) == {
        "broken.txt": "broken or looping symbolic link",
        "folder_link": "symbolic link to a folder (not followed)",
        "loop1": "broken or looping symbolic link",
        "loop2": "broken or looping symbolic link",
        "pipe.txt": "not a regular file (pipe, socket or device)",
    }


def test_a_folder_that_cannot_be_listed_gets_a_row_instead_of_vanishing(tmp_path):
    """A folder without read permission: its files are not listed, and the listing says so
    (Path.rglob skipped it without a word, and an incremental run then counted its files as
    removed). As root, permissions do not stop a read, so the listing runs in a child process
    without the capabilities that override them (capsh, part of libcap)."""
    import json
    import os
    import shutil
    import subprocess
    import sys

    corpus = tmp_path / "corpus"
    (corpus / "locked").mkdir(parents=True)
    (corpus / ".hidden_locked").mkdir()
    (corpus / "good.txt").write_text("正文", encoding="utf-8")
    (corpus / "locked" / "inside.txt").write_text("正文", encoding="utf-8")
    code = ("import json, sys; from pipeline.ingest import list_corpus; l, s = list_corpus(sys.argv[1], ['.txt']); "
            "print(json.dumps([l['source_path'].tolist(), s.to_dict('records')]))")
    os.chmod(corpus / "locked", 0)
    os.chmod(corpus / ".hidden_locked", 0)
    try:
        if os.geteuid() == 0:
            capsh = shutil.which("capsh") or "/usr/sbin/capsh"
            command = [capsh, "--drop=cap_dac_override,cap_dac_read_search", "--", "-c",
                       f"exec {sys.executable} -c \"$0\" \"$1\"", code, str(corpus)]
        else:
            command = [sys.executable, "-c", code, str(corpus)]
        out = subprocess.run(command, check=True, capture_output=True, text=True).stdout
    finally:
        os.chmod(corpus / "locked", 0o755)
        os.chmod(corpus / ".hidden_locked", 0o755)
    listed, skipped = json.loads(out)
    assert listed == ["good.txt"]
    assert skipped == [{"source_path": ".hidden_locked", "reason": "hidden folder (name starts with '.'), not read"},
                       {"source_path": "locked",
                        "reason": "folder not readable, its files not listed: PermissionError: Permission denied"}]
    # readable again: listed as before
    assert list_corpus(corpus, [".txt"])[0]["source_path"].tolist() == ["good.txt", "locked/inside.txt"]


def test_utf8_with_one_bad_byte_stays_utf8_with_a_note():
    text = "论文摘要：本文提出了一种新的扩散模型训练方法，在多个基准上取得了显著提升。" * 3
    data = text.encode("utf-8") + b"\n caf\xe9 au lait\n" + text.encode("utf-8")
    decoded = decode(data)
    assert decoded.encoding == "utf-8"
    assert decoded.text == text + "\n caf\ufffd au lait\n" + text
    assert decoded.notes == ("decode: 1 byte sequence(s) not valid UTF-8, replaced by U+FFFD",)


def test_short_utf8_file_with_one_stray_byte_stays_utf8_with_a_note():
    # too few characters for the share rule: this failed as binary content, or read as mac_iceland
    for text in ("论文标题：注意力就是一切\n作者：张三", "論文 Attention is all you need"):
        head, tail = text.split("\n") if "\n" in text else (text[:2], text[2:])
        decoded = decode(head.encode() + b"\x81" + tail.encode())
        assert (decoded.encoding, decoded.text) == ("utf-8", head + "\ufffd" + tail)
        assert decoded.notes == ("decode: 1 byte sequence(s) not valid UTF-8, replaced by U+FFFD",)
    # short GBK and Big5 text is not taken for broken UTF-8
    assert decode("论文标题".encode("gb18030")).text == "论文标题"
    assert decode("最佳論文獎".encode("big5")).text == "最佳論文獎"


def test_short_gbk_bytes_that_are_mostly_valid_utf8_are_not_read_as_utf8():
    # these GBK bytes are two or three valid UTF-8 letters (Greek, IPA, Armenian) and one invalid
    # sequence: the short-file rule read them as UTF-8 ("�Ͻ�ôƽս")
    for text in ("合将么平战", "其反实", "放济报效示"):
        decoded = decode(text.encode("gbk"))
        assert decoded.encoding != "utf-8" and "\ufffd" not in decoded.text, (text, decoded)
    assert decode("合将么平战".encode("gbk")).text == "合将么平战"


def test_gb18030_is_not_taken_for_broken_utf8():
    text = "论文摘要：本文提出了一种新的扩散模型训练方法，在多个基准上取得了显著提升。" * 5
    assert decode(text.encode("gb18030")).encoding == "gb18030"


def test_metadata_titles_are_cleaned_like_the_text():
    from pipeline.ingest import clean_title

    assert clean_title("Foo & Bar 中文 x\u200by") == "Foo & Bar 中文 xy"
    assert clean_title("ABC\x01D\x7f") == "ABCD"
    assert clean_title("Donâ€™t stop\u3000now") == "Don’t stop now"
    assert clean_title("  ") is None
    assert clean_title(None) is None


def test_shipped_frequent_han_list_is_the_count_of_jiebas_dictionary():
    # how the shipped file is made: jieba's dict.txt word counts summed per character
    import jieba

    from pipeline import decoding

    counts: Counter = Counter()
    with (Path(jieba.__file__).parent / "dict.txt").open(encoding="utf-8") as fh:
        for line in fh:
            parts = line.split()
            if len(parts) >= 2 and parts[1].isdigit():
                for ch in parts[0]:
                    counts[ch] += int(parts[1])
    shipped = decoding._frequent_han()
    assert len(shipped) == decoding.N_FREQUENT_HAN
    assert shipped == frozenset(ch for ch, _ in counts.most_common(decoding.N_FREQUENT_HAN))
    assert {"的", "模", "型"} <= shipped


def _reference_plausibility(text: str) -> float:
    """The character loop :func:`pipeline.decoding.plausibility` replaced by a translate table."""
    from pipeline import decoding
    from pipeline.normalize import to_script

    sample = text[: decoding.PLAUSIBILITY_SAMPLE]
    if not sample:
        return 1.0
    frequent = decoding._frequent_han()
    simplified = to_script(sample, "zh-Hans")
    good = 0
    for ch in simplified:
        o = ord(ch)
        if (ch.isascii() and (ch.isprintable() or ch.isspace())) or 0xC0 <= o <= 0xFF or ch in frequent:
            good += 1
        elif 0x2000 <= o <= 0x206F or 0x3000 <= o <= 0x303F or 0xFF00 <= o <= 0xFFEF:
            good += 1
    return good / len(simplified)


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet=st.sampled_from(
    [chr(c) for c in (*range(0x00, 0x100), 0x1F, 0x1FFF, 0x2000, 0x206F, 0x2070, 0x2FFF, 0x3000, 0x303F,
                      0x3040, 0xFEFF, 0xFF00, 0xFFEF, 0xFFF0, 0x1F600)]
    + list("的模型這個論文说話龘齉䶮鑫乂丌")), max_size=80))
def test_plausibility_counts_as_the_character_loop(text: str) -> None:
    from pipeline.decoding import plausibility

    assert plausibility(text) == _reference_plausibility(text)


def test_plausibility_on_decoded_candidates_is_unchanged() -> None:
    from pipeline.decoding import markup_plausibility, plausibility

    text = "論文摘要：本文提出了一種新的擴散模型訓練方法。Stanford University, 2024 (ICLR)。" * 20
    for codec in ("gb18030", "big5hkscs", "utf-8"):
        data = text.encode(codec, "replace")
        for other in ("gb18030", "big5hkscs", "latin-1", "cp1251", "shift_jis"):
            candidate = data.decode(other, "replace")
            assert plausibility(candidate) == _reference_plausibility(candidate)
            assert markup_plausibility(candidate) == _reference_plausibility(
                "".join(ch for ch in candidate if ord(ch) > 0x7F))


def test_detection_keeps_a_clearly_plausible_first_candidate() -> None:
    # a first candidate scored within the margin of 1.0 wins whatever the others score
    text = "論文摘要：本文提出了一種新的擴散模型訓練方法，在多個基準上取得了顯著提升。" * 5
    decoded = decode(text.encode("big5hkscs"))
    assert decoded.text == text and decoded.encoding == "big5hkscs"


@pytest.mark.parametrize("codec", ["euc_jp", "shift_jis"])
def test_japanese_in_a_legacy_encoding_decodes_as_japanese(tmp_path: Path, codec: str) -> None:
    # GB18030 also decodes EUC-JP bytes (GB2312 holds the same kana rows), into mojibake
    text = "本論文では、大規模言語モデルの推論能力について述べる。東京大学の研究チームが発表した。\n" * 3
    row = _read(tmp_path, "ja.txt", text.encode(codec))
    assert (row["status"], row["text"]) == ("ok", text)


KOREAN_TEXT = ("서울대학교 연구팀이 NeurIPS 2024에서 우수 논문상을 받았다.\n\n논문 제목: Efficient Sparse Attention\n"
               "저자: 김민수, 이지은, 박서준\n\n이 연구는 긴 시퀀스를 효율적으로 처리하기 위한 새로운 희소 어텐션 방법을 제안한다.\n")


@pytest.mark.parametrize("codec", ["euc_kr", "cp949", "iso2022_kr"])
def test_korean_in_a_legacy_encoding_decodes_as_korean(tmp_path: Path, codec: str) -> None:
    # GB18030 also decodes EUC-KR bytes, into common Han characters that plausibility rates high
    row = _read(tmp_path, "ko.txt", KOREAN_TEXT.encode(codec))
    assert (row["status"], row["text"]) == ("ok", KOREAN_TEXT)
    assert row["notes"] is None


@pytest.mark.parametrize("name", ["张三", "李四"])
def test_a_japanese_or_korean_reading_of_text_without_kana_or_hangul_is_noted_as_a_guess(name: str) -> None:
    # two GBK characters: charset-normalizer reads them as EUC-JIS ("张三" as "嫖眉"), every
    # reading is frequent Han, so its answer stands: a guess, which must not pass unnoted
    decoded = decode(name.encode("gbk"))
    assert decoded.text == name or any("a guess" in note for note in decoded.notes)


@pytest.mark.parametrize("declared", ["utf-8", "shift_jis"])
def test_a_declared_charset_that_does_not_decode_the_bytes_is_noted(declared: str) -> None:
    # a page that declares UTF-8 (or Shift-JIS) but is saved in GBK: read right, noted either way
    page = f'<meta charset="{declared}"><h2>基于大语言模型的代码生成方法研究</h2><p>张三，李四</p>'
    decoded = decode(page.encode("gbk"), declared=declared, markup=True)
    assert (decoded.text, decoded.encoding) == (page, "gb18030")
    assert decoded.notes == (f"decode: the declared charset {declared} does not decode the bytes",)


def test_japanese_text_in_a_japanese_codec_carries_no_guess_note() -> None:
    text = "本論文では、大規模言語モデルの推論能力について述べる。\n" * 3
    assert decode(text.encode("euc_jp")).notes == ()


@pytest.mark.parametrize("codec", ["iso2022_jp", "iso2022_jp_2"])
def test_japanese_in_iso_2022_decodes_as_japanese(codec: str) -> None:
    # 7-bit ISO-2022-JP bytes are valid UTF-8 (ASCII): read so, the text kept the escapes
    text = "東京大学の研究チームが CVPR 2025 で最優秀論文賞を受賞しました。\n論文タイトル：Neural Fields\n"
    decoded = decode(text.encode(codec))
    assert (decoded.text, decoded.encoding, decoded.notes) == (text, "iso2022_jp", ())


def test_iso_2022_escapes_no_detector_names_decode_with_a_guess_note(monkeypatch) -> None:
    from pipeline import decoding

    monkeypatch.setattr(decoding, "from_bytes", lambda data: [])  # a detector with no answer
    decoded = decode("概要：本研究".encode("iso2022_jp") + b"\n")
    assert (decoded.text, decoded.encoding) == ("概要：本研究\n", "iso2022_jp_2")
    assert decoded.notes == ("decode: ISO-2022 escape sequences; read as iso2022_jp_2, a guess "
                             "(charset-normalizer named no ISO-2022 codec)",)


def test_a_terminal_colour_escape_is_no_iso_2022() -> None:
    assert decode(b"build \x1b[31mfailed\x1b[0m\n").encoding == "utf-8"


def test_short_korean_read_as_chinese_is_noted_as_a_guess() -> None:
    # too few syllables to tell Korean from Chinese bytes: the Chinese reading wins, noted
    decoded = decode("최우수 논문상".encode("euc_kr"))
    assert decoded.encoding == "gb18030"
    assert len(decoded.notes) == 1 and "reads these bytes as cp949" in decoded.notes[0]
    assert "(a guess)" in decoded.notes[0]


def test_a_korean_euc_kr_line_in_utf8_text_is_read_as_korean() -> None:
    lines = KOREAN_TEXT.splitlines(keepends=True)
    data = b"".join(ln.encode("euc_kr" if i == 5 else "utf-8") for i, ln in enumerate(lines))
    decoded = decode(data)
    assert decoded.text == KOREAN_TEXT and decoded.encoding == "utf-8+cp949"


NUL_ARTICLE = ("# Attention Is All You Need\n\nAuthors: Ashish Vaswani, Noam Shazeer\n\n"
               + "The Transformer is a NeurIPS 2017 paper built on attention alone. " * 10 + "\n")


def _with_nuls(text: str, every: int) -> str:
    """``text`` with a NUL after every ``every``-th character."""
    return "".join(ch + ("\x00" if i % every == every - 1 else "") for i, ch in enumerate(text))


@pytest.mark.parametrize("every", [100, 50, 34, 21])  # 1%, 2%, 3% and 4.8% of the characters
def test_a_few_percent_of_nuls_in_text_are_removed_with_a_note(tmp_path: Path, every: int) -> None:
    data = _with_nuls(NUL_ARTICLE, every)
    row = _read(tmp_path, "a.md", data.encode())
    nuls = data.count("\x00")
    assert (row["status"], row["text"], row["notes"]) == ("ok", NUL_ARTICLE, f"removed {nuls} NUL characters")


def test_nuls_in_chinese_text_are_removed_with_a_note(tmp_path: Path) -> None:
    text = "刚刚，NeurIPS 2024 公布了今年的最佳论文奖项。今年共有两篇论文获得最佳论文奖。\n" * 5
    row = _read(tmp_path, "a.txt", _with_nuls(text, 40).encode("utf-8"))
    assert (row["status"], row["text"]) == ("ok", text)
    assert row["notes"] == f"removed {len(text) // 40} NUL characters"


def test_nul_padding_ending_an_article_is_removed_with_a_note(tmp_path: Path) -> None:
    row = _read(tmp_path, "a.md", NUL_ARTICLE.encode() + b"\x00" * 4096)
    assert (row["status"], row["text"], row["notes"]) == ("ok", NUL_ARTICLE, "removed 4096 NUL characters (padding at the end)")


@pytest.mark.parametrize("data", [
    _with_nuls(NUL_ARTICLE, 10).encode(),  # 10% of NULs: more than text holds
    (b"\x00" + bytes(range(1, 67))) * 20,  # 1.5% of NULs beside other control bytes
    _with_nuls(NUL_ARTICLE, 30).encode() + b"\x01\x02\x03\x04\x05",  # 3%, but the rest is no text
])
def test_nuls_beyond_the_stray_rule_make_the_file_binary(tmp_path: Path, data: bytes) -> None:
    row = _read(tmp_path, "a.md", data)
    assert (row["status"], row["error"]) == ("error", "a.md decodes to text with NUL characters (binary file?)")


JAPANESE_LINES = ("東京大学の研究チームの論文が CVPR 2025 に採択されました。\n",
                  "論文タイトル：Neural Radiance Fields for Dynamic Scenes at Scale\n",
                  "所属：東京大学、京都大学\n",
                  "本研究では新しい手法を提案しています。\n")


@pytest.mark.parametrize(("codec", "utf8_line"), [("cp932", 1), ("euc_jp", 1), ("cp932", 0), ("euc_jp", 3)])
def test_japanese_lines_beside_a_utf8_line_decode_as_japanese(codec: str, utf8_line: int) -> None:
    # the legacy lines, a kanji-only one among them, are judged together: no codec decodes the
    # whole file, and alone each line was Chinese mojibake or no text at all
    data = b"".join(ln.encode("utf-8" if i == utf8_line else codec) for i, ln in enumerate(JAPANESE_LINES))
    decoded = decode(data)
    assert decoded.text == "".join(JAPANESE_LINES)
    assert sorted(decoded.encoding.split("+")) == sorted({"utf-8", "cp932" if codec == "cp932" else "euc_jp"})


@pytest.mark.parametrize("end", [b"", b"\n", b"\n\n"])
def test_a_jsonl_files_decode_note_stays_when_the_file_ends_with_a_newline(tmp_path, end: bytes) -> None:
    """The notes of the file's decoding go on its last record, which a final newline (a blank
    last line) did not hold: a Latin-1 feed read as cp1252, a guess, lost its note."""
    from pipeline.ingest import read_jsonl

    path = tmp_path / "feed.jsonl"
    path.write_bytes('{"title": "A", "text": "Lefèvre proposed a method."}\n{"title": "B", "text": "Müller and '
                     'Lefèvre replied."}'.encode("latin-1") + end)
    rows = read_jsonl("feed.jsonl", str(path))
    assert [r["source_path"] for r in rows] == ["feed.jsonl#1", "feed.jsonl#2"]
    assert rows[-1]["notes"] and "cp1252" in rows[-1]["notes"]
    assert "Lefèvre" in rows[-1]["text"]
