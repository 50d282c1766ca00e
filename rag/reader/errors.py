"""Errors of the reader's data recipe (every one a :class:`~rag.errors.DatasetError`)."""
from __future__ import annotations

from rag.errors import DatasetError


class ReaderDataError(DatasetError):
    """An input of the reader's data recipe is missing, malformed or not the file the recipe names."""


class InputChecksumError(ReaderDataError):
    """An input file's size or hash is not the one the recipe records (another version of the file)."""


class RecipeMismatchError(ReaderDataError):
    """The output folder holds shards built by another recipe (other sources, negatives or inputs)."""
