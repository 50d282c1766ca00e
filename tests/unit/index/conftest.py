"""Index backends for the parametrised suite (test_backends.py): the local folder, milvus-lite
embedded in a file, milvus-lite served on 127.0.0.1, the Milvus 2.3.5 server from PyPI, and, when
``RAG_MILVUS_URI`` is set, an external Milvus >= 2.5 (token in ``RAG_MILVUS_TOKEN``).

The servers are started once per test session and stopped at its end; they listen on 127.0.0.1."""
from __future__ import annotations

import contextlib
import itertools
import os
from dataclasses import dataclass
from pathlib import Path

import pytest

TARGETS = ["local", "lite-file", "lite-server", "milvus-2.3.5"] + (["external"] if os.environ.get("RAG_MILVUS_URI") else [])
_names = itertools.count()


@dataclass(frozen=True)
class Target:
    """Where one test's index lives: ``index`` is the config's ``index:`` section."""

    name: str
    index: dict
    bm25: bool  # the engine has BM25 (everything but Milvus < 2.5)
    token: str = ""

    @property
    def milvus(self) -> bool:
        return self.name != "local"


@pytest.fixture(scope="session")
def lite_server(tmp_path_factory):
    pytest.importorskip("milvus_lite", reason="milvus-lite is not installed (pip install 'rag[milvus]')")
    from tests.milvus_servers import start_lite_server

    srv = start_lite_server(tmp_path_factory.mktemp("lite-server"))
    yield srv
    srv.stop()


@pytest.fixture(scope="session")
def milvus235(tmp_path_factory):
    pytest.importorskip("milvus", reason="the Milvus 2.3.5 test server is not installed (pip install 'rag[dev]')")
    from tests.milvus_servers import start_milvus235

    srv = start_milvus235(tmp_path_factory.mktemp("milvus235"))
    yield srv
    srv.stop()


def make_target(name: str, request, tmp_path: Path) -> Target:
    if name != "local":
        pytest.importorskip("pymilvus", reason="pymilvus is not installed (pip install 'rag[milvus]')")
    collection = f"t{os.getpid()}_{next(_names)}"
    if name == "local":
        return Target(name, {"backend": "local", "path": str(tmp_path / "index")}, True)
    if name == "lite-file":
        pytest.importorskip("milvus_lite", reason="milvus-lite is not installed (pip install 'rag[milvus]')")
        return Target(name, {"backend": "milvus", "milvus": {"uri": str(tmp_path / "milvus.db"),
                                                             "collection": collection}}, True)
    if name == "lite-server":
        srv = request.getfixturevalue("lite_server")
        return Target(name, {"backend": "milvus", "milvus": {"uri": srv.uri, "collection": collection}}, True)
    if name == "milvus-2.3.5":
        srv = request.getfixturevalue("milvus235")
        os.environ["RAG_TEST_MILVUS235_TOKEN"] = srv.token
        return Target(name, {"backend": "milvus", "milvus": {"uri": srv.uri, "collection": collection,
                                                             "token_env": "RAG_TEST_MILVUS235_TOKEN"}},
                      False, srv.token)
    uri = os.environ["RAG_MILVUS_URI"]
    section = {"uri": uri, "collection": collection}
    if os.environ.get("RAG_MILVUS_TOKEN"):
        section["token_env"] = "RAG_MILVUS_TOKEN"
    return Target(name, {"backend": "milvus", "milvus": section}, True)


@pytest.fixture(params=TARGETS)
def target(request, tmp_path) -> Target:
    t = make_target(request.param, request, tmp_path)
    yield t
    if t.milvus:  # leave nothing behind on a shared server
        from rag.config import load_config
        from rag.pipeline import Pipeline
        from tests.conftest import write_config

        with contextlib.suppress(Exception):
            cfg = load_config(write_config(tmp_path / "cleanup", index=t.index))
            Pipeline(cfg).milvus_index().drop()


def needs_bm25(target: Target) -> None:
    if not target.bm25:
        pytest.skip(f"{target.name}: Milvus < 2.5 has no BM25 function or sparse vectors, so no BM25 or hybrid search")
