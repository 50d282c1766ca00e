"""A folder of the files users have: every document file read on its own, failures collected.

One bad file never stops the others: :func:`load_folder` returns the documents it could read,
each failure with the file, the reason and what to do, the warnings of the files it did read,
and the files it ignored (not a document format by name, or excluded by the manifest). With
``on_error="fail"`` the first failure is raised instead.
"""
from __future__ import annotations

import logging
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Literal

from rag.config import CorpusConfig
from rag.documents.detect import SUFFIXES
from rag.documents.files import ExtractedFile, document_id, read_file, to_document
from rag.documents.manifest import MANIFEST_NAME, Manifest, load_manifest
from rag.errors import FileExtractionError, InputError
from rag.types import Document

logger = logging.getLogger(__name__)

DOCUMENT_SUFFIXES = frozenset(s for ss in SUFFIXES.values() for s in ss if s)
Progress = Callable[[int], None]


@dataclass(frozen=True)
class FileFailure:
    """A file that gave no document: ``reason`` is the error's code (``encrypted``, ``scanned`` …)."""

    file: str
    reason: str
    message: str


@dataclass(frozen=True)
class FileWarning:
    file: str
    code: str
    message: str
    page: int | None = None


@dataclass(frozen=True)
class LoadedFile:
    """One document and the file it came from (``file``: posix path relative to the folder)."""

    file: str
    format: str
    document: Document
    pages: int


@dataclass(frozen=True)
class FolderLoad:
    root: Path
    loaded: tuple[LoadedFile, ...]
    failures: tuple[FileFailure, ...]
    warnings: tuple[FileWarning, ...]
    ignored: tuple[str, ...]  # not a document by its name, or excluded by the manifest

    @property
    def documents(self) -> list[Document]:
        return [f.document for f in self.loaded]


def candidate_files(root: Path) -> tuple[list[str], list[str]]:
    """(document files, ignored files) under ``root`` as sorted posix paths relative to it.
    Hidden files and folders (``.git``, ``.rag``) and the manifest are not listed at all."""
    docs: list[str] = []
    ignored: list[str] = []
    for f in sorted(root.rglob("*"), key=lambda x: x.relative_to(root).as_posix()):
        rel = f.relative_to(root).as_posix()
        if any(part.startswith(".") for part in Path(rel).parts) or rel == MANIFEST_NAME or not f.is_file():
            continue
        (docs if f.suffix.lower() in DOCUMENT_SUFFIXES or not f.suffix else ignored).append(rel)
    return docs, ignored


def load_folder(root: str | Path, config: CorpusConfig | None = None, *,
                on_error: Literal["skip", "fail"] | None = None, progress: Progress | None = None,
                only: set[str] | None = None) -> FolderLoad:
    """Read every document file under ``root`` (see the module docstring); ``only``: read just
    these relative paths (the rest of the folder is not opened)."""
    cfg = config or CorpusConfig()
    mode = on_error or cfg.on_error
    base = Path(root)
    if not base.is_dir():
        raise InputError(f"folder not found: {base}")
    manifest = load_manifest(base)
    names, ignored = candidate_files(base)
    for rel in manifest.missing(set(names) | set(ignored)):
        logger.warning("%s: the manifest names %s, which is not in the folder", base / MANIFEST_NAME, rel)
    read: list[tuple[str, ExtractedFile]] = []
    failures: list[FileFailure] = []
    warnings: list[FileWarning] = []
    for rel in names:
        if only is not None and rel not in only:
            continue
        if manifest.entry_for(rel).exclude:
            ignored.append(rel)
            continue
        try:
            f = read_file(base / rel, cfg, name=rel)
        except FileExtractionError as exc:
            if mode == "fail":
                raise
            failures.append(FileFailure(rel, exc.reason, str(exc)))
            logger.info("%s", exc)
        else:
            read.append((rel, f))
            warnings.extend(FileWarning(rel, w.code, w.message, w.page) for w in f.extracted.warnings)
        if progress is not None:
            progress(1)
    loaded = _documents(read, manifest, str(base.resolve()))
    return FolderLoad(base, tuple(loaded), tuple(failures), tuple(warnings), tuple(sorted(ignored)))


def _documents(read: list[tuple[str, ExtractedFile]], manifest: Manifest, folder: str) -> list[LoadedFile]:
    """Documents with their ids; two files whose default ids collide (``a.pdf``, ``a.docx``)
    both keep their extension in the id instead, so neither is taken for a version of the other."""
    defaults = [document_id(rel) for rel, _ in read]
    clash = {d for d in defaults if defaults.count(d) > 1}
    out = []
    for (rel, f), default in zip(read, defaults):
        doc = to_document(f, rel, manifest.entry_for(rel), doc_id=rel if default in clash else default,
                          folder=folder)
        out.append(LoadedFile(rel, f.format, doc, len(f.extracted.pages)))
    return out


def load_file(path: str | Path, config: CorpusConfig | None = None) -> LoadedFile:
    """One file on its own (``rag add FILE``): its id is its name without the extension unless the
    manifest of its folder or the file itself says otherwise. Raises on a bad file."""
    p = Path(path)
    if not p.is_file():
        raise InputError(f"file not found: {p}")
    return file_document(read_file(p, config, name=str(p)))


def file_document(f: ExtractedFile) -> LoadedFile:
    """The document of a file read on its own (its folder's manifest applies)."""
    p = f.path
    doc = to_document(f, p.name, load_manifest(p.parent).entry_for(p.name), folder=str(p.parent.resolve()))
    return LoadedFile(p.name, f.format, doc, len(f.extracted.pages))
