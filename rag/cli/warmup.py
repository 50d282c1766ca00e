"""``rag warmup --config C [--json]``: load what the config uses, answer the warm-up questions and print
the seconds each part took (for batch jobs to call before they time anything).

Registered by :func:`add_parsers` from :func:`rag.cli.build_parser`; docs/batch.md documents it.
"""
from __future__ import annotations

import argparse
import json

from rag.cli.common import DEFAULT_CONFIG, make_pipeline, set_option


def cmd_warmup(args) -> int:
    p = make_pipeline(args)
    w = p.warmup()
    if args.json:
        print(json.dumps({"config_hash": p.config.hash, **w.to_json()}, ensure_ascii=False, indent=2))
        return 0
    how = "answered" if w.generated else "up to the prompt (the LLM is not asked)"
    print(f"warm-up: {len(w.languages)} question(s) ({', '.join(w.languages)}) {how}")
    for part, seconds in w.parts().items():
        print(f"  {part:<11} {seconds:8.3f} s")
    print(f"  {'total':<11} {w.total_s:8.3f} s")
    return 0


def add_parsers(sub: argparse._SubParsersAction) -> None:
    s = sub.add_parser("warmup", help="load the models the config uses and answer a warm-up question; print the "
                                      "seconds each part took")
    s.add_argument("--config", default=DEFAULT_CONFIG)
    s.add_argument("--json", action="store_true", help="print the timings as JSON")
    set_option(s)
    s.set_defaults(func=cmd_warmup)
