"""Helpers for the ``kolaw-feedback`` stage of benchmarks/gate_auto/run.sh: `--from-batch` on a labelled batch run.

    python benchmarks/gate_auto/feedback.py split QUESTIONS.jsonl OUT_DIR
    python benchmarks/gate_auto/feedback.py label DATASET_DIR BATCH.jsonl OUT.jsonl

``split`` writes OUT_DIR/calib.jsonl and OUT_DIR/eval.jsonl: the dataset's questions cut by the same 50/50 hash
split that `rag calibrate --split` and tables.py's kolaw-dev rows use (named after questions.jsonl).

``label`` stands in for the person who reads a `rag batch` results file and marks its lines: each line's answer is
judged against the dataset's gold with the scorer `rag eval-answers` uses (the answer states every gold fact and
cites the gold document's current version), and gets the label that person would write:

| question | line | label |
|---|---|---|
| answerable | answered, correct | right |
| answerable | answered, not correct | wrong (answering it was harmful) |
| answerable | abstained | wrong (it should have answered) |
| unanswerable | answered | wrong |
| unanswerable | abstained | right |

A ``failed`` line gets no label. The labels are counted on stderr.
"""
from __future__ import annotations

import argparse
import json
import sys
from collections import Counter
from pathlib import Path

from tables import _half  # the same split as the kolaw-dev rows of the summary


def split(questions: Path, out_dir: Path) -> dict[str, int]:
    out_dir.mkdir(parents=True, exist_ok=True)
    lines: dict[str, list[str]] = {"calib": [], "eval": []}
    with questions.open(encoding="utf-8") as f:
        for line in f:
            if line.strip():
                lines[_half(str(json.loads(line)["id"]), questions.name)].append(line.rstrip("\n"))
    for half, rows in lines.items():
        (out_dir / f"{half}.jsonl").write_text("".join(r + "\n" for r in rows), encoding="utf-8")
    return {half: len(rows) for half, rows in lines.items()}


def label_of(answerable: bool, answered: bool, correct: bool) -> str:
    if answerable:
        return "right" if answered and correct else "wrong"
    return "wrong" if answered else "right"


def label(dataset: Path, batch: Path, out: Path) -> Counter:
    from rag.evaluation.answer_dataset import load_answer_dataset
    from rag.evaluation.answer_scoring import score_answer

    data = load_answer_dataset(dataset)
    by_id = {q.id: q for q in data.questions}
    counts: Counter = Counter()
    written = []
    with batch.open(encoding="utf-8") as f:
        for n, line in enumerate(f, 1):
            if not line.strip():
                continue
            o = json.loads(line)
            q = by_id.get(str(o.get("id")))
            if q is None:
                raise SystemExit(f"{batch}:{n}: id {o.get('id')!r} is not a question of {dataset}")
            if o.get("status") in ("answered", "insufficient_evidence"):
                result = o.get("result") or {}
                cited = [(c["document_id"], c["document_version"]) for c in result.get("citations", [])]
                row = score_answer(q, o["status"], result.get("answer", ""), cited, data.latest)
                o["label"] = label_of(q.answerable, row.answered, row.correct)
                counts[(("answerable" if q.answerable else "unanswerable"), o["status"], o["label"])] += 1
            else:
                counts[("-", o.get("status"), "no label")] += 1
            written.append(json.dumps(o, ensure_ascii=False))
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text("".join(w + "\n" for w in written), encoding="utf-8")
    return counts


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    s = sub.add_parser("split")
    s.add_argument("questions", type=Path)
    s.add_argument("out_dir", type=Path)
    lab = sub.add_parser("label")
    lab.add_argument("dataset", type=Path)
    lab.add_argument("batch", type=Path)
    lab.add_argument("out", type=Path)
    a = ap.parse_args(argv)
    if a.cmd == "split":
        print(json.dumps(split(a.questions, a.out_dir)))
    else:
        for key, n in sorted(label(a.dataset, a.batch, a.out).items()):
            print(" / ".join(key), n, file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
