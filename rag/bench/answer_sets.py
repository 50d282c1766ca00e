"""Data recipes for the reader's held-back halves (``rag bench data NAME``; docs/reader.md).

- ``span-answer-sets``: answer-level sets for ``rag eval-answers`` from the span datasets, the
  questions of the reader's ``eval`` split (to report once) or ``calib`` split (to choose settings
  on): ``korquad-<split>`` (KorQuAD 1.0 dev questions whose paragraph falls in the split, asked over
  all its paragraphs, one document each) and ``squad2-<split>`` (SQuAD 2.0 questions, answerable and
  not, over every paragraph of the shared half). A question is right when answered with its gold
  answer, citing its paragraph; of several SQuAD answers the shortest is the fact. Questions are taken
  in a fixed hash order (``--max-questions``: the first N), so a smaller set is a sample of a larger.
- ``crosslingual-folders``: BEIR folders of MS MARCO asked across languages, English questions over
  the Korean passages (``msmarco-en-ko``) and the reverse (``msmarco-ko-en``): one side's corpus and
  qrels with the other side's queries (the shared folders are translations with the same ids), as
  links. ``rag eval-retrieval --reader-split eval`` then keeps the reader's eval queries.

Nothing here is trained or tuned on: the reader's eval split is never drawn for training.
"""
from __future__ import annotations

import hashlib
import json
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from rag.bench.errors import BenchOptionError
from rag.bench.harness import data_dir, repo_path
from rag.bench.measurement import Measurement, Outcome


@dataclass(frozen=True)
class SpanSetOptions:
    data: str = field(default="", metadata={"help": "data folder (default ../shared/data or $RAG_DATA_DIR)"})
    split: Literal["calib", "eval"] = field(default="eval", metadata={"help": "calib: to choose on; eval: to report"})
    max_questions: int = field(default=0, metadata={"help": "the first N in hash order (0: all)"})
    output: str = field(default="data/cache/answersets", metadata={"help": "folder the sets are written under"})


@dataclass(frozen=True)
class FolderOptions:
    data: str = field(default="", metadata={"help": "data folder (default ../shared/data or $RAG_DATA_DIR)"})
    output: str = field(default="data/cache/xling", metadata={"help": "folder the BEIR folders are made under"})


def _order(qid: str) -> str:
    return hashlib.sha256(f"answerset\x1f{qid}".encode()).hexdigest()


def _write(out: Path, docs: list[dict], questions: list[dict], limit: int) -> tuple[int, int]:
    out.mkdir(parents=True, exist_ok=True)
    questions = sorted(questions, key=lambda q: _order(q["id"]))[:limit or None]
    for name, rows in (("corpus.jsonl", docs), ("questions.jsonl", questions)):
        tmp = out / f".{name}.tmp"
        tmp.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")
        os.replace(tmp, out / name)
    return len(docs), len(questions)


def _lines(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def korquad_set(shared: Path, out: Path, split: str, limit: int = 0) -> tuple[int, int]:
    """``korquad-<split>`` under ``out``: (documents, questions) written."""
    from rag.reader.splits import split_of

    folder = shared / "korquad1"
    docs = [{"id": o["_id"], "version": "1", "title": o.get("title") or "", "text": o["text"]}
            for o in _lines(folder / "corpus.jsonl")]
    queries = {o["_id"]: o for o in _lines(folder / "queries.jsonl")}
    qrels = dict(line.split("\t")[:2] for line in (folder / "qrels" / "test.tsv").read_text(
        encoding="utf-8").splitlines()[1:] if line.strip())
    questions = []
    for qid, pid in sorted(qrels.items()):
        q = queries[qid]
        answers = (q.get("metadata") or {}).get("answers") or q.get("answers") or []
        answer = min((a["text"] if isinstance(a, dict) else str(a) for a in answers), key=len, default=None)
        if answer and split_of("korquad1", pid) == split:
            questions.append({"id": qid, "question": q["text"], "answerable": True, "style": "korquad",
                              "gold": {"doc_id": pid, "version": "1", "answer_facts": [answer]}})
    return _write(out / f"korquad-{split}", docs, questions, limit)


def squad_set(shared: Path, out: Path, split: str, limit: int = 0) -> tuple[int, int]:
    """``squad2-<split>`` under ``out``: (documents, questions) written."""
    from rag.reader.splits import split_of

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


def make_span_sets(o: SpanSetOptions) -> Outcome:
    shared, out = (Path(o.data) if o.data else data_dir()), repo_path(o.output)
    made, lines = {}, []
    for name, fn in ((f"korquad-{o.split}", korquad_set), (f"squad2-{o.split}", squad_set)):
        n_docs, n_q = fn(shared, out, o.split, o.max_questions)
        made[name] = {"folder": str(out / name), "documents": n_docs, "questions": n_q}
        lines.append(f"{name}: {n_docs} documents, {n_q} questions -> {out / name}")
    return Outcome(made, "\n".join(lines))


def make_crosslingual_folders(o: FolderOptions) -> Outcome:
    shared, out = (Path(o.data) if o.data else data_dir()), repo_path(o.output)
    made = {}
    for q, p in (("en", "ko"), ("ko", "en")):
        dst = out / f"msmarco-{q}-{p}"
        (dst / "qrels").mkdir(parents=True, exist_ok=True)
        links = {dst / "corpus.jsonl": shared / "msmarco" / p / "corpus.jsonl",
                 dst / "queries.jsonl": shared / "msmarco" / q / "queries.jsonl",
                 dst / "qrels" / "test.tsv": shared / "msmarco" / p / "qrels" / "test.tsv"}
        for link, target in links.items():
            if not target.is_file():
                raise BenchOptionError(f"{target} is missing: the shared MS MARCO en and ko folders are needed")
            if link.is_symlink() or link.exists():
                link.unlink()
            os.symlink(target.resolve(), link)
        made[dst.name] = str(dst)
    return Outcome(made, "\n".join(made.values()))


def _span_requires(o: SpanSetOptions) -> list[str]:
    shared = Path(o.data) if o.data else data_dir()
    need = (shared / "korquad1" / "corpus.jsonl", shared / "squad2" / "dev-v2.0-half.json")
    return [f"{p} is missing" for p in need if not p.is_file()]


def _folder_requires(o: FolderOptions) -> list[str]:
    shared = Path(o.data) if o.data else data_dir()
    return [f"{shared / 'msmarco' / s} is missing" for s in ("en", "ko") if not (shared / "msmarco" / s).is_dir()]


RECIPES = (
    Measurement("span-answer-sets", "KorQuAD and SQuAD 2.0 answer sets of the reader's calib or eval split",
                SpanSetOptions, make_span_sets, _span_requires),
    Measurement("crosslingual-folders", "MS MARCO BEIR folders with the other language's questions",
                FolderOptions, make_crosslingual_folders, _folder_requires),
)

__all__ = ["FolderOptions", "RECIPES", "SpanSetOptions", "korquad_set", "make_crosslingual_folders",
           "make_span_sets", "squad_set"]
