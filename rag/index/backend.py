"""The index backends behind one interface, chosen by name in one registry.

``index.backend`` names one entry of :data:`BACKENDS`; :func:`make_backend` builds it. Everything
that differs between the backends, from opening an index to what a service's writer does, sits
behind :class:`IndexBackend`. An opened index is read and updated through
:class:`rag.index.protocol.Index`. This is the only module that compares a backend name or asks
which class an index is:

- ``local`` (:class:`LocalBackend`): a versioned folder at ``index.path``
  (:class:`rag.index.store.HybridIndex`); an update is saved as a new version folder.
- ``milvus`` (:class:`MilvusBackend`): collections on ``index.milvus``
  (:class:`rag.index.milvus.MilvusIndex`, imported on first use); every update is published as a
  new generation when it returns.
"""
from __future__ import annotations

import contextlib
import fcntl
import logging
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Callable, ContextManager, Iterator, Mapping, Protocol, cast, runtime_checkable

from rag.access.model import document_access
from rag.config import RagConfig, digest
from rag.errors import ConfigError, EmptyCorpusError, IndexError_, IndexMismatchError
from rag.index.chunking import Chunker
from rag.models.embedders import Embedder
from rag.index.layout import current_version, index_exists
from rag.index.protocol import Index, Operation
from rag.index.store import HybridIndex, build_index
from rag.index.updates import Progress, UpdateReport, access_json, text_sha256
from rag.text.analyzers import Analyzer
from rag.types import Document

if TYPE_CHECKING:
    from rag.index.milvus.index import MilvusIndex

logger = logging.getLogger(__name__)

_OPEN_TRIES = 5
_REFUSE = "\n(refusing to overwrite it; pass force=True / --force)"


@dataclass(frozen=True)
class ImportTarget:
    """The index ``rag migrate`` copies into, and what its contents depend on (``embedding_model``,
    ``embedding_dim``, ``analyzer``, ``chunking``), to compare with the source's."""

    index: Index
    params: Mapping[str, object]


@runtime_checkable
class IndexBackend(Protocol):
    """Where an index lives and how it is opened, built, updated and kept current."""

    name: str  # the ``index.backend`` value that selects it

    @property
    def location(self) -> str:
        """Where the configured index lives, for messages."""
        ...

    def exists(self) -> bool:
        """Whether the configured index exists (it may still be incompatible with the config)."""
        ...

    def open(self) -> Index:
        """The configured index, checked against the config (:class:`IndexNotFoundError`,
        :class:`IndexMismatchError`)."""
        ...

    def build(self, docs: list[Document], *, force: bool = False, progress: Progress | None = None) -> Index:
        """Make the configured index hold exactly ``docs`` (already checked unique by the caller)."""
        ...

    def new(self, docs: list[Document], progress: Progress | None = None) -> Index:
        """An index of ``docs`` (checked unique) apart from the configured one."""
        ...

    def writer_lock(self) -> ContextManager[None]:
        """Exclusive across this machine's processes: one writer of the configured index at a time.
        :meth:`write` and :meth:`build` take it; hold it only around reads that must not interleave
        with a write (it is not re-entrant)."""
        ...

    def write(self, live: Index | None, op: Operation) -> tuple[Index, UpdateReport]:
        """The one way an index is updated: under :meth:`writer_lock`, apply ``op`` to the newest
        published version (re-read when another process published one after ``live``, the caller's
        open copy, or None when it has none) and publish the result, while readers go on using
        ``live``. Returns the index to serve from now on (the newest, even when ``op`` changed
        nothing) and ``op``'s report."""
        ...

    def stale(self, live: Index) -> bool:
        """Cheap check: another process saved a version newer than ``live`` (see :meth:`poll`)."""
        ...

    def poll(self, live: Index) -> Index | None:
        """The newer version another process saved, opened; None when ``live`` is the newest."""
        ...

    def import_target(self, dim: int) -> ImportTarget:
        """The configured index as a migration target for vectors of ``dim`` (created empty when
        needed), without loading the embedding model."""
        ...


class _Backend:
    """What both backends keep: the config and the index's parts. ``chunker`` and ``analyzer``
    make a fresh one per call: every index (and a writer's fork) gets its own, as analyzers are not
    shared between threads; ``embedder`` is shared (it loads its model on first use)."""

    name = ""

    def __init__(self, config: RagConfig, chunker: Callable[[], Chunker], analyzer: Callable[[], Analyzer],
                 embedder: Embedder) -> None:
        self.config = config
        self.chunker = chunker
        self.analyzer = analyzer
        self.embedder = embedder

    @property
    def path(self) -> Path:
        """``index.path``, resolved: the local index folder, and where the writer lock lives."""
        return self.config.resolve(self.config.index.path)

    def writer_lock(self) -> ContextManager[None]:
        return _locked(self.path / ".writer.lock")

    def _empty(self, docs: list[Document]) -> EmptyCorpusError:
        return EmptyCorpusError(f"the corpus has {len(docs)} documents but no text to index (all empty)")


class LocalBackend(_Backend):
    """``index.backend: local``: the versioned folder at ``index.path`` (:class:`HybridIndex`)."""

    name = "local"

    @property
    def location(self) -> str:
        """The index folder."""
        return str(self.path)

    def exists(self) -> bool:
        """Whether the folder has a ``CURRENT`` version."""
        return index_exists(self.path)

    def open(self) -> Index:
        """Load the current version (memory-mapped arrays). A reader never takes the lock: when a
        writer moved ``CURRENT`` on and removed the version being read meanwhile (a writer keeps the
        newest two), the new current version is read instead."""
        name = self._current_name()
        for _ in range(_OPEN_TRIES - 1):
            try:
                return self._load()
            except (IndexError_, OSError, RuntimeError):
                now = self._current_name()
                if now == name:
                    raise
                logger.info("%s: version %s was replaced while it was read; reading %s", self.path, name, now)
                name = now
        return self._load()

    def _load(self) -> HybridIndex:
        return HybridIndex.load(self.path, self.config, self.chunker(), self.analyzer(), self.embedder)

    def build(self, docs: list[Document], *, force: bool = False, progress: Progress | None = None) -> Index:
        """Build in memory and save a new version atomically; an existing index built with another
        model/analyzer/chunking is refused unless ``force``."""
        if index_exists(self.path) and not force:
            self._check_compatible()
        idx = cast(HybridIndex, self.new(docs, progress))
        with self.writer_lock():  # the version number and CURRENT are a writer's to move
            if index_exists(self.path) and not force:
                self._check_compatible()  # another writer may have built it meanwhile
            idx.save(self.path)
        return idx

    def new(self, docs: list[Document], progress: Progress | None = None) -> Index:
        """An in-memory index of ``docs`` (:class:`EmptyCorpusError` when there is nothing to index)."""
        return build_index(docs, self.config, self.chunker(), self.analyzer(), self.embedder, progress)

    def write(self, live: Index | None, op: Operation) -> tuple[Index, UpdateReport]:
        """Under the lock: ``op`` on a fork (own chunker and analyzer) of the version ``CURRENT``
        names (``live`` when it is that version, or when nothing was saved yet), saved as a new
        version when it changed anything. A version whose save was
        killed midway never became ``CURRENT`` and is not read."""
        with self.writer_lock():
            base = self._newest(live)
            fork = cast(HybridIndex, base).fork(self.chunker(), self.analyzer())
            report = op(fork)
            if report.added or report.removed:
                fork.save(self.path)
                return fork, report
            return base, report

    def _newest(self, live: Index | None) -> Index:
        """``live`` when it is the current version (or nothing was saved yet: a new index), else
        the current version, opened (:class:`IndexNotFoundError` when there is none and no ``live``)."""
        if live is not None and (self._current_name() in (None, live.version_name)):
            return live
        return self.open()

    def stale(self, live: Index) -> bool:
        """``CURRENT`` names another version than ``live``'s (an unreadable one: no)."""
        try:
            name = (self.path / "CURRENT").read_text(encoding="utf-8").strip()
        except OSError:
            return False
        return name != live.version_name

    def poll(self, live: Index) -> Index | None:
        name = self._current_name()
        if name is None or name == live.version_name:
            return None
        return self.open()

    def import_target(self, dim: int) -> ImportTarget:
        """The existing index (opened), or an empty one for vectors of ``dim``."""
        idx = cast(HybridIndex, self.open()) if self.exists() else self._blank(dim)
        return ImportTarget(idx, {"embedding_model": self.embedder.model_id, "embedding_dim": dim,
                                  "analyzer": idx.analyzer.name, "chunking": idx.chunking_name})

    def _blank(self, dim: int | None = None) -> HybridIndex:
        return HybridIndex(self.config, self.chunker(), self.analyzer(), self.embedder, dim=dim)

    def _check_compatible(self) -> None:
        try:
            self._blank().check_compatible(self.path)
        except IndexMismatchError as exc:
            raise IndexMismatchError(f"{exc}{_REFUSE}") from None

    def _current_name(self) -> str | None:
        try:
            return current_version(self.path).name
        except IndexError_:
            return None


class MilvusBackend(_Backend):
    """``index.backend: milvus``: the collections on ``index.milvus`` (:class:`MilvusIndex`)."""

    name = "milvus"

    @property
    def location(self) -> str:
        """The Milvus URI (and database) and the collection."""
        return self._index().where_label

    def exists(self) -> bool:
        """Whether the collection exists (connects)."""
        return self._index().exists()

    def open(self) -> Index:
        """Connect, check the stored parameters and read the published generation."""
        return self._index().open()

    def build(self, docs: list[Document], *, force: bool = False, progress: Progress | None = None) -> Index:
        """Create the collections (``force``: drop existing ones first; an incompatible existing
        index is refused otherwise) and bring them to exactly ``docs`` in published batches (an
        interrupted build resumes when run again)."""
        if not docs:
            raise EmptyCorpusError("the corpus is empty: no documents were found to index")
        idx = self._index()
        with self.writer_lock():
            try:
                idx.create(drop=force)
            except IndexMismatchError as exc:
                raise IndexMismatchError(f"{exc}{_REFUSE}") from None
            idx.sync(docs, progress)
        if not len(idx):
            raise self._empty(docs)
        return idx

    def new(self, docs: list[Document], progress: Progress | None = None) -> Index:
        """A collection named after the documents and the index settings (``<collection>_<hash>``),
        reused when it already holds them."""
        key = digest({"index": self.config.index_hash,
                      "docs": [[d.id, d.version, text_sha256(d.text)]
                               + ([access_json(a)] if (a := document_access(d.id, d.metadata)) else [])
                               for d in sorted(docs, key=lambda d: d.key)]})
        idx = self._index(f"{self.config.index.milvus.collection}_{key[:12]}").create()
        idx.sync(docs, progress)
        if not len(idx):
            raise self._empty(docs)
        return idx

    def write(self, live: Index | None, op: Operation) -> tuple[Index, UpdateReport]:
        """Under the lock (and the engine's writer lease, which also keeps out writers on other
        machines): ``op`` on ``live`` itself (the index opened when None), which plans against the generation
        published now and publishes a new one; requests pin the generation that was live when they
        started."""
        with self.writer_lock():
            idx = live if live is not None else self.open()
            return idx, op(idx)

    def stale(self, live: Index) -> bool:
        """Never: every pinned request reads the engine's published generation."""
        return False

    def poll(self, live: Index) -> Index | None:
        """None: ``live`` follows the engine's published generation itself."""
        return None

    def import_target(self, dim: int) -> ImportTarget:
        """The collections, created for vectors of ``dim`` when they do not exist; the parameters
        are the stored ones (the embedding model: the config's)."""
        idx = self._index(dim=dim).create()
        stored = idx.check_compatible()
        params = {k: stored[k] for k in ("embedding_dim", "analyzer", "chunking")}
        return ImportTarget(idx, {**params, "embedding_model": self.embedder.model_id})

    def _index(self, collection: str | None = None, dim: int | None = None) -> "MilvusIndex":
        from rag.index.milvus.index import MilvusIndex

        return MilvusIndex(self.config, self.chunker(), self.analyzer(), self.embedder, collection=collection,
                           dim=dim)


BACKENDS: dict[str, type] = {LocalBackend.name: LocalBackend, MilvusBackend.name: MilvusBackend}


def make_backend(config: RagConfig, chunker: Callable[[], Chunker], analyzer: Callable[[], Analyzer],
                 embedder: Embedder) -> IndexBackend:
    """The backend ``config.index.backend`` names (:class:`ConfigError` for a name not in
    :data:`BACKENDS`). ``chunker``, ``analyzer``: zero-argument factories (each index gets its own);
    ``embedder``: shared, and not loaded here."""
    name = config.index.backend
    cls = BACKENDS.get(name)
    if cls is None:
        raise ConfigError(f"index.backend: unknown backend {name!r}; known backends: {', '.join(sorted(BACKENDS))}")
    return cls(config, chunker, analyzer, embedder)


@contextlib.contextmanager
def _locked(path: Path) -> Iterator[None]:
    """An exclusive ``flock`` on ``path`` (writers of one index, across processes)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "a+") as fh:
        fcntl.flock(fh.fileno(), fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(fh.fileno(), fcntl.LOCK_UN)
