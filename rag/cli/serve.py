"""``rag serve --config C [--host H] [--port P] [--workers N] [--build-index]``: the HTTP service.

Registered by :func:`add_parsers` from :func:`rag.cli.build_parser`; docs/service.md documents it.
"""
from __future__ import annotations

import argparse
import json
import os
import sys

from rag.cli.common import DEFAULT_CONFIG, overrides, set_option
from rag.errors import ConfigError


def cmd_serve(args) -> int:
    try:
        import fastapi  # noqa: F401
        import uvicorn
    except ImportError:
        raise ConfigError("rag serve needs FastAPI and uvicorn: pip install 'rag[serve]'") from None
    from rag.answer.generators import is_loopback_host
    from rag.pipeline import Pipeline
    from rag.serve.app import CONFIG_ENV, OVERRIDES_ENV, app_from_env
    from rag.serve.auth import ApiKeys
    from rag.serve.logs import configure

    ov = overrides(args.set)
    for key, value in (("serve.host", args.host), ("serve.port", args.port), ("serve.workers", args.workers)):
        if value is not None:
            ov[key] = value
    from rag.config import load_config

    cfg = load_config(args.config).with_overrides(ov) if ov else load_config(args.config)
    s = cfg.serve
    keys = ApiKeys.from_env(serve=s)  # a malformed key list or serve.keys fails here, before any worker starts
    if not keys.enabled and not is_loopback_host(s.host) and not s.allow_unauthenticated:
        raise ConfigError(f"refusing to serve {s.host} without API keys: set RAG_API_KEYS / RAG_ADMIN_KEYS "
                          "(comma-separated name:key), or serve.allow_unauthenticated: true")
    p = Pipeline(cfg)
    if not p.index_exists():
        if not args.build_index:
            raise ConfigError(f"no index at {p.index_location}: run `rag index --config {args.config}` first, "
                              "or pass --build-index")
        print(f"building the index at {p.index_location} ...", file=sys.stderr)
        p.build_index()
    configure(s.log_format)
    if not keys.enabled:
        import logging

        logging.getLogger(__name__).warning("API keys are not set (RAG_API_KEYS, RAG_ADMIN_KEYS): every route is open")
    os.environ[CONFIG_ENV] = str(os.path.abspath(args.config))
    os.environ[OVERRIDES_ENV] = json.dumps(ov, default=str)
    print(f"rag serve: http://{s.host}:{s.port}  ({s.workers} worker{'s' * (s.workers > 1)}, config {args.config})",
          file=sys.stderr)
    common = dict(host=s.host, port=s.port, log_config=None, access_log=False,
                  timeout_graceful_shutdown=s.shutdown_timeout_s, server_header=False)
    if s.workers > 1:
        import shutil
        import tempfile

        from rag.serve.nonces import NONCES_ENV

        shared = tempfile.mkdtemp(prefix="rag-serve-")  # the seen nonces of signed requests, for every worker
        os.environ[NONCES_ENV] = os.path.join(shared, "nonces.sqlite3")
        try:
            uvicorn.run("rag.serve.app:app_from_env", factory=True, workers=s.workers, **common)
        finally:
            shutil.rmtree(shared, ignore_errors=True)
    else:
        uvicorn.run(app_from_env(), **common)
    return 0


def add_parsers(sub: argparse._SubParsersAction) -> None:
    s = sub.add_parser("serve", help="serve the pipeline over HTTP (answer, search, context, chat completions, documents)")
    s.add_argument("--config", default=DEFAULT_CONFIG)
    s.add_argument("--host", default=None, help="default serve.host (127.0.0.1)")
    s.add_argument("--port", type=int, default=None, help="default serve.port (8000)")
    s.add_argument("--workers", type=int, default=None, help="processes (default serve.workers, 1)")
    s.add_argument("--build-index", action="store_true", help="index the configured corpus first if there is no index")
    set_option(s)
    s.set_defaults(func=cmd_serve)
