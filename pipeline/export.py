"""``python -m pipeline export OUT DEST``: the published run's tables and dataset card, and
nothing else (no run history, state or cache), for an analyst or a dataset hub.

The files are copied under the output folder's lock, so no run publishes while they are read
(one run's files, never a mix), into a temporary folder beside ``DEST`` that is then renamed to
``DEST``: ``DEST`` appears complete or not at all.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

from .card import CARD
from .errors import PipelineError
from .publish import TABLE_FILES, OutputLock, published_record

#: What an export holds: the tables (``errors.parquet`` included) and the dataset card.
EXPORTED_NAMES = (*TABLE_FILES, CARD)


class ExportRefused(PipelineError):
    """``DEST`` is not an empty or new folder, or overlaps ``OUT``."""


class NothingPublished(PipelineError):
    """``OUT`` holds no run published in the current layout (run the pipeline on it first)."""


def export(out: str | Path, dest: str | Path) -> list[Path]:
    """Copy the published run's tables and card from ``out`` into the new folder ``dest``.

    Returns:
        the files written, in :data:`EXPORTED_NAMES` order.

    Raises:
        ExportRefused: ``dest`` exists and is not an empty folder, or lies inside ``out`` or holds it.
        NothingPublished: ``out`` has no publish record (:func:`pipeline.publish.published_record`).
        pipeline.publish.OutputLocked: a run is writing ``out``.
        OSError: a file cannot be read or written.
    """
    out, dest = Path(out), Path(dest)
    real_out, real_dest = out.resolve(), dest.resolve()
    if real_dest.is_relative_to(real_out) or real_out.is_relative_to(real_dest):
        raise ExportRefused(f"the export folder {dest} and the output folder {out} overlap; choose another folder")
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
