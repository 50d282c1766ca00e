"""How well the loaders read real Korean government and regulation files (HWP, HWPX, PDF, DOCX).

The files are not in git (most are not clearly public domain): ``--files`` (default
``/work/realfiles``) holds them in the folders of :data:`SOURCES`, which says where each came from
and how to get it back. Every ``*.hwp``, ``*.hwpx``, ``*.pdf`` and ``*.docx`` under it is read with
:func:`rag.documents.read_file` (detection, the loader, the checks) and compared with a reference
text. Both sides are normalised the same way: our ``#`` heading marks, ``**`` and the ``|`` cell
separators removed, NFC, every whitespace character deleted (line breaks, re-joined hard wraps, cell
joins and glued or split words do not count). ``ratio`` is difflib's ``SequenceMatcher`` ratio,
autojunk off. Per format:

- **hwp**, **hwpx**: the reference is the preview Hangul itself wrote into the file (HWP: the
  ``PrvText`` stream, UTF-16LE; HWPX: ``Preview/PrvText.txt``): the first ~1,000 characters of the
  body as Hangul renders it, table cells as ``<cell>`` (``<`` ``>`` are dropped on both sides, the
  statutes' ``<개정 …>`` marks too). ``ratio`` is the preview against as many leading characters
  of ours; ``covered`` the share of preview characters found, in order, in the first 1.5 × that
  many. The whole text is checked for structure too: ``articles`` counts the ``제N조`` headings at
  line starts, ``article_gaps`` the numbers missing between the first and the last (statute-shaped
  files number without gaps, ``제N조 삭제`` included), ``out_of_order`` those lower than the one
  before (a second regulation or an appendix restarting at 제1조 counts too). A file fails when
  ``ratio`` < 0.9, the loader raised (an empty file whose preview is empty too is fine: Hangul saw
  no text either), or the text holds control characters;
- **pdf**: the reference is ``pdftotext`` (Debian's poppler-utils, default reading order; a
  measurement reference only, never a dependency: the loader reads PDFs with PDFium), page by page:
  page N of the reference against page N of ours (``Extracted.pages``); ``ratio`` =
  ``2·M / (ref + ours)`` summed over pages, ``covered`` = ``M / ref``. Our loader removes running
  headers, footers and page numbers on purpose (``header_removed``); ``ratio_clean`` /
  ``covered_clean`` compare against the reference without the lines among the first or last three
  of a page that repeat there (digits ignored) on at least half of the pages (files of 3 pages or
  more), ``repeating_lines`` counts them. A paragraph running over a page break lies in the page
  where it starts, which costs a little and is not an error. ``worst_pages``: the three pages with
  the lowest clean ratio. A file fails when the loader or the reference raised, the text holds
  control characters, or ``ratio_clean`` < 0.9;
- **docx**: the reference is the text of every ``w:t`` of ``word/document.xml`` in document order,
  a line per ``w:p`` (stdlib zipfile and ElementTree): no deleted revisions or field codes (neither
  side has them), no automatic numbering (which our loader writes out), table-of-contents entries
  (which our loader leaves out). It is matched in groups of at least 8,000 reference characters,
  each against the stretch of our text from where its first 48 characters occur (the occurrence
  nearest to where the group should start) to where the next group's do. A file fails when the
  loader raised, the text holds control characters, or ``ratio`` < 0.9.

The result holds a row per file (``files``) and per folder the counts and mean / min ratio and score
(``ratio_clean`` for a PDF, ``ratio`` otherwise). Formerly ``data/dev/real-files/check_hwp.py`` and
``check_pdf_docx.py``.
"""
from __future__ import annotations

import difflib
import io
import logging
import math
import re
import shutil
import statistics
import subprocess
import time
import unicodedata
import zipfile
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Iterator
from xml.etree import ElementTree

from rag.bench.file_fidelity import ratio
from rag.bench.measurement import Measurement, Outcome
from rag.lang.ko.statute import ARTICLE_LABEL

log = logging.getLogger(__name__)

FORMATS = ("hwp", "hwpx", "pdf", "docx")
PASS_RATIO = 0.9
BLOCK = 8000  # DOCX: reference characters per compared group, at least
ANCHOR = 48  # DOCX: the characters of a group's start looked for in our text
EDGE = 3  # PDF: a running header / footer is among the first or last EDGE lines of a page

# Folder under --files -> (repository, commit:path, what the files are, licence status). Get a
# folder back with the `fetch` tool and `git --git-dir=<mirror> show <commit>:<path> > file`.
SOURCES: dict[str, tuple[str, str, str, str]] = {
    "hwpxlib": ("neolord0/hwpxlib", "HEAD:testFile/**",
                "the library's test files: legislative notices of Gangnam-gu and Ulsan Nam-gu, a public-data "
                "provision standard, a Gangbuk-gu request for proposals, a culture ministry press release, and "
                "synthetic feature samples",
                "repo Apache-2.0; the notices are public domain (Copyright Act art. 7), the press release and the "
                "request for proposals government works of unclear licence (KOGL at best); not committed"),
    "hwplib": ("neolord0/hwplib", "da38fdf4:test/error4/** and sample_hwp/**",
               "National Tax Service rulings (document number / title / summary / reply in one table)",
               "repo Apache-2.0; rulings of a government agency, public-domain status not certain; not committed"),
    "duksung": ("kbannie/RAG_DS_Chatbot", "HEAD:datasets/**",
                "Duksung Women's University's rule book: 249 regulations (HWP) with chapter / article / paragraph / "
                "item structure",
                "a private university's regulations: not public domain, no licence; not committed"),
    "pdf/lawgo-sajacaros": ("sajacaros/lang_test", "7246f0da:data/*.pdf",
                            "17 statutes, decrees and rules (the Personal Information Protection Act, the Credit "
                            "Information Act, the Network Act, the Public Data Act, the Data-Based Administration "
                            "Act, the Data Industry Act, with their decrees and rules) as printed by law.go.kr",
                            "statutes: public domain (Copyright Act art. 7); not committed"),
    "pdf/lawgo-pjg9606": ("pjg9606/rag_demo", "2eacaa00 and 35831187:data/*.pdf",
                          "6 statutes from law.go.kr (the Personal Information Protection Act again, another "
                          "download; the Building Act, the Labor Standards Act, the Civil Act, the Occupational "
                          "Safety and Health Act, the Criminal Act)",
                          "statutes: public domain (Copyright Act art. 7); not committed"),
    "pdf/duksung": ("kbannie/RAG_DS_Chatbot", "239e353a:datasets/pdf/*.pdf",
                    "29 Duksung Women's University regulations (school rules, regulations, bylaws) printed from the "
                    "university's regulation system",
                    "a private university's regulations: not public domain, no licence; not committed"),
    "docx/inflearn-tax": ("shawnchoi8/llm-application-rag",
                          "7b24d97d:tax.docx, 9b581ce4:tax_with_markdown.docx, c8031a48:tax_with_table.docx",
                          "the Income Tax Act (2026 text) saved as DOCX from law.go.kr, then hand-edited for a "
                          "course: the markdown / table variants",
                          "statute: public domain (Copyright Act art. 7); not committed"),
    "docx/inflearn-law": ("KyochonHoney/langchain-inflearn", "bf793024:law.docx",
                          "the Income Tax Act (2025 text) saved as DOCX from law.go.kr",
                          "statute: public domain (Copyright Act art. 7); not committed"),
}

_OUR_MARKS = re.compile(r"[|]|^#{1,6} |\*\*", re.MULTILINE)  # cell separators, heading and bold marks
_PREVIEW_MARKS = re.compile(r"[<>|]|^#{1,6} |\*\*", re.MULTILINE)  # and the preview's <cell> marks
_ARTICLE = re.compile(r"^(?:#{1,6} )?" + ARTICLE_LABEL, re.MULTILINE)  # group 2: the sub-number of 제N조의M
_W = "{http://schemas.openxmlformats.org/wordprocessingml/2006/main}"


@dataclass(frozen=True)
class Options:
    files: str = field(default="/work/realfiles", metadata={"help": "the folder of real files (not in git)"})
    formats: tuple[str, ...] = field(default=FORMATS, metadata={"help": "which of " + ", ".join(FORMATS)})
    limit: int = field(default=0, metadata={"help": "at most N files per folder (0: all)"})

    def __post_init__(self) -> None:
        unknown = sorted(set(self.formats) - set(FORMATS))
        if unknown:
            raise ValueError(f"unknown format(s) {', '.join(unknown)}; known: {', '.join(FORMATS)}")


# --------------------------------------------------------------------------- shared
def squeezed(text: str, preview: bool = False) -> str:
    """``text`` without our marks (and ``<`` ``>`` when compared with a Hangul preview), NFC, every
    whitespace character deleted."""
    drop = _PREVIEW_MARKS if preview else _OUR_MARKS
    return "".join(unicodedata.normalize("NFC", drop.sub("", text)).split())


def matched(a: str, b: str) -> int:
    """Characters of ``a`` matched, in order, in ``b`` (difflib, autojunk off)."""
    if not a or not b:
        return 0
    return sum(m.size for m in difflib.SequenceMatcher(None, a, b, autojunk=False).get_matching_blocks())


def files_by_folder(top: Path, suffixes: tuple[str, ...], limit: int = 0) -> dict[Path, list[Path]]:
    """The files under ``top`` with one of ``suffixes``, by the folder that holds them (sorted), at most
    ``limit`` per folder (0: all)."""
    groups: dict[Path, list[Path]] = {}
    for p in sorted(top.rglob("*")):
        if p.suffix.lower() in suffixes and p.is_file():
            groups.setdefault(p.parent, []).append(p)
    return {folder: files[:limit] if limit else files for folder, files in groups.items()}


def _warnings(ex: Any) -> dict[str, int]:
    return dict(Counter(w.code for w in ex.warnings))


def _read(path: Path, row: dict[str, Any]) -> Any:
    from rag.documents.files import read_file

    t0 = time.perf_counter()
    try:
        return read_file(path).extracted
    finally:
        row["seconds"] = round(time.perf_counter() - t0, 3)


# --------------------------------------------------------------------------- HWP and HWPX
def preview(path: Path) -> str:
    """The preview text Hangul stored in the file ('' when there is none)."""
    data = path.read_bytes()
    if data[:4] == b"PK\x03\x04":
        with zipfile.ZipFile(io.BytesIO(data)) as zf:
            name = {n.lower(): n for n in zf.namelist()}.get("preview/prvtext.txt")
            return zf.read(name).decode("utf-8", "replace") if name else ""
    import olefile

    with olefile.OleFileIO(io.BytesIO(data)) as ole:
        return ole.openstream("PrvText").read().decode("utf-16le", "replace") if ole.exists("PrvText") else ""


def articles(text: str) -> tuple[int, list[int], int]:
    """Article headings at line starts: how many, the numbers missing between the first and the
    last of the first run, and how many go backwards."""
    nums = [int(m.group(1)) for m in _ARTICLE.finditer(text) if m.group(2) is None]
    back = sum(1 for a, b in zip(nums, nums[1:]) if b < a)
    first_run = next((nums[:i + 1] for i, (a, b) in enumerate(zip(nums, nums[1:])) if b < a), nums)
    seen = set(first_run)
    gaps = [n for n in range(min(seen), max(seen) + 1) if n not in seen] if seen else []
    return len(nums), gaps, back


def compare_preview(ref: str, got: str) -> tuple[float, float]:
    """(ratio, covered) of a preview against the start of our text; NaN without a preview."""
    if not ref:
        return float("nan"), float("nan")
    return ratio(ref, got[:len(ref)]), matched(ref, got[:int(len(ref) * 1.5)]) / len(ref)


def check_hangul(path: Path, row: dict[str, Any]) -> None:
    from rag.documents.assemble import control_free

    try:
        ref = squeezed(preview(path), preview=True)
    except Exception as exc:  # noqa: BLE001 - a file whose preview cannot be read is still checked
        ref, row["preview_error"] = "", f"{type(exc).__name__}: {exc}"
    row["preview_chars"] = len(ref)
    ex = _read(path, row)
    r, covered = compare_preview(ref, squeezed(ex.text, preview=True))
    kinds = [b.kind for b in ex.blocks]
    n_art, gaps, back = articles(ex.text)
    row.update(format=ex.format, chars=len(ex.text), preview_chars=len(ref), ratio=round(r, 4),
               covered=round(covered, 4), paragraphs=kinds.count("paragraph"), headings=kinds.count("heading"),
               table_rows=kinds.count("table_row"), title=ex.title, file_title=ex.metadata.get("file_title", ""),
               warnings=[w.code for w in ex.warnings], control_free=control_free(ex.text),
               replacement_chars=ex.text.count("\ufffd"), articles=n_art, article_gaps=gaps, out_of_order=back)


# --------------------------------------------------------------------------- PDF
def pdf_reference(path: Path) -> list[str]:
    """The pages pdftotext reads, in file order."""
    out = subprocess.run(["pdftotext", "-enc", "UTF-8", str(path), "-"], capture_output=True, timeout=300)
    if out.returncode != 0:
        raise RuntimeError(f"pdftotext: {out.stderr.decode('utf-8', 'replace').strip()[:200]}")
    pages = out.stdout.decode("utf-8", "replace").split("\f")
    return pages[:-1] if pages and not pages[-1].strip() else pages


def _key(line: str) -> str:
    return re.sub(r"\d+", "0", "".join(line.split()))


def repeating(pages: list[str]) -> set[str]:
    """Line keys (whitespace removed, digits as 0) among the first or last EDGE lines of at least
    half of the pages (and 3), for files of 3 pages or more."""
    if len(pages) < 3:
        return set()
    seen: Counter[str] = Counter()
    for page in pages:
        lines = [ln for ln in page.splitlines() if ln.strip()]
        seen.update({_key(ln) for ln in lines[:EDGE] + lines[-EDGE:]})
    return {k for k, n in seen.items() if n >= max(3, len(pages) / 2)}


def without_repeating(page: str, rep: set[str]) -> tuple[str, int]:
    """The page without its edge lines that repeat, and how many were dropped."""
    lines = [ln for ln in page.splitlines() if ln.strip()]
    edge = set(range(EDGE)) | set(range(len(lines) - EDGE, len(lines)))
    kept = [ln for i, ln in enumerate(lines) if i not in edge or _key(ln) not in rep]
    return "\n".join(kept), len(lines) - len(kept)


def _share(m: int, a: int, b: int) -> float:
    return round(2 * m / (a + b), 4) if a + b else float("nan")


def check_pdf(path: Path, row: dict[str, Any]) -> None:
    from rag.documents.assemble import control_free

    ex = _read(path, row)
    ref_pages = pdf_reference(path)
    rep = repeating(ref_pages)
    ours = {p.number: ex.text[p.start:p.end] for p in ex.pages}
    m = a = b = mc = ac = dropped = 0
    per_page = []
    for n, page in enumerate(ref_pages, 1):
        ref, got = squeezed(page), squeezed(ours.get(n, ""))
        clean_text, k = without_repeating(page, rep)
        clean = squeezed(clean_text)
        mc_page = matched(clean, got)
        m, a, b, mc, ac = m + matched(ref, got), a + len(ref), b + len(got), mc + mc_page, ac + len(clean)
        dropped += k
        if clean or got:
            per_page.append((_share(mc_page, len(clean), len(got)), n))
    # our pages beyond pdftotext's (should not happen) still count as extra text
    b += sum(len(squeezed(t)) for n, t in ours.items() if n > len(ref_pages))
    row.update(
        chars=len(ex.text), chars_norm=b, ref_chars_norm=a, pages=len(ex.pages), ref_pages=len(ref_pages),
        ratio=_share(m, a, b), covered=round(m / a, 4) if a else float("nan"), ratio_clean=_share(mc, ac, b),
        covered_clean=round(mc / ac, 4) if ac else float("nan"), repeating_lines=dropped,
        worst_pages=sorted(per_page)[:3], warnings=_warnings(ex), control_free=control_free(ex.text),
        replacement_chars=ex.text.count("\ufffd"), title=ex.title, producer=str(ex.metadata.get("producer", "")),
        creator=str(ex.metadata.get("creator", "")))


# --------------------------------------------------------------------------- DOCX
def docx_reference(path: Path) -> list[str]:
    """The body paragraphs of a DOCX: every ``w:t`` of each ``w:p`` (tables' too), in order."""
    with zipfile.ZipFile(path) as zf:
        root = ElementTree.fromstring(zf.read("word/document.xml"))
    paras = ["".join(t.text or "" for t in _own_texts(p)) for p in root.iter(f"{_W}p")]
    return [p for p in paras if p]


def _own_texts(p: ElementTree.Element) -> Iterator[ElementTree.Element]:
    """The ``w:t`` of this paragraph, not of a paragraph nested in it (a text box), which is visited
    on its own."""
    stack = list(p)
    while stack:
        el = stack.pop(0)
        if el.tag == f"{_W}p":
            continue
        if el.tag == f"{_W}t":
            yield el
        stack[0:0] = list(el)


def _nearest(text: str, anchor: str, lo: int, expected: int) -> int:
    """The occurrence of ``anchor`` at or after ``lo`` nearest to ``expected`` (-1: none): a
    phrase that repeats (``<개정 2010. 12. 27.>``) must not cut a group short."""
    best, pos = -1, text.find(anchor, lo)
    while pos >= 0:
        if best < 0 or abs(pos - expected) < abs(best - expected):
            best = pos
        if pos > expected:
            break
        pos = text.find(anchor, pos + 1)
    return best


def aligned(parts: list[str], got: str) -> tuple[int, int, int]:
    """Matches of the reference ``parts`` (normalised, in order) against ``got`` in groups of at
    least BLOCK characters: (M, reference characters, our characters)."""
    groups: list[str] = []
    cur = ""
    for p in parts:
        cur += p
        if len(cur) >= BLOCK:
            groups, cur = groups + [cur], ""
    groups += [cur] if cur else []
    pieces: list[list[Any]] = []  # [reference text, start in got]
    for g in groups:
        pos = _nearest(got, g[:ANCHOR], pieces[-1][1] + 1, pieces[-1][1] + len(pieces[-1][0])) if pieces else 0
        if pos < 0:
            pieces[-1][0] += g
        else:
            pieces.append([g, pos])
    ends = [start for _, start in pieces[1:]] + [len(got)]
    m = sum(matched(ref, got[start:end]) for (ref, start), end in zip(pieces, ends))
    return m, sum(len(g) for g in groups), len(got)


def check_docx(path: Path, row: dict[str, Any]) -> None:
    from rag.documents.assemble import control_free

    ex = _read(path, row)
    m, a, b = aligned([squeezed(p) for p in docx_reference(path)], squeezed(ex.text))
    kinds = [bl.kind for bl in ex.blocks]
    row.update(chars=len(ex.text), chars_norm=b, ref_chars_norm=a, pages=len(ex.pages), ratio=_share(m, a, b),
               covered=round(m / a, 4) if a else float("nan"), paragraphs=kinds.count("paragraph"),
               headings=kinds.count("heading"), list_items=kinds.count("list_item"),
               table_rows=kinds.count("table_row"), warnings=_warnings(ex), control_free=control_free(ex.text),
               replacement_chars=ex.text.count("\ufffd"), title=ex.title)


# --------------------------------------------------------------------------- rows and folders
CHECKS = {"hwp": check_hangul, "hwpx": check_hangul, "pdf": check_pdf, "docx": check_docx}


def check(path: Path, folder: str) -> dict[str, Any]:
    """The row of one file; a loader that raised (or a reference that could not be made) is an ``error``."""
    from rag.errors import FileExtractionError

    ext = path.suffix.lower().lstrip(".")
    row: dict[str, Any] = {"file": str(path), "ext": ext}
    try:
        CHECKS[ext](path, row)
    except FileExtractionError as exc:
        row.update(error=f"{type(exc).__name__}({exc.reason})", message=str(exc)[:200])
    except Exception as exc:  # noqa: BLE001 - a reference that cannot be made is reported, not fatal
        log.warning("%s: %s", path, exc)
        row.update(error=f"{type(exc).__name__}: {str(exc)[:200]}")
    row["folder"] = folder
    return row


def score(row: dict[str, Any]) -> float:
    """What a file passes or fails on: ``ratio_clean`` for a PDF, ``ratio`` otherwise."""
    return float(row["ratio_clean"] if row["ext"] == "pdf" else row["ratio"])


def failed(row: dict[str, Any]) -> bool:
    if "error" in row:  # an empty HWP / HWPX whose preview is empty too: Hangul saw no text either
        hangul_empty = row["ext"] in ("hwp", "hwpx") and row["error"].startswith("EmptyFileError")
        return not (hangul_empty and row.get("preview_chars") == 0)
    s = score(row)
    return (not math.isnan(s) and s < PASS_RATIO) or not row["control_free"]


def _stat(values: list[float], fn: Callable[[list[float]], float]) -> float | None:
    return round(fn(values), 4) if values else None


def folder_summary(rows: list[dict[str, Any]]) -> dict[str, Any]:
    """Counts, and mean / min of ratio and score over the files with a reference (a preview, a page)."""
    scored = [r for r in rows if "error" not in r and not math.isnan(score(r))]
    ratios, scores = [r["ratio"] for r in scored], [score(r) for r in scored]
    return {"files": len(rows), "failed": sum(map(failed, rows)), "raised": sum("error" in r for r in rows),
            "with_reference": len(scored), "mean_ratio": _stat(ratios, statistics.fmean),
            "min_ratio": _stat(ratios, min), "mean_covered": _stat([r["covered"] for r in scored], statistics.fmean),
            "mean_score": _stat(scores, statistics.fmean), "min_score": _stat(scores, min),
            "failed_files": [Path(r["file"]).name for r in rows if failed(r)]}


def _two(a: float | None, b: float | None) -> str:
    return f"{a:.4f}/{b:.4f}" if a is not None and b is not None else "-"


def table(summary: dict[str, dict[str, Any]]) -> str:
    lines = [f"{'folder':<28}{'files':>6}{'failed':>7}{'raised':>7}{'scored':>7}{'ratio mean/min':>16}"
             f"{'score mean/min':>16}"]
    for name, s in summary.items():
        lines.append(f"{name:<28}{s['files']:>6}{s['failed']:>7}{s['raised']:>7}{s['with_reference']:>7}"
                     f"{_two(s['mean_ratio'], s['min_ratio']):>16}{_two(s['mean_score'], s['min_score']):>16}")
    return "\n".join(lines)


def run(o: Options) -> Outcome:
    top = Path(o.files)
    rows: list[dict[str, Any]] = []
    summary: dict[str, dict[str, Any]] = {}
    for folder, files in files_by_folder(top, tuple(f".{f}" for f in o.formats), o.limit).items():
        name = folder.relative_to(top).as_posix() if folder != top else "."
        part = [check(p, name) for p in files]
        log.info("%s: %d files, %d failed", name, len(part), sum(map(failed, part)))
        summary[name] = folder_summary(part)
        rows += part
    return Outcome({"summary": summary, "files": rows}, table(summary))


def _requires(o: Options) -> list[str]:
    top = Path(o.files)
    if not top.is_dir():
        return [f"{top} not found (real files are not in git: rag.bench.real_files.SOURCES says where each folder "
                "came from; --files DIR)"]
    if "pdf" in o.formats and shutil.which("pdftotext") is None and any(top.rglob("*.pdf")):
        return ["pdftotext not found (the PDF reference: apt-get install poppler-utils), or leave pdf out of --formats"]
    return []


MEASUREMENT = Measurement("real-files", "how well the HWP, HWPX, PDF and DOCX loaders read real Korean files "
                          "(not in git, --files DIR) against Hangul's preview, pdftotext and the DOCX XML",
                          Options, run, _requires)
