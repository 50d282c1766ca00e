"""What the quarantine will withhold, known when the index is built rather than when a question
happens to retrieve it: every block of every indexed document version is screened with the same
signals and scopes the request path uses (:func:`rag.context.sanitize.quarantine`), and each
finding is one frozen :class:`WithheldBlock` (document, version, evidence id, signal kind, scope,
excerpt). ``rag index`` and ``rag sync`` print them and write them into their files report.

A document is *trusted* (never withheld; its forged tags and markers are still defused in the
prompt) when ``security.trusted_documents`` lists its id or its metadata says ``trusted: true``
(set by the folder manifest's ``trusted: true``; a file's own front matter or properties cannot set
it: :func:`rag.documents.files.to_document` drops it).
"""
from __future__ import annotations

import logging
from collections.abc import Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING

from rag.context.sanitize import check_mode, injection_signals, withheld_scope
from rag.types import TRUSTED_KEY

if TYPE_CHECKING:
    from rag.index.protocol import Index
    from rag.index.sync import SyncReport

logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class WithheldBlock:
    """One signal in one block that ``security.quarantine`` withholds: ``scope`` ``block`` withholds
    this block, ``document`` every block of the document version."""

    document_id: str
    document_version: str
    evidence_id: str
    signal: str  # the signal kind (rag.context.signals.SIGNAL_SCOPE)
    scope: str  # "block" | "document"
    excerpt: str  # the matched text (at most 80 characters)

    def to_json(self) -> dict:
        return {"document_id": self.document_id, "document_version": self.document_version,
                "evidence_id": self.evidence_id, "signal": self.signal, "scope": self.scope,
                "excerpt": self.excerpt}


def is_trusted(document_id: str, metadata: Mapping[str, object] | None, trusted_documents: Collection[str]) -> bool:
    """Whether an operator marked this document trusted: in ``security.trusted_documents`` or by
    ``trusted: true`` in its metadata (the folder manifest)."""
    return document_id in trusted_documents or bool(metadata and metadata.get(TRUSTED_KEY) is True)


def screen_blocks(document_id: str, version: str, texts: Sequence[str], mode: str,
                  evidence_ids: Sequence[str] | None = None) -> tuple[WithheldBlock, ...]:
    """The findings in one document version's blocks (``texts`` in chunk order; evidence ids
    default to the chunker's ``{id}:{version}:{ordinal}``), under ``security.quarantine: mode``
    (``off``: none)."""
    if check_mode(mode) == "off":
        return ()
    out: list[WithheldBlock] = []
    for i, text in enumerate(texts):
        for sig in injection_signals(text):
            scope = withheld_scope(sig.kind, mode)
            eid = evidence_ids[i] if evidence_ids is not None else f"{document_id}:{version}:{i}"
            out.append(WithheldBlock(document_id, version, eid, sig.kind, scope, sig.excerpt))
    return tuple(out)


def screen_index(index, security, keys: Iterable[tuple[str, str]] | None = None) -> tuple[WithheldBlock, ...]:
    """The findings over an index (any :class:`rag.index.protocol.Index`): every document version,
    or only ``keys`` ((id, version) pairs), in id then version order; trusted documents are
    skipped. ``security``: the :class:`rag.config.SecurityConfig` (its ``quarantine`` mode and
    ``trusted_documents``)."""
    records = index.documents
    wanted = sorted(records) if keys is None else sorted(k for k in set(keys) if k in records)
    out: list[WithheldBlock] = []
    for doc_id, version in wanted:
        if is_trusted(doc_id, records[(doc_id, version)].meta, security.trusted_documents):
            continue
        out.extend(screen_blocks(doc_id, version, index.document_texts(doc_id, version), security.quarantine))
    if out:
        logger.info("quarantine: %d finding(s) in %d document(s)", len(out), len({w.document_id for w in out}))
    return tuple(out)


def withheld_documents(found: Iterable[WithheldBlock]) -> dict[tuple[str, str], str]:
    """``{(id, version): "document" | "block"}``: whether each document is withheld whole or only
    some blocks of it."""
    out: dict[tuple[str, str], str] = {}
    for w in found:
        key = (w.document_id, w.document_version)
        out[key] = "document" if w.scope == "document" or out.get(key) == "document" else "block"
    return out


def screen_synced(index: "Index | None", security, rep: "SyncReport") -> "SyncReport":
    """``rep`` with what ``security.quarantine`` will withhold from the documents the sync added or
    updated (:func:`screen_index` on their indexed blocks); ``index`` None: nothing indexed yet."""
    from rag.index.sync import indexed_files

    changed = set(rep.added) | set(rep.updated)
    if not changed or index is None:
        return rep
    files = indexed_files(dict(index.documents), str(Path(rep.folder).resolve()))
    keys = [(rec.id, rec.version) for rel, rec in files.items() if rel in changed]
    return replace(rep, quarantined=screen_index(index, security, keys))
