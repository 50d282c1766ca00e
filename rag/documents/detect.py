"""Which format a file is, from its content (magic bytes), not its name.

The extension is used only to tell Markdown from plain text, and a name that disagrees with the
content is reported (``extension_mismatch``) but never trusted over it.
"""
from __future__ import annotations

import io
import logging
import re
import zipfile

from rag.documents.model import Format
from rag.errors import CorruptFileError, EncryptedFileError, UnsupportedFileError

logger = logging.getLogger(__name__)

OLE_MAGIC = b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1"
ZIP_MAGIC = b"PK\x03\x04"
_HTML = re.compile(rb"^\s*(<\?xml[^>]*>\s*)?(<!--.*?-->\s*)*(<!doctype\s+html|<html[\s>]|<head[\s>]|<body[\s>])",
                   re.IGNORECASE | re.DOTALL)
_MARKDOWN_SUFFIXES = (".md", ".markdown", ".mdown", ".mkd")
# Binary formats that are recognised only to be refused with a useful message.
_KNOWN_BINARY: tuple[tuple[bytes, str], ...] = (
    (b"\x89PNG\r\n\x1a\n", "a PNG image"), (b"\xff\xd8\xff", "a JPEG image"), (b"GIF8", "a GIF image"),
    (b"II*\x00", "a TIFF image"), (b"MM\x00*", "a TIFF image"), (b"\x7fELF", "an executable"),
    (b"\x1f\x8b", "a gzip archive"), (b"7z\xbc\xaf\x27\x1c", "a 7-Zip archive"), (b"Rar!", "a RAR archive"),
    (b"{\\rtf", "an RTF document"),
)
SUFFIXES: dict[Format, tuple[str, ...]] = {
    "pdf": (".pdf",), "docx": (".docx",), "html": (".html", ".htm", ".xhtml"), "hwpx": (".hwpx",),
    "hwp": (".hwp",), "markdown": _MARKDOWN_SUFFIXES, "text": (".txt", ".text", ""),
}


def detect_format(data: bytes, name: str) -> Format:
    """The format of a file's bytes. Raises :class:`UnsupportedFileError` for content no loader
    reads (images, archives, old binary .doc, spreadsheets …) and :class:`EncryptedFileError`
    for a password-protected Office file."""
    head = data[:4096]
    if b"%PDF" in data[:1024]:
        return "pdf"
    if head.startswith(ZIP_MAGIC):
        return _zip_format(data, name)
    if head.startswith(OLE_MAGIC):
        return _ole_format(data, name)
    for magic, what in _KNOWN_BINARY:
        if head.startswith(magic):
            raise UnsupportedFileError(f"{name}: this is {what}, not a document rag reads; "
                                       "convert it to PDF, DOCX, HWP(X), HTML or text", file=name)
    probe = head.lstrip(b"\xef\xbb\xbf")
    if _HTML.match(probe) or _HTML.match(_utf16_probe(probe)):
        return "html"
    return "markdown" if name.lower().endswith(_MARKDOWN_SUFFIXES) else "text"


def _utf16_probe(head: bytes) -> bytes:
    if head[:2] in (b"\xff\xfe", b"\xfe\xff"):
        try:
            return head.decode("utf-16").encode("ascii", "ignore")
        except UnicodeDecodeError:
            return b""
    return b""


def _zip_format(data: bytes, name: str) -> Format:
    try:
        with zipfile.ZipFile(io.BytesIO(data)) as zf:
            names = set(zf.namelist())
            mimetype = zf.read("mimetype").decode("ascii", "replace").strip() if "mimetype" in names else ""
    except (zipfile.BadZipFile, OSError, ValueError, KeyError) as exc:
        raise CorruptFileError(f"{name}: starts like a ZIP-based document (DOCX, HWPX) but the archive is "
                               f"broken ({exc}); open and save it again", file=name) from None
    if mimetype.startswith("application/hwp") or any(n.lower().startswith("contents/section") for n in names):
        return "hwpx"
    if "word/document.xml" in names:
        return "docx"
    kind = ("a spreadsheet (XLSX)" if "xl/workbook.xml" in names else
            "a presentation (PPTX)" if "ppt/presentation.xml" in names else
            "an OpenDocument file" if mimetype.startswith("application/vnd.oasis") else "a ZIP archive")
    raise UnsupportedFileError(f"{name}: this is {kind}, not a document rag reads; save it as PDF or DOCX, "
                               "or unpack an archive into the folder", file=name)


def _ole_format(data: bytes, name: str) -> Format:
    """HWP 5 and the OLE containers that are refused: encrypted OOXML, old binary Word/Excel."""
    import olefile

    try:
        ole = olefile.OleFileIO(io.BytesIO(data))
    except (OSError, ValueError) as exc:
        raise CorruptFileError(f"{name}: starts like an OLE compound file (HWP 5, old Office) but cannot be "
                               f"opened ({exc}); open and save it again", file=name) from None
    try:
        streams = {"/".join(s) for s in ole.listdir()}
    finally:
        ole.close()
    if "FileHeader" in streams:
        return "hwp"
    if "EncryptionInfo" in streams or "EncryptedPackage" in streams:
        raise EncryptedFileError(f"{name}: a password-protected Office document; save an unprotected copy "
                                 "(File > Info > Protect Document > remove the password) and index that", file=name)
    kind = ("an old binary Word document (.doc)" if "WordDocument" in streams else
            "an old binary Excel workbook (.xls)" if "Workbook" in streams or "Book" in streams else
            "an OLE compound file of unknown kind")
    raise UnsupportedFileError(f"{name}: this is {kind}; save it as DOCX or PDF and index that", file=name)


def suffix_agrees(fmt: Format, name: str) -> bool:
    """Whether ``name``'s extension is one of ``fmt``'s (markdown and text agree with each other
    and with any unknown extension: text files have many names)."""
    low = name.lower()
    if fmt in ("markdown", "text"):
        return not any(low.endswith(s) for f, ss in SUFFIXES.items() if f not in ("markdown", "text") for s in ss)
    return any(low.endswith(s) for s in SUFFIXES[fmt])
