"""rag bench run reader-blend on a tiny KorQuAD-shaped BEIR folder with the bundled reader: one scoring pass,
a row per blend weight beside fusion alone, weight 0 being fusion's own order."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from rag.bench.reader_blend import Options, requires, run
from rag.reader.splits import split_of

pytestmark = pytest.mark.models


def _folder(tmp: Path) -> Path:
    root = tmp / "korquad1"
    (root / "qrels").mkdir(parents=True)
    topics = ["연차 휴가", "출장비", "주차장", "식당", "셔틀버스", "보안 교육", "재택근무", "교육 예산"]
    docs = [{"_id": f"p{i}", "title": t, "text": f"{t} 규정: {t}은 {i + 2}일 안에 신청한다."} for i, t in enumerate(topics * 5)]
    (root / "corpus.jsonl").write_text("".join(json.dumps(d, ensure_ascii=False) + "\n" for d in docs), encoding="utf-8")
    qs = [{"_id": f"q{i}", "text": f"{d['title']}은 며칠 안에 신청하나요?"} for i, d in enumerate(docs)]
    (root / "queries.jsonl").write_text("".join(json.dumps(q, ensure_ascii=False) + "\n" for q in qs), encoding="utf-8")
    (root / "qrels" / "test.tsv").write_text("query-id\tcorpus-id\tscore\n" + "".join(
        f"q{i}\tp{i}\t1\n" for i in range(len(docs))), encoding="utf-8")
    return root


def test_reader_blend_scores_each_weight_beside_fusion(tmp_path):
    root = _folder(tmp_path)
    train = [f"p{i}" for i in range(40) if split_of("korquad1", f"p{i}") == "train"]
    assert train, "the synthetic folder needs train-split paragraphs"
    out = run(Options(dataset=str(root), reader_split="train", weights=(0.0, 1.0), max_queries=6))
    m = out.metrics
    assert m["queries"] == min(6, len(train)) and set(m["metrics"]) == {"hybrid", "w=0", "w=1"}
    assert m["metrics"]["w=0"]["ndcg@10"] == pytest.approx(m["metrics"]["hybrid"]["ndcg@10"])
    assert "| w=1 |" in out.table
    assert requires(Options()) and requires(Options(dataset=str(tmp_path / "none"))) == [f"{tmp_path / 'none'} is missing"]
