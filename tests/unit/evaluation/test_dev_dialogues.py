"""The English dialogue set (data/dev/demo-dialogues-en) stays consistent with the demo corpus it is
asked over: its own checker passes, and the answer loader reads both files with their histories."""
from __future__ import annotations

import subprocess
import sys

from rag.evaluation.answer_dataset import load_answer_dataset
from tests.conftest import ROOT

SET = ROOT / "data" / "dev" / "demo-dialogues-en"


def test_the_english_dialogue_set_passes_its_checker():
    out = subprocess.run([sys.executable, str(SET / "check_set.py")], capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stdout + out.stderr
    assert "ALL OK" in out.stdout


def test_the_loader_reads_the_follow_ups_with_their_history_and_the_full_questions_without():
    follow = load_answer_dataset(SET, [SET / "questions.jsonl"], own_questions=False)
    full = load_answer_dataset(SET, [SET / "full_questions.jsonl"], own_questions=False)
    assert len(follow.questions) == len(full.questions) == 32
    assert all(len(q.history) == 2 for q in follow.questions) and not any(q.history for q in full.questions)
    assert {q.id for q in follow.questions} == {q.id for q in full.questions}
