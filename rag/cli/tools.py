"""``rag tools select "QUESTION" --tools FILE [--top K] [--json]`` and
``rag tools format RESPONSE.json [--schema SCHEMA.json] [--json]``.

Registered by :func:`add_parsers` from :func:`rag.cli.build_parser`; docs/tools.md documents them.
"""
from __future__ import annotations

import argparse
import json
from pathlib import Path

from rag.cli.common import DEFAULT_CONFIG, load_cli_config, set_option
from rag.errors import InputError


def _read_json(path: str, what: str):
    p = Path(path)
    if not p.is_file():
        raise InputError(f"{what} not found: {p}")
    try:
        return json.loads(p.read_text(encoding="utf-8"))
    except ValueError as exc:
        raise InputError(f"{p}: not valid JSON ({exc})") from None
    except UnicodeDecodeError as exc:
        raise InputError(f"{p}: not UTF-8 text ({exc})") from None


def cmd_select(args) -> int:
    from rag.pipeline import Pipeline
    from rag.tools import load_tools

    cfg = load_cli_config(args)
    tools = load_tools(args.tools)
    sel = Pipeline(cfg).select_tools(args.question, tools, args.top)
    if args.json:
        print(json.dumps({"selected": [{"name": t.name, "score": round(t.score, 4)} for t in sel.selected],
                          "left_out": sel.left_out}, ensure_ascii=False, indent=2))
        return 0
    print(f"{len(sel.selected)} of {len(tools)} tools (products: {', '.join(sel.products) or '-'})"
          + (f"; {sel.reason}" if sel.reason else ""))
    for i, t in enumerate(sel.selected, 1):
        dense = f"{t.dense:.3f}" if t.dense is not None else "-"
        bm25 = f"{t.bm25:.3f}" if t.bm25 is not None else "-"
        print(f"{i:>3}. {t.score:.4f}  {t.name}  [{t.product}]  dense {dense}  bm25 {bm25}")
    print(f"left out: {sel.left_out}")
    return 0


def cmd_format(args) -> int:
    from rag.text.tokens import make_counter
    from rag.tools import compare_tokens, format_result

    cfg = load_cli_config(args)
    data = _read_json(args.response, "response file")
    schema = _read_json(args.schema, "schema file") if args.schema else None
    counter = make_counter(cfg.context.tokenizer, cfg.tokenizer_model)
    out = format_result(data, schema, counter, args.max_tokens)
    cmp = compare_tokens(data, schema, counter)
    if args.json:
        print(json.dumps({"text": out.text, "tokens": out.tokens, "trims": [t.text() for t in out.trims],
                          "tokenizer": counter.name, "untrimmed": cmp.to_json()}, ensure_ascii=False, indent=2))
        return 0
    print(out.text)
    print(f"\n[{counter.name}] schema+YAML {out.tokens} tokens"
          + (f" (trimmed to --max-tokens {args.max_tokens}; untrimmed {cmp.schema_yaml})" if out.trims else "")
          + f"; YAML data alone {cmp.yaml_data}; minified JSON {cmp.minified_json}; pretty JSON {cmp.pretty_json}")
    return 0


def add_parsers(sub: argparse._SubParsersAction) -> None:
    t = sub.add_parser("tools", help="tool selection and tool-result formatting (seed 004)")
    tsub = t.add_subparsers(dest="tools_command", required=True)
    s = tsub.add_parser("select", help="the tools a question gets, with their scores")
    s.add_argument("question")
    s.add_argument("--tools", required=True, help="a tools YAML (tools: [...]) or an OpenAPI 3 document")
    s.add_argument("--top", type=int, default=None, help="at most K tools (default tools.max_tools)")
    s.add_argument("--json", action="store_true")
    s.add_argument("--config", default=DEFAULT_CONFIG)
    set_option(s)
    s.set_defaults(func=cmd_select)
    f = tsub.add_parser("format", help="a JSON API response as schema + YAML evidence, with token counts")
    f.add_argument("response", help="the response JSON file")
    f.add_argument("--schema", default=None, help="its JSON Schema (default: inferred from the data)")
    f.add_argument("--max-tokens", type=int, default=None, help="trim to this many tokens (rows, then fields)")
    f.add_argument("--json", action="store_true")
    f.add_argument("--config", default=DEFAULT_CONFIG)
    set_option(f)
    f.set_defaults(func=cmd_format)
