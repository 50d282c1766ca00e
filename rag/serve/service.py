"""The state behind ``rag serve``: one pipeline, the index version it serves, admission control and
document updates. Independent of the web framework (``rag.serve.app`` maps it to HTTP).

Threads. Everything CPU-bound for questions (search, rerank, context, extractive generation,
validation) runs on one compute thread: the models are not shared between threads, and on a small
machine one thread at a time is also the fastest. Document updates run on one writer thread: it
works on a fork of the index with its own chunker and analyzer, embeds through the same embedder
(whose calls are serialized), saves a new version and only then publishes it. A request pins the
version that is live when it starts, so every request sees one whole version.

Several workers (processes) share the index folder: writers take an exclusive lock on
``<index>/.writer.lock`` and start from the newest saved version; every worker checks ``CURRENT``
at most every ``serve.index_poll_s`` seconds and loads a newer version in the background."""
from __future__ import annotations

import asyncio
import contextlib
import contextvars
import logging
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import AsyncIterator, Callable, Sequence

from rag.config import RagConfig
from rag.models.embedders import serialized
from rag.index.protocol import Index, Operation
from rag.index.updates import UpdateReport
from rag.errors import RagError
from rag.pipeline import Pipeline, Warmup
from rag.result import AnswerResult
from rag.serve.auth import ApiKeys
from rag.serve.errors import ServiceError, from_library, scrub
from rag.serve.logs import request_id
from rag.serve.metrics import Metrics
from rag.types import Document

logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class DocumentsChange:
    """What a document update did, and the index version that now serves."""

    report: UpdateReport
    index_version: str | None
    documents: int
    chunks: int

    def to_json(self) -> dict:
        r = self.report
        return {"added": list(r.added), "removed": list(r.removed), "unchanged": list(r.unchanged),
                "chunks_embedded": r.chunks_embedded, "index_version": self.index_version,
                "documents": self.documents, "chunks": self.chunks}


@dataclass(frozen=True)
class Served:
    """An answer and the index version it was answered from."""

    result: AnswerResult
    index_version: str | None


class Service:
    def __init__(self, config: RagConfig, keys: ApiKeys | None = None, tools=None) -> None:
        """``keys``: the API keys (default: from RAG_API_KEYS / RAG_ADMIN_KEYS, bound to what
        ``serve.keys`` says each reads as). ``tools``: a
        :class:`rag.tools.ToolRegistry` with its functions bound; answers then may call them
        (``generation.backend: openai``)."""
        self.config = config
        self.tools = tools
        self.settings = config.serve
        # The embedder is used from the compute and the writer thread: serialize its model calls.
        self.pipeline = Pipeline(config, embedder=serialized(Pipeline(config).components.embedder))
        self.keys = ApiKeys.from_env(serve=config.serve) if keys is None else keys
        self.metrics = Metrics()
        self.ready = False
        self.phase = "starting"  # starting -> warming_up -> ready; failed: start-up failed (never ready)
        self.not_ready_reason = "starting: loading models and the index"
        self.warmup: Warmup | None = None  # the last warm-up's timings
        self.warmup_error: dict | None = None  # or why it failed (warmup_error)
        self.compute = ThreadPoolExecutor(1, thread_name_prefix="rag-compute")
        self.writer = ThreadPoolExecutor(1, thread_name_prefix="rag-writer")
        self._sem: asyncio.Semaphore | None = None
        self._waiting = 0
        self._last_poll = 0.0
        self._sync: asyncio.Future | None = None
        self._stop = threading.Event()
        self.follow_reports: dict[str, object] = {}  # folder -> its last rag.index.sync.SyncReport

    # -- life cycle ------------------------------------------------------------------
    def start(self) -> None:
        """Open the index, load every model and answer the warm-up questions (blocking; the app runs
        it on the compute thread). Ready only after the warm-up; a failed warm-up is reported by
        :meth:`status` and logged, and the service serves anyway (what did not load loads on first
        use). Without an index (or with a config that cannot answer) it never becomes ready."""
        try:
            self.pipeline.components.warm_up()
            if self.tools is not None:
                self.pipeline.components.tool_selector(self.tools)  # index the tools once, before the first question
        except Exception as exc:
            self.phase = "failed"
            self.not_ready_reason = f"start-up failed: {type(exc).__name__}"
            logger.exception("start-up failed")
            raise
        self._published(self.pipeline.index)
        self._warm()
        self.ready = True
        self.phase = "ready"
        self.not_ready_reason = ""
        idx = self.pipeline.index
        w = self.warmup
        warmed = (f"warmed up in {w.total_s:.2f}s (" + ", ".join(f"{k} {v:.2f}s" for k, v in w.parts().items()) + ")"
                  if w is not None else "warm-up failed; serving anyway")
        logger.info("ready: index %s (%d documents, %d chunks), %s", idx.version_name, len(idx.documents), len(idx),
                    warmed)
        if self.settings.follow:
            threading.Thread(target=self._follow_loop, name="rag-follow", daemon=True).start()

    def _warm(self) -> None:
        """:meth:`rag.pipeline.Pipeline.warmup`, as nobody and outside any request: not logged as a
        request, not counted in the request or answer metrics (only ``rag_warmup_seconds``); its log
        lines carry the request id ``warmup``. A failure is kept as a typed error without its text."""
        self.phase = "warming_up"
        self.not_ready_reason = "warming up: loading the models and answering a warm-up question"
        logger.info("warming up: loading the models and answering a warm-up question")
        token = request_id.set("warmup")
        try:
            self.warmup = self.pipeline.warmup()
        except Exception as exc:  # noqa: BLE001 - a failed warm-up must not take the service down
            self.warmup_error = warmup_error(exc)
            logger.warning("warm-up failed (%s: %s); serving anyway: what did not load loads on the first requests",
                           self.warmup_error["type"], self.warmup_error["message"])
            logger.debug("warm-up failure", exc_info=True)
        else:
            for part, seconds in self.warmup.parts().items():
                self.metrics.warmup_seconds.labels(part).set(seconds)
        finally:
            request_id.reset(token)

    # -- followed folders (serve.follow) ---------------------------------------------
    def _follow_loop(self) -> None:
        folders = [self.config.resolve(f) for f in self.settings.follow]
        while not self._stop.is_set():
            for folder in folders:
                try:
                    self.writer.submit(self.follow_once, folder).result()
                except Exception:  # a folder gone for a while, a full disk: the next round tries again
                    logger.warning("could not sync %s; will retry", folder, exc_info=True)
            self._stop.wait(self.settings.follow_interval_s)

    def follow_once(self, folder) -> object:
        """One `rag sync` of ``folder`` through this service's writer (on the writer thread): each
        batch is published to the requests that start after it."""
        from rag.index.sync import sync_folder

        rep = sync_folder(self.pipeline, folder, write=lambda op: self._write_now(op).report)
        self.follow_reports[str(folder)] = rep
        if rep.added or rep.updated or rep.removed or rep.failed:
            logger.info("followed %s: %s", folder, rep.summary())
        return rep

    def close(self) -> None:
        self._stop.set()
        self.compute.shutdown(wait=False, cancel_futures=True)
        self.writer.shutdown(wait=False, cancel_futures=True)

    def require_ready(self) -> None:
        if not self.ready:
            raise ServiceError("not_ready", self.not_ready_reason or "not ready", {"Retry-After": "2"})

    def status(self) -> dict:
        out = {"ready": self.ready, "status": self.phase, "reason": self.not_ready_reason or None}
        if self.warmup is not None:
            out["warmup"] = {"ok": True, **self.warmup.to_json()}
        elif self.warmup_error is not None:
            out["warmup"] = {"ok": False, "error": self.warmup_error}
        if self.ready:
            idx = self.pipeline.index
            out |= {"index_version": idx.version_name, "documents": len(idx.documents), "chunks": len(idx),
                    "config_hash": self.config.hash, "models": self.model_ids(),
                    "tools": len(self.tools) if self.tools is not None else 0}
            if self.follow_reports:
                out["followed"] = {f: r.summary() for f, r in sorted(self.follow_reports.items())}
        return out

    def model_ids(self) -> dict[str, str]:
        p = self.pipeline
        ids = {"embedding": p.components.embedder.model_id, "generator": p.config.generation.backend}
        if p.components.reranker is not None:
            ids["reranker"] = p.components.reranker.model_id
        return ids

    # -- questions -----------------------------------------------------------------
    def pinned(self) -> Pipeline:
        """The pipeline over the version live now (see the module doc); also polls the disk."""
        self.require_ready()
        self._poll_disk()
        return self.pipeline.pinned()

    @contextlib.asynccontextmanager
    async def slot(self) -> AsyncIterator[None]:
        """Admission: at most ``max_concurrency`` questions at once, ``max_queue`` waiting; beyond
        that a 429 with Retry-After."""
        if self._sem is None:
            self._sem = asyncio.Semaphore(self.settings.max_concurrency)
        if self._sem.locked() and self._waiting >= self.settings.max_queue:
            self.metrics.rejected.labels("overloaded").inc()
            raise ServiceError("overloaded", f"too many requests in flight ({self.settings.max_concurrency} running, "
                                             f"{self._waiting} waiting); retry later",
                               {"Retry-After": str(self.settings.retry_after_s)})
        self._waiting += 1
        self.metrics.queued.inc()
        try:
            await self._sem.acquire()
        finally:
            self._waiting -= 1
            self.metrics.queued.dec()
        self.metrics.inflight.inc()
        try:
            yield
        finally:
            self._sem.release()
            self.metrics.inflight.dec()

    async def run(self, fn: Callable, *args, **kwargs):
        """``fn(*args, **kwargs)`` on the compute thread (with the request's context: its log lines
        carry the request id)."""
        loop = asyncio.get_running_loop()
        ctx = contextvars.copy_context()
        return await loop.run_in_executor(self.compute, lambda: ctx.run(fn, *args, **kwargs))

    # -- documents -----------------------------------------------------------------
    async def add(self, docs: Sequence[Document], replace: bool) -> DocumentsChange:
        op = (lambda idx: idx.replace(docs)) if replace else (lambda idx: idx.add(docs))
        self.metrics.document_updates.labels("replace" if replace else "add").inc()
        return await self._write(op)

    async def delete(self, doc_id: str, version: str | None) -> DocumentsChange:
        self.metrics.document_updates.labels("delete").inc()
        return await self._write(lambda idx: idx.delete(doc_id, version))

    def has_document(self, doc_id: str, version: str | None) -> bool:
        return any(k[0] == doc_id and (version is None or k[1] == version) for k in self.pipeline.index.documents)

    async def _write(self, op: Operation) -> DocumentsChange:
        self.require_ready()
        loop = asyncio.get_running_loop()
        ctx = contextvars.copy_context()
        return await loop.run_in_executor(self.writer, lambda: ctx.run(self._write_now, op))

    def _write_now(self, op: Operation) -> DocumentsChange:
        """``op`` the one way every writer applies it (:meth:`rag.index.backend.IndexBackend.write`:
        under the writer lock, on the newest version, published: the local folder saves a fork as
        a new version, Milvus publishes a generation), then served from now on."""
        live = self.pipeline.index
        idx, report = self.pipeline.components.backend.write(live, op)
        if idx is not live:
            self._published(idx)
        return DocumentsChange(report, idx.version_name, len(idx.documents), len(idx))

    def _newest(self) -> Index:
        """The live index, or the newer version another worker saved (loaded and published)."""
        live = self.pipeline.index
        fresh = self.pipeline.components.backend.poll(live)
        if fresh is None:
            return live
        self._published(fresh)
        logger.info("now serving index %s (saved by another worker)", fresh.version_name)
        return fresh

    def _published(self, index: Index) -> None:
        self.pipeline.components.use_index(index)
        self.metrics.index_chunks.set(len(index))
        self.metrics.index_documents.set(len(index.documents))

    def _poll_disk(self) -> None:
        """At most every ``index_poll_s``: if another worker saved a newer version, load it on the
        writer thread (the Milvus backend never needs to: every pinned request reads the engine's
        published generation)."""
        now = time.monotonic()
        if now - self._last_poll < self.settings.index_poll_s or (self._sync is not None and not self._sync.done()):
            return
        self._last_poll = now
        if self.pipeline.components.backend.stale(self.pipeline.index):
            self._sync = asyncio.get_running_loop().run_in_executor(self.writer, self._sync_now)

    def _sync_now(self) -> None:
        try:
            with self.pipeline.components.backend.writer_lock():
                self._newest()
        except Exception:  # a version removed while loading, etc.: the next poll tries again
            logger.warning("could not load the newer index version; will retry", exc_info=True)


def warmup_error(exc: Exception) -> dict:
    """A failed warm-up as readiness reports it: the stable code, the error's type and, for the
    library's own typed errors (which say what was wrong and what to do), their message with file
    paths scrubbed; anything else only says where to look (no text of a document can travel)."""
    err = from_library(exc)
    message = scrub(str(exc)) if isinstance(exc, RagError) else err.message
    return {"code": err.code, "type": type(exc).__name__, "message": message}
