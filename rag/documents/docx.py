"""Word ``.docx`` files (python-docx, read lazily).

The body is read in document order from its XML children (paragraphs, tables, content controls,
text boxes after the paragraph that anchors them), so a table stays between the paragraphs it
sits between. A paragraph is a heading when its style is a heading style (``Heading N``,
``제목 N``, ``Title``, or any style with an outline level) or the paragraph sets an outline level
itself; it is a list item when it is numbered (``numPr``, own or from its style) or has a list
style. Automatic numbering is rendered as Word shows it (``제%1조`` → ``제3조``, ``%1.`` → ``2.``,
``①``, ``가.``), bullets are left out. Tables become one row per ``w:tr`` with each merged cell
once (a vertically merged continuation is an empty cell); a one-cell table is read as ordinary
content. Deleted revisions, field codes, table-of-contents entries, headers and footers are not
read. The core properties give the title (else the first heading) and metadata (``author``,
``created``, ``modified`` as ISO strings, ``subject``, ``keywords``).

A password-protected DOCX is an OLE file with an ``EncryptionInfo`` stream, not a ZIP:
:class:`rag.errors.EncryptedFileError`. A broken ZIP or package: :class:`rag.errors.CorruptFileError`.
"""
from __future__ import annotations

import io
import logging
import re
import zipfile
from dataclasses import dataclass
from typing import Any, Iterable

from rag.documents.assemble import TextAssembler
from rag.documents.model import Extracted, Format
from rag.errors import CorruptFileError, DependencyError, EncryptedFileError, UnsupportedFileError
from rag.lang.en import documents as en_documents
from rag.lang.ko import documents as ko_documents

logger = logging.getLogger(__name__)

_W = "{http://schemas.openxmlformats.org/wordprocessingml/2006/main}"
_MC_FALLBACK = "{http://schemas.openxmlformats.org/markup-compatibility/2006}Fallback"
_OLE_MAGIC = b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1"
_ZIP_MAGIC = b"PK\x03\x04"
_HEADING_NAME = re.compile(rf"^(?:{en_documents.DOCX_HEADING_STYLE}|{ko_documents.DOCX_HEADING_STYLE}"
                           r"|titre|überschrift|título|titolo|kop|見出し|标题)\s*([1-9])$", re.I)
_TITLE_NAME = re.compile(f"^(?:{en_documents.DOCX_TITLE_STYLE}|{ko_documents.DOCX_TITLE_STYLE})$", re.I)
_TOC_NAME = re.compile(f"^(?:{en_documents.DOCX_TOC_STYLE}|{ko_documents.DOCX_TOC_STYLE}"
                       f"|{en_documents.DOCX_TOC_STYLE_LONG})" r"\s*\d*$" f"|^{en_documents.DOCX_TOC_HEADING}$", re.I)
_LIST_NAME = re.compile(f"{en_documents.DOCX_LIST_STYLE}|{ko_documents.DOCX_LIST_STYLE}", re.I)
# Text-bearing elements of a paragraph, and subtrees that hold no visible text.
_SKIP = frozenset(_W + t for t in ("del", "moveFrom", "pPr", "rPr", "delText", "instrText", "fldData", "rt",
                                   "sectPr")) | {_MC_FALLBACK}
_CIRCLED = "".join(chr(0x2460 + i) for i in range(20))
_GANADA = ko_documents.GANADA
_CHOSUNG = ko_documents.CHOSUNG
_KOREAN_DIGITS = ko_documents.DIGITS


def _val(el: Any, child: str) -> str | None:
    """``w:val`` of the first ``child`` of ``el`` (None when absent)."""
    if el is None:
        return None
    c = el.find(_W + child)
    return None if c is None else c.get(_W + "val")


@dataclass(frozen=True)
class _Style:
    name: str
    based_on: str | None
    outline: int | None  # 0-based outline level; 9 = body text
    num: tuple[str, int] | None  # (numId, ilvl)


def _num_pr(ppr: Any) -> tuple[str, int] | None:
    if ppr is None:
        return None
    numpr = ppr.find(_W + "numPr")
    if numpr is None:
        return None
    num_id = _val(numpr, "numId")
    ilvl = _val(numpr, "ilvl")
    return (num_id or "", int(ilvl) if ilvl and ilvl.isdigit() else 0)


def _int(v: str | None) -> int | None:
    return int(v) if v is not None and v.isdigit() else None


class _Styles:
    def __init__(self, root: Any) -> None:
        self.styles: dict[str, _Style] = {}
        self.default: str | None = None
        for s in root.iter(_W + "style"):
            if s.get(_W + "type") != "paragraph":
                continue
            sid = s.get(_W + "styleId") or ""
            ppr = s.find(_W + "pPr")
            self.styles[sid] = _Style((_val(s, "name") or sid).strip(), _val(s, "basedOn"),
                                      _int(_val(ppr, "outlineLvl")), _num_pr(ppr))
            if s.get(_W + "default") in ("1", "true"):
                self.default = sid

    def chain(self, sid: str | None) -> Iterable[tuple[str, _Style]]:
        seen: set[str] = set()
        sid = sid if sid in self.styles else self.default
        while sid and sid in self.styles and sid not in seen:
            seen.add(sid)
            yield sid, self.styles[sid]
            sid = self.styles[sid].based_on

    def heading_level(self, sid: str | None) -> int:
        for style_id, st in self.chain(sid):
            for name in (st.name, style_id):
                m = _HEADING_NAME.match(name)
                if m:
                    return int(m.group(1))
                if _TITLE_NAME.match(name):
                    return 1
            if st.outline is not None:
                return st.outline + 1 if st.outline < 9 else 0
        return 0

    def is_toc(self, sid: str | None) -> bool:
        return any(_TOC_NAME.match(st.name) for _, st in self.chain(sid))

    def is_list(self, sid: str | None) -> bool:
        return any(_LIST_NAME.search(st.name) for _, st in self.chain(sid))

    def num(self, sid: str | None) -> tuple[str, int] | None:
        return next((st.num for _, st in self.chain(sid) if st.num is not None), None)


def _roman(n: int) -> str:
    out = ""
    for value, sym in ((1000, "M"), (900, "CM"), (500, "D"), (400, "CD"), (100, "C"), (90, "XC"), (50, "L"),
                       (40, "XL"), (10, "X"), (9, "IX"), (5, "V"), (4, "IV"), (1, "I")):
        while n >= value:
            out, n = out + sym, n - value
    return out


def _format_number(n: int, fmt: str) -> str:
    if n <= 0:
        return str(n)
    if fmt in ("upperLetter", "lowerLetter"):
        s = chr(ord("A") + (n - 1) % 26) * ((n - 1) // 26 + 1)
        return s if fmt == "upperLetter" else s.lower()
    if fmt in ("upperRoman", "lowerRoman"):
        return _roman(n) if fmt == "upperRoman" else _roman(n).lower()
    if fmt.startswith("decimalEnclosedCircle") and n <= 20:
        return _CIRCLED[n - 1]
    if fmt == "decimalEnclosedParen" and n <= 20:
        return chr(0x2474 + n - 1)
    if fmt == "decimalZero":
        return f"{n:02d}"
    if fmt == "decimalFullWidth":
        return "".join(chr(0xFF10 + int(d)) for d in str(n))
    if fmt == "ganada":
        return _GANADA[(n - 1) % len(_GANADA)]
    if fmt == "chosung":
        return _CHOSUNG[(n - 1) % len(_CHOSUNG)]
    if fmt in ("koreanDigital", "koreanDigital2", "koreanLegal") and n <= 10:
        return _KOREAN_DIGITS[n - 1]
    return str(n)


class _Numbering:
    """Word's automatic numbers: one counter set per abstract list, restarts by ``startOverride``."""

    def __init__(self, root: Any | None) -> None:
        self.levels: dict[str, dict[int, tuple[str, str, int]]] = {}  # abstractNumId -> ilvl -> (fmt, text, start)
        self.nums: dict[str, tuple[str, dict[int, int]]] = {}  # numId -> (abstractNumId, ilvl -> start override)
        self.counters: dict[str, list[int | None]] = {}
        self.used: set[str] = set()
        if root is None:
            return
        for a in root.iter(_W + "abstractNum"):
            lv: dict[int, tuple[str, str, int]] = {}
            for lvl in a.iter(_W + "lvl"):
                ilvl = _int(lvl.get(_W + "ilvl")) or 0
                lv[ilvl] = (_val(lvl, "numFmt") or "decimal", _val(lvl, "lvlText") or "",
                            _int(_val(lvl, "start")) or 1)
            self.levels[a.get(_W + "abstractNumId") or ""] = lv
        for num in root.iter(_W + "num"):
            overrides = {}
            for o in num.iter(_W + "lvlOverride"):
                start = _int(_val(o, "startOverride"))
                if start is not None:
                    overrides[_int(o.get(_W + "ilvl")) or 0] = start
            self.nums[num.get(_W + "numId") or ""] = (_val(num, "abstractNumId") or "", overrides)

    def label(self, num_id: str, ilvl: int) -> str:
        """The number Word shows for the next paragraph of list ``num_id`` at ``ilvl`` ("" for bullets)."""
        if num_id not in self.nums:
            return ""
        abstract, overrides = self.nums[num_id]
        levels = self.levels.get(abstract, {})
        counters = self.counters.setdefault(abstract, [None] * 10)
        ilvl = min(max(ilvl, 0), 9)
        if num_id not in self.used:
            self.used.add(num_id)
            for lvl, start in overrides.items():
                if 0 <= lvl <= 9:
                    counters[lvl] = start - 1
        fmt, text, start = levels.get(ilvl, ("decimal", f"%{ilvl + 1}.", 1))
        counters[ilvl] = start if counters[ilvl] is None else counters[ilvl] + 1  # type: ignore[operator]
        for deeper in range(ilvl + 1, 10):
            counters[deeper] = None
        if fmt in ("bullet", "none"):
            return ""

        def sub(m: re.Match[str]) -> str:
            k = int(m.group(1)) - 1
            kfmt, _, kstart = levels.get(k, ("decimal", "", 1))
            value = counters[k] if 0 <= k <= 9 and counters[k] is not None else kstart
            return _format_number(value, kfmt)  # type: ignore[arg-type]

        return re.sub(r"%([1-9])", sub, text).strip()


def _paragraph_text(p: Any) -> tuple[str, list[Any]]:
    """The visible text of paragraph ``p`` and the text boxes anchored in it."""
    parts: list[str] = []
    boxes: list[Any] = []

    def visit(el: Any) -> None:
        for c in el:
            tag = c.tag
            if not isinstance(tag, str) or tag in _SKIP:
                continue
            if tag == _W + "t":
                parts.append(c.text or "")
            elif tag == _W + "tab":
                parts.append("\t")
            elif tag in (_W + "br", _W + "cr"):
                parts.append("\n")
            elif tag == _W + "noBreakHyphen":
                parts.append("-")
            elif tag == _W + "txbxContent":
                boxes.append(c)
            else:
                visit(c)

    visit(p)
    return "".join(parts), boxes


class _Reader:
    def __init__(self, doc: Any, asm: TextAssembler) -> None:
        self.asm = asm
        self.styles = _Styles(doc.styles.element)
        try:
            numbering = doc.part.numbering_part.element
        except (KeyError, NotImplementedError, AttributeError):
            numbering = None
        self.numbering = _Numbering(numbering)
        self.first_heading = ""
        self.toc_skipped = 0

    def body(self, elements: Iterable[Any]) -> None:
        for el in elements:
            tag = el.tag
            if tag == _W + "p":
                self.paragraph(el)
            elif tag == _W + "tbl":
                self.table(el)
            elif tag == _W + "sdt":
                if self._is_toc_control(el):
                    self.toc_skipped += 1
                    continue
                content = el.find(_W + "sdtContent")
                if content is not None:
                    self.body(content)
            elif tag in (_W + "customXml", _W + "ins", _W + "smartTag"):
                self.body(el)
            elif tag == _W + "altChunk":
                self.asm.warn("embedded_skipped", "an embedded document (altChunk: HTML or RTF pasted into the "
                              "file) is not read; open the file in Word and save it to convert it")

    @staticmethod
    def _is_toc_control(sdt: Any) -> bool:
        gallery = sdt.find(f"{_W}sdtPr/{_W}docPartObj/{_W}docPartGallery")
        return gallery is not None and (gallery.get(_W + "val") or "").lower().startswith("table of contents")

    def paragraph(self, p: Any) -> None:
        ppr = p.find(_W + "pPr")
        sid = _val(ppr, "pStyle")
        text, boxes = _paragraph_text(p)
        if self.styles.is_toc(sid):
            self.toc_skipped += 1
            return
        own_outline = _int(_val(ppr, "outlineLvl"))
        level = (own_outline + 1 if own_outline < 9 else 0) if own_outline is not None else \
            self.styles.heading_level(sid)
        num = _num_pr(ppr) or self.styles.num(sid)
        label = ""
        if num is not None and num[0] not in ("", "0"):
            label = self.numbering.label(*num)
        body = f"{label} {text}" if label else text
        if level:
            if self.asm.block("heading", body, level) is not None and not self.first_heading:
                self.first_heading = " ".join(body.split())
        elif (num is not None and num[0] not in ("", "0")) or self.styles.is_list(sid):
            self.asm.block("list_item", body)
        else:
            self.asm.block("paragraph", body)
        for box in boxes:
            self.body(box)

    def _cells(self, tr: Any) -> list[Any]:
        out = []
        for c in tr:
            if c.tag == _W + "tc":
                out.append(c)
            elif c.tag in (_W + "sdt", _W + "customXml"):
                content = c.find(_W + "sdtContent") if c.tag == _W + "sdt" else c
                out.extend(x for x in (content if content is not None else []) if x.tag == _W + "tc")
        return out

    def _rows(self, tbl: Any) -> list[Any]:
        out = []
        for c in tbl:
            if c.tag == _W + "tr":
                out.append(c)
            elif c.tag in (_W + "sdt", _W + "customXml"):
                content = c.find(_W + "sdtContent") if c.tag == _W + "sdt" else c
                out.extend(x for x in (content if content is not None else []) if x.tag == _W + "tr")
        return out

    @staticmethod
    def _cell_text(tc: Any) -> str:
        tcpr = tc.find(_W + "tcPr")
        vmerge = tcpr.find(_W + "vMerge") if tcpr is not None else None
        if vmerge is not None and vmerge.get(_W + "val") in (None, "continue"):
            return ""  # the cell above holds the merged cell's text
        texts = []
        for p in tc.iter(_W + "p"):
            if any(a.tag == _MC_FALLBACK for a in p.iterancestors()):
                continue
            texts.append(_paragraph_text(p)[0])
        return " ".join(t.strip() for t in texts if t.strip())

    def table(self, tbl: Any) -> None:
        rows = [self._cells(tr) for tr in self._rows(tbl)]
        if sum(len(r) for r in rows) == 1:  # a frame around content, not a table
            self.body(rows[0][0])
            return
        self.asm.table([[self._cell_text(tc) for tc in r] for r in rows])


def _refuse_ole(data: bytes, name: str) -> None:
    import olefile

    try:
        ole = olefile.OleFileIO(io.BytesIO(data))
        streams = {"/".join(s) for s in ole.listdir()}
        ole.close()
    except (OSError, ValueError) as exc:
        raise CorruptFileError(f"{name}: an OLE compound file that cannot be opened ({exc}); open it in Word and "
                               "save it again as .docx", file=name) from None
    if "EncryptionInfo" in streams or "EncryptedPackage" in streams:
        raise EncryptedFileError(f"{name}: a password-protected Word document; save an unprotected copy (File > "
                                 "Info > Protect Document > remove the password) and index that", file=name)
    raise UnsupportedFileError(f"{name}: an old binary Word document (.doc) or other OLE file, not DOCX; save it "
                               "as .docx or PDF and index that", file=name)


def _iso(value: Any) -> str:
    return value.isoformat() if hasattr(value, "isoformat") else str(value)


class DocxLoader:
    """A Word ``.docx`` file: headings, paragraphs, list items and tables in body order."""

    format: Format = "docx"

    def extract(self, data: bytes, name: str) -> Extracted:
        if data.startswith(_OLE_MAGIC):
            _refuse_ole(data, name)
        if not data.startswith(_ZIP_MAGIC):
            raise CorruptFileError(f"{name}: not a DOCX file (a DOCX is a ZIP archive and this one does not start "
                                   "like one); open it in Word and save it as .docx", file=name)
        try:
            import docx
        except ImportError:  # pragma: no cover - a core dependency
            raise DependencyError("reading DOCX files needs the 'python-docx' package; install it with: "
                                  "pip install python-docx") from None
        try:
            doc = docx.Document(io.BytesIO(data))
        except ValueError as exc:
            if "content type" in str(exc):
                raise UnsupportedFileError(f"{name}: a macro-enabled document or template, not a plain DOCX "
                                           f"({exc}); save it as .docx", file=name) from None
            raise CorruptFileError(f"{name}: the DOCX package is broken ({exc}); open it in Word and save it "
                                   "again", file=name) from None
        except (zipfile.BadZipFile, KeyError, OSError, EOFError) as exc:
            raise CorruptFileError(f"{name}: the DOCX archive is broken ({type(exc).__name__}: {exc}); open it "
                                   "in Word and save it again", file=name) from None
        except Exception as exc:  # lxml syntax errors, python-docx package errors
            logger.debug("%s: python-docx failed", name, exc_info=True)
            raise CorruptFileError(f"{name}: the DOCX content cannot be read ({type(exc).__name__}: {exc}); "
                                   "open it in Word and save it again", file=name) from None
        asm = TextAssembler(self.format)
        reader = _Reader(doc, asm)
        reader.body(doc.element.body)
        if reader.toc_skipped:
            asm.warn("toc_skipped", f"{reader.toc_skipped} table-of-contents entries were left out (the "
                     "headings they point to are read)")
        return asm.done(title=self._title(doc) or reader.first_heading, metadata=self._metadata(doc))

    @staticmethod
    def _title(doc: Any) -> str:
        try:
            return (doc.core_properties.title or "").strip()
        except Exception:  # a malformed core.xml must not lose the body
            return ""

    @staticmethod
    def _metadata(doc: Any) -> dict[str, object]:
        out: dict[str, object] = {}
        try:
            cp = doc.core_properties
            values = {"author": cp.author, "created": cp.created, "modified": cp.modified,
                      "subject": cp.subject, "keywords": cp.keywords}
        except Exception:
            logger.debug("core properties unreadable", exc_info=True)
            return out
        for key, value in values.items():
            if value is None or (isinstance(value, str) and not value.strip()):
                continue
            out[key] = _iso(value) if key in ("created", "modified") else " ".join(str(value).split())
        return out
