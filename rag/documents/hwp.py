"""HWP 5.x: the binary (OLE compound file) format of Hangul 2002 and later.

Format facts are from Hancom's public "한글 문서 파일 형식 5.0" (revision 1.3). 본 제품은
한글과컴퓨터의 한/글 문서 파일(.hwp) 공개 문서를 참고하여 개발하였습니다.

- ``FileHeader``: a 32-byte signature ``HWP Document File``, the version (0xMMnnPPrr) and a
  property word: bit 0 compressed, bit 1 password, bit 2 distribution document, bit 4 DRM,
  bit 8 certificate encryption, bit 10 certificate DRM. Every protected kind is refused with
  :class:`EncryptedFileError`.
- ``DocInfo`` (styles, paragraph shapes) and ``BodyText/Section0..N`` hold records, raw-deflate
  compressed when bit 0 is set. A record header is 32 bits: tag (10), level (10), size (12;
  0xFFF means a 32-bit size follows). The records of one section form a tree by level.
- ``PARA_TEXT`` is UTF-16LE; codes below 32 are controls: "char" controls are one unit
  (10 line break, 13 paragraph end, 24 hyphen, 30 non-breaking space, 31 fixed-width space),
  "inline" (4–9, 19, 20; 9 is a tab) and "extended" (1–3, 11, 12, 14–18, 21–23) controls are
  eight units. The k-th extended control of a paragraph is its k-th ``CTRL_HEADER`` child.

What is kept: body paragraphs in order; a table (``CTRL_HEADER`` 'tbl ' with a ``TABLE`` record
and one ``LIST_HEADER`` per cell, whose paragraphs follow it) becomes one row block per table
row, cells placed by their stored (column, row) address; a table inside a cell is flattened into
the cell's text; captions and text boxes of drawing objects are read where they stand.
Headers, footers, hidden comments, master pages and equations are left out; footnotes and
endnotes are appended after the body, in order, as paragraphs. A paragraph whose style is
``개요 N`` / ``Outline N`` or whose paragraph shape is an outline heading becomes a heading.
The title is the summary information's title, else the first paragraph.
"""
from __future__ import annotations

import io
import logging
import re
import struct
import zlib
from dataclasses import dataclass, field
from typing import Any, Iterator, Union

from rag.documents.assemble import TextAssembler, clean
from rag.documents.hangul import OUTLINE_STYLE, HangulBody, pick_title
from rag.documents.model import Extracted
from rag.errors import CorruptFileError, DependencyError, EncryptedFileError, UnsupportedFileError
from rag.lang.ko import documents as ko_documents

logger = logging.getLogger(__name__)

MAX_UNCOMPRESSED = 200_000_000  # bytes of records one HWP file may inflate to
SIGNATURE = b"HWP Document File"

BEGIN = 0x10
TAG_PARA_SHAPE, TAG_STYLE = BEGIN + 9, BEGIN + 10
TAG_PARA_HEADER, TAG_PARA_TEXT = BEGIN + 50, BEGIN + 51
TAG_CTRL_HEADER, TAG_LIST_HEADER, TAG_TABLE = BEGIN + 55, BEGIN + 56, BEGIN + 61
TAG_SHAPE_COMPONENT = BEGIN + 60

_FLAG_COMPRESSED, _FLAG_PASSWORD, _FLAG_DISTRIBUTION, _FLAG_DRM = 0x1, 0x2, 0x4, 0x10
_FLAG_CERT_ENCRYPTED, _FLAG_CERT_DRM = 0x100, 0x400
_INLINE = frozenset((4, 5, 6, 7, 8, 9, 19, 20))
_EXTENDED = frozenset((1, 2, 3, 11, 12, 14, 15, 16, 17, 18, 21, 22, 23))
_CHAR_MAP = {10: "\n", 24: "-", 30: "\u00a0", 31: " "}
_SKIPPED = frozenset((b"head", b"foot", b"tcmt", b"secd", b"cold", b"eqed", b"pgnp", b"pghd", b"atno",
                      b"nwno", b"bokm", b"idxm", b"tdut", b"tcps"))
_NOTES = frozenset((b"fn  ", b"en  "))
_SUMMARY = "\x05HwpSummaryInformation"
_SUMMARY_FIELDS = {2: "title", 3: "subject", 4: "author", 5: "keywords", 6: "comments", 20: "date"}


@dataclass
class _Rec:
    tag: int
    level: int
    data: bytes
    children: list["_Rec"] = field(default_factory=list)


@dataclass
class _Table:
    rows: list[list[str]]


Part = Union[str, _Table]


def _records(blob: bytes, name: str) -> Iterator[tuple[int, int, bytes]]:
    pos, n = 0, len(blob)
    while pos + 4 <= n:
        (head,) = struct.unpack_from("<I", blob, pos)
        pos += 4
        tag, level, size = head & 0x3FF, (head >> 10) & 0x3FF, head >> 20
        if size == 0xFFF:
            if pos + 4 > n:
                break
            (size,) = struct.unpack_from("<I", blob, pos)
            pos += 4
        if pos + size > n:
            raise CorruptFileError(f"{name}: a record runs past the end of its stream (the file is truncated or "
                                   "damaged); open it in Hangul and save it again", file=name)
        yield tag, level, blob[pos:pos + size]
        pos += size


def _tree(blob: bytes, name: str) -> list[_Rec]:
    """Records as a forest: a record's children are the following records of a deeper level."""
    roots: list[_Rec] = []
    stack: list[_Rec] = []
    for tag, level, data in _records(blob, name):
        rec = _Rec(tag, level, data)
        while stack and stack[-1].level >= level:
            stack.pop()
        (stack[-1].children if stack else roots).append(rec)
        stack.append(rec)
    return roots


def _utf16(data: bytes, pos: int) -> tuple[str, int]:
    """A WORD length and that many UTF-16LE units at ``pos``; the string and the next position."""
    (count,) = struct.unpack_from("<H", data, pos)
    end = pos + 2 + 2 * count
    return data[pos + 2:end].decode("utf-16le", "replace"), end


def decode_para_text(data: bytes) -> tuple[list[str], list[bytes]]:
    """The text of one ``PARA_TEXT`` split at its extended controls, and those controls' ids
    (``segments[k]`` comes before ``ctrl_ids[k]``; there is one more segment than ids)."""
    units = struct.unpack(f"<{len(data) // 2}H", data[:len(data) // 2 * 2])
    segments: list[str] = []
    ids: list[bytes] = []
    buf: list[int] = []

    def flush() -> None:
        segments.append(struct.pack(f"<{len(buf)}H", *buf).decode("utf-16le", "replace"))
        buf.clear()

    i, n = 0, len(units)
    while i < n:
        c = units[i]
        if c >= 32:
            buf.append(c)
            i += 1
        elif c in _EXTENDED:
            flush()
            raw = struct.pack("<HH", *units[i + 1:i + 3]) if i + 3 <= n else b""
            ids.append(raw[::-1])
            i += 8
        elif c in _INLINE:
            if c == 9:
                buf.append(9)
            i += 8
        else:  # char controls: 0 unusable, 13 paragraph end, 25-29 reserved are dropped
            if c in _CHAR_MAP:
                buf.extend(ord(ch) for ch in _CHAR_MAP[c])
            i += 1
    flush()
    return segments, ids


class HwpLoader:
    """Reads HWP 5.x files (see the module docstring for what is kept)."""

    format = "hwp"

    def extract(self, data: bytes, name: str) -> Extracted:
        try:
            import olefile
        except ImportError:
            raise DependencyError("reading HWP files needs the 'olefile' package; pip install olefile") from None
        try:
            ole = olefile.OleFileIO(io.BytesIO(data))
        except (OSError, ValueError, struct.error, IndexError) as exc:
            logger.info("%s: olefile refused the file: %s", name, exc)
            raise CorruptFileError(f"{name}: not a readable HWP compound file (its container structure is broken); "
                                   "open it in Hangul and save it again", file=name) from None
        try:
            return self._extract(ole, name)
        except (OSError, ValueError, struct.error, IndexError, zlib.error) as exc:
            raise CorruptFileError(f"{name}: the HWP structure is damaged ({type(exc).__name__}: {exc}); open "
                                   "it in Hangul and save it again", file=name) from None
        finally:
            ole.close()

    def _extract(self, ole: Any, name: str) -> Extracted:
        props, version = _file_header(ole, name)
        budget = [MAX_UNCOMPRESSED]
        styles = _Styles()
        if ole.exists("DocInfo"):
            styles = _Styles.read(_stream(ole, "DocInfo", props, name, budget), name)
        sections = sorted((int(e[1][7:]), "/".join(e)) for e in ole.listdir()
                          if len(e) == 2 and e[0] == "BodyText" and re.fullmatch(r"Section\d+", e[1]))
        if not sections:
            raise CorruptFileError(f"{name}: the HWP file has no BodyText/Section0 stream; it is damaged — open it "
                                   "in Hangul and save it again", file=name)
        asm = TextAssembler("hwp")
        body = _Body(asm, styles)
        for _, path in sections:
            body.section(_tree(_stream(ole, path, props, name, budget), name))
        body.finish()
        meta = _summary(ole)
        title = pick_title(str(meta.pop("title", "")), body, meta)
        meta.update({"hwp_version": version, "sections": len(sections)})
        return asm.done(title=title, metadata=meta)


def _file_header(ole: Any, name: str) -> tuple[int, str]:
    if not ole.exists("FileHeader"):
        raise UnsupportedFileError(f"{name}: an OLE compound file without an HWP FileHeader; not an HWP 5 "
                                   "document", file=name)
    head = ole.openstream("FileHeader").read()
    if len(head) < 40 or not head.startswith(SIGNATURE):
        raise CorruptFileError(f"{name}: the FileHeader does not carry the HWP signature; open the file in Hangul "
                               "and save it again", file=name)
    version, props = struct.unpack_from("<II", head, 32)
    text = f"{version >> 24}.{(version >> 16) & 0xFF}.{(version >> 8) & 0xFF}.{version & 0xFF}"
    if version >> 24 != 5:
        raise UnsupportedFileError(f"{name}: HWP version {text} is not HWP 5; save it from Hangul as HWP, HWPX or "
                                   "PDF and index that", file=name)
    if props & (_FLAG_DISTRIBUTION | _FLAG_DRM | _FLAG_CERT_DRM) or ole.exists("ViewText"):
        raise EncryptedFileError(f"{name}: a distribution ({ko_documents.HWP_DISTRIBUTION}) or DRM-protected HWP "
                                 "document, whose text is "
                                 "encrypted; open it in Hangul and save it as a normal HWP, HWPX or PDF (the author's "
                                 "permission may be needed), then index that copy", file=name)
    if props & (_FLAG_PASSWORD | _FLAG_CERT_ENCRYPTED):
        raise EncryptedFileError(f"{name}: the HWP document is password-protected; open it in Hangul, remove the "
                                 "password (or save it as PDF) and index that copy", file=name)
    return props, text


def _stream(ole: Any, path: str, props: int, name: str, budget: list[int]) -> bytes:
    raw = ole.openstream(path).read()
    if not props & _FLAG_COMPRESSED:
        return raw
    inflater = zlib.decompressobj(-15)
    try:
        out = inflater.decompress(raw, budget[0] + 1)
    except zlib.error as exc:
        raise CorruptFileError(f"{name}: the {path} stream cannot be decompressed ({exc}); open the file in Hangul "
                               "and save it again", file=name) from None
    budget[0] -= len(out)
    if budget[0] < 0 or inflater.unconsumed_tail:
        raise CorruptFileError(f"{name}: inflates to more than {MAX_UNCOMPRESSED / 1e6:.0f} MB; it is damaged or not "
                               "a normal document", file=name)
    return out


def _summary(ole: Any) -> dict[str, object]:
    """Title, author … of the summary property set (strings cut at their first NUL: some
    writers store lengths that olefile reads past)."""
    if not ole.exists(_SUMMARY):
        return {}
    try:
        props = ole.getproperties(_SUMMARY, convert_time=False)
    except Exception as exc:  # noqa: BLE001 - a damaged summary must not block the body text
        logger.info("HWP summary information unreadable: %s", exc)
        return {}
    out: dict[str, object] = {}
    for pid, key in _SUMMARY_FIELDS.items():
        value = props.get(pid)
        if isinstance(value, bytes):
            value = value.decode("cp949", "replace")
        if isinstance(value, str):
            value = " ".join(clean(value.split("\x00", 1)[0]).split())
            if value:
                out[key] = value
    return out


@dataclass
class _Styles:
    """Heading level by style id and by paragraph-shape id, from ``DocInfo``."""

    by_style: dict[int, int] = field(default_factory=dict)
    by_para_shape: dict[int, int] = field(default_factory=dict)

    @classmethod
    def read(cls, blob: bytes, name: str) -> "_Styles":
        out = cls()
        shape_id = style_id = 0
        for tag, _level, data in _records(blob, name):
            if tag == TAG_PARA_SHAPE and len(data) >= 4:
                (attr,) = struct.unpack_from("<I", data, 0)
                if (attr >> 23) & 0x3 == 1:  # paragraph head kind 1 = outline, level in bits 25-27
                    out.by_para_shape[shape_id] = ((attr >> 25) & 0x7) + 1
                shape_id += 1
            elif tag == TAG_STYLE and len(data) >= 2:
                try:
                    local, pos = _utf16(data, 0)
                    english, _ = _utf16(data, pos)
                except struct.error:
                    local = english = ""
                m = OUTLINE_STYLE.match(local) or OUTLINE_STYLE.match(english)
                if m:
                    out.by_style[style_id] = int(m.group(1))
                style_id += 1
        return out

    def level(self, para_header: bytes) -> int:
        if len(para_header) < 11:
            return 0
        shape, style = struct.unpack_from("<HB", para_header, 8)
        return self.by_style.get(style, 0) or self.by_para_shape.get(shape, 0)


class _Body(HangulBody):
    """Walks the record tree of each section and feeds the assembler."""

    def __init__(self, asm: TextAssembler, styles: _Styles) -> None:
        super().__init__(asm)
        self.styles = styles

    def section(self, roots: list[_Rec]) -> None:
        for rec in roots:
            if rec.tag == TAG_PARA_HEADER:
                self.emit(rec)

    def emit(self, para: _Rec) -> None:
        self.write(self.parts(para), self.styles.level(para.data))

    # -- one paragraph -------------------------------------------------------------------------
    def parts(self, para: _Rec) -> list[Part]:
        """The paragraph as text pieces and tables, in reading order."""
        text = next((c for c in para.children if c.tag == TAG_PARA_TEXT), None)
        ctrls = [c for c in para.children if c.tag == TAG_CTRL_HEADER]
        segments, ids = decode_para_text(text.data) if text is not None else ([], [])
        out: list[Part] = []
        buf = segments[0] if segments else ""
        used = 0
        for k, ctrl_id in enumerate(ids):
            # pair the k-th extended control with the next control header of the same id
            j = next((j for j in range(used, len(ctrls)) if ctrls[j].data[:4][::-1] == ctrl_id), None)
            if j is not None:
                used = j + 1
                inner = self.control(ctrls[j])
                if inner:
                    if buf.strip():
                        out.append(buf)
                    buf = ""
                    out.extend(inner)
            buf += segments[k + 1]
        if buf.strip():
            out.append(buf)
        return out

    def control(self, ctrl: _Rec) -> list[Part]:
        cid = ctrl.data[:4][::-1]
        if cid in _SKIPPED:
            return []
        if cid in _NOTES:
            self.notes.extend(t for t in (self.list_text(ctrl),) if t)
            return []
        if cid == b"tbl ":
            return self.table(ctrl)
        # drawing objects ('gso '), fields … : text boxes and captions, where they stand
        out: list[Part] = []
        for para in _paragraphs_under(ctrl):
            out.extend(self.parts(para))
        return out

    def table(self, ctrl: _Rec) -> list[Part]:
        table = next((c for c in ctrl.children if c.tag == TAG_TABLE), None)
        nrows = ncols = 0
        if table is not None and len(table.data) >= 8:
            nrows, ncols = struct.unpack_from("<HH", table.data, 4)
        before_table = True
        caption: list[str] = []
        cells: list[tuple[int, int, list[_Rec]]] = []
        for child in ctrl.children:
            if child.tag == TAG_TABLE:
                before_table = False
            elif child.tag == TAG_LIST_HEADER:
                if before_table:  # a caption's paragraph list comes before the TABLE record
                    caption.append("")
                    cells.append((-1, -1, []))
                else:
                    col, row = struct.unpack_from("<HH", child.data, 8) if len(child.data) >= 12 else (-2, -2)
                    cells.append((row, col, []))
            elif child.tag == TAG_PARA_HEADER and cells:
                cells[-1][2].append(child)
        out: list[Part] = []
        body = []
        for row, col, paras in cells:
            text = self.cell_text(paras)
            if row == -1:
                if text:
                    out.append(text)
            else:
                body.append((row, col, text))
        out.append(_Table(_grid(body, nrows, ncols)))
        return out

    def cell_text(self, paras: list[_Rec]) -> str:
        pieces: list[str] = []
        for para in paras:
            for part in self.parts(para):
                if isinstance(part, _Table):
                    self.flattened += 1
                    pieces.extend(" ".join(c for c in row if c.strip()) for row in part.rows)
                else:
                    pieces.append(part)
        return " ".join(" ".join(clean(x).split()) for x in pieces if clean(x))

    def list_text(self, ctrl: _Rec) -> str:
        return self.cell_text(list(_paragraphs_under(ctrl)))


def _paragraphs_under(rec: _Rec) -> Iterator[_Rec]:
    """The paragraphs of the lists held by ``rec`` (not those of nested paragraphs' controls)."""
    for child in rec.children:
        if child.tag == TAG_PARA_HEADER:
            yield child
        elif child.tag in (TAG_LIST_HEADER, TAG_SHAPE_COMPONENT) or child.tag > TAG_TABLE:
            yield from _paragraphs_under(child)


def _grid(cells: list[tuple[int, int, str]], nrows: int, ncols: int) -> list[list[str]]:
    """Rows of cell texts, each row's cells by column; stored addresses are used when they fit
    the table's size, else the cells are taken in stored order, ``ncols`` to a row."""
    valid = all(0 <= r < max(nrows, 1) and 0 <= c < max(ncols, 1) for r, c, _ in cells) and nrows and ncols
    if not valid:
        width = max(ncols, 1)
        cells = [(i // width, i % width, t) for i, (_, _, t) in enumerate(cells)]
    rows: dict[int, list[tuple[int, str]]] = {}
    for r, c, t in cells:
        rows.setdefault(r, []).append((c, t))
    return [[t for _, t in sorted(rows[r])] for r in sorted(rows)]
