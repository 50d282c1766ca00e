"""The chunk store keeps locators and heading paths, and still reads indexes written before them."""
from __future__ import annotations

import json
from pathlib import Path

from rag.index import current_version
from rag.index.layout import chunk_from_json
from rag.pipeline import Pipeline
from rag.types import Chunk, Document

from tests.conftest import write_config

TRAVEL = (Path(__file__).resolve().parents[2] / "fixtures" / "statutes" / "travel_expenses.md").read_text(
    encoding="utf-8")


def _docs() -> list[Document]:
    return [Document("공무원여비규정", TRAVEL, "2026-01-02", "공무원 여비 규정", "https://law/travel", {"page": 4}),
            Document("leave", "연차 휴가는 입사 첫해 15일이다. 근속 2년마다 1일이 추가된다.", "1", "연차 규정")]


def test_locators_and_heading_paths_survive_save_and_load(tmp_path):
    p = Pipeline.from_config(write_config(tmp_path))
    built = list(p.build_index(_docs()).chunks)
    art = next(c for c in built if c.locator == "제8조의2제2항")
    assert art.heading_path == ("제1장 총칙", "제8조의2 (여비의 결제와 정산 등)") and art.page == 4
    loaded = Pipeline.from_config(tmp_path / "config.yaml").index.chunks
    assert loaded == built
    assert all(isinstance(c.heading_path, tuple) for c in loaded)


def test_an_index_written_without_the_new_fields_still_loads(tmp_path):
    p = Pipeline.from_config(write_config(tmp_path))
    p.build_index(_docs())
    store = current_version(p.index_path) / "chunks.jsonl"
    rows = [json.loads(line) for line in store.read_text(encoding="utf-8").splitlines()]
    for r in rows:
        del r["locator"], r["heading_path"]
    store.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")
    loaded = Pipeline.from_config(tmp_path / "config.yaml").index.chunks
    assert len(loaded) == len(rows) and all(c.locator == "" and c.heading_path == () for c in loaded)


def test_chunk_records_convert_heading_path_lists_to_tuples():
    rec = {"evidence_id": "d:1:0", "document_id": "d", "document_version": "1", "ordinal": 0, "text": "x",
           "start_char": 0, "end_char": 1}
    assert chunk_from_json(rec) == Chunk("d:1:0", "d", "1", 0, "x", 0, 1)
    assert chunk_from_json({**rec, "heading_path": ["A", "B"], "locator": "A > B"}).heading_path == ("A", "B")


def test_an_index_chunked_without_structure_is_refused_by_a_structure_config(tmp_path):
    """A plain-chunked index (what every index was before structure-aware chunking) has other
    chunks than the config asks for: opening it says so and how to rebuild; with
    ``chunking.structure: plain`` it opens as before."""
    import pytest

    from rag.config import load_config
    from rag.errors import IndexMismatchError

    plain = Pipeline(load_config(write_config(tmp_path, chunking={"structure": "plain"})))
    plain.build_index(_docs())
    with pytest.raises(IndexMismatchError, match="rag index --config .* --force"):
        Pipeline(load_config(write_config(tmp_path, chunking={"structure": "auto"}))).index
    assert len(Pipeline(load_config(write_config(tmp_path, chunking={"structure": "plain"}))).index) == len(
        plain.index)
