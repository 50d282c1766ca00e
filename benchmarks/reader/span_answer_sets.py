"""Answer-level sets for ``rag eval-answers`` from the span datasets: the reader's eval split (to report once)
or its calib split (to choose settings on).

- ``korquad-eval``: KorQuAD 1.0 dev questions whose paragraph falls in the reader's ``eval`` split (or
  ``calib``: ``korquad-calib``), asked
  over the whole KorQuAD corpus (all 964 paragraphs, one document each);
- ``squad2-eval``: SQuAD 2.0 questions (answerable and not) whose paragraph falls in the reader's
  ``eval`` split, over every paragraph of the shared half.

A question is right when answered with its gold answer in the answer text, citing its paragraph
(``rag.evaluation.answer_scoring``); of several SQuAD answers the shortest is the fact. Questions are
taken in a fixed hash order (``--max-questions``: the first N), so a smaller run is a sample of the
larger one. Nothing here is trained or tuned on: the reader's eval split is never drawn for training.

    python benchmarks/reader/span_answer_sets.py [--max-questions 600] [--out data/cache/answersets]
"""
from __future__ import annotations

import argparse
import hashlib
import json
from pathlib import Path

from rag.reader.splits import split_of


def _order(qid: str) -> str:
    return hashlib.sha256(f"answerset\x1f{qid}".encode()).hexdigest()


def _write(out: Path, docs: list[dict], questions: list[dict], limit: int | None) -> tuple[int, int]:
    out.mkdir(parents=True, exist_ok=True)
    questions = sorted(questions, key=lambda q: _order(q["id"]))[:limit]
    with (out / "corpus.jsonl").open("w", encoding="utf-8") as f:
        for d in docs:
            f.write(json.dumps(d, ensure_ascii=False) + "\n")
    with (out / "questions.jsonl").open("w", encoding="utf-8") as f:
        for q in questions:
            f.write(json.dumps(q, ensure_ascii=False) + "\n")
    return len(docs), len(questions)


def korquad(shared: Path, out: Path, limit: int | None, split: str = "eval") -> tuple[int, int]:
    docs, questions = [], []
    corpus = [json.loads(line) for line in (shared / "korquad1" / "corpus.jsonl").open(encoding="utf-8")]
    for o in corpus:
        docs.append({"id": o["_id"], "version": "1", "title": o.get("title") or "", "text": o["text"]})
    queries = {o["_id"]: o for o in map(json.loads, (shared / "korquad1" / "queries.jsonl").open(encoding="utf-8"))}
    qrels: dict[str, str] = {}
    for line in (shared / "korquad1" / "qrels" / "test.tsv").open(encoding="utf-8").read().splitlines()[1:]:
        qid, pid, _ = line.split("\t")
        qrels[qid] = pid
    for qid, pid in sorted(qrels.items()):
        q = queries[qid]
        answers = (q.get("metadata") or {}).get("answers") or q.get("answers") or []
        answer = min((a["text"] if isinstance(a, dict) else str(a) for a in answers), key=len, default=None)
        if not answer or split_of("korquad1", pid) != split:
            continue
        questions.append({"id": qid, "question": q["text"], "answerable": True, "style": "korquad",
                          "gold": {"doc_id": pid, "version": "1", "answer_facts": [answer]}})
    return _write(out / f"korquad-{split}", docs, questions, limit)


def squad(shared: Path, out: Path, limit: int | None, split: str = "eval") -> tuple[int, int]:
    data = json.loads((shared / "squad2" / "dev-v2.0-half.json").read_text(encoding="utf-8"))["data"]
    docs, questions = [], []
    for art in data:
        for pi, para in enumerate(art["paragraphs"]):
            pid = f"{art['title']}#{pi}"
            docs.append({"id": pid, "version": "1", "title": art["title"].replace("_", " "), "text": para["context"]})
            if split_of("squad2", pid) != split:
                continue
            for qa in para["qas"]:
                if qa["is_impossible"]:
                    questions.append({"id": qa["id"], "question": qa["question"], "answerable": False,
                                      "style": "squad-unanswerable"})
                    continue
                answer = min((a["text"] for a in qa["answers"]), key=len)
                questions.append({"id": qa["id"], "question": qa["question"], "answerable": True, "style": "squad",
                                  "gold": {"doc_id": pid, "version": "1", "answer_facts": [answer]}})
    return _write(out / f"squad2-{split}", docs, questions, limit)


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--shared", default="../shared/data")
    ap.add_argument("--out", default="data/cache/answersets")
    ap.add_argument("--max-questions", type=int, default=None)
    ap.add_argument("--split", default="eval", choices=("calib", "eval"), help="calib: for choosing, eval: to report")
    a = ap.parse_args()
    for name, fn in ((f"korquad-{a.split}", korquad), (f"squad2-{a.split}", squad)):
        n_docs, n_q = fn(Path(a.shared), Path(a.out), a.max_questions, a.split)
        print(f"{name}: {n_docs} documents, {n_q} questions -> {Path(a.out) / name}")
