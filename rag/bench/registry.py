"""The measurements and data recipes ``rag bench`` knows, their typed options, and running one.

A measurement is one module ``rag/bench/<name>.py`` holding ``MEASUREMENT``: a :class:`Measurement`
whose ``options`` is a frozen dataclass (its fields, with their types and defaults, are the command
line options: ``chunks: int = 10000`` is ``--chunks 10000``) and whose ``run(options)`` returns an
:class:`Outcome`. :func:`run_measurement` parses the options, checks the inputs, times the run and
stamps the result (:func:`rag.bench.harness.stamp`).
"""
from __future__ import annotations

import argparse
import dataclasses
import logging
import time
import types
import typing
from pathlib import Path
from typing import Any, Mapping, Sequence

from rag.bench.errors import BenchOptionError, MissingDataError, UnknownMeasurementError
from rag.bench.harness import peak_rss_mb, stamp, write_result
from rag.bench.measurement import Measurement, Outcome

log = logging.getLogger(__name__)


def measurements() -> dict[str, Measurement]:
    """Every measurement by name (``rag bench list``)."""
    from rag.bench import cold, context, documents, e2e, e2e_steps, embedders, entailment, file_fidelity, filtering
    from rag.bench import followups, gate_auto, injection, languages, milvus_equivalence, quarantine, reader
    from rag.bench import reader_blend, real_files, rerank, retrieval, serve, support, tools, unit_head, validation

    found = (cold, context, documents, e2e, e2e_steps, embedders, entailment, file_fidelity, filtering, followups,
             gate_auto, injection, languages, milvus_equivalence, quarantine, reader, reader_blend, real_files, rerank,
             retrieval, serve, support, tools, unit_head, validation)
    return {m.MEASUREMENT.name: m.MEASUREMENT for m in sorted(found, key=lambda m: m.MEASUREMENT.name)}


def recipes() -> dict[str, Measurement]:
    """The data recipes (``rag bench data NAME``): they write a data set instead of measuring."""
    from rag.bench import answer_sets, datasets

    return {r.name: r for r in (*datasets.RECIPES, *answer_sets.RECIPES)}


def get(name: str, known: Mapping[str, Measurement] | None = None) -> Measurement:
    known = measurements() if known is None else known
    if name not in known:
        raise UnknownMeasurementError(f"no measurement {name!r}; known: {', '.join(sorted(known))} (rag bench list)")
    return known[name]


# --------------------------------------------------------------------------- options
class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> typing.NoReturn:  # raise instead of exiting
        raise BenchOptionError(f"{self.prog}: {message} (see `{self.prog} --help`)")


def _add_option(ap: argparse.ArgumentParser, f: dataclasses.Field, hint: Any) -> None:
    flag = "--" + f.name.replace("_", "-")
    help_ = f.metadata.get("help", "")
    default = f.default if f.default is not dataclasses.MISSING else f.default_factory()  # type: ignore[misc]
    args = typing.get_args(hint)
    origin = typing.get_origin(hint)
    if origin in (typing.Union, types.UnionType) and type(None) in args:
        hint = next(a for a in args if a is not type(None))
        args, origin = typing.get_args(hint), typing.get_origin(hint)
    shown = f"{help_} (default: {default})".strip()
    if hint is bool:
        ap.add_argument(flag, action=argparse.BooleanOptionalAction, default=default, help=shown)
    elif origin is typing.Literal:
        ap.add_argument(flag, choices=list(args), default=default, help=shown)
    elif origin is tuple:
        ap.add_argument(flag, nargs="+", type=args[0], default=default, help=shown)
    elif hint in (int, float, str, Path):
        ap.add_argument(flag, type=hint, default=default, help=shown)
    else:
        raise TypeError(f"option {f.name}: unsupported type {hint!r}")


def option_parser(m: Measurement, prog: str | None = None) -> argparse.ArgumentParser:
    """The argument parser of a measurement's options (plus ``--out FILE``)."""
    ap = _Parser(prog=prog or f"rag bench run {m.name}", description=m.summary, add_help=True)
    hints = typing.get_type_hints(m.options)
    for f in dataclasses.fields(m.options):
        _add_option(ap, f, hints[f.name])
    ap.add_argument("--out", default=None, help="write the stamped JSON result here")
    return ap


def parse_options(m: Measurement, argv: Sequence[str], prog: str | None = None) -> tuple[Any, str | None]:
    """(options, --out) from ``argv``; :class:`BenchOptionError` on a bad option."""
    ns = option_parser(m, prog).parse_args(list(argv))
    out = ns.__dict__.pop("out")
    values = {k: (tuple(v) if isinstance(v, list) else v) for k, v in vars(ns).items()}
    try:
        return m.options(**values), out
    except (TypeError, ValueError) as exc:
        raise BenchOptionError(f"rag bench run {m.name}: {exc}") from None


def options_json(options: Any) -> dict[str, Any]:
    return {k: (str(v) if isinstance(v, Path) else list(v) if isinstance(v, tuple) else v)
            for k, v in dataclasses.asdict(options).items()}


# --------------------------------------------------------------------------- running
def missing_inputs(m: Measurement, options: Any) -> list[str]:
    return list(m.requires(options))


def run_measurement(m: Measurement, argv: Sequence[str] = (), *, command: Sequence[str] | None = None,
                    prog: str | None = None) -> tuple[dict[str, Any], Outcome]:
    """Run ``m`` with the options in ``argv``; returns (stamped record, outcome). The record is also
    written to ``--out`` when given."""
    options, out = parse_options(m, argv, prog)
    missing = missing_inputs(m, options)
    if missing:
        raise MissingDataError(f"{m.name}: " + "; ".join(missing))
    log.info("running %s with %s", m.name, options)
    t0 = time.perf_counter()
    outcome = m.run(options)
    seconds = round(time.perf_counter() - t0, 2)
    argv_all = list(command) if command is not None else ["rag", "bench", "run", m.name, *argv]
    record = stamp(m.name, options_json(options), argv_all, outcome.config_hash)
    record.update(seconds=seconds, peak_rss_mb=peak_rss_mb(), result=dict(outcome.metrics))
    if out:
        write_result(out, record)
    return record, outcome


def describe(m: Measurement) -> list[str]:
    """``NAME  summary`` and one line per option, for ``rag bench list``."""
    hints = typing.get_type_hints(m.options)
    lines = [f"{m.name:<20} {m.summary}"]
    for f in dataclasses.fields(m.options):
        default = f.default if f.default is not dataclasses.MISSING else f.default_factory()  # type: ignore[misc]
        name = getattr(hints[f.name], "__name__", str(hints[f.name]).replace("typing.", ""))
        lines.append(f"{'':<20}   --{f.name.replace('_', '-')} ({name}, default {default})")
    return lines


__all__ = ["Measurement", "Outcome", "describe", "get", "measurements", "missing_inputs", "option_parser",
           "options_json", "parse_options", "recipes", "run_measurement"]
