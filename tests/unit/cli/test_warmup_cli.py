"""``rag warmup`` prints the seconds per part; ``rag ask`` loads only the models its config uses."""
from __future__ import annotations

import json

import pytest

from rag.cli.main import main
from rag.config import load_config
from rag.pipeline import Pipeline
from tests.conftest import write_config

KO = "연차 휴가는 며칠인가요?"


@pytest.fixture(scope="module")
def config(tmp_path_factory):
    path = write_config(tmp_path_factory.mktemp("warmup"))
    Pipeline(load_config(path)).build_index()
    return path


def test_rag_warmup_prints_the_seconds_per_part(config, capsys):
    assert main(["warmup", "--config", str(config)]) == 0
    out = capsys.readouterr().out
    assert out.startswith("warm-up: 1 question(s) (ko) answered")
    for part in ("index", "embedder", "components", "generator", "answer", "total"):
        assert any(line.split()[:1] == [part] and line.rstrip().endswith(" s") for line in out.splitlines()), part


def test_rag_warmup_json(config, capsys):
    assert main(["warmup", "--config", str(config), "--json"]) == 0
    body = json.loads(capsys.readouterr().out)
    assert set(body["seconds"]) == {"index", "embedder", "components", "generator", "answer"}
    assert body["languages"] == ["ko"] and body["generated"] is True and body["total_s"] >= 0


def test_ask_loads_no_reranker_model_for_a_language_it_does_not_rerank(config, monkeypatch, capsys):
    """rerank.languages: [en] and a Korean question: the cross-encoder is never loaded (nor an LLM client
    with the extractive backend)."""
    from rag.answer.generators import OpenAIGenerator
    from rag.rerank.cross_encoder import CrossEncoderScorer

    loaded = []
    monkeypatch.setattr(CrossEncoderScorer, "_load", lambda self: loaded.append("cross-encoder"))
    monkeypatch.setattr(OpenAIGenerator, "__init__", lambda self, *a, **k: loaded.append("llm"))
    assert main(["ask", KO, "--config", str(config), "--set", "rerank.enabled=true",
                 "--set", "rerank.languages=[en]", "--set", "gate.signal=fused", "--set", "gate.threshold=0.0"]) == 0
    assert "Sources:" in capsys.readouterr().out
    assert loaded == []
