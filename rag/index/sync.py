"""``rag sync FOLDER``: bring the index to exactly the folder's documents, touching only what changed.

The plan compares each file's sha256 and manifest entry with what the index recorded for it
(document metadata ``folder``, ``file``, ``sha256``, ``entry_sha256``; and ``reader``: a file read
by loaders that wrote another text, :data:`~rag.documents.files.READER_VERSION`, is read again): a file not indexed is
added, a changed one replaces its document, a file gone from the folder (or excluded by the
manifest) is deleted, and an unchanged file is not even opened. A file that cannot be read keeps
what the index already holds for it and is reported as failed.

Progress goes to an optional ``progress(stage, done, total)`` callback (the CLI draws one bar per
stage): ``check`` (files compared with the index), ``read`` (files read), ``embed`` (chunks embedded,
reported as increments; total 0, not known ahead) and ``write`` (documents written).

Changes are applied in batches, each one write of the index (:meth:`SyncTarget.write`, in the library
:meth:`rag.pipeline.Pipeline.write`: under the writer lock, on the newest version, published crash-safely), so a sync
killed at any point (``kill -9``) leaves the index at the last batch, and running it again
finishes the rest: the plan is computed from the index each time.
"""
from __future__ import annotations

import hashlib
import json
import logging
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Iterable, Protocol

from rag.config import RagConfig
from rag.documents import FileFailure, FileWarning, FolderLoad, load_folder, load_manifest
from rag.documents.files import READER_VERSION
from rag.documents.folder import candidate_files
from rag.index.layout import DocumentRecord
from rag.index.loaders import CorpusLoad, CorpusSource, empty_corpus_error
from rag.index.protocol import Index, Operation
from rag.index.updates import UpdateReport
from rag.types import Document

logger = logging.getLogger(__name__)

BATCH = 64  # documents per persisted update
Writer = Callable[[Operation], UpdateReport]  # applies one operation durably and returns its report
Progress = Callable[[str, int, int], None]  # (stage, done, total): see the module docstring


class SyncTarget(Protocol):
    """What a sync reads and writes: the config (the corpus section reads the files), the index when one
    exists, a first build, and the one write path. :class:`rag.pipeline.Pipeline` is one."""

    @property
    def config(self) -> RagConfig: ...

    @property
    def index(self) -> Index: ...

    def index_exists(self) -> bool: ...

    def build_index(self, docs: Iterable[Document] | None = None, *, force: bool = False,
                    progress: Callable[[int], None] | None = None) -> Index: ...

    def write(self, op: Operation) -> UpdateReport: ...


@dataclass(frozen=True)
class SyncPlan:
    add: tuple[str, ...]  # files (relative paths) not in the index
    update: tuple[str, ...]  # files whose bytes or manifest entry changed
    remove: tuple[tuple[str, str], ...]  # (file, document id) indexed from files gone or excluded
    unchanged: tuple[str, ...]


@dataclass(frozen=True)
class SyncReport:
    folder: str
    added: tuple[str, ...]
    updated: tuple[str, ...]
    removed: tuple[str, ...]
    unchanged: tuple[str, ...]
    failed: tuple[FileFailure, ...]
    warnings: tuple[FileWarning, ...]
    ignored: tuple[str, ...]
    chunks_embedded: int
    seconds: float
    # What the quarantine will withhold from the documents added or updated
    # (rag.context.screen.screen_synced), as rag.context.screen.WithheldBlock records; empty until screened.
    quarantined: tuple = ()

    def summary(self) -> str:
        return (f"added {len(self.added)}, updated {len(self.updated)}, removed {len(self.removed)}, "
                f"unchanged {len(self.unchanged)}, failed {len(self.failed)}")


def file_sha256(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def indexed_files(records: dict[tuple[str, str], DocumentRecord], folder: str) -> dict[str, DocumentRecord]:
    """``{file: record}`` of the documents the index holds from ``folder``."""
    out: dict[str, DocumentRecord] = {}
    for key in sorted(records):
        meta = records[key].meta
        if meta.get("folder") == folder and isinstance(meta.get("file"), str):
            out[meta["file"]] = records[key]
    return out


def _counter(progress: Progress | None, stage: str, total: int) -> Callable[[int], None] | None:
    """A ``step(n)`` callback that reports ``stage`` with a running count (None without ``progress``)."""
    if progress is None:
        return None
    done = 0

    def step(n: int) -> None:
        nonlocal done
        done += n
        progress(stage, done, total)
    return step


def _increments(progress: Progress | None, stage: str) -> Callable[[int], None] | None:
    """A ``step(n)`` callback that reports each increment of ``stage`` as it comes (total unknown)."""
    return None if progress is None else (lambda n: progress(stage, n, 0))


def plan_sync(pipeline: SyncTarget, root: Path, progress: Progress | None = None) -> SyncPlan:
    """What syncing ``root`` would change; ``progress``: the ``check`` stage, one step a file."""
    folder = str(root.resolve())
    manifest = load_manifest(root)
    names, _ = candidate_files(root)
    present = {rel for rel in names if not manifest.entry_for(rel).exclude}
    have = indexed_files(dict(pipeline.index.documents) if pipeline.index_exists() else {}, folder)
    add: list[str] = []
    update: list[str] = []
    unchanged: list[str] = []
    checked = _counter(progress, "check", len(present))
    for rel in sorted(present):
        if checked is not None:
            checked(1)
        rec = have.get(rel)
        if rec is None:
            add.append(rel)
            continue
        meta = rec.meta
        same = (meta.get("sha256") == file_sha256(root / rel)
                and meta.get("entry_sha256") == manifest.entry_for(rel).fingerprint()
                and meta.get("reader") == READER_VERSION)  # read again by the loaders of today
        (unchanged if same else update).append(rel)
    remove = tuple((rel, have[rel].id) for rel in sorted(set(have) - present))
    return SyncPlan(tuple(add), tuple(update), remove, tuple(unchanged))


def sync_folder(pipeline: SyncTarget, folder: str | Path, *, dry_run: bool = False,
                progress: Progress | None = None, write: Writer | None = None) -> SyncReport:
    """Apply :func:`plan_sync` (see the module docstring); ``dry_run`` only plans. ``write``
    applies each batch durably (default: ``pipeline.write``, the one write path; the service
    passes its own, which also publishes each batch to the requests it serves). ``progress(stage,
    done, total)`` hears of each stage (the module docstring names them)."""
    t0 = time.perf_counter()
    root = Path(folder)
    plan = plan_sync(pipeline, root, progress)
    todo = set(plan.add) | set(plan.update)
    got = (load_folder(root, pipeline.config.corpus, only=todo, progress=_counter(progress, "read", len(todo)))
           if todo and not dry_run else None)
    failed = got.failures if got else ()
    embedded = 0
    if not dry_run:
        if not pipeline.index_exists():
            if not (got and got.loaded):  # nothing to build a first index from: say what was looked for
                raise empty_corpus_error(_folder_load(root, got))
            pipeline.build_index([f.document for f in got.loaded], progress=_increments(progress, "embed"))
            embedded = len(pipeline.index)
        else:
            embedded = _apply(write or pipeline.write, plan, got.loaded if got else (), progress)
    failed_files = {f.file for f in failed}
    return SyncReport(str(root), tuple(r for r in plan.add if r not in failed_files),
                      tuple(r for r in plan.update if r not in failed_files), tuple(r for r, _ in plan.remove),
                      plan.unchanged, tuple(failed), got.warnings if got else (), got.ignored if got else (),
                      embedded, time.perf_counter() - t0)


def _folder_load(root: Path, got: FolderLoad | None) -> CorpusLoad:
    """What reading ``root`` gave, as a corpus: every file there was skipped when none was read."""
    if got is None:
        names, ignored = candidate_files(root)
        return CorpusLoad([], ignored=tuple(sorted(names + ignored)), sources=(CorpusSource(str(root), "folder"),))
    return CorpusLoad([], got.failures, got.warnings, got.ignored, sources=(CorpusSource(str(root), "folder"),))


def _delete(doc_id: str) -> Operation:
    def op(idx: Index) -> UpdateReport:
        if not any(k[0] == doc_id for k in idx.documents):  # gone already (a rerun after a kill)
            return UpdateReport((), (), (), 0)
        return idx.delete(doc_id)
    return op


def _replace(docs: list, progress: Callable[[int], None] | None = None) -> Operation:
    return lambda idx: idx.replace(docs, progress)


def _apply(write: Writer, plan: SyncPlan, loaded, progress: Progress | None = None) -> int:
    embedded = 0
    new_ids = {f.document.id for f in loaded}
    for _, doc_id in plan.remove:
        if doc_id not in new_ids:  # an id that moved to another file: the replace below drops the old version
            write(_delete(doc_id))
    embed = _increments(progress, "embed")
    for i in range(0, len(loaded), BATCH):
        embedded += write(_replace([f.document for f in loaded[i:i + BATCH]], embed)).chunks_embedded
        done = min(i + BATCH, len(loaded))
        logger.info("sync: %d/%d documents written", done, len(loaded))
        if progress is not None:
            progress("write", done, len(loaded))
    return embedded


def report_json(rep: SyncReport) -> str:
    return json.dumps({
        "folder": rep.folder, "added": rep.added, "updated": rep.updated, "removed": rep.removed,
        "unchanged": rep.unchanged, "ignored": rep.ignored, "chunks_embedded": rep.chunks_embedded,
        "seconds": round(rep.seconds, 3),
        "failed": [{"file": f.file, "reason": f.reason, "message": f.message} for f in rep.failed],
        "warnings": [{"file": w.file, "code": w.code, "message": w.message, "page": w.page} for w in rep.warnings],
        "quarantined": [w.to_json() for w in rep.quarantined],
    }, ensure_ascii=False, indent=2)
