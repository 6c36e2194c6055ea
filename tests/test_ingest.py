"""Tests of pipeline.ingest with real files in tmp_path and the real charset-normalizer (no mocks).

Chinese test texts are written in each encoding with Python's own codecs and must decode back to
exactly the original string. charset-normalizer needs some text to tell GB18030 from Big5,
CP949 (Korean) or BOM-less UTF-16: the 17-character sentences and the two-sentence paragraphs
below decode right, while a five-character title such as 最佳论文奖 in GB18030 comes back as
CP949 (and 最佳論文獎 as UTF-16-BE), so short texts are not used here.
"""

from __future__ import annotations

import codecs
import hashlib
import random
from pathlib import Path

import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pipeline.config import Config
from pipeline.ingest import (
    DOCUMENT_COLUMNS,
    LISTING_COLUMNS,
    STAGE,
    decode_bytes,
    list_corpus,
    normalize_newlines,
    read_document,
)

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
    # upper-case suffix accepted, hidden files and anything under a hidden folder left out.
    assert listing["source_path"].tolist() == ["C.TXT", "a.txt", "a/a.md", "a/b/c.txt", "b/z.md"]
    assert listing["abs_path"].tolist() == [str(tmp_path / p) for p in listing["source_path"]]
    assert list(skipped.columns) == ["source_path", "reason"]
    assert skipped.to_dict("records") == [
        {"source_path": "README", "reason": "unsupported file type (none)"},
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


# --- decode_bytes ----------------------------------------------------------------------------


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
        "could not decode bin/image.txt: ValueError: no character encoding decodes these bytes "
        "(charset-normalizer found no match)"
    )
    assert (row["doc_id"], row["content_sha256"], row["n_bytes"]) == (digest[:16], digest, len(data))
    assert (row["text"], row["n_chars"], row["encoding"]) == ("", 0, None)


def test_read_document_nul_characters_is_error_row(tmp_path: Path) -> None:
    # Valid UTF-8, but a NUL byte: a binary file, not an article.
    row = _read(tmp_path, "a.txt", b"PK\x03\x04\x00\x00abc")
    assert row["status"] == "error"
    assert row["error"] == "a.txt decodes to text with NUL characters (binary file?)"
    assert (row["text"], row["encoding"], row["n_chars"]) == ("", None, 0)


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
    from pipeline.ingest import plausibility

    raw = "刚刚，NeurIPS 2024 公布了今年的最佳论文奖项。".encode("gb18030")
    assert plausibility(raw.decode("gb18030")) == 1.0
    assert plausibility(raw.decode("cp949")) < 0.8
