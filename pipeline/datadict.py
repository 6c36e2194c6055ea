"""The data dictionary: ``docs/data-dictionary.md``, generated from the output schemas.

Every column of :data:`pipeline.write.TABLES` gets its Arrow type, its meaning from
:data:`COLUMNS` (a missing one makes :func:`render` raise; see :func:`undocumented`) and an example
value from a default run over ``corpora/sample``; plus the Parquet metadata keys
(:data:`FILE_METADATA`). Regenerate after changing a schema or the sample corpus::

    .venv/bin/python -m pipeline.datadict            # rewrites docs/data-dictionary.md
    .venv/bin/python -m pipeline.datadict --check    # exit 1 when the committed file is stale
"""

from __future__ import annotations

import argparse
import json
import math
import sys
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq

from .dedup import SUMMARY_HEAD_CHARS
from .embed import DEFAULT_MAX_CHARS
from .write import EXTRA_TABLES
from .write import TABLES as DATA_TABLES

#: Every table the dictionary documents: the data tables, then the run's ``errors`` table.
TABLES = {**DATA_TABLES, **EXTRA_TABLES}

REPO = Path(__file__).resolve().parents[1]
DICTIONARY_PATH = REPO / "docs" / "data-dictionary.md"
SAMPLE_CORPUS = REPO / "corpora" / "sample"
#: Longest example shown, in characters (longer values are cut with an ellipsis).
EXAMPLE_CHARS = 48
#: Run-id columns per table, with a fixed example (a real id would change every run).
RUN_ID_COLUMNS = {"paper_ids": ("since_run",), "changes": ("run_id", "previous_run_id")}
RUN_ID_EXAMPLE = "20260101T020000.000000Z-1a2b3c"

#: What one row of each table is, and how it joins to the others.
TABLE_DOCS: dict[str, str] = {
    "documents": "One row per input file (a JSON Lines feed: per line; a CSV file: per row), in source-path order, including files "
                 "that failed, were skipped, empty or byte-identical copies (`status`).",
    "sections": "One row per mention of a paper: a character range of a document. "
                "`doc_id` → `documents.doc_id`; `paper_id` → `papers.paper_id`.",
    "papers": "One row per unique paper after dedup: the fused record of its mentions. "
              "`section_ids` → `sections.section_id`; `doc_ids` → `documents.doc_id`.",
    "dropped": "One row per span removed by clean (junk), with its reason. `doc_id` → `documents.doc_id`.",
    "context": "One row per document-context span (not a paper, not junk). `doc_id` → `documents.doc_id`.",
    "errors": "One row per input file (a JSON Lines feed: per line; a CSV file: per row) that could not be read, decoded or parsed, "
              "or that has no text; the run goes on without it. `path` → `documents.source_path`.",
    "paper_ids": "One row per `paper_id` this output folder ever published: the paper it names now, so that an id "
                 "of an earlier run still resolves. `current_id` → `papers.paper_id`.",
    "changes": "One row per change since the previous run: a paper added, removed, merged into another or split "
               "off one, and per field of a kept paper whose value changed. `paper_id`, `related_id` → "
               "`paper_ids.paper_id`.",
}

_SPAN_START = "Start of the span: character offset into `documents.text` (0-based, inclusive)."
_SPAN_END = "End of the span: character offset into `documents.text` (exclusive)."
_DOC_REF = "The document the row belongs to (→ `documents.doc_id`)."

#: Meaning of every column, per table. A schema column missing here fails the tests.
COLUMNS: dict[str, dict[str, str]] = {
    "paper_ids": {
        "paper_id": "A paper id published by a run of this output folder (unique).",
        "current_id": "The `papers.paper_id` it names now: itself for a current paper, the paper it was merged "
                      "into for a redirect; null when the paper was removed (none of its mentions is left).",
        "since_run": "The run (`manifest.json` `run_id`) since which `current_id` and `reason` hold.",
        "reason": "`added` (issued for a new paper), `split` (issued for a part split off a paper), `merged` "
                  "(merged into `current_id`, which kept its older id), `removed`.",
    },
    "changes": {
        "run_id": "This run's id.",
        "previous_run_id": "The run compared with (the one published before); null on a first run.",
        "change": "`added`, `removed`, `merged` (`paper_id` was merged into `related_id`), `split` (`paper_id` "
                  "was split off `related_id`), `field_changed`.",
        "paper_id": "The paper concerned (for `merged`: the id that now redirects).",
        "related_id": "The paper merged into or split from; null for other changes.",
        "field": "The `papers` column that changed (`field_changed` only): `title`, `title_zh`, `arxiv_id`, "
                 "`venue`, `year`, `award`, `authors`, `institutions` or `urls`.",
        "old_value": "Its value at the previous run, as text (a list as a JSON array); null when missing or empty.",
        "new_value": "Its value now, as `old_value`.",
    },
    "errors": {
        "path": "The file that failed, relative to the corpus folder (a JSON Lines line: `file.jsonl#N`; a CSV row: `file.csv#N`; a YAML record: `file.yml#N`).",
        "stage": "The stage that failed on it (`ingest`, `clean`, `segment`, `normalize`, `extract`; "
                 "`per-document` for a file over its time budget, `run.file_timeout`).",
        "error_type": "The error's class, e.g. `UnicodeDecodeError`, `JSONDecodeError`, `EmptyDocument`, `Timeout`.",
        "message": "What went wrong, in words, naming the file.",
    },
    "documents": {
        "doc_id": "Document id: first 16 hex digits of SHA-256 of the file's bytes (a JSONL line: of the "
                  "line); for a byte-identical later copy, of (content hash, path); for a skipped or unreadable "
                  "file, of its path.",
        "source_path": "Path of the file relative to the corpus folder, `/`-separated; a JSONL line is "
                       "`file.jsonl#N` (N from 1), a CSV row `file.csv#N` (the header is row 1), a YAML record `file.yml#N` (N from 1).",
        "content_sha256": "SHA-256 (hex) of the raw bytes read; null when the file was not read.",
        "encoding": "Character encoding the bytes were decoded with (BOM, HTML `<meta charset>`, then "
                    "detection); null when not decoded.",
        "lang": "Script of the document: `zh-Hans`, `zh-Hant`, `en`, `mixed` or `und`; null when not processed.",
        "n_bytes": "Size of the input in bytes (a JSONL line: of the line).",
        "n_chars": "Length of `text` in characters (Unicode code points).",
        "text": "The decoded, repaired and normalized text (HTML: main content as Markdown). All offsets in "
                "sections, dropped and context point into it.",
        "status": "`ok` (processed), `empty` (no text), `error` (a stage failed; see `error`), `skipped` "
                  "(unsupported file type, a link or special file, or a folder that cannot be listed: "
                  "`source_path` is then the folder), `duplicate` (same bytes as an earlier file).",
        "error": "Why the document was not processed: `<stage>: <ErrorType>: <message>`, the skip reason, or "
                 "the earlier file a duplicate repeats; null when `status` is `ok`.",
        "venue": "Venue the article is about (one of the known venues, e.g. `NeurIPS`), found in its "
                 "headline or lead; null when none.",
        "year": "Year of that venue edition; null when none.",
        "urls": "URLs of the article as a whole: those of its reference lines (`参考链接：`-style), in order; "
                "empty list when none.",
        "n_sections": "Number of sections (paper mentions) found in the document.",
        "raw_text": "The decoded input before HTML extraction, mojibake repair and Unicode normalization; null "
                    "when equal to `text`.",
        "title": "Page title from HTML `<title>`/metadata or the JSONL/CSV `title` field (a paper record: the "
                 "paper's title); null otherwise.",
        "url": "Canonical URL from HTML metadata or the JSONL `url` key; null otherwise.",
        "published": "Publish date as given by HTML metadata or the JSONL `published`/`date` key; null otherwise.",
        "notes": "What ingest repaired or fell back on (`; `-separated), e.g. replaced space separators or a "
                 "truncated last character; null when nothing.",
        "dup_of": "`doc_id` of the earlier document this one copies (identical bytes, or the same papers with "
                  "near-identical section text); null for an original.",
        "reason": "Why the document yields no paper: `no_paper_found` for a processed (`ok`) document in "
                  "which segment found no section; null otherwise (a document not processed says why in "
                  "`status` and `error`).",
    },
    "sections": {
        "section_id": "Section id: `<doc_id>-<ordinal, 3 digits>`.",
        "doc_id": _DOC_REF,
        "ordinal": "Position of the section in its document (0-based).",
        "char_start": _SPAN_START,
        "char_end": _SPAN_END + " Dropped spans inside the range are left out of `text`.",
        "heading": "The section's heading line as written; null when the section has none (inline mention).",
        "lang": "Script of the section: `zh-Hans`, `zh-Hant`, `en`, `mixed` or `und`.",
        "text": "The section's text (its range without the dropped spans inside it).",
        "text_norm": "`text` with Chinese runs converted to the target script (OpenCC; URLs and English untouched).",
        "title": "English title of the paper as the source gives it; null when the source gives none.",
        "title_zh": "Chinese title in the target script; null when none (a description is not a title).",
        "authors": "Author names in the script given, in order (`等`/et al. removed); empty list when none.",
        "authors_truncated": "True when the source cut the author list (`等`, et al., \"and colleagues\").",
        "institutions": "Institutions as the section states them (Chinese in the target script); empty list when none.",
        "venue": "Venue of the paper (one of the known venues), from the section or the document; null when none.",
        "year": "Year of the venue edition; null when none.",
        "award": "Normalized award: `best_paper`, `best_paper_runner_up`, `outstanding_paper`, "
                 "`outstanding_position_paper`, `honorable_mention`, `test_of_time`, `other`; null when none.",
        "award_raw": "The award label as written in the source; null when none.",
        "arxiv_id": "arXiv identifier without version (e.g. `2404.02905`); null when none.",
        "arxiv_version": "arXiv version when the source gives one (e.g. `v2`); null otherwise.",
        "urls": "Every URL of the section in order (trailing punctuation stripped, scheme-less ones with "
                "`https://`); empty list when none.",
        "url_kinds": "Kind of each URL, aligned with `urls`: `arxiv`, `pdf`, `project`, `code`, `doi`, "
                     "`openreview`, `other`.",
        "summary": "Summary: the abstract or first body paragraph, cut at a sentence boundary to at most "
                   "`extract.summary_max_chars` characters, in the source's script; null when none.",
        "summary_norm": "`summary` in the target script (OpenCC); null when no summary.",
        "keywords": "Keywords of the section (jieba TF-IDF for Chinese, YAKE for English), in the target "
                    "script; at most `extract.n_keywords`.",
        "paper_id": "The paper this section mentions (→ `papers.paper_id`).",
        "match_score": "Average dedup match score (0..1) of this section to the other mentions of its paper; "
                       "null when the paper has only this mention. Compare with `dedup.match_threshold`.",
        "embedding_chars_cut": "Characters of the section's title, Chinese title and summary that its dedup embedding "
                               f"left out: the summary past its first {SUMMARY_HEAD_CHARS} characters (a section with "
                               f"no title and no summary: its text past {SUMMARY_HEAD_CHARS}), plus any past the "
                               f"embedder's {DEFAULT_MAX_CHARS}-character input; 0 when the embedding saw all of them.",
    },
    "papers": {
        "paper_id": "Stable paper id: `p-` + 16 hex digits of SHA-256 of the arXiv id when known, else of the "
                    "folded title, else of the first mention's section id.",
        "title": "English title: the most common folded title, spelled as in the mention with the most "
                 "metadata; null when no mention gives one.",
        "title_zh": "Chinese title in the target script, voted over the mentions; null when none.",
        "arxiv_id": "arXiv identifier without version, voted over the mentions; null when none.",
        "venue": "Venue, voted over the mentions; null when none.",
        "year": "Year of the venue edition, voted over the mentions; null when none.",
        "award": "Normalized award (see `sections.award`), voted over the mentions; null when none.",
        "authors": "Author names from the mention with the longest list; empty list when none.",
        "institutions": "Institutions from the mention with the longest list; empty list when none.",
        "urls": "Distinct URLs of all mentions, in mention order; empty list when none.",
        "url_kinds": "Kind of each URL, aligned with `urls` (see `sections.url_kinds`).",
        "summary": "The longest summary of the mentions, in the target script; null when none.",
        "section_ids": "Its mentions (→ `sections.section_id`), in section-id order.",
        "doc_ids": "Distinct documents with a mention (→ `documents.doc_id`), sorted.",
        "n_mentions": "Number of mentions (sections).",
        "n_sources": "Number of distinct source documents, a copy (`documents.dup_of`) counted as its original.",
        "conflicts": "Fields on which the mentions disagree, each as `field: value1 | value2`; empty list when "
                     "they agree.",
    },
    "dropped": {
        "doc_id": _DOC_REF,
        "char_start": _SPAN_START,
        "char_end": _SPAN_END,
        "reason": "Why it was dropped: `front_matter`, `html_comment`, `llm_chatter`, `repost_source`, `byline`, `editor_credit`, `share_prompt`, `copyright`, "
                  "`navigation`, `newsletter`, `related_list`, `caption`, `unrelated_leading`, "
                  "`unrelated_trailing`.",
        "text": "The dropped text (`documents.text[char_start:char_end]`).",
    },
    "context": {
        "doc_id": _DOC_REF,
        "char_start": _SPAN_START,
        "char_end": _SPAN_END,
        "kind": "What the span is: `headline`, `lead`, `award_header`, `award_intro`, `reference`, `trailer`.",
    },
}

#: Meaning of each key of the Parquet files' key-value metadata (the same in every table).
FILE_METADATA: dict[str, str] = {
    "pipeline_version": "Version of the pipeline that wrote the file (`pipeline.__version__`).",
    "config_fingerprint": "SHA-256 prefix (16 hex) of the configuration settings that change output meaning.",
    "embedder": "Id of the embedder used by dedup (model and version).",
    "schema_version": "Version of the output schemas (`pipeline.write.SCHEMA_VERSION`); raised when a column is "
                      "added, renamed or retyped.",
}


def undocumented() -> dict[str, list[str]]:
    """Schema columns without a meaning in :data:`COLUMNS`: table -> missing names."""
    missing = {name: [c for c in schema.names if c not in COLUMNS.get(name, {})] for name, schema in TABLES.items()}
    return {name: cols for name, cols in missing.items() if cols}


def type_name(dtype: pa.DataType) -> str:
    """Short Arrow type name: ``string``, ``int64``, ``float32``, ``list<string>``, ..."""
    if pa.types.is_list(dtype):
        return f"list<{type_name(dtype.value_type)}>"
    return {"float": "float32", "double": "float64", "bool": "boolean"}.get(str(dtype), str(dtype))


def example(values: Sequence[Any] | pd.Series, dtype: pa.DataType | None = None) -> str | None:
    """The first non-empty value of a column as display text (None when all empty): lists as JSON,
    integers as integers (``dtype`` tells), other floats to two decimals, booleans lower case;
    cut at :data:`EXAMPLE_CHARS`, newlines as ``\\n``."""
    for value in values:
        if value is None or (isinstance(value, float) and math.isnan(value)):
            continue
        if isinstance(value, str) and not value.strip():
            continue
        if not isinstance(value, str | bytes) and hasattr(value, "__len__") and not len(value):
            continue
        if isinstance(value, str):
            text = value
        elif hasattr(value, "tolist") and not isinstance(value, float | int):
            text = json.dumps(value.tolist(), ensure_ascii=False)
        elif isinstance(value, list | tuple):
            text = json.dumps(list(value), ensure_ascii=False)
        elif isinstance(value, bool):
            text = str(value).lower()
        elif dtype is not None and pa.types.is_integer(dtype):
            text = str(int(value))
        elif isinstance(value, float):
            text = f"{value:.2f}"
        else:
            text = str(value)
        text = text.replace("\r", "").replace("\n", "\\n")
        if len(text) > EXAMPLE_CHARS:
            text = text[:EXAMPLE_CHARS].rstrip() + "…"
        return text
    return None


def _cell(text: str | None) -> str:
    if text is None:
        return "*(empty in the sample)*"
    text = text.replace("|", "\\|")
    return f"`{text}`" if "`" not in text else text


def render(frames: dict[str, pd.DataFrame], file_metadata: Sequence[str] = ()) -> str:
    """The data dictionary as Markdown.

    Args:
        frames: the tables of a run over ``corpora/sample`` (examples).
        file_metadata: the Parquet files' metadata keys (values left out).

    Raises KeyError: a schema column has no meaning in :data:`COLUMNS`.
    """
    missing = undocumented()
    missing_keys = [k for k in file_metadata if k not in FILE_METADATA]
    if missing or missing_keys:
        raise KeyError(f"no description in pipeline/datadict.py for columns {missing} (COLUMNS) "
                       f"or Parquet metadata keys {missing_keys} (FILE_METADATA)")
    lines = [
        "# Data dictionary",
        "",
        "<!-- Generated by `python -m pipeline.datadict` from the schemas in pipeline/write.py and the",
        "     descriptions in pipeline/datadict.py; do not edit by hand. -->",
        "",
        "The pipeline writes five data tables, `errors.parquet`, `paper_ids.parquet` and `changes.parquet` "
        "(Parquet, zstd), `manifest.json`, "
        "`report.html` and the dataset card `README.md` into the output folder. "
        "Types are Arrow types; every column may be null unless its meaning says otherwise, and list "
        "columns hold an empty list, never null. Character offsets count Unicode code points of "
        "`documents.text`. Examples are the first non-empty value of the column in a run over "
        "`corpora/sample` with the default configuration (target script `zh-Hans`).",
        "",
    ]
    for name, schema in TABLES.items():
        frame = frames.get(name, pd.DataFrame())
        lines += [f"## {name}", "", f"`{name}.parquet`. {TABLE_DOCS.get(name, '')}", "",
                  "| column | type | meaning | example |", "|---|---|---|---|"]
        for field in schema:
            values = frame[field.name] if field.name in frame.columns else []
            if field.name in RUN_ID_COLUMNS.get(name, ()):  # a run id differs on every run: one fixed example
                values = [RUN_ID_EXAMPLE for v in values if isinstance(v, str)]
            meaning = COLUMNS[name][field.name].replace("|", "\\|")
            lines.append(f"| `{field.name}` | {type_name(field.type)} | {meaning} | {_cell(example(values, field.type))} |")
        lines.append("")
    if file_metadata:
        lines += ["## File metadata", "",
                  "Every Parquet file carries these key-value metadata entries (read with "
                  "`pyarrow.parquet.read_schema(path).metadata`).", "",
                  "| key | meaning |", "|---|---|"]
        for key in sorted(file_metadata):
            meaning = FILE_METADATA[key].replace("|", "\\|")
            lines.append(f"| `{key}` | {meaning} |")
        lines.append("")
    return "\n".join(lines)


def metadata_keys(path: Path) -> list[str]:
    """The key-value metadata keys of a Parquet file, sorted (pandas' own ``pandas`` key left out)."""
    return sorted(k.decode() for k in (pq.read_schema(path).metadata or {}) if k != b"pandas")


def sample_frames(out_dir: Path) -> tuple[dict[str, pd.DataFrame], list[str]]:
    """Run over ``corpora/sample`` into ``out_dir``: ``(tables, metadata keys)``. ConfigError when
    the default embedder cannot be built."""
    from .config import load_config
    from .runner import run

    config = load_config()
    config.run.quiet = True
    run(SAMPLE_CORPUS, out_dir, config, progress=False)
    frames = {name: pd.read_parquet(out_dir / f"{name}.parquet") for name in TABLES if (out_dir / f"{name}.parquet").exists()}
    return frames, metadata_keys(out_dir / "documents.parquet")


def main(argv: Sequence[str] | None = None) -> int:
    """``python -m pipeline.datadict [--check] [--out PATH]``: 0 written or up to date; 1 stale."""
    parser = argparse.ArgumentParser(prog="python -m pipeline.datadict", description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=DICTIONARY_PATH, help="file to write (default: %(default)s)")
    parser.add_argument("--check", action="store_true", help="do not write; exit 1 when the file differs")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="datadict-") as tmp:
        frames, meta = sample_frames(Path(tmp))
    text = render(frames, meta)
    if args.check:
        current = args.out.read_text(encoding="utf-8") if args.out.exists() else ""
        if current != text:
            print(f"{args.out} is stale: run `python -m pipeline.datadict`", file=sys.stderr)
            return 1
        return 0
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(text, encoding="utf-8")
    print(args.out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
