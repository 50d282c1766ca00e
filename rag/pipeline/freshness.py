"""Whether the files behind an answer's citations are still what was indexed.

A document read from a folder (``rag sync``, ``rag add FOLDER``, ``serve.follow``) records its
folder, its file (relative to it) and the file's sha256 in its metadata (:mod:`rag.documents.files`).
After an answer, each cited document's file is compared with that sha256: other bytes are a
``source_changed`` warning, a file gone from a folder that is still there a ``source_missing`` one
(:class:`rag.result.SourceWarning`). A folder that is not there at all says nothing (the index may
have been built on another machine, or the folder is not mounted).

Cheap: only cited documents are checked, a file is hashed once per (path, mtime, size) and then
answered from a bounded cache, and a ``stat`` is all an unchanged file costs afterwards. Only the
documents the caller got in its citations are looked at, so a warning names nothing it may not read;
messages carry the relative file name the citation already shows, never the folder."""
from __future__ import annotations

import hashlib
import logging
import threading
from collections import OrderedDict
from collections.abc import Iterable, Mapping
from pathlib import Path

from rag.result import SourceWarning

logger = logging.getLogger(__name__)


class FileHashes:
    """sha256 of files, remembered by (path, mtime_ns, size); at most ``capacity`` paths (least recently used out)."""

    def __init__(self, capacity: int = 4096) -> None:
        self.capacity = capacity
        self.hashed = 0  # files read so far (for tests and the curious)
        self._cache: OrderedDict[str, tuple[int, int, str]] = OrderedDict()
        self._lock = threading.Lock()

    def sha256(self, path: Path) -> str | None:
        """The file's sha256; None when it does not exist. Other OS errors propagate."""
        try:
            st = path.stat()
        except FileNotFoundError:
            return None
        key = str(path)
        with self._lock:
            hit = self._cache.get(key)
            if hit is not None and hit[:2] == (st.st_mtime_ns, st.st_size):
                self._cache.move_to_end(key)
                return hit[2]
        h = hashlib.sha256()
        with open(path, "rb") as fh:
            for block in iter(lambda: fh.read(1 << 20), b""):
                h.update(block)
        digest = h.hexdigest()
        with self._lock:
            self.hashed += 1
            self._cache[key] = (st.st_mtime_ns, st.st_size, digest)
            self._cache.move_to_end(key)
            while len(self._cache) > self.capacity:
                self._cache.popitem(last=False)
        return digest


HASHES = FileHashes()  # one per process: every pipeline of it shares what was hashed


def source_warnings(citations: Iterable, documents: Mapping, hashes: FileHashes = HASHES) -> tuple[SourceWarning, ...]:
    """A warning for each cited document (``citations``: resolved citations, in their order) whose
    source file changed or disappeared since ``documents`` (the index's records) recorded it."""
    out: list[SourceWarning] = []
    seen: set[tuple[str, str]] = set()
    for c in citations:
        key = (c.document_id, c.document_version)
        if key in seen:
            continue
        seen.add(key)
        rec = documents.get(key)
        meta = rec.meta if rec is not None else {}
        folder, rel, recorded = meta.get("folder"), meta.get("file"), meta.get("sha256")
        if not (isinstance(folder, str) and folder and isinstance(rel, str) and rel and isinstance(recorded, str)):
            continue  # not read from a folder (JSONL, the API): nothing on disk to compare
        root = Path(folder)
        try:
            if not root.is_dir():
                continue
            now = hashes.sha256(root / rel)
        except OSError as exc:  # unreadable now: say nothing rather than guess
            logger.debug("cannot check the source file of %s: %s", c.document_id, exc)
            continue
        if now is None:
            out.append(SourceWarning("source_missing", key[0], key[1], rel,
                                     f"{rel} was deleted or moved after it was indexed: the answer quotes the "
                                     "indexed text; sync its folder (rag sync) to bring the index up to date"))
        elif now != recorded:
            out.append(SourceWarning("source_changed", key[0], key[1], rel,
                                     f"{rel} changed on disk after it was indexed: the answer quotes the indexed "
                                     "text, not the file as it is now; sync its folder (rag sync) to index it again"))
    return tuple(out)
