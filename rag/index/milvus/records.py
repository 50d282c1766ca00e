"""The rows a Milvus index is made of: chunk rows (record, vector, hashed BM25 terms), the records
of the meta collection (parameters, state, lease, one per document incarnation), the published
view a reader pins, and the filter expressions that keep a search inside that view."""
from __future__ import annotations

import hashlib
import json
from dataclasses import asdict, dataclass
from typing import Callable, Iterable, Sequence

import numpy as np

from rag.errors import InputError
from rag.index.layout import DocumentRecord, chunk_from_json, needs_readers
from rag.index.rowmask import DocumentTable
from rag.index.updates import passage_text
from rag.types import Chunk, SearchFilter

NEVER = 2**62  # gen_removed of a live document record
MAX_VARCHAR = 65535
MAX_TENANT = 1024  # bytes of a tenant name in the chunk rows' tenant field
PENDING_MAX = 400  # incarnations listed as pending removal before the oldest are purged at once


def hashed_terms(tokens: Sequence[str]) -> str:
    """The analyzer's tokens as the engine's text: one ASCII word per token, order and repeats kept."""
    return " ".join("t" + hashlib.blake2b(t.encode("utf-8"), digest_size=8).hexdigest() for t in tokens)


def quote(value: str) -> str:
    """A string literal for a Milvus filter expression."""
    return json.dumps(value, ensure_ascii=False)


def one_of(field_name: str, values: Iterable[str]) -> str:
    """The filter expression ``field in [values]``."""
    return f"{field_name} in [{', '.join(quote(v) for v in values)}]"


@dataclass(frozen=True)
class Pending:
    """A removed document incarnation whose rows are deleted ``purge_delay_s`` after its removal."""

    incarnation: str
    removed_gen: int
    removed_at: float


@dataclass(frozen=True)
class View:
    """One published generation: what a pinned reader sees."""

    generation: int
    n_chunks: int
    pending: tuple[Pending, ...]
    documents: dict  # (id, version) -> DocumentRecord
    incarnations: dict  # (id, version) -> incarnation ("<gen>:<id>:<version>")
    read_at: float = 0.0  # time.monotonic() when the records were read


EMPTY = View(0, 0, (), {}, {})


_TABLES: list[tuple[dict, DocumentTable]] = []  # the document tables of the last few views


def _table(documents: dict) -> DocumentTable:
    for docs, table in _TABLES:
        if docs is documents:
            return table
    table = DocumentTable(sorted(documents), documents)
    _TABLES.insert(0, (documents, table))
    del _TABLES[4:]
    return table


def readable(view: View, where: SearchFilter,
             tenants: tuple[str, ...] | None = None) -> tuple[list[str], list[str]]:
    """The incarnations of ``view``'s documents that ``where``'s readers may read and whose metadata
    meets its field conditions, and the others (each sorted); decided on the document records, once
    per distinct access and field value (:class:`rag.index.rowmask.DocumentTable`). ``tenants``:
    the others leave out documents of any other tenant (a tenant filter excludes them already)."""
    table = _table(view.documents)
    mask = table.allowed(where, True)
    yes, no = [], []
    for key, ok in zip(table.keys, mask):
        inc = view.incarnations.get(key)
        if inc is None:
            continue
        if ok:
            yes.append(inc)
        elif tenants is None or tenant_of(view.documents[key]) in tenants:
            no.append(inc)
    return sorted(yes), sorted(no)


def tenant_of(item: DocumentRecord | Chunk) -> str:
    """The tenant field of a document or chunk: its access tenant, or "" when it has none."""
    access = item.access
    return (access.tenant or "") if access is not None else ""


def reader_tenants(where: SearchFilter) -> tuple[str, ...]:
    """The tenant-field values whose rows ``where``'s readers may read at all: the untenanted ("")
    and, when every reader is of the same tenant, that tenant's."""
    tenants = {(r.principal.tenant if r.principal is not None else None) for r in where.readers}
    one = next(iter(tenants)) if len(tenants) == 1 else None
    return ("", one) if one else ("",)


def view_filter(view: View, where: SearchFilter | None, restricted: bool = True,
                tenant_key: bool = False) -> str | None:
    """The rows ``view`` shows (published, not removed), narrowed by ``where``; None when ``where``'s
    readers may read none of them. Readers become a list of the incarnations they may (or, when
    shorter, may not) read, so the engine applies access control before its top-k. ``restricted``:
    whether any document of the view has access metadata (False: public readers see every row).
    ``tenant_key``: the chunk rows have the tenant field; readers then also name the tenants they
    may read (:func:`reader_tenants`), so the lists leave out every other tenant's incarnations
    (and, where the field is the partition key, the engine searches only those partitions)."""
    parts = [f"gen <= {view.generation}"]
    hidden = [p.incarnation for p in view.pending if p.removed_gen <= view.generation]
    if hidden:
        parts.append(f"not ({one_of('inc', hidden)})")
    if where:
        if where.document_ids:
            parts.append(one_of("doc_id", where.document_ids))
        if where.versions:
            parts.append(one_of("doc_version", where.versions))
        scoped = needs_readers(where, restricted)
        if scoped or where.fields:
            tenants = reader_tenants(where) if tenant_key and scoped else None
            yes, no = readable(view, where, tenants)
            if not yes:
                return None
            if tenants is not None:
                parts.append(one_of("tenant", tenants))
            if no:
                parts.append(one_of("inc", yes) if len(yes) <= len(no) else f"not ({one_of('inc', no)})")
    return " and ".join(parts)


def meta_row(pk: str, kind: str, body: dict, gen: int) -> dict:
    return {"pk": pk, "kind": kind, "body": json.dumps(body, ensure_ascii=False, sort_keys=True),
            "gen_added": gen, "gen_removed": NEVER, "vec": [0.0, 0.0]}


def doc_row(incarnation: str, body: str, gen_added: int, gen_removed: int) -> dict:
    pk = f"doc:{incarnation}"
    return {"pk": pk, "kind": "doc", "body": body, "gen_added": gen_added, "gen_removed": gen_removed,
            "vec": [0.0, 0.0]}


def doc_body(rec: DocumentRecord, incarnation: str) -> str:
    """A document row's body: the record with its incarnation."""
    return json.dumps({**asdict(rec), "incarnation": incarnation}, ensure_ascii=False, sort_keys=True)


def record(body: str) -> tuple[DocumentRecord, str]:
    """A document row's body: the record and its incarnation."""
    data = json.loads(body)
    inc = data.pop("incarnation")
    return DocumentRecord(**data), inc


def chunk_from_row(row: dict) -> Chunk:
    return chunk_from_json(json.loads(row["chunk"]))


def chunk_row(c: Chunk, v: np.ndarray, g: int, inc: str, analyzer: Callable[[str], list[str]] | None,
              tenant_key: bool = False) -> dict:
    """The row of one chunk written in generation ``g``; ``analyzer``: the BM25 terms' analyzer,
    None where the engine has no BM25; ``tenant_key``: the collection has the tenant field."""
    body = json.dumps(asdict(c), ensure_ascii=False, sort_keys=True)
    if len(body.encode("utf-8")) > MAX_VARCHAR:
        raise InputError(f"chunk {c.evidence_id!r} takes {len(body.encode())} bytes; Milvus keeps at most "
                         f"{MAX_VARCHAR} per field — lower chunking.max_tokens")
    pk = f"{g}:{c.evidence_id}"
    row = {"pk": pk, "doc_id": c.document_id, "doc_version": c.document_version,
           "inc": inc, "gen": g, "chunk": body, "vec": np.asarray(v, dtype=np.float32).tolist()}
    if tenant_key:
        tenant = tenant_of(c)
        if len(tenant.encode("utf-8")) > MAX_TENANT:
            raise InputError(f"document {c.document_id!r}: its access tenant takes {len(tenant.encode())} bytes; "
                             f"the Milvus backend keeps at most {MAX_TENANT} — use a shorter tenant name")
        row["tenant"] = tenant
    if analyzer is not None:
        terms = hashed_terms(analyzer(passage_text(c)))
        if len(terms) > MAX_VARCHAR:
            raise InputError(f"chunk {c.evidence_id!r} has {len(terms) // 17} BM25 tokens; Milvus keeps at most "
                             f"{MAX_VARCHAR // 17} per chunk — lower chunking.max_tokens")
        row["terms"] = terms
    return row


def dense_build_params(kind: str) -> dict:
    if kind == "HNSW":
        return {"params": {"M": 32, "efConstruction": 200}}
    if kind == "IVF_FLAT":
        return {"params": {"nlist": 1024}}
    return {}


def dense_search_params(kind: str) -> dict:
    if kind == "HNSW":
        return {"ef": 128}
    if kind == "IVF_FLAT":
        return {"nprobe": 32}
    return {}
