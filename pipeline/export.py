"""``python -m pipeline export OUT DEST``: the published run's tables and dataset card only, copied
under the output lock into a temporary folder renamed to ``DEST`` (complete or absent)."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

from .card import CARD
from .errors import PipelineError
from .publish import MANIFEST, TABLE_FILES, OutputLock, published_record

#: What an export holds: the tables (``errors.parquet`` included) and the dataset card.
EXPORTED_NAMES = (*TABLE_FILES, CARD)


class ExportRefused(PipelineError):
    """``DEST`` is not an empty or new folder, overlaps ``OUT`` or lies inside the corpus."""


class NothingPublished(PipelineError):
    """``OUT`` holds no run published in the current layout (run the pipeline on it first)."""


def _published_corpus(out: Path) -> Path | None:
    """The published run's ``manifest.json`` ``corpus``, or None."""
    try:
        corpus = json.loads((out / MANIFEST).read_text(encoding="utf-8")).get("corpus")
    except (OSError, ValueError, AttributeError):
        return None
    return Path(corpus) if isinstance(corpus, str) and corpus else None


def export(out: str | Path, dest: str | Path) -> list[Path]:
    """Copy the published run's tables and card from ``out`` into the new folder ``dest``; returns
    the files written, in :data:`EXPORTED_NAMES` order.

    Raises:
        ExportRefused: ``dest`` is not empty or new, overlaps ``out``, or lies inside the published
            run's corpus.
        NothingPublished: ``out`` has no publish record.
        pipeline.publish.OutputLocked: a run is writing ``out``.
        OSError: a file cannot be read or written.
    """
    out, dest = Path(out), Path(dest)
    real_out, real_dest = out.resolve(), dest.resolve()
    if real_dest.is_relative_to(real_out) or real_out.is_relative_to(real_dest):
        raise ExportRefused(f"the export folder {dest} and the output folder {out} overlap; choose another folder")
    corpus = _published_corpus(out)
    if corpus is not None and (real_dest.is_relative_to(corpus.resolve()) or corpus.resolve() == real_dest):
        raise ExportRefused(f"the export folder {dest} is inside the corpus {corpus} of the run published in {out}: "
                            f"the next run would read its files ({CARD}) as articles; choose a folder outside "
                            "the corpus")
    if os.path.lexists(dest) and (not dest.is_dir() or dest.is_symlink() or any(dest.iterdir())):
        raise ExportRefused(f"{dest} exists and is not an empty folder; give a new or empty folder")
    if published_record(out) is None:
        raise NothingPublished(f"no run has been published in {out} (in this version's layout): run "
                               f"`python -m pipeline run CORPUS --out {out}` first")
    tmp = dest.parent / f".{dest.name}.export-{os.getpid()}.tmp"
    with OutputLock(out):
        names = [n for n in EXPORTED_NAMES if (out / n).is_file()]
        tmp.mkdir(parents=True)
        try:
            for name in names:
                shutil.copy2(out / name, tmp / name)
            os.replace(tmp, dest)  # over an empty folder, or a new name
        except BaseException:
            shutil.rmtree(tmp, ignore_errors=True)
            raise
    return [dest / n for n in names]
