"""The nonces of signed requests that the service has seen, so that a captured request is refused when
it is sent again (docs/service.md, "What a key reads as").

A trusted backend signs a fresh random ``X-Rag-Nonce`` into every request; :func:`rag.serve.principals.request_reader`
claims ``(key name, nonce)`` here once the signature and the time window have passed. A nonce is kept
until its request's window closes (its timestamp plus ``serve.principal_max_age_s``): after that the
window refuses the request anyway. The store is bounded (``serve.max_nonces``): when it is full of
unexpired nonces, the one whose window closes first is forgotten and the *floor* rises to its
expiry, so a request signed at or before that time is refused as outside the window instead of
being accepted twice. The window in effect shrinks under a burst larger than the store; it never
lets a replay through.

:class:`MemoryNonces` serves one process; with ``rag serve --workers N`` the workers share a
:class:`SqliteNonces` file, so a replay sent to another worker is refused too."""
from __future__ import annotations

import heapq
import logging
import sqlite3
import threading
from typing import Literal, Protocol

logger = logging.getLogger(__name__)

Claim = Literal["new", "replayed", "forgotten"]  # forgotten: signed at or before the floor
NONCES_ENV = "RAG_SERVE_NONCES"  # the SQLite file the workers of one `rag serve --workers N` share
FULL = ("the nonce store is full (serve.max_nonces %d): requests signed at or before the newest forgotten "
        "nonce's time are refused as outside the window; raise serve.max_nonces or shorten principal_max_age_s")


class NonceStore(Protocol):
    def claim(self, key: str, nonce: str, expires: float, now: float) -> Claim:
        """Record ``nonce`` of the key named ``key`` until ``expires`` (Unix seconds): ``new`` the
        first time, ``replayed`` when it is held already, ``forgotten`` when ``expires`` is at or
        below the floor (a nonce of that time may have been forgotten)."""
        ...


class MemoryNonces:
    """The nonces of one process: a dict and a heap by expiry, at most ``capacity`` entries."""

    def __init__(self, capacity: int) -> None:
        if capacity < 1:
            raise ValueError(f"capacity must be >= 1, got {capacity}")
        self.capacity = capacity
        self.floor = float("-inf")
        self._seen: dict[tuple[str, str], float] = {}
        self._heap: list[tuple[float, str, str]] = []
        self._lock = threading.Lock()
        self._warned = False

    def __len__(self) -> int:
        return len(self._seen)

    def claim(self, key: str, nonce: str, expires: float, now: float) -> Claim:
        with self._lock:
            while self._heap and self._heap[0][0] < now:  # windows that closed: the time check refuses those
                _, k, n = heapq.heappop(self._heap)
                del self._seen[(k, n)]
            if expires <= self.floor:
                return "forgotten"
            if (key, nonce) in self._seen:
                return "replayed"
            if len(self._seen) >= self.capacity:
                first, k, n = heapq.heappop(self._heap)
                del self._seen[(k, n)]
                if not self._warned:
                    self._warned = True
                    logger.warning(FULL, self.capacity)
                self.floor = max(self.floor, first)
                if expires <= self.floor:
                    return "forgotten"
            self._seen[(key, nonce)] = expires
            heapq.heappush(self._heap, (expires, key, nonce))
            return "new"


class SqliteNonces:
    """The nonces of several worker processes in one SQLite file (WAL, one short write transaction
    per claim); the same rules as :class:`MemoryNonces`."""

    def __init__(self, path: str, capacity: int) -> None:
        if capacity < 1:
            raise ValueError(f"capacity must be >= 1, got {capacity}")
        self.path = path
        self.capacity = capacity
        self._local = threading.local()
        self._warned = False

    def _conn(self) -> sqlite3.Connection:
        conn = getattr(self._local, "conn", None)
        if conn is None:
            conn = sqlite3.connect(self.path, timeout=10.0, isolation_level=None)
            conn.execute("PRAGMA journal_mode=WAL")
            conn.execute("PRAGMA synchronous=OFF")  # a crash ends the server, and with it the store's use
            conn.execute("CREATE TABLE IF NOT EXISTS nonces (key TEXT NOT NULL, nonce TEXT NOT NULL, "
                         "expires REAL NOT NULL, PRIMARY KEY (key, nonce))")
            conn.execute("CREATE INDEX IF NOT EXISTS nonces_expires ON nonces (expires)")
            conn.execute("CREATE TABLE IF NOT EXISTS meta (id INTEGER PRIMARY KEY CHECK (id = 0), "
                         "floor REAL NOT NULL, count INTEGER NOT NULL)")
            conn.execute("INSERT OR IGNORE INTO meta VALUES (0, -1e308, 0)")
            self._local.conn = conn
        return conn

    def __len__(self) -> int:
        return int(self._conn().execute("SELECT count FROM meta").fetchone()[0])

    def claim(self, key: str, nonce: str, expires: float, now: float) -> Claim:
        conn = self._conn()
        conn.execute("BEGIN IMMEDIATE")
        try:
            out = self._claim(conn, key, nonce, expires, now)
            conn.execute("COMMIT")
            return out
        except BaseException:
            conn.execute("ROLLBACK")
            raise

    def _claim(self, conn: sqlite3.Connection, key: str, nonce: str, expires: float, now: float) -> Claim:
        floor, count = conn.execute("SELECT floor, count FROM meta").fetchone()
        count -= conn.execute("DELETE FROM nonces WHERE expires < ?", (now,)).rowcount
        if expires <= floor:
            conn.execute("UPDATE meta SET count = ?", (count,))
            return "forgotten"
        if conn.execute("SELECT 1 FROM nonces WHERE key = ? AND nonce = ?", (key, nonce)).fetchone():
            conn.execute("UPDATE meta SET count = ?", (count,))
            return "replayed"
        if count >= self.capacity:
            over = count - self.capacity + 1
            first = conn.execute("SELECT max(expires) FROM (SELECT expires FROM nonces ORDER BY expires LIMIT ?)",
                                 (over,)).fetchone()[0]
            count -= conn.execute("DELETE FROM nonces WHERE rowid IN (SELECT rowid FROM nonces ORDER BY expires "
                                  "LIMIT ?)", (over,)).rowcount
            if first is not None and first > floor:
                floor = first
            if not self._warned:
                self._warned = True
                logger.warning(FULL, self.capacity)
            if expires <= floor:
                conn.execute("UPDATE meta SET floor = ?, count = ?", (floor, count))
                return "forgotten"
        conn.execute("INSERT INTO nonces VALUES (?, ?, ?)", (key, nonce, expires))
        conn.execute("UPDATE meta SET floor = ?, count = ?", (floor, count + 1))
        return "new"


def nonce_store(capacity: int, path: str | None = None) -> NonceStore:
    """The store of one service: shared through the SQLite file ``path`` (the workers of one
    ``rag serve --workers N``), else in this process's memory."""
    return SqliteNonces(path, capacity) if path else MemoryNonces(capacity)
