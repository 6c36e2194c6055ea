"""The stage contract: a plain function from one batch to the next, with declared columns.

Iteration, I/O, timing and progress live in :mod:`pipeline.runner`. Each stage declares the
columns it ``requires`` and ``adds`` (as spaCy components do), so a wrong order fails before any
data flows. A stage is ``fn(batch: pd.DataFrame, config: Config) -> pd.DataFrame`` over rows of
documents or sections and depends on no other batch (dedup, the one global stage, aside), so any
executor can run it over any split of the corpus.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np
import pandas as pd

from .errors import StageInputError

if TYPE_CHECKING:
    from .config import Config


@dataclass(frozen=True)
class Stage:
    """One named pipeline step: ``name`` (bars, timings, error rows), ``fn(batch, config) -> batch``,
    ``requires`` (input columns) and ``adds`` (output columns)."""

    name: str
    fn: Callable[[pd.DataFrame, Config], pd.DataFrame]
    requires: Sequence[str]
    adds: Sequence[str]

    def check_input(self, batch: pd.DataFrame) -> None:
        """Raise :class:`StageInputError` if ``batch`` lacks a required column."""
        missing = [c for c in self.requires if c not in batch.columns]
        if missing:
            raise StageInputError(
                f"stage {self.name!r} requires columns {missing} that the batch lacks; "
                f"the batch has {sorted(batch.columns)}"
            )

    def __call__(self, batch: pd.DataFrame, config: Config) -> pd.DataFrame:
        """Check the input columns, run the stage, and check it added what it declares."""
        self.check_input(batch)
        out = self.fn(batch, config)
        missing = [c for c in self.adds if c not in out.columns]
        if missing:
            raise StageInputError(f"stage {self.name!r} declared columns {missing} but did not add them")
        return out


def check_chain(stages: Sequence[Stage], initial_columns: Sequence[str]) -> None:
    """Check before any data flows that each stage's ``requires`` are met by earlier ones;
    StageInputError names the first that is not."""
    available = set(initial_columns)
    for stage in stages:
        missing = [c for c in stage.requires if c not in available]
        if missing:
            raise StageInputError(
                f"stage {stage.name!r} requires {missing}, which no earlier stage adds "
                f"(available: {sorted(available)})"
            )
        available |= set(stage.adds)


def present(value):
    """``value``, or None for pandas' missing markers (None, NaN, NA); lists and str pass as is."""
    if value is None or isinstance(value, list | str | dict):
        return value
    try:
        return None if pd.isna(value) else value
    except (TypeError, ValueError):  # arrays: not a missing marker
        return value


def _native(value):
    """A numpy scalar boxed as pandas' ``to_dict`` does (Python scalar, ``pd.Timestamp`` /
    ``pd.Timedelta``); anything else as is."""
    if isinstance(value, np.generic):
        if isinstance(value, np.datetime64):
            return pd.Timestamp(value)
        if isinstance(value, np.timedelta64):
            return pd.Timedelta(value)
        return value.item()
    return value


def records(batch: pd.DataFrame) -> list[dict]:
    """Rows of ``batch`` as dicts (as ``to_dict("records")``, Arrow lists as lists), missing markers
    as None; read column by column."""
    columns = list(batch.columns)
    if not columns:
        return [{} for _ in range(len(batch))]
    values = [[v if v is None or type(v) is str else present(_native(v)) for v in batch.iloc[:, k].tolist()]
              for k in range(len(columns))]
    return [dict(zip(columns, row, strict=True)) for row in zip(*values, strict=True)]
