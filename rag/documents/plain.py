"""Plain text and Markdown files, and the decoding every text-based format shares.

Decoding (:func:`decode_text`): a byte-order mark first, then an encoding the file declares (HTML
``<meta charset>``), then strict UTF-8, else the encoding ``charset-normalizer`` finds (CP949 /
EUC-KR are common here), reported as an ``encoding_guessed`` warning. Bytes that are not
plausibly text (NUL bytes, a large share of control or replacement characters, no encoding that
fits) raise :class:`rag.errors.GarbageFileError` saying what was found.

Plain text: paragraphs are separated by blank lines and keep their inner line breaks; a form feed
starts a new page. Nothing is promoted to a heading, so a statute given as plain text still reads
``제1조(목적) ...``. Markdown: YAML front matter becomes metadata; ATX and setext headings,
list lines, pipe tables and paragraphs become blocks; the text of every line is kept as written.
"""
from __future__ import annotations

import codecs
import datetime as _dt
import logging
import re
from typing import Mapping

from rag.documents.assemble import TextAssembler
from rag.documents.model import Extracted, Format
from rag.errors import DependencyError, GarbageFileError

logger = logging.getLogger(__name__)

_BOMS: tuple[tuple[bytes, str], ...] = (
    (b"\xef\xbb\xbf", "utf-8-sig"), (b"\xff\xfe\x00\x00", "utf-32-le"), (b"\x00\x00\xfe\xff", "utf-32-be"),
    (b"\xff\xfe", "utf-16-le"), (b"\xfe\xff", "utf-16-be"),
)
# Labels a browser maps to a wider encoding (WHATWG Encoding): EUC-KR pages are really CP949.
_ALIASES = {"euc-kr": "cp949", "euc_kr": "cp949", "euckr": "cp949", "ks_c_5601-1987": "cp949", "ksc5601": "cp949",
            "ks_c_5601": "cp949", "x-windows-949": "cp949", "windows-949": "cp949", "iso-8859-1": "cp1252",
            "latin1": "cp1252", "latin-1": "cp1252", "us-ascii": "cp1252", "ascii": "cp1252"}
_ODD = re.compile(r"[\x00-\x08\x0b\x0e-\x1f\x7f-\x9f\ufffd\ufffe\uffff]")
_MAX_ODD_SHARE = 0.02  # control / replacement characters above this share of the text: not text
_MAX_NUL_SHARE = 0.01
_MAGIC: tuple[tuple[bytes, str], ...] = (
    (b"%PDF", "a PDF file"), (b"PK\x03\x04", "a ZIP archive (DOCX, HWPX, XLSX …)"),
    (b"\xd0\xcf\x11\xe0", "an OLE compound file (HWP, old Word or Excel)"), (b"\x89PNG", "a PNG image"),
    (b"\xff\xd8\xff", "a JPEG image"), (b"GIF8", "a GIF image"),
)


def normalise_encoding(label: str) -> str | None:
    """The Python codec for an encoding label (browser aliases applied), or None if unknown."""
    low = label.strip().strip("\"'").lower()
    low = _ALIASES.get(low, low)
    try:
        return codecs.lookup(low).name
    except LookupError:
        return None


def _garbage(name: str, found: str, data: bytes) -> GarbageFileError:
    kind = next((what for magic, what in _MAGIC if data.startswith(magic)), "")
    hint = (f"it starts like {kind}; give it its proper extension" if kind else
            "if it is a document of another format, save it as PDF, DOCX or UTF-8 text")
    return GarbageFileError(f"{name}: does not look like text: {found}; {hint}", file=name)


def _check_plausible(text: str, name: str, data: bytes, encoding: str) -> None:
    if not text:
        return
    nul = text.count("\x00")
    if nul and (nul >= 64 or nul / len(text) > _MAX_NUL_SHARE):
        raise _garbage(name, f"{nul} NUL characters ({nul / len(text):.0%} of the text) after decoding as {encoding}",
                       data)
    odd = len(_ODD.findall(text))
    if odd > 2 and odd / len(text) > _MAX_ODD_SHARE:
        raise _garbage(name, f"{odd} control or replacement characters ({odd / len(text):.0%} of the text) after "
                       f"decoding as {encoding}", data)


def _utf16_without_bom(data: bytes) -> str | None:
    """UTF-16 text without a byte-order mark: NULs on one side of nearly every pair."""
    if len(data) < 4 or len(data) % 2:
        return None
    even, odd = data[0::2].count(0), data[1::2].count(0)
    half = len(data) // 2
    for zeros, enc in ((odd, "utf-16-le"), (even, "utf-16-be")):
        if zeros >= 0.3 * half and min(even, odd) <= 0.02 * half:
            try:
                return data.decode(enc)
            except UnicodeDecodeError:
                return None
    return None


def _detect(data: bytes) -> str | None:
    try:
        from charset_normalizer import from_bytes
    except ImportError:  # pragma: no cover - a core dependency
        raise DependencyError("reading a text file that is not UTF-8 needs the 'charset-normalizer' package; "
                              "install it with: pip install charset-normalizer") from None
    best = from_bytes(data).best()
    if best is None:
        return None
    return normalise_encoding(best.encoding) or best.encoding


def decode_text(data: bytes, name: str, asm: TextAssembler, declared: str | None = None) -> str:
    """The text of ``data``: BOM, then ``declared`` (if it decodes), then strict UTF-8, else the
    detected encoding (warning ``encoding_guessed``). Newlines are returned as ``\\n``.
    Raises :class:`GarbageFileError` when the bytes are not plausibly text."""
    text: str | None = None
    encoding = ""
    declared_codec: str | None = None
    for bom, enc in _BOMS:
        if data.startswith(bom):
            try:
                text, encoding = data[len(bom):].decode(enc.replace("-sig", "")), enc
            except UnicodeDecodeError as exc:
                raise _garbage(name, f"a {enc} byte-order mark, but byte {exc.start + len(bom)} does not decode",
                               data) from None
            break
    if text is None and declared:
        codec = declared_codec = normalise_encoding(declared)
        if codec is None:
            asm.warn("encoding_unknown", f"the file declares the encoding {declared!r}, which is unknown; ignored")
        else:
            try:
                text, encoding = data.decode(codec), codec
            except UnicodeDecodeError:
                asm.warn("encoding_mismatch", f"the file declares {declared!r} but does not decode as it")
    if text is None:
        nul = data.count(0)
        if nul:
            text = _utf16_without_bom(data)
            if text is not None:
                encoding = "utf-16"
                asm.warn("encoding_guessed", "no byte-order mark; read as UTF-16 (NUL bytes on every other position)")
            elif nul >= 64 or nul / len(data) > _MAX_NUL_SHARE:
                raise _garbage(name, f"{nul} NUL bytes ({nul / len(data):.0%} of the file)", data)
    if text is None:
        try:
            text, encoding = data.decode("utf-8"), "utf-8"
        except UnicodeDecodeError:
            guessed = _detect(data)
            if guessed is None and declared_codec:
                text, encoding = data.decode(declared_codec, errors="replace"), declared_codec
                asm.warn("encoding_guessed", f"the bytes do not all decode as the declared {declared!r}; read as "
                         f"{declared_codec} with {text.count(chr(0xFFFD))} undecodable bytes replaced")
                _check_plausible(text, name, data, encoding)
                return text.replace("\r\n", "\n").replace("\r", "\n")
            if guessed is None:
                raise _garbage(name, "bytes that no text encoding fits (not UTF-8, CP949, EUC-KR or another "
                               "known encoding)", data) from None
            try:
                text, encoding = data.decode(guessed), guessed
            except (UnicodeDecodeError, LookupError):
                raise _garbage(name, f"bytes that do not decode as {guessed}, the closest encoding found",
                               data) from None
            asm.warn("encoding_guessed", f"not UTF-8; read as {guessed} (detected). Save the file as UTF-8 to "
                     "be sure it is read as meant")
            logger.info("%s: decoded as %s (detected)", name, guessed)
    _check_plausible(text, name, data, encoding)
    return text.replace("\r\n", "\n").replace("\r", "\n")


class TextLoader:
    """A ``.txt`` file: paragraphs between blank lines, pages at form feeds, no headings."""

    format: Format = "text"

    def extract(self, data: bytes, name: str) -> Extracted:
        asm = TextAssembler(self.format)
        text = decode_text(data, name, asm)
        pages = text.split("\f")
        for number, page in enumerate(pages, 1):
            if len(pages) > 1:
                asm.page(number)
            for para in re.split(r"\n[ \t\u3000]*\n", page):
                asm.block("paragraph", para)
        return asm.done()


# ----------------------------------------------------------------------------- markdown

_ATX = re.compile(r"^ {0,3}(#{1,6})(?:[ \t]+(.*?))?(?:[ \t]+#+)?[ \t]*$")
_SETEXT = re.compile(r"^ {0,3}(=+|-+)[ \t]*$")
_LIST = re.compile(r"^[ \t]*(?:[-*+]|\d{1,9}[.)])[ \t]+\S")
_FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})")
_RULE = re.compile(r"^ {0,3}([-*_])(?:[ \t]*\1){2,}[ \t]*$")
_TABLE_SEP = re.compile(r"^[ \t]*\|?[ \t]*:?-{1,}:?[ \t]*(\|[ \t]*:?-{1,}:?[ \t]*)*\|?[ \t]*$")
_CELL_SPLIT = re.compile(r"(?<!\\)\|")


def _plain(value: object) -> object:
    """YAML values made JSON-safe: dates as ISO strings, keys as strings."""
    if isinstance(value, (_dt.date, _dt.datetime)):
        return value.isoformat()
    if isinstance(value, Mapping):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    return value


def split_front_matter(text: str, asm: TextAssembler) -> tuple[dict[str, object], str, str]:
    """(metadata, kept, body) of a Markdown text. A front matter that is not a YAML mapping is
    returned as ``kept`` (its lines without the ``---`` fences, to be read as one paragraph, not
    as Markdown) with a ``front_matter_invalid`` warning."""
    lines = text.split("\n")
    if lines[0].rstrip() != "---":
        return {}, "", text
    end = next((i for i in range(1, len(lines)) if lines[i].rstrip() in ("---", "...")), None)
    if end is None:
        return {}, "", text
    import yaml

    raw = "\n".join(lines[1:end])
    body = "\n".join(lines[end + 1:])
    try:
        data = yaml.safe_load(raw) if raw.strip() else {}
    except yaml.YAMLError as exc:
        where = getattr(exc, "problem_mark", None)
        line = f" (line {where.line + 2})" if where is not None else ""
        asm.warn("front_matter_invalid", f"the front matter is not valid YAML{line}: "
                 f"{getattr(exc, 'problem', None) or exc}; it is kept as text and no metadata is read from it")
        return {}, raw, body
    if not isinstance(data, Mapping):
        asm.warn("front_matter_invalid", f"the front matter is a YAML {type(data).__name__}, not a mapping of "
                 "keys to values; it is kept as text")
        return {}, raw, body
    meta = _plain(data)
    assert isinstance(meta, dict)
    return meta, "", body


def _cells(line: str) -> list[str]:
    s = line.strip()
    if s.startswith("|"):
        s = s[1:]
    if s.endswith("|") and not s.endswith("\\|"):
        s = s[:-1]
    return [c.strip().replace("\\|", "|") for c in _CELL_SPLIT.split(s)]


class MarkdownLoader:
    """A ``.md`` file: front matter to metadata, headings, lists, tables and paragraphs."""

    format: Format = "markdown"

    def extract(self, data: bytes, name: str) -> Extracted:
        asm = TextAssembler(self.format)
        meta, kept, body = split_front_matter(decode_text(data, name, asm), asm)
        if kept:
            asm.block("paragraph", kept)
        first_heading = self._blocks(body.split("\n"), asm)
        title = meta.get("title")
        return asm.done(title=str(title) if isinstance(title, (str, int, float)) and str(title).strip()
                        else first_heading, metadata=meta)

    @staticmethod
    def _blocks(lines: list[str], asm: TextAssembler) -> str:
        """Feed the blocks of ``lines`` to ``asm``; returns the first heading's text."""
        para: list[str] = []
        first = ""
        item: list[str] = []

        def flush() -> None:
            if para:
                asm.block("paragraph", "\n".join(para))
                para.clear()
            if item:
                asm.block("list_item", " ".join(item))
                item.clear()

        def heading(level: int, text: str) -> None:
            nonlocal first
            flush()
            if asm.block("heading", text, level) is not None and not first:
                first = " ".join(text.split())

        i, n = 0, len(lines)
        while i < n:
            line = lines[i]
            stripped = line.strip()
            fence = _FENCE.match(line)
            if not stripped:
                flush()
            elif fence:
                flush()
                mark = fence.group(1)
                j = i + 1
                while j < n and not lines[j].strip().startswith(mark[0] * len(mark)):
                    j += 1
                asm.block("paragraph", "\n".join(lines[i:j + 1]))  # kept as written, fences included
                i = j
            elif (m := _ATX.match(line)) is not None:
                heading(len(m.group(1)), m.group(2) or "")
            elif para and not item and _SETEXT.match(line) and not _LIST.match(para[-1]):
                text = para.pop()
                heading(1 if line.strip()[0] == "=" else 2, text)
            elif _RULE.match(line):
                flush()
            elif "|" in line and i + 1 < n and "|" in lines[i + 1] and _TABLE_SEP.match(lines[i + 1]):
                flush()
                rows = [_cells(line)]
                j = i + 2
                while j < n and lines[j].strip() and "|" in lines[j]:
                    rows.append(_cells(lines[j]))
                    j += 1
                asm.table(rows)
                i = j - 1
            elif _LIST.match(line):
                flush()
                item.append(stripped)
            elif item:
                item.append(stripped)  # a continuation line of the list item
            else:
                para.append(line)
            i += 1
        flush()
        return first
