"""Writing a Milvus index: the writer lease (one writer at a time, across processes and machines)
and one generation (clean up after a dead writer, purge old removals, write the rows, publish)."""
from __future__ import annotations

import contextlib
import json
import logging
import os
import socket
import threading
import time
from typing import Callable, Iterator, Mapping, Sequence

from rag.errors import DuplicateDocumentError, IndexBackendError, InputError
from rag.index.layout import DocumentRecord
from rag.index.milvus.collections import PAGE, Collections
from rag.index.milvus.records import (MAX_VARCHAR, NEVER, PENDING_MAX, Pending, View, chunk_row, doc_body,
                                          doc_row, one_of)
from rag.index.updates import IndexedDocument

logger = logging.getLogger(__name__)

LEASE_S = 120.0  # a writer's lease on the index; a dead writer's lease lapses after this


@contextlib.contextmanager
def lease(cols: Collections, writer: object) -> Iterator[None]:
    """One writer at a time, across processes and machines: a lease row in the meta collection
    (holder, expiry). Milvus has no compare-and-set, so the claim is written, then read back
    after a pause; a lease whose holder is a dead process on this machine, or that expired
    (``LEASE_S``), is taken over. Waits up to ``timeout_s`` for a live holder. ``writer``: the
    object that writes (its identity is part of the holder's name).

    A writer that died, or whose write failed, may have requests still in flight to the engine
    (a killed client's insert or publish the server has received but not applied yet). Read before
    they land, the state would be the old one and cleaning up after the dead writer would delete
    a generation it published a moment later. So taking over such a lease first waits
    ``index.milvus.settle_s`` (from the failure when it is known) for them to land."""
    me = f"{socket.gethostname()}:{os.getpid()}:{threading.get_ident()}:{id(writer)}"
    holder = _claim(cols, me)
    _settle(cols, holder, me)
    failed = True
    try:
        yield
        failed = False
    except InputError:  # refused before anything was sent (a duplicate, metadata too long): nothing in flight
        failed = False
        raise
    finally:
        with contextlib.suppress(IndexBackendError):
            _release(cols, me, failed)


def _claim(cols: Collections, me: str) -> dict:
    """Take the lease for ``me``; returns the row it replaced (its holder, expiry and whether that
    holder's write failed)."""
    deadline = time.monotonic() + max(cols.settings.timeout_s, 5.0)
    while True:
        holder = _read_lease(cols)
        owner = str(holder.get("owner", ""))
        free = not owner or owner == me or holder.get("expires", 0) < time.time() or _dead_here(owner)
        if free:
            cols.meta_put("lease", {"owner": me, "expires": time.time() + LEASE_S})
            time.sleep(0.05)
            if _read_lease(cols).get("owner") == me:
                return holder
        if time.monotonic() > deadline:
            raise IndexBackendError(
                f"{cols.label}: another writer ({owner or '?'}) holds the index; one writer "
                f"at a time — retry when it is done (its lease lapses after {LEASE_S:.0f} s if it died)")
        time.sleep(0.2)


def _read_lease(cols: Collections) -> dict:
    """The lease row's body; {} when there is none (read twice: an upsert in flight hides the row
    for a moment)."""
    for attempt in range(2):
        row = cols.meta_get("lease")
        if row is not None:
            return json.loads(row["body"])
        if attempt == 0:
            time.sleep(0.05)
    return {}


def _settle(cols: Collections, holder: dict, me: str) -> None:
    """Wait for what the previous holder may still have in flight: ``settle_s`` when it died
    holding the lease, the rest of ``settle_s`` since its write failed when it released it so."""
    settle = cols.settings.settle_s
    owner = str(holder.get("owner", ""))
    if owner and owner != me:
        wait, why = settle, f"the previous writer ({owner}) died holding the lease"
    elif holder.get("failed_at"):
        wait = settle - (time.time() - float(holder["failed_at"]))
        why = "the previous write failed"
    else:
        return
    wait = min(max(wait, 0.0), settle)
    if wait > 0:
        logger.info("%s: %s; waiting %.1f s (index.milvus.settle_s) for its requests in flight to land "
                    "before cleaning up after it", cols.label, why, wait)
        time.sleep(wait)


def _release(cols: Collections, me: str, failed: bool) -> None:
    """Give the lease up, if ``me`` still holds it (a holder taken for dead keeps its hands off the
    new one's); ``failed``: the write did not finish, so the next writer waits for its requests."""
    if _read_lease(cols).get("owner") != me:
        logger.warning("%s: the writer lease was taken over before this write released it", cols.label)
        return
    cols.meta_put("lease", {"owner": "", "expires": 0, **({"failed_at": time.time()} if failed else {})})


def _dead_here(owner: str) -> bool:
    """Whether a lease holder ("host:pid:...") is a process of this machine that no longer runs."""
    host, _, rest = owner.partition(":")
    pid = rest.partition(":")[0]
    if host != socket.gethostname() or not pid.isdigit():
        return False
    try:
        os.kill(int(pid), 0)
    except ProcessLookupError:
        return True
    except PermissionError:
        return False
    return False


def write_generation(cols: Collections, refresh: Callable[[], View], install: Callable[[View], None],
                     items: Sequence[IndexedDocument], drop: Sequence[tuple[str, str]],
                     analyzer: Callable[[str], list[str]] | None) -> int:
    """Under the lease: clean up after a dead writer, purge old removals, write the new rows, mark
    the dropped documents, publish. ``refresh`` reads the published view; ``install`` receives the
    view of the new generation, made from the one read and this write (never read back: a read
    racing the engine's upserts can miss a removal); ``analyzer``: the BM25 terms' analyzer (None
    without BM25). Returns the number of chunks written."""
    e = cols.engine
    gen, n_chunks, pending = cols.read_state()
    clean_unpublished(cols, gen)
    now = time.time()
    pending = purge_rows(cols, pending, now, force=False)
    view = refresh()
    fresh = []
    replaced = set(drop)
    for it in items:  # another writer may have got there between our check and the lease
        key = (it.record.id, it.record.version)
        held = view.documents.get(key)
        if held is None or key in replaced:  # new, or rewritten in place (other text or access metadata)
            fresh.append(it)
        elif held.text_sha256 != it.record.text_sha256 or held.access != it.record.access:
            raise DuplicateDocumentError(f"{cols.label}: {it.record.id!r} version {it.record.version!r} "
                                         "was indexed with different text or access metadata by another writer "
                                         "meanwhile; nothing of this update was published")
    items = fresh
    drop = [k for k in drop if k in view.documents]
    if not items and not drop:
        return 0
    g = gen + 1
    rows, records, written = [], [], {}
    for it in items:
        rec = it.record
        inc = f"{g}:{rec.id}:{rec.version}"
        written[(rec.id, rec.version)] = (rec, inc)
        body = doc_body(rec, inc)
        if len(body.encode("utf-8")) > MAX_VARCHAR:
            raise InputError(f"document {rec.id!r}: its title/uri/metadata take {len(body.encode())} bytes; "
                             f"Milvus keeps at most {MAX_VARCHAR} per record — shorten the metadata")
        records.append(doc_row(inc, body, g, NEVER))
        for c, v in zip(it.chunks, it.vectors):
            rows.append(chunk_row(c, v, g, inc, analyzer, cols.tenant_key))
    dropped = []
    for key in drop:
        rec, inc = view.documents[key], view.incarnations[key]
        dropped.append(doc_row(inc, doc_body(rec, inc), int(inc.split(":", 1)[0]), g))
    with e.calls(f"write generation {g}"):
        for i in range(0, len(rows), 500):
            e.client.insert(cols.collection, rows[i:i + 500])
        for i in range(0, len(records), 500):
            e.client.insert(cols.meta, records[i:i + 500])
        for i in range(0, len(dropped), 500):
            e.client.upsert(cols.meta, dropped[i:i + 500])
    n_removed = sum(view.documents[k].n_chunks for k in drop)
    pending = pending + tuple(Pending(view.incarnations[k], g, now) for k in drop)
    if len(pending) > PENDING_MAX:
        pending = purge_rows(cols, pending, now, force=True, keep=PENDING_MAX // 2)
    n = n_chunks + len(rows) - n_removed
    if e.lite or len(rows) >= 10_000:
        cols.flush()  # sealed before readers are told of generation g
    cols.publish(View(g, n, pending, {}, {}), f"publish generation {g}")
    logger.info("%s: published generation %d (+%d documents / %d chunks, -%d documents)", cols.label, g,
                len(items), len(rows), len(drop))
    install(written_view(view, g, n, pending, written, drop))
    return len(rows)


def written_view(view: View, g: int, n_chunks: int, pending: tuple[Pending, ...],
                 written: Mapping[tuple[str, str], tuple[DocumentRecord, str]],
                 drop: Sequence[tuple[str, str]]) -> View:
    """The view of generation ``g``: ``view`` less the dropped documents, plus the ``written`` ones
    (key -> record and incarnation)."""
    documents, incs = dict(view.documents), dict(view.incarnations)
    for key in drop:
        documents.pop(key, None)
        incs.pop(key, None)
    for key, (rec, inc) in written.items():
        documents[key], incs[key] = rec, inc
    return View(g, n_chunks, pending, dict(sorted(documents.items())), incs, time.monotonic())


def clean_unpublished(cols: Collections, gen: int) -> None:
    """Delete what a writer that died before publishing left above generation ``gen``."""
    e = cols.engine
    with e.calls("clean up an interrupted write"):
        orphans = e.client.query(cols.collection, filter=f"gen > {gen}", output_fields=["pk"], limit=1,
                                 consistency_level="Strong")
        stale = e.client.query(cols.meta, filter=f'kind == "doc" and (gen_added > {gen} or '
                               f"(gen_removed > {gen} and gen_removed < {NEVER}))",
                               output_fields=["pk", "body", "gen_added", "gen_removed"],
                               consistency_level="Strong", limit=PAGE)
        if orphans:
            e.client.delete(cols.collection, filter=f"gen > {gen}")
        dead = [r["pk"] for r in stale if int(r["gen_added"]) > gen]
        revive = [doc_row(r["pk"][4:], r["body"], int(r["gen_added"]), NEVER)
                  for r in stale if int(r["gen_added"]) <= gen]
        if dead:
            e.client.delete(cols.meta, filter=one_of("pk", dead))
        if revive:
            e.client.upsert(cols.meta, revive)
    if orphans or dead or revive:
        logger.warning("%s: removed the unpublished rows of an interrupted write above generation %d "
                       "(%d document records dropped, %d restored)", cols.label, gen, len(dead), len(revive))


def purge_rows(cols: Collections, pending: tuple[Pending, ...], now: float, force: bool,
               keep: int = 0) -> tuple[Pending, ...]:
    """Delete the rows of removals older than ``purge_delay_s`` (``force``: all but the newest
    ``keep``); returns the removals still pending."""
    if not pending:
        return pending
    if force:
        due, rest = pending[:len(pending) - keep], pending[len(pending) - keep:]
    else:
        due = tuple(p for p in pending if now - p.removed_at >= cols.settings.purge_delay_s)
        rest = tuple(p for p in pending if p not in due)
    if due:
        e = cols.engine
        incs = [p.incarnation for p in due]
        with e.calls("purge removed rows"):
            for i in range(0, len(incs), 200):
                part = incs[i:i + 200]
                e.client.delete(cols.collection, filter=one_of("inc", part))
                e.client.delete(cols.meta, filter=one_of("pk", [f"doc:{x}" for x in part]))
    return tuple(rest)


def purge_all(cols: Collections) -> bool:
    """Under the lease: delete the rows of every pending removal now and publish the state without
    them. Returns whether there were any."""
    gen, n_chunks, pending = cols.read_state()
    if not pending:
        return False
    purge_rows(cols, pending, time.time(), force=True)
    cols.publish(View(gen, n_chunks, (), {}, {}), "publish")
    return True
