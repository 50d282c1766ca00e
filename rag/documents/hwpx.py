"""HWPX (OWPML, KS X 6101): the zip-of-XML format Hangul 2014+ saves.

The package holds ``mimetype`` (``application/hwp+zip``), ``Contents/content.hpf`` (an OPF
manifest, spine and Dublin Core metadata), ``Contents/header.xml`` (styles, paragraph shapes)
and ``Contents/section0.xml`` … (the body). Elements are matched by local name, so the 2011 and
2016 namespaces (and a prefix-less file) read the same.

What is read, in spine order: paragraphs (``hp:p`` > ``hp:run`` > ``hp:t`` with inline tabs, line
breaks and special spaces), tables (``hp:tbl`` > ``hp:tr`` > ``hp:tc`` > ``hp:subList`` > ``hp:p``,
one row per ``hp:tr``; a table inside a cell is flattened into that cell's text), table captions,
and text boxes of drawing objects. A paragraph whose style is an outline style (``개요 N`` /
``Outline N``) or whose paragraph shape is an outline heading becomes a heading. Headers,
footers, hidden comments and equations are left out; footnotes and endnotes are appended after
the body, in order, as paragraphs.

Safety: the archive's declared uncompressed size is capped (:data:`MAX_UNCOMPRESSED`) and every
member is read with that cap; XML with a DOCTYPE or an entity declaration is refused.
"""
from __future__ import annotations

import io
import logging
import re
import zipfile
import zlib
import xml.etree.ElementTree as ET
from dataclasses import dataclass, field
from typing import Iterable, Union

from rag.documents.assemble import TextAssembler, clean
from rag.documents.hangul import OUTLINE_STYLE, HangulBody, pick_title
from rag.documents.model import Extracted
from rag.errors import CorruptFileError, EncryptedFileError

logger = logging.getLogger(__name__)

MAX_UNCOMPRESSED = 200_000_000  # bytes of XML a single HWPX may unpack to
_DTD = re.compile(rb"<!(DOCTYPE|ENTITY)", re.IGNORECASE)
_SECTION = re.compile(r"(?:^|/)section(\d+)\.xml$", re.IGNORECASE)
_SKIPPED_CTRLS = {"header", "footer", "hiddenComment", "pageNum", "pageHiding", "newNum", "autoNum",
                  "colPr", "bookmark", "indexmark", "fieldBegin", "fieldEnd", "pageNumCtrl"}
_NOTES = {"footNote", "endNote"}
_SHAPES = {"rect", "ellipse", "arc", "polygon", "curve", "connectLine", "line", "textart", "container",
           "pic", "ole", "video", "chart"}
_INLINE_CHARS = {"tab": "\t", "lineBreak": "\n", "nbSpace": "\u00a0", "fwSpace": " ", "hyphen": "-"}

Rows = list[list[str]]
Part = Union[str, "_Table"]


@dataclass
class _Table:
    rows: Rows
    nested: bool = False


@dataclass
class _Styles:
    """Heading level by style id and by paragraph-shape id, from ``header.xml``."""

    by_style: dict[str, int] = field(default_factory=dict)
    by_para_shape: dict[str, int] = field(default_factory=dict)

    def level(self, p: ET.Element) -> int:
        lvl = self.by_style.get(p.get("styleIDRef", ""), 0)
        return lvl or self.by_para_shape.get(p.get("paraPrIDRef", ""), 0)


def _local(tag: object) -> str:
    return tag.rsplit("}", 1)[-1] if isinstance(tag, str) else ""


def _children(el: ET.Element, name: str) -> Iterable[ET.Element]:
    return (c for c in el if _local(c.tag) == name)


def _first(el: ET.Element, name: str) -> ET.Element | None:
    return next(iter(_children(el, name)), None)


class HwpxLoader:
    """Reads ``.hwpx`` files (see the module docstring for what is kept)."""

    format = "hwpx"

    def extract(self, data: bytes, name: str) -> Extracted:
        try:
            zf = zipfile.ZipFile(io.BytesIO(data))
        except (zipfile.BadZipFile, OSError, ValueError, NotImplementedError) as exc:
            raise CorruptFileError(f"{name}: not a readable HWPX archive ({exc}); open it in Hangul and "
                                   "save it again", file=name) from None
        with zf:
            pkg = _Package(zf, name)
            pkg.refuse_encrypted()
            meta, sections = pkg.manifest()
            styles = pkg.styles()
            asm = TextAssembler("hwpx")
            body = _Body(asm, styles)
            for path in sections:
                body.section(pkg.xml(path))
            body.finish()
        title = pick_title(str(meta.pop("title", "")), body, meta)
        meta["sections"] = len(sections)
        return asm.done(title=title, metadata=meta)


class _Package:
    """The zip, read with a size cap, and its manifest."""

    def __init__(self, zf: zipfile.ZipFile, name: str) -> None:
        self.zf, self.name = zf, name
        self.names = {i.filename: i for i in zf.infolist()}
        declared = sum(i.file_size for i in zf.infolist())
        if declared > MAX_UNCOMPRESSED:
            raise CorruptFileError(f"{name}: the archive unpacks to {declared / 1e6:.0f} MB (limit "
                                   f"{MAX_UNCOMPRESSED / 1e6:.0f} MB); it is damaged or not a normal document",
                                   file=name)
        self._read_total = 0

    def read(self, path: str) -> bytes:
        info = self.names.get(path) or next((i for n, i in self.names.items() if n.lower() == path.lower()), None)
        if info is None:
            raise KeyError(path)
        try:
            with self.zf.open(info) as fh:
                blob = fh.read(MAX_UNCOMPRESSED - self._read_total + 1)
        except (zipfile.BadZipFile, OSError, ValueError, EOFError, RuntimeError, NotImplementedError,
                zlib.error) as exc:
            if "encrypt" in str(exc).lower():
                raise EncryptedFileError(f"{self.name}: the archive is password-protected; save an unprotected "
                                         "copy from Hangul and index that", file=self.name) from None
            raise CorruptFileError(f"{self.name}: {path} cannot be unpacked ({exc}); open the file in Hangul "
                                   "and save it again", file=self.name) from None
        self._read_total += len(blob)
        if self._read_total > MAX_UNCOMPRESSED:
            raise CorruptFileError(f"{self.name}: unpacks to more than {MAX_UNCOMPRESSED / 1e6:.0f} MB; it is "
                                   "damaged or not a normal document", file=self.name)
        return blob

    def xml(self, path: str) -> ET.Element:
        blob = self.read(path)
        if _DTD.search(blob[:4096]) or b"<!ENTITY" in blob:
            raise CorruptFileError(f"{self.name}: {path} declares a DTD or entities, which an HWPX file never "
                                   "does; refused", file=self.name)
        try:
            return ET.fromstring(blob)
        except ET.ParseError as exc:
            raise CorruptFileError(f"{self.name}: {path} is not well-formed XML ({exc}); open the file in "
                                   "Hangul and save it again", file=self.name) from None

    def refuse_encrypted(self) -> None:
        if any(i.flag_bits & 0x1 for i in self.names.values()):
            raise EncryptedFileError(f"{self.name}: the archive is password-protected; save an unprotected copy "
                                     "from Hangul and index that", file=self.name)
        if "META-INF/manifest.xml" not in self.names:
            return
        root = self.xml("META-INF/manifest.xml")
        if any(_local(e.tag) in ("encryption-data", "encryption") for e in root.iter()):
            raise EncryptedFileError(f"{self.name}: the document is password-protected (encrypted HWPX); open it "
                                     "in Hangul, remove the password (or save it as PDF) and index that copy",
                                     file=self.name)

    def manifest(self) -> tuple[dict[str, object], list[str]]:
        """Dublin Core metadata and the section files in spine order."""
        meta: dict[str, object] = {}
        sections: list[str] = []
        hpf = next((n for n in self.names if n.lower() == "contents/content.hpf"), None)
        if hpf is not None:
            root = self.xml(hpf)
            for el in root.iter():
                tag, text = _local(el.tag), " ".join((el.text or "").split())
                if tag == "title" and text:
                    meta["title"] = text
                elif tag == "meta" and text and el.get("name") in ("creator", "subject", "description", "keyword",
                                                                   "CreatedDate", "ModifiedDate"):
                    key = {"CreatedDate": "created", "ModifiedDate": "modified", "creator": "author"}
                    meta[key.get(el.get("name", ""), el.get("name", ""))] = text
            items = {el.get("id"): el.get("href", "") for el in root.iter() if _local(el.tag) == "item"}
            for ref in (el for el in root.iter() if _local(el.tag) == "itemref"):
                href = items.get(ref.get("idref"), "")
                if _SECTION.search(href):
                    sections.append(self._resolve(href))
        sections = [s for s in sections if s]
        if not sections:  # no manifest, or a spine without sections: every section file in number order
            found = [(int(m.group(1)), n) for n in self.names if (m := _SECTION.search(n))
                     and n.lower().startswith("contents/")]
            sections = [n for _, n in sorted(found)]
        if not sections:
            raise CorruptFileError(f"{self.name}: the HWPX package has no section (Contents/section0.xml); it is "
                                   "damaged — open it in Hangul and save it again", file=self.name)
        return meta, sections

    def _resolve(self, href: str) -> str:
        for cand in (href, f"Contents/{href}", href.lstrip("/")):
            if cand in self.names:
                return cand
        low = {n.lower(): n for n in self.names}
        return next((low[c.lower()] for c in (href, f"Contents/{href}") if c.lower() in low), "")

    def styles(self) -> _Styles:
        out = _Styles()
        head = next((n for n in self.names if n.lower() == "contents/header.xml"), None)
        if head is None:
            return out
        root = self.xml(head)
        for el in root.iter():
            tag = _local(el.tag)
            if tag == "style" and el.get("type", "PARA").upper() == "PARA":
                m = OUTLINE_STYLE.match(el.get("name", "")) or OUTLINE_STYLE.match(el.get("engName", ""))
                if m:
                    out.by_style[el.get("id", "")] = int(m.group(1))
            elif tag == "paraPr":
                heading = _first(el, "heading")
                if heading is not None and heading.get("type", "").upper() == "OUTLINE":
                    out.by_para_shape[el.get("id", "")] = int(heading.get("level", "0") or 0) + 1
        return out


class _Body(HangulBody):
    """Walks section XML and feeds the assembler."""

    def __init__(self, asm: TextAssembler, styles: _Styles) -> None:
        super().__init__(asm)
        self.styles = styles

    def section(self, root: ET.Element) -> None:
        for p in _children(root, "p"):
            self.emit(p)

    def emit(self, p: ET.Element) -> None:
        self.write(self.parts(p), self.styles.level(p))

    # -- one paragraph -------------------------------------------------------------------------
    def parts(self, p: ET.Element) -> list[Part]:
        """The paragraph as text pieces and tables, in reading order."""
        out: list[Part] = []
        buf: list[str] = []

        def flush() -> None:
            if buf:
                out.append("".join(buf))
                buf.clear()

        for run in _children(p, "run"):
            for child in run:
                tag = _local(child.tag)
                if tag == "t":
                    buf.append(_t_text(child))
                elif tag == "tbl":
                    flush()
                    out.extend(self.table(child))
                elif tag == "ctrl":
                    for c in child:
                        if _local(c.tag) in _NOTES:
                            self.notes.extend(self.text_of(sub) for sub in _children(c, "subList"))
                elif tag in _SHAPES:
                    flush()
                    out.extend(self.shape(child))
                elif tag == "compose":  # 글자 겹침: the composed characters
                    buf.append(child.get("composeText", ""))
        flush()
        return out

    def table(self, tbl: ET.Element) -> list[Part]:
        out: list[Part] = []
        caption = _first(tbl, "caption")
        if caption is not None:
            out.extend(t for sub in _children(caption, "subList") if (t := self.text_of(sub)))
        rows: Rows = []
        for tr in _children(tbl, "tr"):
            rows.append([self.cell_text(tc) for tc in _children(tr, "tc")])
        out.append(_Table(rows))
        return out

    def shape(self, el: ET.Element) -> list[Part]:
        """Text boxes of a drawing object (and of the objects grouped in a container)."""
        out: list[Part] = []
        for child in el:
            tag = _local(child.tag)
            if tag == "drawText":
                for sub in _children(child, "subList"):
                    for p in _children(sub, "p"):
                        out.extend(self.parts(p))
            elif tag in _SHAPES:
                out.extend(self.shape(child))
            elif tag == "caption":
                out.extend(t for sub in _children(child, "subList") if (t := self.text_of(sub)))
        return out

    def cell_text(self, tc: ET.Element) -> str:
        return " ".join(t for sub in _children(tc, "subList") if (t := self.text_of(sub)))

    def text_of(self, sub: ET.Element) -> str:
        """A paragraph list as one string; tables inside are flattened (cells and rows by spaces)."""
        pieces: list[str] = []
        for p in _children(sub, "p"):
            for part in self.parts(p):
                if isinstance(part, _Table):
                    self.flattened += 1
                    pieces.extend(" ".join(c for c in row if c.strip()) for row in part.rows)
                else:
                    pieces.append(part)
        return " ".join(" ".join(clean(x).split()) for x in pieces if clean(x))


def _t_text(t: ET.Element) -> str:
    """The text of one ``hp:t``: its text, inline characters and the text after each."""
    out = [t.text or ""]
    for child in t:
        out.append(_INLINE_CHARS.get(_local(child.tag), ""))
        out.append(child.tail or "")
    return "".join(out)
