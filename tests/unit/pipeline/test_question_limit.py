"""One question limit (``limits.max_question_chars``) for the Python API, ``rag ask``, ``rag batch`` and the
service: refused before any work with a typed error that says the length, the limit and the key."""
from __future__ import annotations

import json
import time

import pytest

from rag.cli.main import main
from rag.config import RagConfig, load_config
from rag.errors import ConfigError, QuestionTooLongError
from tests.conftest import write_config

LONG = "연차 휴가는 며칠인가요? " * 1200  # about 15,000 characters, as a new user pasted


def test_the_python_api_refuses_a_long_question_before_any_work(built, derived):
    p = derived(built, **{"limits.max_question_chars": 100})
    for call in (lambda q: p.answer(q), lambda q: p.search(q), lambda q: p.retrieve(q),
                 lambda q: p.build_prompt(q)):
        with pytest.raises(QuestionTooLongError) as err:
            call("가" * 101)
        assert (err.value.length, err.value.limit, err.value.key) == (101, 100, "limits.max_question_chars")
        assert "101 characters" in str(err.value) and "limits.max_question_chars" in str(err.value)
    assert p.answer("  " + "가" * 100 + "  ").status in ("answered", "insufficient_evidence")  # spaces aside
    with pytest.raises(QuestionTooLongError):  # the default, 4,000
        built.answer(LONG)


def test_the_old_serve_key_is_read_as_the_one_limit():
    assert RagConfig.model_validate({"serve": {"max_question_chars": 40}}).limits.max_question_chars == 40
    assert RagConfig().with_overrides({"serve.max_question_chars": 50}).limits.max_question_chars == 50
    assert RagConfig().with_overrides({"limits.max_question_chars": 50}).results_hash == RagConfig().results_hash
    with pytest.raises(ConfigError, match="keep only limits.max_question_chars"):
        RagConfig().with_overrides({"serve.max_question_chars": 50, "limits.max_question_chars": 60})


def test_rag_ask_refuses_at_once(tmp_path, capsys):
    cfg = write_config(tmp_path)
    assert main(["index", "--config", str(cfg)]) == 0
    capsys.readouterr()
    t0 = time.perf_counter()
    assert main(["ask", LONG, "--config", str(cfg)]) == 2
    assert time.perf_counter() - t0 < 5
    err = capsys.readouterr().err
    assert f"{len(LONG.strip()):,} characters" in err and "4,000" in err and "limits.max_question_chars" in err


def test_a_long_line_in_a_batch_is_one_failed_record(tmp_path, capsys):
    cfg = write_config(tmp_path)
    main(["index", "--config", str(cfg)])
    qs = tmp_path / "q.jsonl"
    qs.write_text("".join(json.dumps({"id": i, "question": q}, ensure_ascii=False) + "\n" for i, q in
                          (("a", "연차 휴가는 며칠인가요?"), ("long", LONG), ("b", "How often must passwords be changed?"))),
                  encoding="utf-8")
    out = tmp_path / "out.jsonl"
    assert main(["batch", str(qs), "--config", str(cfg), "-o", str(out)]) == 1  # 1: some failed
    recs = {r["id"]: r for r in map(json.loads, out.read_text(encoding="utf-8").splitlines())}
    assert recs["long"]["status"] == "failed"
    assert recs["long"]["error"]["type"] == "QuestionTooLongError"
    assert "limits.max_question_chars" in recs["long"]["error"]["message"]
    assert recs["a"]["status"] != "failed" and recs["b"]["status"] != "failed"


def test_the_limit_is_read_from_a_config_file(tmp_path):
    cfg = load_config(write_config(tmp_path, limits={"max_question_chars": 10}))
    with pytest.raises(QuestionTooLongError):
        cfg.limits.check_question("x" * 11)
    cfg.limits.check_question(" " * 50 + "x" * 10)
