"""Shared fixtures. Model-backed fixtures load once per session."""
from __future__ import annotations

from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[1]
DEMO_DOCS = ROOT / "data" / "demo" / "documents.jsonl"
DEMO_QUESTIONS = ROOT / "data" / "demo" / "questions.jsonl"
FIXTURES = ROOT / "tests" / "fixtures"
SHARED_DATA = ROOT.parent / "shared" / "data"


def write_config(tmp_path: Path, **sections) -> Path:
    """A config for tests: demo corpus, hashing embedder (no model), index under tmp_path.
    A section given as None is left out (``gate=None``: a config with no gate section)."""
    cfg = {
        "corpus": {"paths": [str(DEMO_DOCS)], "format": "jsonl"},
        "index": {"path": str(tmp_path / "index")},
        "bm25": {"analyzer": "korean_bigram"},
        "embedding": {"backend": "hashing", "dim": 128, "cache_dir": str(tmp_path / "cache")},
        "retrieval": {"candidates": 10},
        "rerank": {"enabled": False},  # unit tests run without a model; tests/models turn it on
        # The reranker is off, so the gate falls back to the hashing cosine. These tests were written
        # against the old built-in fallback_threshold 0.0 (the gate open to about every question); the
        # built-in default is now unset (an error on this embedder), so the config says it explicitly.
        "gate": {"fallback_threshold": 0.0},
    }
    for k, v in sections.items():
        if v is None:
            cfg.pop(k, None)
        else:
            cfg[k] = {**cfg.get(k, {}), **v}
    tmp_path.mkdir(parents=True, exist_ok=True)
    p = tmp_path / "config.yaml"
    p.write_text(yaml.safe_dump(cfg, allow_unicode=True), encoding="utf-8")
    return p


@pytest.fixture
def tiny_config(tmp_path: Path) -> Path:
    return write_config(tmp_path)


@pytest.fixture(scope="session")
def shared_data() -> Path:
    if not SHARED_DATA.is_dir():
        pytest.skip(f"evaluation data not found at {SHARED_DATA} (only present in the development workspace)")
    return SHARED_DATA


@pytest.fixture
def fake_llm():
    """A scripted OpenAI-compatible server on 127.0.0.1 (see tests/fakes.py)."""
    from tests.fakes import FakeChatServer

    with FakeChatServer() as srv:
        yield srv
