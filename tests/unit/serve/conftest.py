"""Service fixtures: a config over the demo corpus (hashing embedder), its index, a live server."""
from __future__ import annotations

import contextlib
from pathlib import Path

import httpx
import pytest

from tests.conftest import write_config

pytest.importorskip("fastapi")
pytest.importorskip("uvicorn")

ADMIN_KEY = "admin-key-0123456789abcdef"
QUERY_KEY = "query-key-0123456789abcdef"


@contextlib.contextmanager
def live(tmp_path: Path, keys: dict[str, str] | None = None, tools=None, tools_section: dict | None = None,
         **sections):
    """Build the index for a test config and serve it: yields (server, client). ``tools``: the tool
    registry; ``tools_section``: the config's ``tools`` section."""
    from rag.config import load_config
    from rag.pipeline import Pipeline
    from rag.serve import ApiKeys, Service, create_app
    from tests.unit.serve.server import LiveServer

    cfg = load_config(write_config(tmp_path, **sections, **({"tools": tools_section} if tools_section else {})))
    Pipeline(cfg).build_index()
    service = Service(cfg, keys=ApiKeys.from_env(keys or {}, cfg.serve), tools=tools)
    with LiveServer(create_app(cfg, service)) as srv, httpx.Client(base_url=srv.url, timeout=60) as client:
        srv.service, srv.cfg = service, cfg
        yield srv, client


@pytest.fixture(scope="module")
def served(tmp_path_factory):
    """One read-only server for a module (auth off)."""
    with live(tmp_path_factory.mktemp("served")) as pair:
        yield pair


@pytest.fixture
def writable(tmp_path):
    """A server of its own, for tests that change documents."""
    with live(tmp_path) as pair:
        yield pair
