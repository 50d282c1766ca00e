"""What a measurement is: :class:`Measurement` (name, summary, typed options, ``run``, ``requires``)
and the :class:`Outcome` its ``run`` returns. Each ``rag/bench/<name>.py`` builds one;
:mod:`rag.bench.registry` lists and runs them."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Mapping, Sequence


@dataclass(frozen=True)
class Outcome:
    """What a measurement returns: ``metrics`` (JSON-able, the ``result`` of the file), a ``table``
    printed for people, and the hash of the RagConfig it ran with (None when it used none)."""

    metrics: Mapping[str, Any]
    table: str = ""
    config_hash: str | None = None


def _no_requirements(options: Any) -> Sequence[str]:
    return ()


@dataclass(frozen=True)
class Measurement:
    """``requires(options)`` names each missing input (data file, model, package) as a sentence; a
    non-empty answer makes ``rag bench run`` fail with :class:`MissingDataError` and
    ``rag bench check`` print SKIP with the reason."""

    name: str
    summary: str
    options: type
    run: Callable[[Any], Outcome]
    requires: Callable[[Any], Sequence[str]] = _no_requirements


__all__ = ["Measurement", "Outcome"]
