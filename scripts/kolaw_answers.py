"""Answer- and claim-level numbers on kolaw-dev with the shipped default config.

Until ``rag eval-answers`` / ``rag eval-claims`` exist, this is the answer-path check used to
compare two trees side by side (run it from each tree's root, with ``PYTHONPATH=.`` for a tree
that is not the installed one). It indexes the kolaw-dev corpus in a scratch folder, answers the
60 questions with ``Pipeline.answer`` and scores the validator's claim-support decision
(lexical support >= ``validation.support_threshold``) on the 42 labelled claims. It prints the
metrics and writes them, with every answer, to ``--out``.

    python scripts/kolaw_answers.py --out /tmp/kolaw-new.json
"""
from __future__ import annotations

import argparse
import json
import tempfile
from pathlib import Path

from rag._io import read_jsonl, write_json
from rag.config import load_config
from rag.pipeline import Pipeline
from rag.text import lexical_support

ROOT = Path(__file__).resolve().parents[1]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", type=Path, default=ROOT.parent / "shared" / "data" / "kolaw-dev")
    ap.add_argument("--config", type=Path, default=ROOT / "configs" / "default.yaml")
    ap.add_argument("--out", type=Path, required=True)
    a = ap.parse_args()
    p = Pipeline(load_config(a.config).with_overrides({
        "corpus.paths": [str(a.data / "corpus.jsonl")], "corpus.format": "jsonl",
        "index.path": tempfile.mkdtemp(prefix="kolaw-index-")}))
    p.build_index(force=True)
    rows = []
    for _, q in read_jsonl(a.data / "questions.jsonl"):
        r = p.answer(q["question"])
        rows.append({"id": q["id"], "answerable": q["answerable"], "gold_doc": (q.get("gold") or {}).get("doc_id"),
                     "status": r.status, "reason": r.reason, "answer": r.answer,
                     "cited": sorted({(c.document_id, c.document_version) for c in r.citations})})
    ans = [r for r in rows if r["answerable"]]
    un = [r for r in rows if not r["answerable"]]
    answered = [r for r in rows if r["status"] == "answered"]
    m: dict[str, float] = {
        "questions": len(rows),
        "answered_when_answerable": sum(r["status"] == "answered" for r in ans) / len(ans),
        "abstained_when_unanswerable": sum(r["status"] != "answered" for r in un) / len(un),
        "answered_citing_gold_doc": sum(r["status"] == "answered" and any(d == r["gold_doc"] for d, _ in r["cited"])
                                        for r in ans) / len(ans),
        "precision_of_answered": sum(r["answerable"] for r in answered) / max(1, len(answered)),
        "validation_failed": sum(r["reason"] == "validation_failed" for r in rows),
    }
    thr = p.config.validation.support_threshold
    dec = [(c["label"], lexical_support(c["claim"], c["quote"]) >= thr) for _, c in read_jsonl(a.data / "claims.jsonl")]
    m["claims"] = len(dec)
    m["claims_accuracy"] = sum((lab == "supported") == ok for lab, ok in dec) / len(dec)
    for lab in sorted({lab for lab, _ in dec}):
        sub = [ok for x, ok in dec if x == lab]
        m[f"claims_accepted.{lab}"] = sum(sub) / len(sub)
    write_json(a.out, {"metrics": m, "rows": rows})
    print(json.dumps(m, ensure_ascii=False, indent=1))


if __name__ == "__main__":
    main()
