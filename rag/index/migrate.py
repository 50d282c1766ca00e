"""Copy an index between backends (local folder <-> Milvus) without embedding anything again."""
from __future__ import annotations

import logging
import time
from dataclasses import dataclass
from typing import Callable, Mapping, Sequence

from rag.errors import IndexMismatchError
from rag.index.protocol import Index, Operation
from rag.index.updates import IndexedDocument, UpdateReport, labels

logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class MigrateReport:
    documents: int  # in the source
    copied: int  # written to the target by this run
    already: int  # found in the target with the same text (an earlier, interrupted run copied them)
    extra: tuple[str, ...]  # "id:version" in the target but not in the source (left in place)
    chunks: int  # chunks in the target afterwards
    seconds: float


def _same_contents(source, target_params: Mapping[str, object], source_label: str, target_label: str) -> None:
    src = source.params()
    for name in ("embedding_model", "embedding_dim", "analyzer", "chunking"):
        if getattr(src, name) != target_params[name]:
            raise IndexMismatchError(
                f"cannot migrate {source_label} to {target_label} without embedding or chunking again: the source "
                f"has {name} {getattr(src, name)!r}, the target config asks for {target_params[name]!r}. Use the "
                "same chunking, bm25.analyzer and embedding sections in both configs (only `index:` may differ).")


def _importing(items: Sequence[IndexedDocument]) -> Operation:
    """The write that imports ``items`` (already chunked and embedded) into the newest target."""
    def op(idx: Index) -> UpdateReport:
        before = set(idx.documents)
        idx.import_documents(items)
        added = sorted((it.record.id, it.record.version) for it in items
                       if (it.record.id, it.record.version) not in before)
        return UpdateReport(labels(added), (), (), 0)
    return op


def migrate(source_pipeline, target_pipeline, *, batch_documents: int | None = None,
            progress: Callable[[int], None] | None = None) -> MigrateReport:
    """Copy every document of the source pipeline's index into the target pipeline's index, in
    batches that each end in a published version (a saved folder / a Milvus generation), so an
    interrupted migration resumes where it stopped when run again (``batch_documents``: default the
    target's ``index.milvus.batch_documents``). Each batch is one write of the target
    (:meth:`rag.index.backend.IndexBackend.write`: under its writer lock, on its newest version). Documents already in the target with the same text
    are skipped; one there with other text is an error (nothing is overwritten).

    Both pipelines are used through ``.index`` (the source) and ``.components.backend``
    (:class:`rag.index.backend.IndexBackend`) only."""
    t0 = time.perf_counter()
    source = source_pipeline.index
    backend = target_pipeline.components.backend
    goal = backend.import_target(source.dim)  # the vectors come from the source; no model is loaded
    target = goal.index
    _same_contents(source, goal.params, source_pipeline.components.backend.location, backend.location)
    batch_documents = batch_documents or target_pipeline.config.index.milvus.batch_documents
    keys = sorted(source.documents)
    have = dict(target.documents)
    already = sum(1 for k in keys if k in have and have[k].text_sha256 == source.documents[k].text_sha256)
    todo = [k for k in keys if k not in have or have[k].text_sha256 != source.documents[k].text_sha256]
    copied = 0
    for i in range(0, len(todo), batch_documents):
        items = source.export(todo[i:i + batch_documents])
        target, rep = backend.write(target, _importing(items))
        copied += len(rep.added)
        if progress is not None:
            progress(sum(len(it.chunks) for it in items))
        logger.info("migrated %d / %d documents", min(i + batch_documents, len(todo)), len(todo))
    extra = tuple(f"{i}:{v}" for i, v in sorted(set(target.documents) - set(keys)))
    if extra:
        logger.warning("the target holds %d documents that are not in the source (left in place)", len(extra))
    return MigrateReport(len(keys), copied, already, extra, len(target), time.perf_counter() - t0)
