"""Answer-level evaluation on a labelled folder: are the answers right, precise, cited, and current?

The folder (``corpus.jsonl`` and ``questions.jsonl``) is described in
:mod:`rag.evaluation.answer_dataset`; scoring and the report's numbers in
:mod:`rag.evaluation.answer_scoring`. Both are re-exported here.

:func:`eval_answers` indexes the corpus into a temporary folder, answers every question with
:meth:`rag.pipeline.Pipeline.answer` and scores each answer (:func:`score_answer`);
:func:`answer_metrics` turns the rows into the report's numbers, :func:`style_metrics` gives the
same numbers per question style.
"""
from __future__ import annotations

import datetime
import logging
import tempfile
import time
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from types import MappingProxyType

from rag.config import RagConfig
from rag.evaluation.answer_dataset import (CORPUS_FILE, QUESTIONS_FILE, AnswerDataset, AnswerQuestion, Gold,
                                           load_answer_dataset)
from rag.evaluation.answer_scoring import (AnswerRow, GateReading, answer_metrics, fact_found, normalize_fact_text,
                                           score_answer, style_metrics)
from rag.pipeline import Pipeline
from rag.text.lexical import find_quote

__all__ = ["CORPUS_FILE", "QUESTIONS_FILE", "AnswerDataset", "AnswerQuestion", "AnswerRow", "AnswersReport", "Gold",
           "Progress", "answer_metrics", "eval_answers", "fact_found", "load_answer_dataset", "normalize_fact_text",
           "score_answer", "style_metrics"]

logger = logging.getLogger(__name__)

Progress = Callable[[str, int, int], None]


@dataclass(frozen=True)
class AnswersReport:
    """What :func:`eval_answers` hands back. ``config_hash`` is the hash of the config as given
    (before the dataset's corpus and the temporary index path were set). ``question_files``: the
    questions files answered, the dataset's own first."""

    dataset: str
    config_hash: str
    date: str  # ISO 8601, UTC
    metrics: Mapping[str, float | int | None]
    by_style: Mapping[str, Mapping[str, float | int | None]]
    rows: tuple[AnswerRow, ...]
    seconds: float = 0.0
    question_files: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        object.__setattr__(self, "metrics", MappingProxyType(dict(self.metrics)))
        object.__setattr__(self, "by_style", MappingProxyType({k: MappingProxyType(dict(v))
                                                               for k, v in self.by_style.items()}))

    def to_json(self) -> dict:
        return {
            "dataset": self.dataset,
            "question_files": list(self.question_files),
            "config_hash": self.config_hash,
            "date": self.date,
            "seconds": round(self.seconds, 3),
            "metrics": dict(self.metrics),
            "by_style": {k: dict(v) for k, v in self.by_style.items()},
            "rows": [r.to_json() for r in self.rows],
        }


def gate_reading(result) -> GateReading | None:
    """What the gate saw for one answered or abstained question (None without a trace)."""
    g = result.trace.gate if result.trace is not None else None
    if g is None:
        return None
    return GateReading(g.top_score, g.fit.coverage if g.fit is not None else None, g.stopped_by_reading)


def eval_answers(dataset_dir: Path, config: RagConfig, *, progress: Progress | None = None,
                 extra_questions: Iterable[str | Path] = (), files: Path | None = None,
                 own_questions: bool = True) -> AnswersReport:
    """Index ``dataset_dir/corpus.jsonl`` into a temporary folder (removed afterwards), answer every
    question of ``questions.jsonl``, then those of each ``extra_questions`` file (same format, same
    corpus; see :func:`load_answer_dataset`; ``own_questions=False``: only those), with
    :meth:`Pipeline.answer` (a question's ``history`` passed with it) and score the answers.

    ``files``: index this folder of files instead (the same documents rendered as PDF, DOCX …,
    with ids and versions from its manifest); the metrics then also count the correct answers'
    citations whose page holds their quote (``page_checked``, ``page_holds_quote``).

    ``progress(stage, done, total)``: ``embed`` with the chunks embedded per batch (total 0), then
    ``answer`` with the running count of questions answered."""
    t0 = time.perf_counter()
    data = load_answer_dataset(dataset_dir, extra_questions, own_questions=own_questions)
    rows: list[AnswerRow] = []
    with tempfile.TemporaryDirectory(prefix="rag-eval-answers-") as tmp:
        corpus = (str(files.resolve()), "folder") if files is not None else (str(data.corpus_path.resolve()), "jsonl")
        cfg = config.with_overrides({"corpus.paths": [corpus[0]], "corpus.format": corpus[1],
                                     "index.path": str(Path(tmp) / "index")})
        p = Pipeline(cfg)
        embed_progress = (lambda n: progress("embed", n, 0)) if progress else None
        docs = p.load_corpus()
        p.build_index(docs, force=True, progress=embed_progress)
        logger.info("indexed %s; answering %d questions", corpus[0], len(data.questions))
        pages = PageCheck({d.key: d for d in docs}) if files is not None else None
        for i, q in enumerate(data.questions):
            r = p.answer(q.question, q.history)
            cited = [(c.document_id, c.document_version) for c in r.citations]
            row = score_answer(q, r.status, r.answer, cited, data.latest, r.reason, gate_reading(r))
            rows.append(row)
            if pages is not None and row.correct:
                pages.check(r.citations)
            if progress:
                progress("answer", i + 1, len(data.questions))
    date = datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds")
    metrics = dict(answer_metrics(rows))
    if pages is not None:
        metrics.update(page_checked=pages.checked, page_holds_quote=pages.held)
    return AnswersReport(str(data.path), config.hash, date, metrics, style_metrics(rows), tuple(rows),
                         time.perf_counter() - t0, tuple(str(f) for f in data.question_files))


class PageCheck:
    """Counts cited quotes that lie, verbatim, on the page(s) their citation names."""

    def __init__(self, docs: Mapping[tuple[str, str], object]) -> None:
        self.docs = docs
        self.checked = 0
        self.held = 0

    def check(self, citations) -> None:
        for c in citations:
            doc = self.docs.get((c.document_id, c.document_version))
            pages = doc.metadata.get("pages") if doc is not None else None
            if not pages or c.page is None or not c.quote.strip():
                continue
            self.checked += 1
            starts = [s for s, _ in pages]
            numbers = [n for _, n in pages]
            last = c.page_end if c.page_end is not None else c.page
            if c.page not in numbers or last not in numbers:
                continue
            lo = starts[numbers.index(c.page)]
            j = numbers.index(last) + 1
            hi = starts[j] if j < len(starts) else len(doc.text)
            self.held += find_quote(c.quote, doc.text[lo:hi]) is not None  # the quote as shown (unmark)
