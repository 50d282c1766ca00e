"""Errors of the measurement harness (all :class:`rag.errors.RagError`, so the CLI exits 2 on them)."""
from __future__ import annotations

from rag.errors import InputError, RagError


class BenchError(RagError):
    """A measurement could not be listed, parsed, run or checked."""


class UnknownMeasurementError(BenchError):
    """No measurement of that name (the message lists the known ones)."""


class BenchOptionError(BenchError, InputError):
    """A measurement option is missing, unknown or of the wrong type."""


class ExpectedFileError(BenchError, InputError):
    """``benchmarks/expected.yaml`` (or another expected-results file) is malformed: the message
    names the file, the line and the entry."""


class MissingDataError(BenchError):
    """A measurement needs data that is not on this machine (``rag bench check`` prints SKIP)."""


class MeasurementError(BenchError):
    """A measurement ran but did not produce its result (a server that never became ready, ...)."""
