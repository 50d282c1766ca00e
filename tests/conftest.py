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
    """A config for tests: demo corpus, hashing embedder (no model), index under tmp_path."""
    cfg = {
        "corpus": {"paths": [str(DEMO_DOCS)], "format": "jsonl"},
        "index": {"path": str(tmp_path / "index")},
        "bm25": {"analyzer": "korean_bigram"},
        "embedding": {"backend": "hashing", "dim": 128, "cache_dir": str(tmp_path / "cache")},
        "retrieval": {"candidates": 10},
        "rerank": {"enabled": False},  # unit tests run without a model; tests/models turn it on
    }
    for k, v in sections.items():
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
