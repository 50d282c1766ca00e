"""Errors of experiment files and run folders (every one a :class:`~rag.errors.ConfigError`)."""
from __future__ import annotations

from rag.errors import ConfigError


class ExperimentError(ConfigError):
    """An experiment file is invalid, or its run folder cannot be used."""


class GridError(ExperimentError):
    """The grid of overrides is malformed or expands to no run."""


class UnknownMetricError(ExperimentError):
    """A metric name matches no known metric."""


class RunDirError(ExperimentError):
    """The output folder belongs to another experiment (or another dataset), or is not a run folder."""
