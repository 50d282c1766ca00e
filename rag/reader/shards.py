"""Crash-safe gzip JSONL shards and their stats files (the build's checkpoints).

A shard is written to a temporary file beside it, fsynced and renamed (``rag._io``'s pattern); its
``.stats.json`` is written the same way *after* it, so a shard counts as finished only when its stats
file exists. The gzip header carries no time or name, so the same rows give the same bytes.
"""
from __future__ import annotations

import gzip
import hashlib
import io
import json
import os
from collections.abc import Iterable, Iterator
from pathlib import Path

from rag._io import fsync_dir, write_json
from rag.reader.errors import ReaderDataError


def write_shard(path: Path, rows: Iterable[dict]) -> tuple[int, str]:
    """Write ``rows`` as gzip JSONL to ``path`` atomically; ``(rows written, sha256 of the file)``."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.tmp{os.getpid()}")
    sha = hashlib.sha256()
    n = 0
    with open(tmp, "wb") as raw:
        class _Hashing(io.RawIOBase):
            def writable(self) -> bool:
                return True

            def write(self, b) -> int:
                sha.update(b)
                return raw.write(b)

        with gzip.GzipFile(filename="", mode="wb", fileobj=_Hashing(), mtime=0, compresslevel=6) as gz:
            for row in rows:
                gz.write((json.dumps(row, ensure_ascii=False) + "\n").encode("utf-8"))
                n += 1
        raw.flush()
        os.fsync(raw.fileno())
    os.replace(tmp, path)
    fsync_dir(path.parent)
    return n, sha.hexdigest()


def read_shard(path: Path) -> Iterator[dict]:
    """The rows of a gzip JSONL shard."""
    try:
        with gzip.open(path, "rt", encoding="utf-8") as fh:
            for lineno, line in enumerate(fh, 1):
                if line.strip():
                    try:
                        yield json.loads(line)
                    except ValueError as exc:
                        raise ReaderDataError(f"{path}:{lineno}: not JSON ({exc})") from None
    except (OSError, EOFError) as exc:
        raise ReaderDataError(f"{path}: cannot read the shard ({exc}); rebuild it (delete its .stats.json "
                              f"and run the build again)") from None


def stats_path(shard: Path) -> Path:
    return shard.with_name(shard.name.removesuffix(".jsonl.gz") + ".stats.json")


def write_stats(shard: Path, stats: dict) -> None:
    write_json(stats_path(shard), stats)


def read_stats(shard: Path) -> dict | None:
    """The stats of a finished shard, or None when it is not finished (or its stats are unreadable)."""
    p = stats_path(shard)
    if not (p.is_file() and shard.is_file()):
        return None
    try:
        return json.loads(p.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
