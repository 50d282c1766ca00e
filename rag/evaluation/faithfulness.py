"""Answer-level evaluation on a labelled folder: are the answers right, cited, and current?

A dataset folder holds ``corpus.jsonl`` (one document version a line: ``id``, ``version``,
``text``; ``title``, ``uri`` optional) and ``questions.jsonl`` (``id``, ``question``,
``answerable``, ``style`` optional; an answerable question has ``gold.doc_id`` and
``gold.answer_facts``, optionally ``gold.article``, ``gold.quote`` and ``gold.superseded_facts``).

:func:`eval_answers` indexes the corpus into a temporary folder, answers every question with
:meth:`rag.pipeline.Pipeline.answer` and scores each answer (:func:`score_answer`):

- a fact is *found* when it occurs in the answer after both are normalised
  (:func:`normalize_fact_text`: NFKC, ``**`` and backslash escapes removed, all whitespace
  removed), or when ``rag.text.facts`` is installed and says the quantities are equal;
- the *current version* of a document is its greatest ``version`` (:func:`rag.index.version_order.version_key`);
- an answerable question is *correct* when it was answered, every fact was found and one
  citation points at the gold document's current version; an unanswerable one is correct when
  the pipeline abstained.

:func:`answer_metrics` turns the rows into the report's numbers (see its docstring).
"""
from __future__ import annotations

import datetime
import logging
import re
import tempfile
import time
import unicodedata
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from types import MappingProxyType
from typing import Any

from rag._io import read_jsonl
from rag.config import RagConfig
from rag.errors import DatasetError
from rag.index.version_order import latest_versions
from rag.pipeline import Pipeline
from rag.text.lang import ZERO_WIDTH

logger = logging.getLogger(__name__)

Progress = Callable[[str, int, int], None]

CORPUS_FILE = "corpus.jsonl"
QUESTIONS_FILE = "questions.jsonl"
_QUESTION_FIELDS = "id, question, answerable and, when answerable, gold.doc_id and gold.answer_facts"
_CORPUS_FIELDS = "id, version and text (title, uri optional)"


# -- the dataset -------------------------------------------------------------------
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


@dataclass(frozen=True)
class AnswerDataset:
    """A loaded folder: its questions in file order and each document's current version."""

    path: Path
    corpus_path: Path
    questions: tuple[AnswerQuestion, ...]
    latest: Mapping[str, str]  # document id -> current (greatest) version

    def __post_init__(self) -> None:
        object.__setattr__(self, "latest", MappingProxyType(dict(self.latest)))


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


def _load_corpus_versions(path: Path) -> dict[str, str]:
    pairs: list[tuple[str, str]] = []
    for lineno, o in _read_rows(path, _CORPUS_FIELDS):
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
        pairs.append((doc_id, str(version)))
    if not pairs:
        raise DatasetError(f"{path}: no documents; add one JSON object a line with {_CORPUS_FIELDS}")
    return latest_versions(pairs)


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
    if not answerable:
        return AnswerQuestion(str(qid), text, False, None, style)
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
    return AnswerQuestion(str(qid), text, True, gold, style)


def load_answer_dataset(dataset_dir: str | Path) -> AnswerDataset:
    """Read and check a dataset folder (see the module docstring); a missing folder or file, a bad
    JSON line or a missing field raises :class:`~rag.errors.DatasetError` naming the file and line."""
    root = Path(dataset_dir)
    if not root.is_dir():
        raise DatasetError(f"dataset folder not found: {root} (expected a folder with {CORPUS_FILE} and "
                           f"{QUESTIONS_FILE})")
    corpus, qfile = root / CORPUS_FILE, root / QUESTIONS_FILE
    for f in (corpus, qfile):
        if not f.is_file():
            raise DatasetError(f"{root}: no {f.name} (an answer dataset holds {CORPUS_FILE} and {QUESTIONS_FILE})")
    latest = _load_corpus_versions(corpus)
    questions: list[AnswerQuestion] = []
    seen: dict[str, int] = {}
    for lineno, o in _read_rows(qfile, _QUESTION_FIELDS):
        q = _question(o, f"{qfile}:{lineno}", latest)
        if q.id in seen:
            raise DatasetError(f"{qfile}:{lineno}: question id {q.id!r} already used on line {seen[q.id]}; "
                               "make the ids unique")
        seen[q.id] = lineno
        questions.append(q)
    if not questions:
        raise DatasetError(f"{qfile}: no questions; add one JSON object a line with {_QUESTION_FIELDS}")
    return AnswerDataset(root, corpus, tuple(questions), latest)


# -- scoring one answer --------------------------------------------------------------
_ESCAPE = re.compile(r"\\(.)", re.DOTALL)


def normalize_fact_text(text: str) -> str:
    """The form facts and answers are compared in: NFKC, zero-width characters dropped, markdown
    backslash escapes (``1\\.``) and ``**`` emphasis removed, then every whitespace character removed."""
    t = unicodedata.normalize("NFKC", text).translate(ZERO_WIDTH)
    t = _ESCAPE.sub(r"\1", t).replace("**", "")
    return "".join(t.split())


def _same_quantities(fact: str, answer: str) -> bool:
    """Whether the fact states at least one quantity and the answer states every one of them with
    an equal value (``1억6천500만원`` = ``165,000,000원``, ``10분의 3`` = ``30%``), as
    :mod:`rag.text.facts` reads them; False when that module is not available."""
    try:
        from rag.text.facts import claim_quantities, unsupported_quantities
    except ImportError:
        return False
    return bool(claim_quantities(fact)) and not unsupported_quantities(fact, answer)


def fact_found(fact: str, answer: str) -> bool:
    """``fact`` occurs in ``answer`` (both normalised with :func:`normalize_fact_text`), or its
    quantities do (see :func:`_same_quantities`)."""
    f = normalize_fact_text(fact)
    if f and f in normalize_fact_text(answer):
        return True
    return _same_quantities(fact, answer)


@dataclass(frozen=True)
class AnswerRow:
    """One question's outcome. ``correct``: answerable: answered, every fact found and the gold
    document's current version cited; unanswerable: abstained. ``superseded_cited``: answered and
    cites a non-current version of a document, or contains a superseded fact but not every gold fact."""

    id: str
    answerable: bool
    status: str
    reason: str
    answer: str
    cited: tuple[tuple[str, str], ...]  # (document id, version), sorted, unique
    facts_found: tuple[bool, ...]  # one per gold answer fact (empty when unanswerable)
    correct: bool
    superseded_cited: bool
    cited_gold_current: bool
    style: str | None = None

    @property
    def answered(self) -> bool:
        return self.status == "answered"

    def to_json(self) -> dict:
        out: dict[str, Any] = {"id": self.id, "answerable": self.answerable}
        if self.style is not None:
            out["style"] = self.style
        out.update({"status": self.status, "reason": self.reason, "answer": self.answer,
                    "cited": [list(c) for c in self.cited], "facts_found": list(self.facts_found),
                    "correct": self.correct, "superseded_cited": self.superseded_cited,
                    "cited_gold_current": self.cited_gold_current})
        return out


def score_answer(q: AnswerQuestion, status: str, answer: str, cited: Iterable[tuple[str, str]],
                 latest: Mapping[str, str], reason: str = "") -> AnswerRow:
    """Score one answer (``status`` ``answered`` or not, its text and the ``(document id, version)``
    pairs it cites) against ``q`` and the current versions ``latest``."""
    cites = tuple(sorted(set(cited)))
    answered = status == "answered"
    stale = answered and any(doc in latest and ver != latest[doc] for doc, ver in cites)
    if q.gold is None:
        return AnswerRow(q.id, False, status, reason, answer, cites, (), not answered, stale, False, q.style)
    g = q.gold
    found = tuple(answered and fact_found(f, answer) for f in g.answer_facts)
    gold_current = answered and (g.doc_id, latest.get(g.doc_id)) in cites
    if answered and not all(found) and any(fact_found(f, answer) for f in g.superseded_facts):
        stale = True
    return AnswerRow(q.id, True, status, reason, answer, cites, found, answered and all(found) and gold_current,
                     stale, gold_current, q.style)


# -- metrics -------------------------------------------------------------------------
def _share(k: int, n: int) -> float | None:
    return round(k / n, 6) if n else None


def answer_metrics(rows: Sequence[AnswerRow]) -> dict[str, float | int | None]:
    """The report's numbers over ``rows``; a share whose denominator is 0 is ``None``.

    - ``accuracy_answerable``: correct answerable / answerable;
    - ``answered_when_answerable``: answered answerable / answerable;
    - ``abstained_when_unanswerable``, ``answered_when_unanswerable``: shares of the unanswerable;
    - ``precision_of_answered``: correct answerable / all answered (an answered unanswerable
      question counts as wrong); ``None`` when nothing was answered;
    - ``superseded_cited``: answered questions citing a non-current version (or giving the
      superseded answer), a count;
    - ``validation_failed``: questions with reason ``validation_failed``, a count."""
    ans = [r for r in rows if r.answerable]
    una = [r for r in rows if not r.answerable]
    answered = [r for r in rows if r.answered]
    una_answered = sum(r.answered for r in una)
    return {
        "n": len(rows),
        "n_answerable": len(ans),
        "n_unanswerable": len(una),
        "accuracy_answerable": _share(sum(r.correct for r in ans), len(ans)),
        "answered_when_answerable": _share(sum(r.answered for r in ans), len(ans)),
        "abstained_when_unanswerable": _share(len(una) - una_answered, len(una)),
        "answered_when_unanswerable": _share(una_answered, len(una)),
        "precision_of_answered": _share(sum(r.correct for r in answered if r.answerable), len(answered)),
        "superseded_cited": sum(r.superseded_cited for r in answered),
        "validation_failed": sum(r.reason == "validation_failed" for r in rows),
    }


def style_metrics(rows: Sequence[AnswerRow]) -> dict[str, dict[str, float | int | None]]:
    """``{style: {"n", "accuracy"}}`` (share of ``correct`` rows), styles sorted; rows without a style are left out."""
    out: dict[str, dict[str, float | int | None]] = {}
    for style in sorted({r.style for r in rows if r.style is not None}):
        sub = [r for r in rows if r.style == style]
        out[style] = {"n": len(sub), "accuracy": _share(sum(r.correct for r in sub), len(sub))}
    return out


@dataclass(frozen=True)
class AnswersReport:
    """What :func:`eval_answers` hands back. ``config_hash`` is the hash of the config as given
    (before the dataset's corpus and the temporary index path were set)."""

    dataset: str
    config_hash: str
    date: str  # ISO 8601, UTC
    metrics: Mapping[str, float | int | None]
    by_style: Mapping[str, Mapping[str, float | int | None]]
    rows: tuple[AnswerRow, ...]
    seconds: float = 0.0

    def __post_init__(self) -> None:
        object.__setattr__(self, "metrics", MappingProxyType(dict(self.metrics)))
        object.__setattr__(self, "by_style", MappingProxyType({k: MappingProxyType(dict(v))
                                                               for k, v in self.by_style.items()}))

    def to_json(self) -> dict:
        return {
            "dataset": self.dataset,
            "config_hash": self.config_hash,
            "date": self.date,
            "seconds": round(self.seconds, 3),
            "metrics": dict(self.metrics),
            "by_style": {k: dict(v) for k, v in self.by_style.items()},
            "rows": [r.to_json() for r in self.rows],
        }


def eval_answers(dataset_dir: Path, config: RagConfig, *, progress: Progress | None = None) -> AnswersReport:
    """Index ``dataset_dir/corpus.jsonl`` into a temporary folder (removed afterwards), answer every
    question of ``questions.jsonl`` with :meth:`Pipeline.answer` and score the answers.

    ``progress(stage, done, total)``: ``embed`` with the chunks embedded per batch (total 0), then
    ``answer`` with the running count of questions answered."""
    t0 = time.perf_counter()
    data = load_answer_dataset(dataset_dir)
    rows: list[AnswerRow] = []
    with tempfile.TemporaryDirectory(prefix="rag-eval-answers-") as tmp:
        cfg = config.with_overrides({"corpus.paths": [str(data.corpus_path.resolve())], "corpus.format": "jsonl",
                                     "index.path": str(Path(tmp) / "index")})
        p = Pipeline(cfg)
        embed_progress = (lambda n: progress("embed", n, 0)) if progress else None
        p.build_index(force=True, progress=embed_progress)
        logger.info("indexed %s; answering %d questions", data.corpus_path, len(data.questions))
        for i, q in enumerate(data.questions):
            r = p.answer(q.question)
            cited = [(c.document_id, c.document_version) for c in r.citations]
            rows.append(score_answer(q, r.status, r.answer, cited, data.latest, r.reason))
            if progress:
                progress("answer", i + 1, len(data.questions))
    date = datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds")
    return AnswersReport(str(data.path), config.hash, date, answer_metrics(rows), style_metrics(rows), tuple(rows),
                         time.perf_counter() - t0)
