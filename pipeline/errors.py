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
