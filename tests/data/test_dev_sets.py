"""The development question sets over kolaw-dev (data/dev) stay consistent with the corpus: their own
checkers pass (gold articles, quotes and facts in the newest version; unanswerable terms absent)."""
from __future__ import annotations

import subprocess
import sys

import pytest

from tests.conftest import ROOT

pytestmark = pytest.mark.data


@pytest.mark.parametrize("script, args", [
    ("data/dev/kolaw-dialogues/check_sets.py", ["--dataset"]),  # the dialogues, their full forms, kolaw-en
    ("data/dev/kolaw-nearmiss/check_absent.py", ["--corpus"]),
])
def test_a_development_sets_checker_passes(shared_data, script, args):
    target = shared_data / "kolaw-dev" if args == ["--dataset"] else shared_data / "kolaw-dev" / "corpus.jsonl"
    out = subprocess.run([sys.executable, str(ROOT / script), *args, str(target)], capture_output=True, text=True,
                         timeout=300, cwd=str(ROOT))
    assert out.returncode == 0, (out.stdout + out.stderr)[-3000:]
    assert "FAIL" not in out.stdout
