"""Metadata filters on both backends: applied inside each retriever before its top-k, intersected
with the caller's access scope (never widening it), and the same from the Python API, the service,
the command line and batch lines."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from rag.access import Principal
from rag.config import load_config
from rag.fields import FieldFilterError
from rag.pipeline import Pipeline
from rag.types import Document
from tests.conftest import write_config

FIELDS = {"department": "keyword", "year": "number", "effective": "date"}
HR = Principal("kim", ("hr",), "acme")


def corpus() -> list[Document]:
    """Leave rules of several departments and years; the ones a filter keeps rank lowest."""
    def doc(i, text, **meta):
        return Document(i, text, title=i, uri=f"mem://{i}", metadata=meta)
    return [
        doc("ops-2019", "연차 휴가 연차 휴가 연차 휴가 운영팀 규정", department="ops", year=2019, effective="2019-03-01"),
        doc("ops-2024", "연차 휴가 연차 휴가 연차 휴가 운영팀 새 규정", department="ops", year=2024, effective="2024-03-01"),
        doc("hr-2021", "연차 휴가 연차 휴가 인사팀 규정", department="hr", year=2021, effective="2021-01-01"),
        doc("hr-2024-secret", "연차 휴가 연차 휴가 인사팀 비밀 규정 canaryhr", department="hr", year=2024,
            effective="2024-07-01", access={"groups": ["hr"]}),
        doc("hr-2025", "휴가 인사팀 개정 규정", department="hr", year=2025, effective="2025-01-01"),
        doc("nofield", "연차 휴가 연차 휴가 연차 휴가 안내"),
    ]


def pipeline(backend, tmp_path: Path) -> Pipeline:
    p = Pipeline(load_config(write_config(tmp_path, index=backend.index, retrieval={"filter_fields": FIELDS})))
    p.build_index(corpus())
    return p


def found(p: Pipeline, fields=None, principal=None, k: int | None = None, query="연차 휴가") -> set[str]:
    res = p.search(query, k, where=p.where(fields) if fields is not None else None, principal=principal)
    return {c.chunk.document_id for c in res.candidates}


def test_filters_keep_only_matching_documents_on_both_backends(backend, tmp_path):
    p = pipeline(backend, tmp_path)
    assert found(p, {"department": "hr"}) == {"hr-2021", "hr-2025"}  # the secret one needs the hr group
    assert found(p, {"department": "hr"}, HR) == {"hr-2021", "hr-2024-secret", "hr-2025"}
    assert found(p, {"year": {"gte": 2024}}) == {"ops-2024", "hr-2025"}
    assert found(p, {"effective": {"lt": "2021-06-01"}}) == {"ops-2019", "hr-2021"}
    assert found(p, {"department": ["ops", "hr"], "year": 2024}, HR) == {"ops-2024", "hr-2024-secret"}
    assert found(p, {"department": "finance"}) == set()


def test_both_legs_filter_before_their_top_k(backend, tmp_path):
    """With k=1 the filtered legs still return the best allowed row, not an empty list: the filter
    is applied before the top-k, so documents that rank below others still fill the list."""
    p = pipeline(backend, tmp_path)
    where = p.where({"department": "hr", "year": {"gte": 2025}})
    r = p.components.retriever
    for leg in (r.bm25, r.dense):
        top = leg("연차 휴가", 1, where=where)
        assert [c.chunk.document_id for c in top] == ["hr-2025"]
    assert found(p, {"department": "hr", "year": {"gte": 2025}}, k=1) == {"hr-2025"}


def test_a_filter_never_widens_what_the_caller_may_read(backend, tmp_path):
    p = pipeline(backend, tmp_path)
    everything = {"department": ["ops", "hr"], "year": {"gte": 2000}}
    assert "hr-2024-secret" not in found(p, everything)
    assert "hr-2024-secret" not in found(p, everything, Principal("lee", ("ops",)))
    res = p.answer("인사팀 연차 휴가 규정은?", where=p.where({"year": 2024}))
    assert "canaryhr" not in json.dumps(res.to_json(), ensure_ascii=False)


def test_bad_filters_are_typed_errors(tmp_path):
    p = Pipeline(load_config(write_config(tmp_path, retrieval={"filter_fields": FIELDS})))
    with pytest.raises(FieldFilterError, match="'salary' is not a declared filter field"):
        p.where({"salary": {"gte": 1}})
    with pytest.raises(FieldFilterError, match=r"'year' \(number\): 'new' is not a finite number"):
        p.where({"year": "new"})


def test_the_service_takes_filters_and_refuses_bad_ones(tmp_path):
    from tests.unit.serve.conftest import live

    src = tmp_path / "docs.jsonl"
    src.write_text("".join(json.dumps({"id": d.id, "text": d.text, "metadata": dict(d.metadata)}, ensure_ascii=False)
                           + "\n" for d in corpus()), encoding="utf-8")
    with live(tmp_path / "srv", corpus={"paths": [str(src)]}, retrieval={"filter_fields": FIELDS}) as (_, c):
        r = c.post("/v1/search", json={"query": "연차 휴가", "filters": {"fields": {"year": {"gte": 2024}}}})
        assert r.status_code == 200, r.text
        assert {x["document_id"] for x in r.json()["candidates"]} == {"ops-2024", "hr-2025"}
        bad = c.post("/v1/answer", json={"question": "연차?", "filters": {"fields": {"salary": 1}}})
        assert bad.status_code == 400 and "'salary' is not a declared filter field" in bad.text
        stream = c.post("/v1/answer", json={"question": "연차?", "stream": True, "filters": {"fields": {"year": "x"}}})
        assert stream.status_code == 400 and "not a finite number" in stream.text
        ctx = c.post("/v1/context", json={"question": "연차 휴가", "filters": {"fields": {"department": "ops"}}})
        assert ctx.status_code == 200
        assert {b["document_id"] for b in ctx.json()["manifest"]["blocks"]} <= {"ops-2019", "ops-2024"}


def test_cli_and_batch_lines_take_filters(tmp_path, capsys):
    from rag.batch.questions import read_questions
    from rag.cli.main import main

    src = tmp_path / "docs.jsonl"
    src.write_text("".join(json.dumps({"id": d.id, "text": d.text, "metadata": dict(d.metadata)}, ensure_ascii=False)
                           + "\n" for d in corpus()), encoding="utf-8")
    cfg = write_config(tmp_path, corpus={"paths": [str(src)]}, retrieval={"filter_fields": FIELDS})
    assert main(["index", "--config", str(cfg)]) == 0
    capsys.readouterr()
    assert main(["search", "연차 휴가", "--config", str(cfg), "--json", "--filter", "department=ops",
                 "--filter", "year>=2020"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert {c["document_id"] for c in out["candidates"]} == {"ops-2024"}
    assert main(["search", "연차 휴가", "--config", str(cfg), "--filter", "year>=soon"]) == 2
    assert "not a finite number" in capsys.readouterr().err
    qs = tmp_path / "qs.jsonl"
    qs.write_text(json.dumps({"id": "a", "question": "연차?", "filters": {"fields": {"department": "hr"}}}) + "\n"
                  + json.dumps({"id": "b", "question": "연차?", "filters": {"fields": {"salary": 1}}}) + "\n",
                  encoding="utf-8")
    read = read_questions(qs, on_invalid="skip", filter_fields=FIELDS)
    [a] = read.questions
    assert a.where is not None and a.where.fields[0].field == "department" and "gold" not in a.gold
    assert [pr.line for pr in read.problems] == [2] and "salary" in read.problems[0].message
