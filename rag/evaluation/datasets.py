"""Labelled question sets for abstention evaluation (BEIR folders are read by :func:`rag.index.loaders.load_beir`).

NoMIRACL-style JSONL (``question``, ``passages`` of ``docid``/``title``/``text``,
``answerable``) or SQuAD 2.0 JSON (each question with its own paragraph; ``is_impossible``
marks unanswerable ones).
"""
from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

from rag._io import read_jsonl
from rag.errors import DatasetError, InputError
from rag.rerank.train import in_holdout

SPLITS = ("all", "calib", "eval", "reader-train", "reader-calib", "reader-eval")
# calib/eval: a fixed 50/50 split of the questions by hash; reader-*: the reader data's split
# (rag.reader.splits: SQuAD 2.0 by its paragraph, NoMIRACL-ko by its question), so that a question whose
# paragraph the reader was trained on is never measured as held out


@dataclass(frozen=True)
class Passage:
    docid: str
    title: str
    text: str


@dataclass(frozen=True)
class LabelledQuestion:
    qid: str
    question: str
    passages: tuple[Passage, ...]
    answerable: bool


def _select(items: list[LabelledQuestion], split: str, name: str, max_questions: int | None) -> list[LabelledQuestion]:
    if split not in SPLITS:
        raise InputError(f"split must be one of {SPLITS}, got {split!r}")
    if split.startswith("reader-"):
        from rag.reader.splits import split_of

        squad = name.endswith(".json")
        family = "squad2" if squad else "nomiracl-ko"
        items = [q for q in items
                 if split_of(family, q.passages[0].docid if squad else q.qid) == split.removeprefix("reader-")]
    elif split != "all":
        items = [q for q in items if in_holdout(name, q.qid, 50) == (split == "eval")]
    items.sort(key=lambda q: q.qid)
    return items[:max_questions] if max_questions else items


def load_labelled(path: str | Path, split: str = "all", max_questions: int | None = None) -> list[LabelledQuestion]:
    p = Path(path)
    if not p.is_file():
        raise DatasetError(f"dataset file not found: {p}")
    items: list[LabelledQuestion] = []
    if p.suffix == ".json":
        try:
            data = json.loads(p.read_text(encoding="utf-8"))["data"]
        except (ValueError, KeyError, TypeError) as exc:
            raise DatasetError(f"{p}: not SQuAD 2.0 JSON (expected {{'data': [...]}}): {exc}") from None
        for art in data:
            for pi, para in enumerate(art.get("paragraphs", [])):
                passage = Passage(f"{art.get('title', '')}#{pi}", str(art.get("title", "")).replace("_", " "), para["context"])
                for qa in para.get("qas", []):
                    if "is_impossible" not in qa:
                        raise DatasetError(f"{p}: question {qa.get('id')} has no 'is_impossible' (SQuAD 1.1 is not labelled)")
                    items.append(LabelledQuestion(str(qa["id"]), qa["question"], (passage,), not qa["is_impossible"]))
    else:
        try:
            rows = list(read_jsonl(p, DatasetError))
        except DatasetError as exc:
            raise DatasetError(f"{exc}; expected question, passages[docid,title,text], answerable") from None
        for lineno, o in rows:
            try:
                passages = tuple(Passage(str(x["docid"]), str(x.get("title") or ""), str(x.get("text") or ""))
                                 for x in o["passages"])
                ans = o["answerable"]
                if not isinstance(ans, bool):
                    raise TypeError(f"'answerable' must be true/false, got {ans!r}")
                items.append(LabelledQuestion(str(o.get("query_id") or o.get("id") or lineno), str(o["question"]),
                                              passages, ans))
            except (ValueError, KeyError, TypeError) as exc:
                raise DatasetError(f"{p}:{lineno}: expected question, passages[docid,title,text], answerable ({exc})") from None
    if not items:
        raise DatasetError(f"{p}: no labelled questions")
    return _select(items, split, p.name, max_questions)
