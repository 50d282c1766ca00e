"""How well the PDF and DOCX loaders read real Korean statutes and regulations.

    .venv/bin/python data/dev/real-files/check_pdf_docx.py [FOLDER ...] [--json OUT.json] [--limit N]

FOLDER defaults to /work/realfiles/pdf and /work/realfiles/docx (the files are not in git;
SOURCES below says where each folder came from and how to get it back). Every ``*.pdf`` and
``*.docx`` under a folder is read through :func:`rag.documents.files.read_file` (format
detection, the loader, the plausibility checks) and compared with a reference extraction:

- PDF: ``pdftotext`` from Debian's poppler-utils (``apt-get install poppler-utils``), run once
  per file in its default reading-order mode; its pages are split at the form feeds. poppler is a
  measurement reference only, never a dependency of the project (the loader reads PDFs with
  PDFium). The comparison is page by page: page N of the reference against the span of page N
  in our text (``Extracted.pages``);
- DOCX: the text of every ``w:t`` in ``word/document.xml`` in document order, a line per ``w:p``,
  read with the stdlib (zipfile + xml.etree). Deleted revisions (``w:delText``) and field codes
  (``w:instrText``) are not ``w:t`` so neither side has them; the reference lacks the automatic
  numbering Word draws (``제3조``, ``1.``, ``①`` from ``numPr``) that our loader writes out, and has
  the table-of-contents entries our loader leaves out;
- both sides are normalised the same way: the ``#`` heading marks and ``|`` cell separators our
  assembler adds removed, NFC, and every whitespace character deleted (so line breaks,
  re-joined hard wraps and cell joins do not count; a glued or split word does not count either);
- ``ratio``: difflib ``SequenceMatcher`` (autojunk off) ``2·M / (ref + ours)`` summed over the
  compared pieces (M = matching characters); ``covered``: ``M / ref``, the share of reference
  characters found in order. Pieces keep the quadratic matcher fast: PDF pages; for a DOCX the
  reference paragraphs in groups of at least 8,000 characters, each group matched against the
  stretch of our text from where the group's first 48 characters occur (the occurrence nearest
  to where the group should start: phrases like ``<개정 2010. 12. 27.>`` repeat) to where the
  next group's occur (a group whose start is not found is merged into the one before);
- our PDF loader removes running headers and footers and page numbers on purpose (a
  ``header_removed`` warning), which the reference keeps: ``법제처 3 국가법령정보센터`` plus the
  statute's name on every page of a law.go.kr print is 20-30 characters a page, a few percent of
  ``ratio``. ``ratio_clean`` / ``covered_clean`` compare against the reference without the lines
  among the first or last three of a page that repeat there (digits ignored) on at least half of
  the pages (files of 3 pages or more), which is what our loader should have removed (a body
  line such as ``[전문개정 2008. 6. 13.]`` repeats too, hence the edge limit);
  ``repeating_lines`` counts the lines so dropped;
- a paragraph that runs over a page break is joined by our loader and lies in the page where it
  starts, so a few characters per page move to the previous page: that costs both page ratios a
  little and is not an error;
- ``worst_pages``: the three pages with the lowest clean ratio, to read the diff of;
- a file fails when the loader raised, when the text holds control characters, or when
  ``ratio_clean`` (PDF) / ``ratio`` (DOCX) is under 0.9.

Prints one line per file and a summary per folder; ``--json`` writes the rows.
"""
from __future__ import annotations

import argparse
import difflib
import json
import re
import subprocess
import time
import unicodedata
import zipfile
from collections import Counter
from pathlib import Path
from xml.etree import ElementTree


from check_hwp import files_by_folder  # (the same walk over a folder of files)
from rag.documents.assemble import control_free
from rag.documents.files import read_file
from rag.errors import FileExtractionError

DEFAULTS = [Path("/work/realfiles/pdf"), Path("/work/realfiles/docx")]
PASS_RATIO = 0.9
BLOCK = 8000  # DOCX: reference characters per compared group, at least
ANCHOR = 48
EDGE = 3  # a running header / footer is among the first or last EDGE lines of a page
# folder -> (repository, commit:path, what the files are, licence status). Get a folder back with
# the `fetch` tool and `git --git-dir=<mirror> show <commit>:<path> > file`.
SOURCES = {
    "pdf/lawgo-sajacaros": ("sajacaros/lang_test", "7246f0da:data/*.pdf",
                            "17 statutes, decrees and rules (개인정보 보호법, 신용정보법, 정보통신망법, 공공데이터법, "
                            "데이터기반행정법, 데이터산업법 with 시행령/시행규칙) as printed by law.go.kr",
                            "statutes: public domain (저작권법 제7조); not committed"),
    "pdf/lawgo-pjg9606": ("pjg9606/rag_demo", "2eacaa00 and 35831187:data/*.pdf",
                          "6 statutes from law.go.kr (개인정보 보호법 again, another download; 건축법, 근로기준법, 민법, "
                          "산업안전보건법, 형법)", "statutes: public domain (저작권법 제7조); not committed"),
    "pdf/duksung": ("kbannie/RAG_DS_Chatbot", "239e353a:datasets/pdf/*.pdf",
                    "29 덕성여자대학교 regulations (학칙, 규정, 내규) printed from the university's regulation system",
                    "a private university's regulations: not public domain, no licence; not committed"),
    "docx/inflearn-tax": ("shawnchoi8/llm-application-rag",
                          "7b24d97d:tax.docx, 9b581ce4:tax_with_markdown.docx, c8031a48:tax_with_table.docx",
                          "소득세법 (2026 text) saved as DOCX from law.go.kr, then hand-edited for a course: "
                          "the markdown / table variants",
                          "statute: public domain (저작권법 제7조); not committed"),
    "docx/inflearn-law": ("KyochonHoney/langchain-inflearn", "bf793024:law.docx",
                          "소득세법 (2025 text) saved as DOCX from law.go.kr",
                          "statute: public domain (저작권법 제7조); not committed"),
}

_DROP = re.compile(r"[|]|^#{1,6} |\*\*", re.MULTILINE)
_W = "{http://schemas.openxmlformats.org/wordprocessingml/2006/main}"


def normalise(text: str) -> str:
    text = unicodedata.normalize("NFC", _DROP.sub("", text))
    return "".join(text.split())


def pdf_reference(path: Path) -> list[str]:
    """The pages pdftotext reads, in file order."""
    out = subprocess.run(["pdftotext", "-enc", "UTF-8", str(path), "-"], capture_output=True, timeout=300)
    if out.returncode != 0:
        raise RuntimeError(f"pdftotext: {out.stderr.decode('utf-8', 'replace').strip()[:200]}")
    pages = out.stdout.decode("utf-8", "replace").split("\f")
    return pages[:-1] if pages and not pages[-1].strip() else pages


def docx_reference(path: Path) -> list[str]:
    """The body paragraphs of a DOCX: every ``w:t`` of each ``w:p`` (tables' too), in order."""
    with zipfile.ZipFile(path) as zf:
        root = ElementTree.fromstring(zf.read("word/document.xml"))
    paras: list[str] = []
    for p in root.iter(f"{_W}p"):
        # a w:p nested in a text box inside this w:p is visited on its own too: take only the
        # runs that belong to this paragraph, not to a nested one
        text = "".join(t.text or "" for t in _own_texts(p))
        if text:
            paras.append(text)
    return paras


def _own_texts(p: ElementTree.Element):
    stack = list(p)
    while stack:
        el = stack.pop(0)
        if el.tag == f"{_W}p":
            continue
        if el.tag == f"{_W}t":
            yield el
        stack[0:0] = list(el)


def _key(line: str) -> str:
    return re.sub(r"\d+", "0", "".join(line.split()))


def repeating(pages: list[str]) -> set[str]:
    """Line keys (whitespace removed, digits as 0) found on at least half of the pages."""
    if len(pages) < 3:
        return set()
    seen: Counter[str] = Counter()
    for page in pages:
        lines = [ln for ln in page.splitlines() if ln.strip()]
        seen.update({_key(ln) for ln in lines[:EDGE] + lines[-EDGE:]})
    return {k for k, n in seen.items() if n >= max(3, len(pages) / 2)}


def matched(a: str, b: str) -> int:
    if not a or not b:
        return 0
    return sum(m.size for m in difflib.SequenceMatcher(None, a, b, autojunk=False).get_matching_blocks())


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
    """Matches of the reference ``parts`` (normalised, in order) against ``got`` in groups: (M,
    ref chars, got chars)."""
    groups: list[str] = []
    cur = ""
    for p in parts:
        cur += p
        if len(cur) >= BLOCK:
            groups.append(cur)
            cur = ""
    if cur:
        groups.append(cur)
    pieces: list[list] = []  # [ref text, start in got]
    for g in groups:
        if not pieces:
            pieces.append([g, 0])
            continue
        pos = _nearest(got, g[:ANCHOR], pieces[-1][1] + 1, pieces[-1][1] + len(pieces[-1][0]))
        if pos < 0:
            pieces[-1][0] += g
            continue
        pieces.append([g, pos])
    m = 0
    for i, (ref, start) in enumerate(pieces):
        end = pieces[i + 1][1] if i + 1 < len(pieces) else len(got)
        m += matched(ref, got[start:end])
    return m, sum(len(g) for g in groups), len(got)


def _warnings(ex) -> dict[str, int]:
    return dict(Counter(w.code for w in ex.warnings))


def check_pdf(path: Path, row: dict) -> None:
    t0 = time.perf_counter()
    ex = read_file(path).extracted
    row["seconds"] = round(time.perf_counter() - t0, 3)
    ref_pages = pdf_reference(path)
    rep = repeating(ref_pages)
    ours = {p.number: ex.text[p.start:p.end] for p in ex.pages}
    tot = {"m": 0, "a": 0, "b": 0, "mc": 0, "ac": 0}
    per_page = []
    dropped = 0
    for n, page in enumerate(ref_pages, 1):
        ref = normalise(page)
        lines = [ln for ln in page.splitlines() if ln.strip()]
        edge = set(range(EDGE)) | set(range(len(lines) - EDGE, len(lines)))
        clean_lines = [ln for i, ln in enumerate(lines) if i not in edge or _key(ln) not in rep]
        dropped += len(lines) - len(clean_lines)
        clean = normalise("\n".join(clean_lines))
        got = normalise(ours.get(n, ""))
        m, mc = matched(ref, got), matched(clean, got)
        tot["m"] += m
        tot["a"] += len(ref)
        tot["b"] += len(got)
        tot["mc"] += mc
        tot["ac"] += len(clean)
        if clean or got:
            per_page.append((round(2 * mc / (len(clean) + len(got)), 4), n))
    # pages of ours that pdftotext did not have (should not happen) still count as extra text
    extra = sum(len(normalise(t)) for n, t in ours.items() if n > len(ref_pages))
    tot["b"] += extra
    a, b, ac = tot["a"], tot["b"], tot["ac"]
    row.update(
        chars=len(ex.text), chars_norm=b, ref_chars_norm=a, pages=len(ex.pages), ref_pages=len(ref_pages),
        ratio=round(2 * tot["m"] / (a + b), 4) if a + b else float("nan"),
        covered=round(tot["m"] / a, 4) if a else float("nan"),
        ratio_clean=round(2 * tot["mc"] / (ac + b), 4) if ac + b else float("nan"),
        covered_clean=round(tot["mc"] / ac, 4) if ac else float("nan"),
        repeating_lines=dropped, worst_pages=sorted(per_page)[:3],
        warnings=_warnings(ex), control_free=control_free(ex.text), replacement_chars=ex.text.count("\ufffd"),
        title=ex.title, producer=str(ex.metadata.get("producer", "")), creator=str(ex.metadata.get("creator", "")))


def check_docx(path: Path, row: dict) -> None:
    t0 = time.perf_counter()
    ex = read_file(path).extracted
    row["seconds"] = round(time.perf_counter() - t0, 3)
    parts = [normalise(p) for p in docx_reference(path)]
    got = normalise(ex.text)
    m, a, b = aligned(parts, got)
    kinds = [bl.kind for bl in ex.blocks]
    row.update(chars=len(ex.text), chars_norm=b, ref_chars_norm=a, pages=len(ex.pages),
               ratio=round(2 * m / (a + b), 4) if a + b else float("nan"),
               covered=round(m / a, 4) if a else float("nan"),
               paragraphs=kinds.count("paragraph"), headings=kinds.count("heading"),
               list_items=kinds.count("list_item"), table_rows=kinds.count("table_row"),
               warnings=_warnings(ex), control_free=control_free(ex.text),
               replacement_chars=ex.text.count("\ufffd"), title=ex.title)


def check(path: Path) -> dict:
    ext = path.suffix.lower().lstrip(".")
    row: dict = {"file": str(path), "ext": ext}
    try:
        (check_pdf if ext == "pdf" else check_docx)(path, row)
    except FileExtractionError as exc:
        row.update(error=f"{type(exc).__name__}({exc.reason})", message=str(exc)[:200])
    except Exception as exc:  # noqa: BLE001 - a reference that cannot be made is reported, not fatal
        row.update(error=f"{type(exc).__name__}: {str(exc)[:200]}")
    return row


def score(row: dict) -> float:
    return row["ratio_clean"] if row["ext"] == "pdf" else row["ratio"]


def failed(row: dict) -> bool:
    if "error" in row:
        return True
    s = score(row)
    return (s == s and s < PASS_RATIO) or not row["control_free"]


def describe(r: dict) -> str:
    if "error" in r:
        return r["error"]
    head = f"ratio {r['ratio']:.3f} covered {r['covered']:.3f}"
    if r["ext"] == "pdf":
        head += (f" clean {r['ratio_clean']:.3f}/{r['covered_clean']:.3f} pages {r['pages']}/{r['ref_pages']}"
                 f" worst {[p for _, p in r['worst_pages']]}")
    return f"{head} chars {r['chars_norm']}/{r['ref_chars_norm']} warn {r['warnings']}"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("folders", nargs="*", type=Path, default=DEFAULTS)
    ap.add_argument("--json", type=Path)
    ap.add_argument("--limit", type=int, default=0, help="at most N files per folder (0: all)")
    args = ap.parse_args(argv)
    rows: list[dict] = []
    for top in args.folders:
        for folder, files in files_by_folder(top, (".pdf", ".docx"), args.limit).items():
            part = []
            for p in files:
                r = check(p)
                r["folder"] = f"{top.name}/{folder.relative_to(top).as_posix()}" if folder != top else top.name
                print(f"{'FAIL' if failed(r) else 'ok  '} {p.name[:56]:56s} {describe(r)}", flush=True)
                part.append(r)
            rows += part
            scored = [r for r in part if "error" not in r]
            vals = [score(r) for r in scored]
            print(f"== {part[0]['folder']}: {len(part)} files, {sum(map(failed, part))} failed, "
                  f"{len(part) - len(scored)} raised, mean ratio "
                  f"{(sum(r['ratio'] for r in scored) / len(scored)) if scored else float('nan'):.4f}, "
                  f"mean score {(sum(vals) / len(vals)) if vals else float('nan'):.4f}, "
                  f"min score {min(vals) if vals else float('nan'):.4f}\n", flush=True)
    if args.json:
        args.json.write_text(json.dumps(rows, ensure_ascii=False, indent=1), encoding="utf-8")
    return 1 if any(map(failed, rows)) else 0


if __name__ == "__main__":
    raise SystemExit(main())
