"""Batch answering: many questions through one answerer, resumable and crash-safe.

Input: a question set (:mod:`rag.batch.questions`). Output: one
:class:`~rag.batch.records.BatchRecord` per line (:mod:`rag.batch.output`). Configuration:
:class:`rag.config.BatchConfig` (``concurrency``, ``fsync``, ``max_consecutive_failures``);
``retry_failed``, ``sort_output`` and ``force`` are switches of one run.

Guarantees
- *Crash safety.* Each line is written with one ``write`` on an ``O_APPEND`` descriptor,
  then ``fsync``'d: a kill (even ``kill -9``) loses at most the questions in flight. A
  crash inside a write can leave only an unterminated last line; the next run moves it to
  ``OUTPUT.partial``, truncates the file to its last complete line, logs a warning and
  answers that question again.
- *Repeats.* A question given twice under one id (the same line again) is answered once; the
  repeats are in :attr:`BatchReport.repeated`. One id for two different questions is refused.
- *Resume.* A rerun skips every id already in the output (``retry_failed`` reruns those
  whose latest line is ``failed``; the later line supersedes the earlier). An output whose
  lines were written under another configuration is refused (``force`` starts it over).
- *Failures.* An exception while answering one question becomes a ``failed`` line with the
  error type and message; the batch goes on (up to ``max_consecutive_failures`` in a row).
- *Order.* Questions are started in input order and at most ``concurrency`` are in flight.
  With an async answerer (``Pipeline.aanswer``), :meth:`BatchRunner.run` gives the event loop
  a one-thread default executor, so what ``aanswer`` hands to ``asyncio.to_thread``
  (retrieval, reranking, prompt building) runs one question at a time in input order, and
  only the awaited generation step overlaps. Retrieval results never depend on the order
  (read-only index, deterministic tie-breaks). A sync-only answerer runs in a thread pool of
  ``concurrency`` workers. Lines are appended in completion order and each identifies
  itself (``id``, ``index``); when the run finishes, the file is rewritten atomically in
  input order, one line per id (latest wins), so a finished batch is byte-identical in
  layout whatever the concurrency (only timings differ).
"""
from __future__ import annotations

import asyncio
import inspect
import logging
import os
import threading
import time
from concurrent.futures import FIRST_COMPLETED, ThreadPoolExecutor, wait
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Protocol, Sequence

from rag.batch.output import ExistingOutput, OutputFileError, ResultWriter, compact_output, scan_output
from rag.batch.questions import BatchQuestion, QuestionSet, RepeatedLine, fold_repeats
from rag.batch.records import BatchFailure, BatchRecord, RunInfo, make_record
from rag.batch.summary import BatchSummary, summarize
from rag.config import BatchConfig
from rag.errors import RagError

logger = logging.getLogger(__name__)


class BatchAbortedError(RagError):
    """Too many questions failed in a row; the lines written so far are kept."""


# --------------------------------------------------------------------------- the answerer protocol
class AnswerLike(Protocol):
    """What an answerer returns (``rag.pipeline.AnswerResult`` satisfies it)."""

    status: str

    def to_json(self) -> dict: ...


class Answerer(Protocol):
    """Anything that answers (a ``Pipeline``). A question with a principal is asked with the keyword
    ``principal=`` (a :class:`rag.access.Principal`); one without is asked without it (anonymous). A
    question with filters is asked with ``where=`` (a :class:`rag.types.SearchFilter`)."""

    def answer(self, question: str, history: Sequence[Any] = ()) -> AnswerLike: ...

    async def aanswer(self, question: str, history: Sequence[Any] = ()) -> AnswerLike: ...


def _who(q: BatchQuestion) -> dict:
    """The keywords of the question's own options: who asks, and its filters (only when it has them)."""
    return {**({"principal": q.principal} if q.principal is not None else {}),
            **({"where": q.where} if q.where is not None else {})}


# --------------------------------------------------------------------------- the runner
@dataclass(frozen=True)
class BatchStart:
    todo: int  # questions this run will answer
    skipped_existing: int  # already in the output
    repaired_bytes: int  # a cut-off last line was removed (0: none)


@dataclass(frozen=True)
class BatchReport:
    output: Path
    summary: BatchSummary  # over every id in the output (this run and earlier ones)
    processed: int  # questions answered (or failed) by this run
    skipped_existing: int  # ids already in the output
    repaired_bytes: int
    seconds: float
    complete: bool  # every input id has a line
    repeated: tuple[RepeatedLine, ...] = ()  # input lines that repeat an earlier one: answered once with it


class BatchRunner:
    """``BatchRunner(pipeline, info).run(questions, Path("out.jsonl"))``; see the module docstring."""

    def __init__(self, answerer: Answerer, info: RunInfo, config: BatchConfig | None = None, *,
                 retry_failed: bool = False, sort_output: bool = True, force: bool = False) -> None:
        """``config``: the batch section of the run's configuration (default: its defaults).
        ``retry_failed`` answers again the ids whose latest line is ``failed``; ``sort_output``
        rewrites a finished output in input order; ``force`` starts the output over."""
        self.answerer = answerer
        self.info = info
        self.config = config if config is not None else BatchConfig()
        self.retry_failed = retry_failed
        self.sort_output = sort_output
        self.force = force

    # -- planning --------------------------------------------------------------
    def plan(self, questions: Sequence[BatchQuestion], output: Path) -> tuple[list[BatchQuestion], ExistingOutput]:
        """The questions still to answer, after checking (and repairing) the output file."""
        existing = scan_output(output, repair=True)
        foreign = sorted({r.results_hash for r in existing.records.values()} - {self.info.results_hash})
        if foreign:
            n = sum(1 for r in existing.records.values() if r.results_hash != self.info.results_hash)
            raise OutputFileError(
                f"{output} holds {n} result(s) written under another configuration ({', '.join(foreign[:3])}; this "
                f"run is {self.info.results_hash}). Write to another file with -o, or pass --force to start it over")
        todo, other = [], 0
        for q in questions:
            rec = existing.records.get(q.id)
            if rec is not None and not rec.answered_for(q.principal):
                other += 1  # answered for someone else: answered again for this line's principal
                todo.append(q)
            elif rec is None or (self.retry_failed and rec.status == "failed"):
                todo.append(q)
        if other:
            logger.warning("%s: %d line(s) were answered for another principal; answering them again for the "
                           "principal this run names (the new line supersedes the old)", output, other)
        return todo, existing

    # -- execution -------------------------------------------------------------
    def _is_async(self) -> bool:
        fn = getattr(self.answerer, "aanswer", None)
        return callable(fn) and inspect.iscoroutinefunction(fn)

    def run(self, questions: Sequence[BatchQuestion] | QuestionSet, output: str | Path,
            progress: Callable[[BatchRecord], None] | None = None,
            on_start: Callable[["BatchStart"], None] | None = None) -> BatchReport:
        """Answer every question not yet in ``output``; see the module docstring for the guarantees.
        ``questions``: a :class:`QuestionSet` (its repeated lines are reported too) or the questions.

        ``on_start`` is called once the output is locked, checked and planned; ``progress``
        after each line is written."""
        if self._is_async():
            async def main() -> BatchReport:
                # One worker thread for everything the answerer sends to asyncio.to_thread (the pipeline's
                # retrieval and prompt building): CPU-bound retrieval runs one question at a time, in the
                # order the questions started (input order), while generation awaits overlap.
                asyncio.get_running_loop().set_default_executor(
                    ThreadPoolExecutor(max_workers=1, thread_name_prefix="rag-retrieval"))
                return await self.arun(questions, output, progress, on_start)

            return asyncio.run(main())
        with self._session(questions, output, progress, on_start) as s:
            if s.todo:
                self._run_threads(s.todo, s.state)
        return s.report

    async def arun(self, questions: Sequence[BatchQuestion] | QuestionSet, output: str | Path,
                   progress: Callable[[BatchRecord], None] | None = None,
                   on_start: Callable[["BatchStart"], None] | None = None) -> BatchReport:
        with self._session(questions, output, progress, on_start) as s:
            if s.todo:
                if self._is_async():
                    await self._run_async(s.todo, s.state)
                else:
                    await asyncio.get_running_loop().run_in_executor(None, self._run_threads, s.todo, s.state)
        return s.report

    def _session(self, questions: Sequence[BatchQuestion] | QuestionSet, output: str | Path,
                 progress: Callable[[BatchRecord], None] | None,
                 on_start: Callable[["BatchStart"], None] | None = None) -> "_Session":
        repeated: tuple[RepeatedLine, ...] = ()
        if isinstance(questions, QuestionSet):
            questions, repeated = questions.questions, questions.repeated
        # the same question twice under one id is answered once; one id for two questions is refused
        kept, more = fold_repeats(questions)
        for r in more:
            logger.warning("%s", r.describe())
        return _Session(self, kept, Path(output), progress, on_start, (*repeated, *more))

    async def _one_async(self, q: BatchQuestion) -> BatchRecord:
        t = time.perf_counter()
        try:
            res = await self.answerer.aanswer(q.question, history=q.history, **_who(q))
        except Exception as exc:  # noqa: BLE001 - recorded in the line; the batch goes on
            logger.warning("question %s failed: %s: %s", q.id, type(exc).__name__, exc)
            return make_record(q, self.info, None, (time.perf_counter() - t) * 1e3, exc)
        return make_record(q, self.info, res, (time.perf_counter() - t) * 1e3)

    async def _run_async(self, todo: Sequence[BatchQuestion], state: "_State") -> None:
        sem = asyncio.Semaphore(self.config.concurrency)
        tasks: set[asyncio.Task] = set()

        async def one(q: BatchQuestion) -> None:
            try:
                state.record(await self._one_async(q))
            finally:
                sem.release()

        try:
            for q in todo:  # started in input order; at most `concurrency` in flight
                await sem.acquire()
                state.check()
                t = asyncio.create_task(one(q))
                tasks.add(t)
                t.add_done_callback(tasks.discard)
            while tasks:
                await asyncio.gather(*list(tasks))
            state.check()
        except BaseException:
            for t in list(tasks):
                t.cancel()
            raise

    def _one_sync(self, q: BatchQuestion) -> BatchRecord:
        t = time.perf_counter()
        try:
            res = self.answerer.answer(q.question, history=q.history, **_who(q))
        except Exception as exc:  # noqa: BLE001 - recorded in the line; the batch goes on
            logger.warning("question %s failed: %s: %s", q.id, type(exc).__name__, exc)
            return make_record(q, self.info, None, (time.perf_counter() - t) * 1e3, exc)
        return make_record(q, self.info, res, (time.perf_counter() - t) * 1e3)

    def _run_threads(self, todo: Sequence[BatchQuestion], state: "_State") -> None:
        n = self.config.concurrency
        if n == 1:
            for q in todo:
                state.check()
                state.record(self._one_sync(q))
            state.check()
            return
        pool = ThreadPoolExecutor(max_workers=n, thread_name_prefix="rag-batch")
        pending: set = set()
        try:
            for q in todo:  # submitted in input order; at most `concurrency` in flight
                state.check()
                pending.add(pool.submit(self._one_sync, q))
                if len(pending) >= n:
                    done, pending = wait(pending, return_when=FIRST_COMPLETED)
                    for f in done:
                        state.record(f.result())
            while pending:
                done, pending = wait(pending, return_when=FIRST_COMPLETED)
                for f in done:
                    state.record(f.result())
            state.check()
        finally:
            for f in pending:
                f.cancel()
            pool.shutdown(wait=False, cancel_futures=True)


class _Session:
    """Lock the output, repair and plan; on a clean exit compact and summarize."""

    def __init__(self, runner: BatchRunner, questions: list[BatchQuestion], output: Path,
                 progress: Callable[[BatchRecord], None] | None,
                 on_start: Callable[["BatchStart"], None] | None = None,
                 repeated: tuple[RepeatedLine, ...] = ()) -> None:
        self.on_start = on_start
        self.repeated = repeated
        self.runner = runner
        self.questions = questions
        self.output = output
        self.progress = progress
        self.todo: list[BatchQuestion] = []
        self.report: BatchReport | None = None

    def __enter__(self) -> "_Session":
        r = self.runner
        self.t0 = time.perf_counter()
        self.writer = ResultWriter(self.output, fsync=r.config.fsync)  # takes the lock first
        try:
            if r.force and self.output.stat().st_size:
                logger.warning("--force: starting %s over", self.output)
                os.ftruncate(self.writer._fd, 0)
            self.todo, self.existing = r.plan(self.questions, self.output)
        except BaseException:
            self.writer.close()
            raise
        self.state = _State(self.writer, self.progress, r.config.max_consecutive_failures)
        if self.on_start is not None:
            self.on_start(BatchStart(len(self.todo), len(self.questions) - len(self.todo),
                                     self.existing.repaired_bytes))
        return self

    def __exit__(self, exc_type, exc, tb) -> None:
        try:
            if exc_type is None:
                final = scan_output(self.output, repair=False)
                complete = all(q.id in final.records for q in self.questions)
                if complete and self.runner.sort_output:
                    compact_output(self.output, {q.id: q.index for q in self.questions},
                                   fsync=self.runner.config.fsync)
                    final = scan_output(self.output, repair=False)
                self.report = BatchReport(self.output, summarize(final.records.values()), self.state.written,
                                          len(self.questions) - len(self.todo), self.existing.repaired_bytes,
                                          time.perf_counter() - self.t0, complete, self.repeated)
        finally:
            self.writer.close()


class _State:
    """Writes records (one at a time) and counts consecutive failures."""

    def __init__(self, writer: ResultWriter, progress: Callable[[BatchRecord], None] | None,
                 max_consecutive_failures: int | None) -> None:
        self.writer = writer
        self.progress = progress
        self.max_fail = max_consecutive_failures
        self.written = 0
        self.consecutive_failures = 0
        self.last_error: BatchFailure | None = None
        self._lock = threading.Lock()

    def record(self, rec: BatchRecord) -> None:
        with self._lock:
            self.writer.append(rec)
            self.written += 1
            if rec.status == "failed":
                self.consecutive_failures += 1
                self.last_error = rec.error
            else:
                self.consecutive_failures = 0
        if self.progress is not None:
            self.progress(rec)

    def check(self) -> None:
        if self.max_fail is not None and self.consecutive_failures >= self.max_fail:
            err = self.last_error
            raise BatchAbortedError(
                f"stopped after {self.consecutive_failures} questions failed in a row (last: "
                f"{err.type if err else '?'}: {err.message if err else '?'}). The lines written so far are kept; fix "
                "the cause (is the generation server up?) and rerun with --retry-failed")
