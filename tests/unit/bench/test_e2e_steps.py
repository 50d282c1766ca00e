"""rag bench run e2e-steps: its groups, what it requires, and which questions a group keeps (the measurement
itself runs the shipped models; its numbers are in results/bench/e2e-steps.json)."""
from __future__ import annotations

import json

from rag.bench import e2e_steps
from rag.bench.registry import measurements


def test_registered_and_requires_name_each_missing_file(tmp_path):
    assert measurements()["e2e-steps"] is e2e_steps.MEASUREMENT
    missing = e2e_steps._requires(e2e_steps.Options(data=str(tmp_path)))
    assert any(m.startswith("ko: ") and "kolaw-dev/corpus.jsonl" in m for m in missing)
    assert any(m.startswith("en-over-ko: ") for m in missing)
    assert not any(m.startswith("en: ") for m in missing)  # the demo ships in the repository


def test_a_group_with_a_language_keeps_only_its_questions(tmp_path):
    q = tmp_path / "questions.jsonl"
    q.write_text("".join(json.dumps({"question": x}, ensure_ascii=False) + "\n"
                         for x in ("연차 휴가는 며칠인가요?", "How many days of annual leave?")), encoding="utf-8")
    assert e2e_steps._questions(e2e_steps.Group("en", q, q, "en")) == ["How many days of annual leave?"]
    assert len(e2e_steps._questions(e2e_steps.Group("all", q, q, None))) == 2
