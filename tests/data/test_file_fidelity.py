"""Data tier: ``rag bench run file-fidelity`` on the kolaw-dev PDFs gives the committed per-law numbers
(results/bench/file-fidelity.json), and the renderers, reading the laws with rag.bench.rendered_laws, still
write the committed files."""
from __future__ import annotations

import json

import pytest

from rag.bench import rendered_laws as rendered
from rag.bench.harness import read_jsonl
from rag.bench.registry import get, run_measurement

from tests.conftest import ROOT
from tests.unit.bench.test_file_fidelity import load_renderers

pytestmark = pytest.mark.data

COMMITTED = ROOT / "results" / "bench" / "file-fidelity.json"
RENDERED = ROOT / "data" / "dev" / "kolaw-files"
PER_LAW = ("agreement", "glued", "split", "other_tokens", "source_words", "header_footer_left", "pages")


def test_pdf_fidelity_per_law_is_the_committed_one(shared_data):
    _, outcome = run_measurement(get("file-fidelity"), ["--formats", "pdf", "--runs", "1", "--data", str(shared_data)])
    got = outcome.metrics["formats"]["pdf"]
    want = json.loads(COMMITTED.read_text(encoding="utf-8"))["result"]["formats"]["pdf"]
    assert [r["file"] for r in got["files"]] == [r["file"] for r in want["files"]]
    for g, w in zip(got["files"], want["files"]):
        assert {k: g[k] for k in PER_LAW} == {k: w[k] for k in PER_LAW}, g["file"]
    assert got["summary"]["header_footer_left"] == 0
    assert got["summary"]["min_agreement"] >= 0.9998


def test_the_committed_files_are_what_the_renderers_write_today(shared_data, monkeypatch):
    """The renderers read the laws with rag.bench.rendered_laws' functions and furniture.json: rendered in
    memory, every committed DOCX and HWPX file is reproduced byte for byte."""
    docx_html, hwpx = load_renderers(monkeypatch)
    docs = list(read_jsonl(shared_data / "kolaw-dev" / "corpus.jsonl"))
    assert docs
    for d in docs:
        stem = rendered.file_stem(d)
        assert docx_html.render_docx(d) == (RENDERED / "docx" / f"{stem}.docx").read_bytes(), stem
        assert hwpx.render_hwpx(d) == (RENDERED / "hwpx" / f"{stem}.hwpx").read_bytes(), stem
        assert rendered.hwpx_boilerplate(d) == hwpx.boilerplate(d)
