"""PDF files: the text layer of every page, read with PDFium (pypdfium2), as one :class:`Extracted`.

PDFium gives each character with its box; :mod:`rag.documents.pdf_layout` makes lines of them
and finds running headers and footers, :mod:`rag.documents.pdf_paragraphs` makes blocks of the
lines (re-joining hard-wrapped lines, with :mod:`rag.documents.pdf_join` for the breaks the
geometry leaves open); :mod:`rag.documents.pdf_tables` reads the tables the page's rules draw. Pages are numbered from 1 in file order.

A page with fewer than ``min_chars_per_page`` characters that carries an image is a scan: it
gets a ``scanned_page`` warning and no text, unless ``ocr`` is on and the ``tesseract`` binary
is installed, when the page is rendered and read by OCR (words under ``ocr_min_confidence``
dropped, an ``ocr_page`` warning with the mean confidence). A file where no page has text raises
:class:`ScannedFileError` (or :class:`EmptyFileError` when it has no image either); a password
raises :class:`EncryptedFileError`, a broken file :class:`CorruptFileError`.
"""
from __future__ import annotations

import ctypes
import logging
import shutil
import subprocess
from dataclasses import dataclass
from typing import Any, Sequence

from rag.documents.assemble import TextAssembler, clean
from rag.documents.model import Extracted, Format
from rag.documents.pdf_layout import Glyph, Line, running_lines
from rag.documents.pdf_paragraphs import emit, group, measure
from rag.documents.pdf_tables import page_rules, split_page
from rag.errors import CorruptFileError, EmptyFileError, EncryptedFileError, ScannedFileError

log = logging.getLogger(__name__)

_PASSWORD_ERRORS = (4, 5)  # FPDF_ERR_PASSWORD, FPDF_ERR_SECURITY
_META_KEYS = {"Author": "author", "Subject": "subject", "Keywords": "keywords",
              "Creator": "creator", "Producer": "producer", "CreationDate": "created",
              "ModDate": "modified"}


@dataclass(frozen=True)
class _Page:
    number: int
    lines: list[Line]
    images: int


def _glyphs(textpage: Any, raw: Any) -> list[Glyph]:
    """Every character of one text page with its advance box, baseline, size and weight."""
    out: list[Glyph] = []
    tp = textpage.raw  # the bare handle: the wrapper converts itself on every call
    unicode, generated = raw.FPDFText_GetUnicode, raw.FPDFText_IsGenerated
    box, origin = raw.FPDFText_GetLooseCharBox, raw.FPDFText_GetCharOrigin
    font_size, font_weight = raw.FPDFText_GetFontSize, raw.FPDFText_GetFontWeight
    rect = raw.FS_RECTF()
    ox, oy = ctypes.c_double(), ctypes.c_double()
    gap = False
    count = raw.FPDFText_CountChars(tp)
    i = 0
    while i < count:
        code = unicode(tp, i)
        step = 1
        if generated(tp, i):
            gap = gap or code == 0x20
            i += 1
            continue
        ch = chr(code) if code < 0xD800 or code > 0xDFFF else ""
        if 0xD800 <= code < 0xDC00 and i + 1 < count:  # a surrogate pair: one character
            low = unicode(tp, i + 1)
            if 0xDC00 <= low <= 0xDFFF:
                ch, step = chr(0x10000 + ((code - 0xD800) << 10) + (low - 0xDC00)), 2
        if ch and box(tp, i, rect) and origin(tp, i, ox, oy):
            out.append(Glyph(ch, rect.left, rect.right, oy.value, font_size(tp, i),
                             font_weight(tp, i) >= 600, gap))
            gap = False
        i += step
    return out


def _images(page: Any, raw: Any) -> int:
    kinds = (raw.FPDFPageObj_GetType(raw.FPDFPage_GetObject(page, k))
             for k in range(raw.FPDFPage_CountObjects(page)))
    return sum(1 for t in kinds if t == raw.FPDF_PAGEOBJ_IMAGE)


def _text_chars(lines: Sequence[Line]) -> int:
    return sum(len(ln.text.replace(" ", "")) for ln in lines)


class PdfLoader:
    """Reads PDF files (see the module docstring); the constructor's arguments are its config."""

    format: Format = "pdf"

    def __init__(self, min_chars_per_page: int = 20, ocr: bool = False,
                 ocr_min_confidence: float = 60.0, ocr_languages: str = "kor+eng",
                 ocr_dpi: int = 300, ocr_timeout_s: float = 120.0) -> None:
        self.min_chars_per_page = min_chars_per_page
        self.ocr = ocr
        self.ocr_min_confidence = ocr_min_confidence
        self.ocr_languages = ocr_languages
        self.ocr_dpi = ocr_dpi
        self.ocr_timeout_s = ocr_timeout_s

    def extract(self, data: bytes, name: str) -> Extracted:
        try:
            import pypdfium2 as pdfium
            import pypdfium2.raw as raw
        except ImportError as e:  # a core dependency; only a broken install lacks it
            raise CorruptFileError(f"{name}: cannot read PDF files: pypdfium2 is not installed "
                                   "(pip install pypdfium2)", file=name) from e
        if not data:
            raise EmptyFileError(f"{name}: the file is empty (0 bytes); nothing to index", file=name)
        try:
            doc = pdfium.PdfDocument(data)
        except pdfium.PdfiumError as e:
            code = getattr(e, "err_code", None)
            if code in _PASSWORD_ERRORS or "password" in str(e).lower():
                raise EncryptedFileError(
                    f"{name}: the PDF is password-protected; save an unprotected copy (print to "
                    "PDF without a password) and add that", file=name) from e
            raise CorruptFileError(f"{name}: not a readable PDF ({e}); re-export or re-download "
                                   "the file", file=name) from e
        try:
            return self._read(doc, raw, name)
        finally:
            doc.close()

    def _read(self, doc: Any, raw: Any, name: str) -> Extracted:
        asm = TextAssembler("pdf")
        pages: list[_Page] = []
        for index in range(len(doc)):
            try:
                page = doc[index]
            except Exception as e:  # noqa: BLE001 - PDFium raises PdfiumError for a broken page
                log.warning("%s: page %d unreadable: %s", name, index + 1, e)
                asm.warn("page_unreadable", f"page {index + 1}: could not be read ({e})", index + 1)
                pages.append(_Page(index + 1, [], 0))
                continue
            textpage = page.get_textpage()
            try:
                glyphs = _glyphs(textpage, raw)
                images = _images(page, raw)
                rules = page_rules(page.raw, raw) if glyphs else []
            finally:
                textpage.close()
                page.close()
            pages.append(_Page(index + 1, split_page(index + 1, glyphs, rules), images))
        drop, removed = running_lines([p.lines for p in pages])
        body = [[ln for i, ln in enumerate(p.lines) if (k, i) not in drop] for k, p in enumerate(pages)]
        if removed:
            shown = ", ".join(repr(t) for t in removed[:6])
            asm.warn("header_removed", f"removed {len(drop)} running header/footer lines: {shown}")
        body = self._scans(doc, pages, body, asm, name)
        lines = [ln for page_body in body for ln in page_body]
        if not lines:
            if any(p.images for p in pages):
                raise ScannedFileError(
                    f"{name}: no page has a text layer (an image-only scan); run OCR on it (e.g. "
                    "ocrmypdf) or turn on the PDF loader's ocr option with tesseract installed",
                    file=name)
            raise EmptyFileError(f"{name}: the PDF holds no text", file=name)
        emit(group(body, measure(lines)), asm, len(pages))
        return asm.done(title=self._title(doc, removed), metadata=self._metadata(doc, len(pages)))

    def _scans(self, doc: Any, pages: list[_Page], body: list[list[Line]], asm: TextAssembler,
               name: str) -> list[list[Line]]:
        """Pages with (almost) no text: dropped with a warning, or read by OCR."""
        scanned = [k for k, p in enumerate(pages)
                   if p.images and _text_chars(body[k]) < self.min_chars_per_page]
        tesseract = shutil.which("tesseract") if self.ocr and scanned else None
        if self.ocr and scanned and tesseract is None:
            asm.warn("ocr_unavailable", f"OCR is on but the tesseract binary is not installed; "
                     f"{len(scanned)} scanned page(s) left without text")
        for k in scanned:
            number = pages[k].number
            body[k] = []
            lines, mean = self._ocr(doc, k, tesseract, name) if tesseract else ([], None)
            if lines:
                body[k] = lines
                asm.warn("ocr_page", f"page {number}: read by OCR (tesseract), mean word "
                         f"confidence {mean:.1f}", number)
            else:
                asm.warn("scanned_page", f"page {number}: scanned: no text layer", number)
        return body

    def _ocr(self, doc: Any, index: int, tesseract: str, name: str) -> tuple[list[Line], float | None]:
        from rag.documents.pdf_ocr import ocr_lines

        page = doc[index]
        try:
            return ocr_lines(page, index + 1, tesseract, self.ocr_languages, self.ocr_dpi,
                             self.ocr_min_confidence, self.ocr_timeout_s)
        except (OSError, subprocess.SubprocessError, ValueError) as e:
            log.warning("%s: OCR of page %d failed: %s", name, index + 1, e)
            return [], None
        finally:
            page.close()

    @staticmethod
    def _title(doc: Any, removed: list[str]) -> str:
        meta = doc.get_metadata_dict(skip_empty=True)
        title = clean(str(meta.get("Title", "")))
        if title and title.casefold() not in ("untitled", "microsoft word"):
            return title
        named = [t for t in removed if t.strip("-–— 0123456789/")]
        return named[0] if named else ""

    @staticmethod
    def _metadata(doc: Any, page_count: int) -> dict[str, object]:
        meta = doc.get_metadata_dict(skip_empty=True)
        out: dict[str, object] = {"pages": page_count}
        for key, label in _META_KEYS.items():
            value = " ".join(clean(str(meta.get(key, ""))).split())
            if value and value != "unspecified":
                out[label] = value
        return out
