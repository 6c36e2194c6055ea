"""The pipeline's error types. Each message names what it concerns and, for a wrong choice, the
valid options (as spaCy's ``errors.py``)."""

from __future__ import annotations


class PipelineError(Exception):
    """Base class of every error this package raises on purpose."""


class ConfigError(PipelineError):
    """A configuration file, key or value is invalid (unknown key, wrong type, bad choice)."""


class StageInputError(PipelineError):
    """A stage got a batch without its required columns (the message names stage, missing and present)."""


class EmptiedCorpus(PipelineError):
    """The corpus lists no file while the published tables hold some (more likely an unmounted
    folder than a removal): nothing is published unless ``allow_empty``."""


class DocumentError(PipelineError):
    """One input document could not be read, decoded or parsed; the run records it and goes on."""


class BinaryContentError(DocumentError, ValueError):
    """A file's bytes decode in no character encoding; also a :class:`ValueError`."""


class ErrorText(str):
    """A ``documents.error`` message carrying the ``errors.parquet`` ``stage`` and ``error_type``,
    set where the failure is caught; equal to the plain message."""

    stage: str
    error_type: str

    def __new__(cls, message: str, stage: str, error_type: str) -> ErrorText:
        text = super().__new__(cls, message)
        text.stage, text.error_type = stage, error_type
        return text

    def __getnewargs__(self) -> tuple[str, str, str]:  # pickle and copy keep both fields
        return str(self), self.stage, self.error_type
