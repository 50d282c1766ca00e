"""What every index backend does the same way when documents are added, replaced or removed:
checking a document, planning an update against the indexed records, chunking and embedding the
new documents, and the report an update returns.

The local folder (:mod:`rag.index.store`) and Milvus (:mod:`rag.index.milvus`) both build their
updates from these, so the two agree on what "already indexed", "changed" and "unchanged" mean."""
from __future__ import annotations

import hashlib
import json
import logging
from dataclasses import dataclass
from typing import Callable, Mapping, Sequence

import numpy as np

from rag.access.model import Access, document_access
from rag.errors import DuplicateDocumentError, IndexMismatchError, InputError
from rag.index.chunking import Chunker
from rag.models.embedders import CachedEmbedder, Embedder
from rag.index.layout import DocumentRecord
from rag.types import Chunk, Document

logger = logging.getLogger(__name__)

Progress = Callable[[int], None]


@dataclass(frozen=True)
class UpdateReport:
    """What one update did, as "id:version" strings, and how many chunks it embedded."""

    added: tuple[str, ...]
    removed: tuple[str, ...]
    unchanged: tuple[str, ...]
    chunks_embedded: int


@dataclass(frozen=True)
class IndexedDocument:
    """One document as an index holds it: its record, its chunks and their vectors (row-aligned).
    ``rag migrate`` copies these between backends without embedding again."""

    record: DocumentRecord
    chunks: tuple[Chunk, ...]
    vectors: np.ndarray


def text_sha256(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def passage_text(c: Chunk) -> str:
    """The text a chunk is embedded and BM25-indexed as: its title first, unless the text starts with it."""
    return f"{c.title}\n{c.text}" if c.title and not c.text.startswith(c.title) else c.text


def check_document(d: Document) -> None:
    """Refuse a document no index can hold (empty id, text not a string, ':' in the version)."""
    if not isinstance(d.id, str) or not d.id.strip():
        raise InputError(f"document id must be a non-empty string, got {d.id!r}")
    if not isinstance(d.text, str):
        raise InputError(f"document {d.id!r}: text must be a string, got {type(d.text).__name__}")
    if ":" in d.version:
        raise InputError(f"document {d.id!r}: version {d.version!r} must not contain ':' (used in evidence ids)")
    document_access(d.id, d.metadata)  # malformed access metadata: AccessMetadataError naming the document


def access_json(access: Access | None) -> str:
    """The access metadata as it is compared between an indexed record and a new document."""
    return json.dumps(access.to_json() if access is not None else None, sort_keys=True)


def same_contents(rec: DocumentRecord, d: Document) -> bool:
    """Whether an indexed record holds ``d`` as it is: the same text, title, uri and metadata (a
    replace that changes only who may read a document, or its manifest entry, rewrites it; the
    metadata holds the access, in the canonical form :func:`record_metadata` writes)."""
    return rec.text_sha256 == text_sha256(d.text) and (rec.title, rec.uri) == (d.title, d.uri) and \
        dict(rec.meta) == json.loads(record_metadata(d))


def record_metadata(d: Document) -> str:
    """A document's metadata as its record stores it (JSON), with ``access`` in its canonical form."""
    meta = dict(d.metadata)
    access = document_access(d.id, meta)
    if access is not None:
        meta["access"] = access.to_json()
    return json.dumps(meta, ensure_ascii=False, sort_keys=True, default=str)


def split_new(documents: Mapping[tuple[str, str], DocumentRecord], docs: Sequence[Document]
              ) -> tuple[list[Document], list[str]]:
    """For ``add``: the documents not indexed yet, and the "id:version" of those indexed with the
    same text. One indexed with other text is a :class:`DuplicateDocumentError` (nothing changed)."""
    new: list[Document] = []
    unchanged: list[str] = []
    for d in docs:
        check_document(d)
        rec = documents.get(d.key)
        if rec is None:
            new.append(d)
        elif same_contents(rec, d):
            unchanged.append(f"{d.id}:{d.version}")
        else:
            what = "text" if rec.text_sha256 != text_sha256(d.text) else "access metadata"
            raise DuplicateDocumentError(
                f"document {d.id!r} version {d.version!r} is already indexed with different {what}; "
                "use replace() (or give it a new version) — the index was left unchanged"
            )
    return new, unchanged


def replace_plan(documents: Mapping[tuple[str, str], DocumentRecord], docs: Sequence[Document]
                 ) -> tuple[set[tuple[str, str]], list[tuple[str, str]], list[Document]]:
    """For ``replace``: the keys kept (same id, version, text and access metadata), the keys dropped
    (other versions of the given ids, or other text or access), and the documents to add."""
    ids = {d.id for d in docs}
    keep = {d.key for d in docs if d.key in documents and same_contents(documents[d.key], d)}
    drop = sorted(k for k in documents if k[0] in ids and k not in keep)
    return keep, drop, [d for d in docs if d.key not in keep]


def check_replace(docs: Sequence[Document]) -> None:
    """For ``replace``: one version per document id, each a document an index can hold."""
    if len({d.id for d in docs}) != len(docs):
        raise DuplicateDocumentError("replace() got two versions of one document id; pass one version per id")
    for d in docs:
        check_document(d)


def chunk_and_embed(docs: Sequence[Document], chunker: Chunker, embedder: Embedder, dim: int,
                    progress: Progress | None = None) -> tuple[list[IndexedDocument], int]:
    """Chunk and embed ``docs``; returns them as indexed documents and how many chunks were
    embedded (cache hits of a :class:`CachedEmbedder` are not counted)."""
    per_doc: list[list[Chunk]] = []
    for d in docs:
        cs = chunker.chunk(d)
        if not cs:
            logger.warning("document %s:%s has no text to index; recorded with 0 chunks", d.id, d.version)
        per_doc.append(cs)
    texts = [passage_text(c) for cs in per_doc for c in cs]
    if isinstance(embedder, CachedEmbedder):
        before = embedder.misses
        vecs = embedder.embed_passages(texts, progress=progress)
        embedded = embedder.misses - before
    else:
        vecs = embedder.embed_passages(texts)
        embedded = len(texts)
        if progress is not None:
            progress(len(texts))
    vecs = np.asarray(vecs, dtype=np.float32).reshape(len(texts), -1) if texts else np.zeros((0, dim), np.float32)
    if texts and vecs.shape[1] != dim:
        raise IndexMismatchError(f"embedder returned dimension {vecs.shape[1]}, expected {dim}")
    out, row = [], 0
    for d, cs in zip(docs, per_doc):
        rec = DocumentRecord(d.id, d.version, d.title, d.uri, text_sha256(d.text), len(cs), record_metadata(d))
        out.append(IndexedDocument(rec, tuple(cs), vecs[row:row + len(cs)]))
        row += len(cs)
    return out, embedded


def keys_of(doc_id: str, version: str | None, documents: Mapping[tuple[str, str], DocumentRecord]
            ) -> list[tuple[str, str]]:
    """For ``delete``: the indexed keys of ``doc_id`` (every version, or ``version``), sorted; none
    is an :class:`InputError`."""
    keys = sorted(k for k in documents if k[0] == doc_id and (version is None or k[1] == version))
    if not keys:
        what = f"{doc_id!r}" + (f" version {version!r}" if version is not None else "")
        raise InputError(f"cannot delete document {what}: it is not in the index")
    return keys


def labels(keys) -> tuple[str, ...]:
    """(id, version) keys as "id:version" strings, in the given order."""
    return tuple(f"{i}:{v}" for i, v in keys)
