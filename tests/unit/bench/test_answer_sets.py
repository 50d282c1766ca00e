"""The reader's data recipes (rag.bench.answer_sets) on a tiny synthetic shared folder: the split and
hash order decide which questions are written, the files are complete, and the crossed MS MARCO
folders link one side's corpus and qrels with the other side's questions."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from rag.bench.answer_sets import FolderOptions, SpanSetOptions, make_crosslingual_folders, make_span_sets
from rag.bench.errors import BenchOptionError
from rag.bench.registry import recipes
from rag.reader.splits import split_of


def _jsonl(path: Path, rows: list[dict]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")


def _shared(tmp: Path) -> Path:
    k = tmp / "korquad1"
    _jsonl(k / "corpus.jsonl", [{"_id": f"p{i}", "title": f"t{i}", "text": f"문단 {i}의 글"} for i in range(200)])
    _jsonl(k / "queries.jsonl", [{"_id": f"q{i}", "text": f"질문 {i}?", "metadata": {"answers": [{"text": f"답{i}"},
                                                                                          {"text": f"긴답{i}"}]}}
                                 for i in range(200)])
    (k / "qrels").mkdir()
    (k / "qrels" / "test.tsv").write_text("query-id\tcorpus-id\tscore\n" + "".join(f"q{i}\tp{i}\t1\n" for i in range(200)),
                                          encoding="utf-8")
    paras = [{"context": f"Paragraph {i}.", "qas": [
        {"id": f"s{i}", "question": f"What is {i}?", "is_impossible": i % 3 == 0,
         "answers": [] if i % 3 == 0 else [{"text": f"the answer {i}"}, {"text": f"a{i}"}]}]} for i in range(30)]
    (tmp / "squad2").mkdir()
    (tmp / "squad2" / "dev-v2.0-half.json").write_text(json.dumps({"data": [{"title": "Some_Title", "paragraphs": paras}]}),
                                                       encoding="utf-8")
    return tmp


def test_span_sets_keep_the_splits_questions_in_hash_order(tmp_path):
    shared = _shared(tmp_path / "shared")
    out = make_span_sets(SpanSetOptions(data=str(shared), split="calib", output=str(tmp_path / "out")))
    k = tmp_path / "out" / "korquad-calib"
    qs = [json.loads(x) for x in (k / "questions.jsonl").read_text(encoding="utf-8").splitlines()]
    want = {f"q{i}" for i in range(200) if split_of("korquad1", f"p{i}") == "calib"}
    assert {q["id"] for q in qs} == want and out.metrics["korquad-calib"]["questions"] == len(want) > 0
    assert all(q["gold"]["answer_facts"] == [f"답{q['id'][1:]}"] for q in qs)  # the shortest answer
    assert len((k / "corpus.jsonl").read_text(encoding="utf-8").splitlines()) == 200  # the whole corpus
    s = [json.loads(x) for x in (tmp_path / "out" / "squad2-calib" / "questions.jsonl").read_text().splitlines()]
    assert {q["answerable"] for q in s} <= {True, False}
    assert all(q["gold"]["answer_facts"][0].startswith("a") for q in s if q["answerable"])
    assert not any("gold" in q for q in s if not q["answerable"])
    few = make_span_sets(SpanSetOptions(data=str(shared), split="calib", max_questions=2, output=str(tmp_path / "few")))
    firsts = [json.loads(x)["id"] for x in (tmp_path / "few" / "korquad-calib" / "questions.jsonl").read_text().splitlines()]
    assert few.metrics["korquad-calib"]["questions"] == 2 and firsts == [q["id"] for q in qs][:2]


def test_the_eval_split_never_shares_a_paragraph_with_calib(tmp_path):
    shared = _shared(tmp_path / "shared")
    for split in ("calib", "eval"):
        make_span_sets(SpanSetOptions(data=str(shared), split=split, output=str(tmp_path / "out")))
    ids = {s: {json.loads(x)["gold"]["doc_id"] for x in (tmp_path / "out" / f"korquad-{s}" / "questions.jsonl")
               .read_text().splitlines()} for s in ("calib", "eval")}
    assert not ids["calib"] & ids["eval"]


def test_crosslingual_folders_link_the_other_sides_questions(tmp_path):
    shared = tmp_path / "shared"
    for lang in ("en", "ko"):
        _jsonl(shared / "msmarco" / lang / "corpus.jsonl", [{"_id": "d1", "text": lang}])
        _jsonl(shared / "msmarco" / lang / "queries.jsonl", [{"_id": "1", "text": f"q-{lang}"}])
        (shared / "msmarco" / lang / "qrels").mkdir()
        (shared / "msmarco" / lang / "qrels" / "test.tsv").write_text("query-id\tcorpus-id\tscore\n1\td1\t1\n")
    make_crosslingual_folders(FolderOptions(data=str(shared), output=str(tmp_path / "xl")))
    en_ko = tmp_path / "xl" / "msmarco-en-ko"
    assert (en_ko / "queries.jsonl").resolve() == (shared / "msmarco" / "en" / "queries.jsonl").resolve()
    assert (en_ko / "corpus.jsonl").resolve() == (shared / "msmarco" / "ko" / "corpus.jsonl").resolve()
    assert "q-ko" in (tmp_path / "xl" / "msmarco-ko-en" / "queries.jsonl").read_text()
    with pytest.raises(BenchOptionError, match="missing"):
        make_crosslingual_folders(FolderOptions(data=str(tmp_path / "nothing"), output=str(tmp_path / "x2")))


def test_the_recipes_are_registered():
    assert {"span-answer-sets", "crosslingual-folders"} <= set(recipes())
