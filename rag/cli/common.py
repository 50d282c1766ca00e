"""Shared by the CLI commands: config loading with --set overrides, progress bars."""
from __future__ import annotations

import json
import sys
from pathlib import Path

from rag.errors import ConfigError


DEFAULT_CONFIG = "configs/default.yaml"


def overrides(pairs: list[str] | None) -> dict[str, object]:
    """The ``--set KEY=VALUE`` pairs as config overrides (:func:`rag.config.parse_overrides`)."""
    from rag.config import parse_overrides

    return parse_overrides(pairs)


def load_cli_config(args):
    """The config named by ``--config`` with the ``--set`` overrides applied."""
    from rag.config import load_config

    cfg = load_config(args.config)
    ov = overrides(getattr(args, "set", None))
    return cfg.with_overrides(ov) if ov else cfg


def make_pipeline(args):
    from rag.pipeline import Pipeline

    return Pipeline(load_cli_config(args))


def announce_gate(p) -> None:
    """Before a command's answers: fail on a gate threshold the config leaves unset
    (``p.components.check_gate``), then say once, on stderr (never in ``--json`` stdout), when the gate's
    thresholds were not fitted on the indexed corpus (``p.components.gate_fit_notice``)."""
    p.components.check_gate()
    notice = p.components.gate_fit_notice()
    if notice is not None:
        print(f"note: {notice}", file=sys.stderr)


def progress_bar(total: int | None, desc: str):
    from tqdm import tqdm

    return tqdm(total=total, desc=desc, unit="chunk", file=sys.stderr, disable=None, dynamic_ncols=True)


def load_history(path: str | None):
    from rag.types import turns_from_json

    if not path:
        return ()
    try:
        data = json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise ConfigError(f"--history {path}: cannot read a JSON list of turns ({exc})") from None
    try:
        return turns_from_json(data)
    except ValueError as exc:
        raise ConfigError(f"--history {path}: {exc}") from None


def progress_bars():
    """A ``progress(stage, done, total)`` callback with one tqdm bar per stage; the ``embed`` stage
    reports increments (chunks embedded per batch), every other stage its running count."""
    from tqdm import tqdm

    bars: dict[str, tqdm] = {}

    def progress(stage: str, done: int, total: int) -> None:
        if stage not in bars:
            bars[stage] = tqdm(total=total or None, desc=stage, file=sys.stderr, disable=None, dynamic_ncols=True)
        if stage == "embed":
            bars[stage].update(done)
        else:
            bars[stage].n = done
            bars[stage].refresh()
    return progress, bars


def set_option(s) -> None:
    """``--set KEY=VALUE`` (repeatable): config overrides, read by :func:`load_cli_config`."""
    s.add_argument("--set", action="append", metavar="KEY=VALUE", help="override a config value (repeatable)")


def principal_options(s) -> None:
    """``--as USER``, ``--group G`` (repeatable) and ``--tenant T``: who asks (docs/security.md)."""
    s.add_argument("--as", dest="as_user", metavar="USER", default=None,
                   help="ask as this user (documents with access metadata need a matching principal)")
    s.add_argument("--group", dest="groups", action="append", metavar="GROUP", default=None,
                   help="a group of the user asking (repeatable)")
    s.add_argument("--tenant", default=None, metavar="TENANT", help="the tenant of the user asking")


def cli_principal(args):
    """The principal of ``--as``/``--group``/``--tenant``, or None (anonymous) when none is given."""
    from rag.access.model import Principal

    user, groups, tenant = getattr(args, "as_user", None), getattr(args, "groups", None) or (), \
        getattr(args, "tenant", None)
    if user is None and not groups and tenant is None:
        return None
    return Principal(user, tuple(groups), tenant)


FILTER_HELP = ("only documents whose metadata meets FIELD=VALUE (FIELD=A,B: one of), FIELD>=V, >, <=, <; "
               "repeatable; the fields retrieval.filter_fields declares")


def filter_options(s) -> None:
    """``--filter FIELD=VALUE`` (repeatable): metadata filters on declared fields."""
    s.add_argument("--filter", dest="filters", action="append", metavar="COND", default=None, help=FILTER_HELP)


def cli_where(args, pipeline):
    """The ``--filter`` conditions as a request filter, or None; a bad one is a FieldFilterError."""
    import re

    from rag.fields import FieldFilterError

    conds = getattr(args, "filters", None) or []
    if not conds:
        return None
    declared = pipeline.config.retrieval.filter_fields
    spec: dict = {}
    for text in conds:
        m = re.fullmatch(r"\s*([^<>=\s]+)\s*(>=|<=|>|<|=)\s*(.*?)\s*", text)
        if m is None:
            raise FieldFilterError(f"--filter {text!r}: write FIELD=VALUE, FIELD>=VALUE, FIELD<VALUE...")
        name, op, raw = m.groups()
        kind = declared.get(name, "keyword")
        values = [_cli_value(kind, v) for v in raw.split(",")] if op == "=" else [_cli_value(kind, raw)]
        key = {">=": "gte", "<=": "lte", ">": "gt", "<": "lt"}.get(op, "in" if len(values) > 1 else "eq")
        spec.setdefault(name, {})[key] = values if key == "in" else values[0]
    return pipeline.where(spec)


def _cli_value(kind: str, text: str):
    if kind == "number":
        try:
            return float(text) if any(c in text for c in ".eE") else int(text)
        except ValueError:
            return text  # the filter check names the field and the bad value
    if kind == "bool":
        return {"true": True, "false": False}.get(text.lower(), text)
    return text
