"""Crash-safe file helpers shared by every stage: fsync, atomic replace, JSON and JSONL.

An atomic write goes to a temporary file beside the target, is fsynced, then replaces the
target with ``os.replace`` and fsyncs the folder: a reader sees the old file or the new one,
never a half-written one.
"""
from __future__ import annotations

import json
import os
from collections.abc import Iterable, Iterator
from pathlib import Path

from rag.errors import InputError


def fsync_file(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def fsync_dir(path: Path) -> None:
    """fsync a folder so a rename inside it is durable; a filesystem that refuses is tolerated."""
    try:
        fsync_file(path)
    except OSError:
        pass


def fsync_tree(root: Path) -> None:
    """fsync every file, then every folder (deepest name order), then ``root`` itself."""
    for p in sorted(root.rglob("*")):
        if p.is_file():
            fsync_file(p)
    for p in sorted(root.rglob("*")):
        if p.is_dir():
            fsync_dir(p)
    fsync_dir(root)


def atomic_write_text(path: Path, text: str, *, fsync: bool = True) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.tmp{os.getpid()}")
    with open(tmp, "w", encoding="utf-8") as fh:
        fh.write(text)
        if fsync:
            fh.flush()
            os.fsync(fh.fileno())
    os.replace(tmp, path)
    if fsync:
        fsync_dir(path.parent)


def _write_text(path: Path, text: str, atomic: bool) -> None:
    """``atomic``: through :func:`atomic_write_text`; else a plain write (a file inside a folder that
    is itself swapped in atomically, like an experiment run's temporary folder)."""
    if atomic:
        atomic_write_text(path, text)
    else:
        path.write_text(text, encoding="utf-8")


def write_json(path: Path, obj: object, *, atomic: bool = True, default=None) -> None:
    """Pretty JSON (UTF-8, keys in insertion order, trailing newline); ``default`` as in :func:`json.dumps`."""
    _write_text(path, json.dumps(obj, indent=2, ensure_ascii=False, default=default) + "\n", atomic)


def write_jsonl(path: Path, rows: Iterable[object], *, atomic: bool = True) -> None:
    """One compact JSON value a line."""
    _write_text(path, "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), atomic)


def read_jsonl(path: Path, error: type[Exception] = InputError) -> Iterator[tuple[int, dict]]:
    """``(line number, object)`` for each non-blank line of a UTF-8 JSONL file (a BOM is
    skipped); a missing or unreadable file raises ``error``. See :func:`parse_jsonl`."""
    try:
        text = Path(path).read_bytes().decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise error(f"{path}: not UTF-8 text ({exc.reason} at byte {exc.start}); re-save it as UTF-8") from None
    except OSError as exc:
        raise error(f"{path}: cannot read ({exc.strerror})") from None
    return parse_jsonl(text, path, error)


def parse_jsonl(text: str, source: Path | str, error: type[Exception] = InputError) -> Iterator[tuple[int, dict]]:
    """``(line number, object)`` for each non-blank line of JSONL ``text``.

    Lines are split on ``\\n`` only (a JSON string may hold U+2028/U+2029/U+0085 unescaped).
    Bad JSON or a line that is not an object raises ``error`` naming ``source:line``."""
    for lineno, line in enumerate(text.split("\n"), 1):
        line = line.rstrip("\r")
        if not line.strip():
            continue
        try:
            obj = parse_json_object(line)
        except ValueError as exc:
            raise error(f"{source}:{lineno}: {exc}") from None
        yield lineno, obj


def parse_json_object(text: str) -> dict:
    """One JSON object; ``ValueError`` saying what is wrong (bad JSON, or not an object)."""
    try:
        obj = json.loads(text)
    except json.JSONDecodeError as exc:
        raise ValueError(f"not valid JSON ({exc.msg} at column {exc.colno})") from None
    if not isinstance(obj, dict):
        raise ValueError(f"expected a JSON object, got {type(obj).__name__}")
    return obj
