"""One file in: size check, format by content, the format's loader, plausibility checks, and
the :class:`rag.types.Document` the index holds.

Defaults when neither the manifest nor the file says: id = the path relative to the folder
without its extension, version = the first 16 hex digits of the file's sha256, uri = the file's
path, title = the file's own title (PDF / DOCX properties, HTML ``<title>``, front matter, first
heading), else its name. The document's metadata records where it came from (``file``,
``format``, ``sha256``), the page starts the chunker uses (``pages``) and any ``access``.
"""
from __future__ import annotations

import hashlib
import logging
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Mapping

from rag.config import CorpusConfig
from rag.documents.assemble import control_free
from rag.documents.detect import detect_format, suffix_agrees
from rag.documents.manifest import FileEntry
from rag.documents.model import Extracted, ExtractionWarning, Format, Loader
from rag.errors import EmptyFileError, FileTooLargeError, GarbageFileError, InputError
from rag.types import TRUSTED_KEY, Document

logger = logging.getLogger(__name__)

# The version of the text the loaders write for a file; recorded with each document, and a sync
# reads a file again when its document was read by another version (2: statutes in the rendered
# formats written as statute markdown: fixed heading levels, an article's label and title as its
# heading, bold paragraph marks).
READER_VERSION = 2
_RESERVED = ("id", "version", "title", "uri")  # front-matter keys that are identity, not metadata
_MIN_LETTER_SHARE = 0.3  # below this share of letters/digits among non-space characters: garbage


@dataclass(frozen=True)
class ExtractedFile:
    """A file read: its bytes' sha256, its detected format and what the loader made of it."""

    path: Path
    sha256: str
    extracted: Extracted

    @property
    def format(self) -> Format:
        return self.extracted.format


def make_loader(fmt: Format, config: CorpusConfig | None = None) -> Loader:
    """The loader of one format, configured from the ``corpus`` section."""
    cfg = config or CorpusConfig()
    if fmt == "pdf":
        from rag.documents.pdf import PdfLoader

        return PdfLoader(min_chars_per_page=cfg.min_chars_per_page, ocr=cfg.ocr,
                         ocr_min_confidence=cfg.ocr_min_confidence)
    if fmt == "docx":
        from rag.documents.docx import DocxLoader

        return DocxLoader()
    if fmt == "html":
        from rag.documents.html import HtmlLoader

        return HtmlLoader()
    if fmt == "hwpx":
        from rag.documents.hwpx import HwpxLoader

        return HwpxLoader()
    if fmt == "hwp":
        from rag.documents.hwp import HwpLoader

        return HwpLoader()
    from rag.documents.plain import MarkdownLoader, TextLoader

    return MarkdownLoader() if fmt == "markdown" else TextLoader()


def read_file(path: Path, config: CorpusConfig | None = None, *, name: str | None = None) -> ExtractedFile:
    """Read and extract one file. Raises a :class:`rag.errors.FileExtractionError` subclass that
    names the file, the reason and what to do; never returns empty or garbage text."""
    cfg = config or CorpusConfig()
    label = name or str(path)
    try:
        size = path.stat().st_size
        if size > cfg.max_file_mb * 1e6:
            raise FileTooLargeError(f"{label}: {size / 1e6:.1f} MB is over corpus.max_file_mb = {cfg.max_file_mb:g}; "
                                    "split the file or raise the limit", file=label)
        data = path.read_bytes()
    except OSError as exc:
        raise InputError(f"{label}: cannot read ({exc.strerror})") from None
    fmt = detect_format(data, label)
    extracted = make_loader(fmt, cfg).extract(data, label)
    extracted = _checked(extracted, label, path.name)
    return ExtractedFile(path, hashlib.sha256(data).hexdigest(), extracted)


def _checked(ex: Extracted, label: str, filename: str) -> Extracted:
    if not control_free(ex.text):
        raise GarbageFileError(f"{label}: the {ex.format} loader returned control characters; "
                               "report this file as a bug", file=label)
    body = "".join(ex.text.split())
    if not body:
        what = "no text layer on any page" if ex.format == "pdf" else "no text"
        raise EmptyFileError(f"{label}: the file holds {what}; nothing to index", file=label)
    letters = sum(ch.isalnum() for ch in body)
    if letters / len(body) < _MIN_LETTER_SHARE or body.count("\ufffd") > max(3, len(body) // 100):
        raise GarbageFileError(f"{label}: what was read is not text ({letters} letters or digits in {len(body)} "
                               "characters); check that the file is a document and not damaged", file=label)
    if not suffix_agrees(ex.format, filename):
        ex = replace(ex, warnings=ex.warnings + (ExtractionWarning(
            "extension_mismatch", f"the name says {Path(filename).suffix or 'nothing'} but the content is "
            f"{ex.format}; read as {ex.format}"),))
    return ex


def document_id(rel: str) -> str:
    """The default id of the file at ``rel``: the relative path without its extension."""
    p = Path(rel)
    return p.with_suffix("").as_posix() if p.suffix else p.as_posix()


def to_document(f: ExtractedFile, rel: str, entry: FileEntry | None = None, *, doc_id: str | None = None,
                folder: str = "") -> Document:
    """The document of one extracted file at ``rel`` (posix, relative to ``folder``): manifest
    entry first, then the file's own metadata, then the defaults (module docstring)."""
    e = entry or FileEntry()
    ex = f.extracted
    own: Mapping[str, object] = ex.metadata
    # A file cannot vouch for itself: only the manifest marks it trusted (never quarantined).
    meta: dict[str, object] = {k: v for k, v in own.items() if k not in _RESERVED and k != TRUSTED_KEY}
    meta.update(e.metadata)
    if e.trusted:
        meta[TRUSTED_KEY] = True
    access = e.access if e.access is not None else own.get("access")
    if access is not None:
        meta["access"] = access
    meta.update({"file": rel, "format": ex.format, "sha256": f.sha256, "entry_sha256": e.fingerprint(),
                 "reader": READER_VERSION})
    if folder:
        meta["folder"] = folder
    pages = _page_starts(ex)
    if pages:
        meta["pages"] = pages
    version = e.version or _str(own.get("version")) or f.sha256[:16]
    if ":" in version:
        raise InputError(f"{rel}: version {version!r} must not contain ':'; change it in the front matter "
                         "or the manifest")
    return Document(
        id=e.id or _str(own.get("id")) or doc_id or document_id(rel),
        text=ex.text,
        version=version,
        title=e.title or ex.title or _str(own.get("title")) or Path(rel).stem,
        uri=e.uri or _str(own.get("uri")) or str(f.path),
        metadata=meta,
    )


def _str(v: object) -> str:
    return str(v).strip() if isinstance(v, (str, int, float)) and not isinstance(v, bool) and str(v).strip() else ""


def _page_starts(ex: Extracted) -> list[list[int]]:
    """``[start_char, page]`` pairs for the chunker: one per page that holds text (an empty page,
    e.g. a scanned one, starts where the next begins and is left out)."""
    out: list[list[int]] = []
    for p in ex.pages:
        if p.end <= p.start:
            continue
        if out and out[-1][0] >= p.start:
            out.pop()
        out.append([p.start, p.number])
    return out
