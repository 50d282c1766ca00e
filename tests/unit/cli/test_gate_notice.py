"""`rag ask | batch | demo`: an unset gate threshold is an error before any answer, and the notice that
the gate's thresholds were not fitted on the indexed corpus is printed once, on stderr."""
from __future__ import annotations

import json

import pytest

from rag.cli.main import main
from rag.config import load_config
from rag.index import corpus_fingerprint
from rag.pipeline import Pipeline
from tests.conftest import DEMO_QUESTIONS, write_config

QUESTION = "How often must passwords be changed?"
NOTICE = "`rag calibrate --auto` fits them to it"


@pytest.fixture(scope="module")
def configs(tmp_path_factory):
    """(fitted here, fitted elsewhere) over one demo index, with an explicitly open gate."""
    tmp = tmp_path_factory.mktemp("notice")
    base = write_config(tmp / "a", gate={"fallback_threshold": -1.0}, index={"path": str(tmp / "index")})
    assert main(["index", "--config", str(base)]) == 0
    here = corpus_fingerprint(Pipeline(load_config(base)).index.documents)
    fitted = write_config(tmp / "b", gate={"fallback_threshold": -1.0, "fitted_on": here},
                          index={"path": str(tmp / "index")})
    return fitted, base


def notices(err: str) -> list[str]:
    return [line for line in err.splitlines() if NOTICE in line]


def test_ask_prints_the_notice_once_on_stderr_and_not_when_fitted_here(configs, capsys):
    fitted, elsewhere = configs
    capsys.readouterr()
    assert main(["ask", QUESTION, "--config", str(elsewhere), "--json"]) == 0
    cap = capsys.readouterr()
    assert json.loads(cap.out)["status"] in ("answered", "insufficient_evidence")  # stdout: the JSON only
    assert len(notices(cap.err)) == 1 and notices(cap.err)[0].startswith("note: ")
    assert main(["ask", QUESTION, "--config", str(fitted)]) == 0
    assert notices(capsys.readouterr().err) == []


def test_batch_prints_the_notice_once_for_several_questions(configs, tmp_path, capsys):
    _, elsewhere = configs
    q = tmp_path / "q.jsonl"
    q.write_text("".join(json.dumps({"id": i, "question": t}, ensure_ascii=False) + "\n"
                         for i, t in [("a", QUESTION), ("b", "연차 휴가는 며칠인가요?")]), encoding="utf-8")
    capsys.readouterr()
    assert main(["batch", str(q), "-o", str(tmp_path / "out.jsonl"), "--config", str(elsewhere)]) == 0
    assert len(notices(capsys.readouterr().err)) == 1
    assert len((tmp_path / "out.jsonl").read_text(encoding="utf-8").splitlines()) == 2


def test_demo_prints_the_notice_once(tmp_path, capsys):
    cfg = write_config(tmp_path, gate={"fallback_threshold": -1.0})
    qs = tmp_path / "qs.jsonl"
    qs.write_text("".join(DEMO_QUESTIONS.read_text(encoding="utf-8").splitlines(keepends=True)[:3]), encoding="utf-8")
    capsys.readouterr()
    assert main(["demo", "--config", str(cfg), "--questions", str(qs)]) == 0
    cap = capsys.readouterr()
    assert len(notices(cap.err)) == 1 and NOTICE not in cap.out
    assert cap.out.count("\n[") >= 3  # the three questions were answered after it


def test_an_unset_threshold_on_the_hashing_embedder_fails_ask_and_batch_before_answering(tmp_path, capsys):
    cfg = write_config(tmp_path, gate=None)
    assert main(["index", "--config", str(cfg)]) == 0  # indexing never needs the gate
    capsys.readouterr()
    assert main(["ask", QUESTION, "--config", str(cfg)]) == 2
    err = capsys.readouterr().err
    assert "gate.fallback_threshold" in err and "`rag calibrate --auto`" in err and NOTICE not in err
    q = tmp_path / "q.txt"
    q.write_text(QUESTION + "\n", encoding="utf-8")
    assert main(["batch", str(q), "-o", str(tmp_path / "out.jsonl"), "--config", str(cfg)]) == 2
    assert "gate.fallback_threshold" in capsys.readouterr().err
    assert not (tmp_path / "out.jsonl").exists() or not (tmp_path / "out.jsonl").read_text().strip()
