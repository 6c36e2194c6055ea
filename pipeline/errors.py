"""One place for the pipeline's error types and their messages.

Each error names what it concerns (a path, a document, a stage, a key) and, where a
choice was wrong, lists the valid options, in the manner of spaCy's ``errors.py``.
"""

from __future__ import annotations


class PipelineError(Exception):
    """Base class of every error this package raises on purpose."""


class ConfigError(PipelineError):
    """A configuration file, key or value is invalid (unknown key, wrong type, bad choice)."""


class StageInputError(PipelineError):
    """A stage got a batch without the columns it requires.

    The message names the stage, the missing columns and the columns that exist.
    """


class EmptiedCorpus(PipelineError):
    """The corpus lists no file while the published tables hold some: more often an unmounted or
    half-copied folder than a deliberate removal, so nothing is published unless the caller
    allows it (``--allow-empty``, ``allow_empty=True``)."""


class DocumentError(PipelineError):
    """One input document could not be read, decoded or parsed; the run records it and goes on."""


class BinaryContentError(DocumentError, ValueError):
    """A file's bytes are not text in any character encoding (an image, an archive, random
    bytes): no codec decodes them. A :class:`ValueError` too, for callers that catch that."""


class ErrorText(str):
    """A ``documents.error`` message that carries the ``errors.parquet`` ``stage`` and
    ``error_type`` of the failure it tells, set where the failure is caught (a stage that raised,
    a file over its time budget), so the errors table never parses them back out of the text.
    Equal to, and used as, the plain message."""

    stage: str
    error_type: str

    def __new__(cls, message: str, stage: str, error_type: str) -> ErrorText:
        text = super().__new__(cls, message)
        text.stage, text.error_type = stage, error_type
        return text

    def __getnewargs__(self) -> tuple[str, str, str]:  # pickle and copy keep both fields
        return str(self), self.stage, self.error_type
