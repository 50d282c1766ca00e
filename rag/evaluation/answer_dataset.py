"""The labelled folder ``rag eval-answers`` and ``rag eval-addressing`` read.

A dataset folder holds ``corpus.jsonl`` (one document version a line: ``id``, ``version``,
``text``; ``title``, ``uri`` optional) and ``questions.jsonl`` (``id``, ``question``,
``answerable``, ``style`` optional; an answerable question has ``gold.doc_id`` and
``gold.answer_facts``, optionally ``gold.article``, ``gold.quote`` and ``gold.superseded_facts``;
``history`` optional: the earlier turns of a conversation, ``[{"role": "user"|"assistant",
"content": ...}, ...]``, given to :meth:`Pipeline.answer` with the question).
More question files in the same format can be appended (:func:`load_answer_dataset`'s
``extra_questions``): they are answered over the same corpus.

The *current version* of a document is its greatest ``version`` (:func:`rag.index.version_order.version_key`).
"""
from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from types import MappingProxyType
from typing import Any

from rag._io import read_jsonl
from rag.errors import DatasetError
from rag.index.version_order import latest_versions
from rag.types import Turn, turns_from_json

CORPUS_FILE = "corpus.jsonl"
QUESTIONS_FILE = "questions.jsonl"
_QUESTION_FIELDS = "id, question, answerable and, when answerable, gold.doc_id and gold.answer_facts"
_CORPUS_FIELDS = "id, version and text (title, uri optional)"


@dataclass(frozen=True)
class Gold:
    """What a correct answer to an answerable question contains and cites."""

    doc_id: str
    answer_facts: tuple[str, ...]
    article: str = ""
    quote: str = ""
    superseded_facts: tuple[str, ...] = ()  # the answer an older version of the document gives


@dataclass(frozen=True)
class AnswerQuestion:
    id: str
    question: str
    answerable: bool
    gold: Gold | None  # None for an unanswerable question
    style: str | None = None
    history: tuple[Turn, ...] = ()  # the conversation before the question (a follow-up)


@dataclass(frozen=True)
class AnswerDataset:
    """A loaded folder: its questions in file order (the dataset's own, then each extra file's) and
    each document's current version. ``question_files``: every questions file read, in that order."""

    path: Path
    corpus_path: Path
    questions: tuple[AnswerQuestion, ...]
    latest: Mapping[str, str]  # document id -> current (greatest) version
    question_files: tuple[Path, ...] = ()

    def __post_init__(self) -> None:
        object.__setattr__(self, "latest", MappingProxyType(dict(self.latest)))


@dataclass(frozen=True)
class CurrentDocument:
    """The current version of one corpus document."""

    id: str
    version: str
    text: str
    title: str = ""
    uri: str = ""


def _strings(value: Any, where: str, name: str, *, required: bool) -> tuple[str, ...]:
    if value is None and not required:
        return ()
    if not isinstance(value, list) or not all(isinstance(x, str) and x.strip() for x in value) or (
            required and not value):
        need = "a non-empty list of non-empty strings" if required else "a list of non-empty strings"
        raise DatasetError(f"{where}: '{name}' must be {need}, got {value!r}")
    return tuple(value)


def _read_rows(path: Path, expected: str) -> list[tuple[int, dict]]:
    try:
        return list(read_jsonl(path, DatasetError))
    except DatasetError as exc:
        raise DatasetError(f"{exc}; each line must be one JSON object with {expected}") from None


def _corpus_rows(path: Path) -> list[tuple[int, dict]]:
    rows = _read_rows(path, _CORPUS_FIELDS)
    for lineno, o in rows:
        where = f"{path}:{lineno}"
        for key in ("id", "version", "text"):
            if key not in o:
                raise DatasetError(f"{where}: missing '{key}' (a corpus line needs {_CORPUS_FIELDS})")
        doc_id, version = o["id"], o["version"]
        if not isinstance(doc_id, str) or not doc_id.strip():
            raise DatasetError(f"{where}: 'id' must be a non-empty string, got {doc_id!r}")
        if isinstance(version, bool) or not isinstance(version, (str, int, float)) or not str(version).strip():
            raise DatasetError(f"{where}: 'version' must be a non-empty string (e.g. 2026-01-02), got {version!r}")
        if not isinstance(o["text"], str):
            raise DatasetError(f"{where}: 'text' must be a string")
    if not rows:
        raise DatasetError(f"{path}: no documents; add one JSON object a line with {_CORPUS_FIELDS}")
    return rows


def _load_corpus_versions(path: Path) -> dict[str, str]:
    return latest_versions([(o["id"], str(o["version"])) for _, o in _corpus_rows(path)])


def current_documents(data: AnswerDataset) -> dict[str, CurrentDocument]:
    """``{document id: its current version}`` read from ``data.corpus_path``, ids sorted."""
    out: dict[str, CurrentDocument] = {}
    for _, o in _corpus_rows(data.corpus_path):
        version = str(o["version"])
        if data.latest.get(o["id"]) == version and o["id"] not in out:
            out[o["id"]] = CurrentDocument(o["id"], version, o["text"], str(o.get("title") or ""),
                                           str(o.get("uri") or ""))
    return dict(sorted(out.items()))


def _question(o: dict, where: str, docs: Mapping[str, str]) -> AnswerQuestion:
    for key in ("id", "question", "answerable"):
        if key not in o:
            raise DatasetError(f"{where}: missing '{key}' (a question needs {_QUESTION_FIELDS})")
    qid, text, answerable, style = o["id"], o["question"], o["answerable"], o.get("style")
    if not isinstance(qid, (str, int)) or isinstance(qid, bool) or not str(qid).strip():
        raise DatasetError(f"{where}: 'id' must be a non-empty string, got {qid!r}")
    if not isinstance(text, str) or not text.strip():
        raise DatasetError(f"{where}: 'question' must be a non-empty string")
    if not isinstance(answerable, bool):
        raise DatasetError(f"{where}: 'answerable' must be true or false, got {answerable!r}")
    if style is not None and not isinstance(style, str):
        raise DatasetError(f"{where}: 'style' must be a string, got {style!r}")
    try:
        history = turns_from_json(o.get("history"))
    except ValueError as exc:
        raise DatasetError(f"{where}: {exc}") from None
    if not answerable:
        return AnswerQuestion(str(qid), text, False, None, style, history)
    g = o.get("gold")
    if not isinstance(g, dict):
        raise DatasetError(f"{where}: missing 'gold' object (an answerable question needs gold.doc_id and "
                           "gold.answer_facts)")
    for key in ("doc_id", "answer_facts"):
        if key not in g:
            raise DatasetError(f"{where}: missing 'gold.{key}' (a question needs {_QUESTION_FIELDS})")
    doc_id = g["doc_id"]
    if not isinstance(doc_id, str) or doc_id not in docs:
        raise DatasetError(f"{where}: gold.doc_id {doc_id!r} is not an id in {CORPUS_FILE}; "
                           "fix the id or add the document")
    gold = Gold(doc_id, _strings(g["answer_facts"], where, "gold.answer_facts", required=True),
                str(g.get("article") or ""), str(g.get("quote") or ""),
                _strings(g.get("superseded_facts"), where, "gold.superseded_facts", required=False))
    return AnswerQuestion(str(qid), text, True, gold, style, history)


def load_answer_dataset(dataset_dir: str | Path, extra_questions: Iterable[str | Path] = (), *,
                        own_questions: bool = True) -> AnswerDataset:
    """Read and check a dataset folder (see the module docstring), then each file of ``extra_questions``
    (questions in the same format, whose gold documents must be in the folder's corpus), appended
    in the order given; ``own_questions=False``: only those (the folder's corpus, other questions). A missing folder or file, a bad JSON line, a missing field or a question id
    used twice (in any of the files) raises :class:`~rag.errors.DatasetError` naming the file and line."""
    root = Path(dataset_dir)
    if not root.is_dir():
        raise DatasetError(f"dataset folder not found: {root} (expected a folder with {CORPUS_FILE} and "
                           f"{QUESTIONS_FILE})")
    corpus, qfile = root / CORPUS_FILE, root / QUESTIONS_FILE
    for f in (corpus, qfile):
        if not f.is_file():
            raise DatasetError(f"{root}: no {f.name} (an answer dataset holds {CORPUS_FILE} and {QUESTIONS_FILE})")
    extra = tuple(Path(p) for p in extra_questions)
    for f in extra:
        if not f.is_file():
            raise DatasetError(f"questions file not found: {f} (--questions takes a JSONL file in the format of "
                               f"{QUESTIONS_FILE})")
    latest = _load_corpus_versions(corpus)
    questions: list[AnswerQuestion] = []
    seen: dict[str, str] = {}  # id -> "file:line" where it was first used
    if not own_questions and not extra:
        raise DatasetError("no questions to answer: give --questions FILE with --only-questions")
    files = (qfile, *extra) if own_questions else extra
    for path in files:
        rows = _read_rows(path, _QUESTION_FIELDS)
        if not rows:
            raise DatasetError(f"{path}: no questions; add one JSON object a line with {_QUESTION_FIELDS}")
        for lineno, o in rows:
            q = _question(o, f"{path}:{lineno}", latest)
            if q.id in seen:
                first = seen[q.id]
                where = f"line {first.rsplit(':', 1)[1]}" if first.rsplit(":", 1)[0] == str(path) else first
                raise DatasetError(f"{path}:{lineno}: question id {q.id!r} already used on {where}; "
                                   "make the ids unique")
            seen[q.id] = f"{path}:{lineno}"
            questions.append(q)
    return AnswerDataset(root, corpus, tuple(questions), latest, files)
