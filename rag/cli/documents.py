"""``rag documents [--json] [--as USER --group G --tenant T]``: what is indexed, as one principal may see it.

Registered by :func:`add_parsers` from :func:`rag.cli.build_parser`; :meth:`rag.pipeline.Pipeline.documents`
lists, so a document the principal may not read is in no line and no count."""
from __future__ import annotations

import argparse
import json

from rag.cli.common import DEFAULT_CONFIG, cli_principal, make_pipeline, principal_options, set_option


def cmd_documents(args) -> int:
    p = make_pipeline(args)
    who = cli_principal(args)
    docs = p.documents(principal=who)
    if args.current:
        docs = tuple(d for d in docs if d.status == "current")
    if args.json:
        print(json.dumps({"index": p.index_location, "index_version": p.index.version_name,
                          "principal": who.to_json() if who is not None else None,
                          "documents": [d.to_json() for d in docs]}, ensure_ascii=False, indent=2))
        return 0
    for d in docs:
        state = d.status if d.status != "superseded" else f"superseded by {d.current_version}"
        where = d.file or d.uri
        print(f"{d.id}  v{d.version}  {state}  {d.chunks} chunk{'s' * (d.chunks != 1)}  {d.title}"
              + (f"  ({where})" if where else ""))
    ids = len({d.id for d in docs})
    reader = "anonymous (public documents only)" if who is None else "this principal"
    print(f"{ids} document{'s' * (ids != 1)}, {len(docs)} version{'s' * (len(docs) != 1)} readable by {reader}")
    return 0


def add_parsers(sub: argparse._SubParsersAction) -> None:
    s = sub.add_parser("documents", help="list the indexed documents a principal may read (id, version, "
                                         "current or superseded, chunks)")
    s.add_argument("--config", default=DEFAULT_CONFIG)
    s.add_argument("--json", action="store_true")
    s.add_argument("--current", action="store_true", help="only the versions answered from")
    principal_options(s)
    set_option(s)
    s.set_defaults(func=cmd_documents)
