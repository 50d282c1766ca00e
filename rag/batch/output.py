"""The results file of a batch run: crash-safe appends, repair of a cut-off last line, compaction.

Each line is written with one ``write`` on an ``O_APPEND`` descriptor, then ``fsync``'d: a
kill (even ``kill -9``) loses at most the questions in flight. A crash inside a write can
leave only an unterminated last line; :func:`scan_output` moves it to ``OUTPUT.partial``,
truncates the file to its last complete line and logs a warning, so that question is
answered again. :func:`compact_output` rewrites the file atomically in input order, one
line per id (latest wins).
"""
from __future__ import annotations

import errno
import fcntl
import json
import logging
import math
import os
from dataclasses import dataclass
from pathlib import Path
from types import MappingProxyType
from typing import Mapping

from rag._io import atomic_write_text, fsync_dir
from rag.batch.records import BatchRecord
from rag.errors import RagError

logger = logging.getLogger(__name__)


class OutputFileError(RagError):
    """The results file cannot be appended to safely (another config, corrupt line, locked)."""


@dataclass(frozen=True)
class ExistingOutput:
    records: Mapping[str, BatchRecord]  # latest line per id
    lines: int
    superseded: int  # earlier lines of an id that appears again (retry of a failure)
    repaired_bytes: int  # length of an unterminated last line moved to OUTPUT.partial (0: none)


def scan_output(path: Path, *, repair: bool = True) -> ExistingOutput:
    """Read an existing results file. An unterminated last line (a crash while writing) is
    moved to ``PATH.partial`` and cut off when ``repair``; any other unreadable line raises
    :class:`OutputFileError` with its line number."""
    if not path.exists():
        return ExistingOutput({}, 0, 0, 0)
    if not path.is_file():
        raise OutputFileError(f"output {path} exists and is not a regular file")
    data = path.read_bytes()
    cut = data.rfind(b"\n") + 1
    tail = data[cut:]
    repaired = 0
    if tail:
        if not repair:
            raise OutputFileError(f"{path}: the last line is incomplete (a crash while writing)")
        with open(f"{path}.partial", "ab") as fh:
            fh.write(tail + b"\n")
            fh.flush()
            os.fsync(fh.fileno())
        with open(path, "r+b") as fh:
            fh.truncate(cut)
            fh.flush()
            os.fsync(fh.fileno())
        repaired = len(tail)
        n_line = data[:cut].count(b"\n") + 1
        logger.warning("%s: line %d was cut short (the process was killed while writing it); moved its %d bytes "
                       "to %s.partial and will answer that question again", path, n_line, repaired, path)
    records: dict[str, BatchRecord] = {}
    lines = superseded = 0
    for lineno, raw in enumerate(data[:cut].split(b"\n")[:-1], 1):
        if not raw.strip():
            continue
        try:
            rec = BatchRecord.from_json(json.loads(raw.decode("utf-8")))
        except (UnicodeDecodeError, ValueError) as exc:
            raise OutputFileError(
                f"{path}:{lineno}: not a rag batch result line ({exc}). This file was not written by "
                "`rag batch` or was edited; write to another file with -o, or pass --force to start it over") from None
        lines += 1
        if rec.id in records:
            superseded += 1
        records[rec.id] = rec
    return ExistingOutput(MappingProxyType(records), lines, superseded, repaired)


class ResultWriter:
    """Appends whole lines with one ``write`` each on an ``O_APPEND`` descriptor, then fsyncs.

    Holds an exclusive ``flock`` on the file while open, so two batches never write one file."""

    def __init__(self, path: Path, *, fsync: bool = True) -> None:
        self.path = path
        self.fsync = fsync
        created = not path.exists()
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise OutputFileError(f"cannot create the folder of {path} ({exc.strerror})") from None
        try:
            self._fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
        except OSError as exc:
            raise OutputFileError(f"cannot open {path} for appending ({exc.strerror}); give a writable file path "
                                  "with -o") from None
        try:
            fcntl.flock(self._fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError as exc:
            os.close(self._fd)
            if exc.errno in (errno.EWOULDBLOCK, errno.EAGAIN, errno.EACCES):
                raise OutputFileError(f"{path} is being written by another `rag batch`; wait for it or use "
                                      "another -o") from None
            raise
        if created and fsync:
            fsync_dir(path.parent)

    def append(self, record: BatchRecord) -> None:
        data = record.to_line().encode("utf-8")
        view = memoryview(data)
        while view:
            n = os.write(self._fd, view)
            view = view[n:]
        if self.fsync:
            os.fsync(self._fd)

    def close(self) -> None:
        if self._fd >= 0:
            os.close(self._fd)
            self._fd = -1

    def __enter__(self) -> "ResultWriter":
        return self

    def __exit__(self, *exc) -> None:
        self.close()


def compact_output(path: Path, order: Mapping[str, int], *, fsync: bool = True) -> int:
    """Rewrite the results file atomically: one line per id (the latest), in input order
    (ids not in ``order`` last, by their recorded index then id). Returns the line count."""
    existing = scan_output(path, repair=True)
    recs = sorted(existing.records.values(),
                  key=lambda r: (order.get(r.id, math.inf), r.index, r.id))
    atomic_write_text(path, "".join(r.to_line() for r in recs), fsync=fsync)
    return len(recs)

