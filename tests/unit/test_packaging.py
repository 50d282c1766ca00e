"""What the installed package carries (issue 42): its type hints are visible to type checkers."""
from __future__ import annotations

import fnmatch
from pathlib import Path

import pytest

tomllib = pytest.importorskip("tomllib")

ROOT = Path(__file__).resolve().parents[2]


def test_the_package_ships_py_typed():
    """PEP 561: ``rag/py.typed`` exists and setuptools' package data puts it in the wheel."""
    assert (ROOT / "rag" / "py.typed").is_file()
    data = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    patterns = data["tool"]["setuptools"]["package-data"]["rag"]
    assert any(fnmatch.fnmatch("py.typed", p) for p in patterns), patterns
