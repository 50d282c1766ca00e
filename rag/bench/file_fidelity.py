"""How well the loaders read back kolaw-dev rendered as PDF, DOCX, HTML and HWPX (the committed files
of ``data/dev/kolaw-files/<format>/``, written by the ``render_*.py`` scripts there).

Every file is read with :func:`rag.documents.read_file` (detection, the format's loader, the checks)
and compared with the law's source text in ``kolaw-dev/corpus.jsonl`` as the file shows it
(:mod:`rag.bench.rendered_laws`), both whitespace-normalised with our ``#`` heading marks and ``**``
bold marks removed. The ratio is difflib's ``SequenceMatcher`` ratio, autojunk off. Per format:

- **pdf**: ``agreement`` against the source without heading marks, bold marks and markdown escapes,
  NFC; ``glued`` / ``split`` words (a space lost / added at a line break) and ``other_tokens`` from
  aligning the two sequences of whitespace tokens; ``header_footer_left``: the law's title and
  ``- N -`` page numbers found more often than in the source (running headers left in the text);
- **docx**, **html**: ``ratio`` against :func:`~rag.bench.rendered_laws.visible_text` (``ratio_raw``
  against the markdown as it is); heading blocks and whether their levels are the source's;
  ``boilerplate``: the page's navigation, banner, cookie, sidebar, footer and script strings (HTML)
  or the page header / footer (DOCX) found in the text (must be none); the title read. This
  comparison leaves out NFC (as the scripts it replaces did): the ratios under 1.0 (0.9997 and
  0.9999, two laws) are the source's CJK compatibility ideographs, which every loader writes in NFC;
- **hwpx**: ``ratio`` against :func:`~rag.bench.rendered_laws.shown_text` (NFC on both sides), heading
  levels, the article headings (``제N조 (제목)``) found as heading blocks, table rows against the
  grid boxes rendered as tables, running header / footer strings in the text and in its chunks
  (``--config``'s ``chunking``), the articles the chunks start in against the JSONL document's, and
  the id and version the folder's manifest gives; ``ok`` when all of these hold and ratio ≥ 0.999.

And per format the loader's speed: ``--runs`` passes over the files held in memory (median), and
``read_file`` files per second over the comparison pass (after an untimed read of every file: a
char-wrapped PDF loads kiwipiepy's model on first use). Formerly ``check_pdf.py``,
``check_docx_html.py`` and ``check_hwpx.py`` in ``data/dev/kolaw-files``.
"""
from __future__ import annotations

import difflib
import json
import logging
import re
import statistics
import time
import unicodedata
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Sequence, cast

from rag.bench import rendered_laws as rendered
from rag.bench.harness import data_dir, read_jsonl, repo_path
from rag.bench.measurement import Measurement, Outcome
from rag.lang.ko.statute import ARTICLE_LABEL_TIGHT
from rag.documents.model import Format

if TYPE_CHECKING:
    from rag.documents.files import ExtractedFile
    from rag.documents.manifest import Manifest
    from rag.index.chunking import Chunker
    from rag.types import Chunk

log = logging.getLogger(__name__)

FORMATS = ("pdf", "docx", "html", "hwpx")
HWPX_MIN_RATIO = 0.999
EXAMPLES = 12  # glued / split / other token differences kept per PDF

_MARKS = re.compile(r"^#{1,6} |\*\*", re.MULTILINE)  # our heading and bold marks
_HEADING = re.compile(r"^(#{1,6}) (.*)$", re.MULTILINE)
_ARTICLE = re.compile("^" + ARTICLE_LABEL_TIGHT)  # an article's own label (the Korean statute profile)
_PAGE_NUMBER = re.compile(r"(?<!\S)[-–]\s?\d{1,4}\s?[-–](?!\S)")


@dataclass(frozen=True)
class Options:
    formats: tuple[str, ...] = field(default=FORMATS, metadata={"help": "which of " + ", ".join(FORMATS)})
    runs: int = field(default=3, metadata={"help": "timed loader passes over the files in memory (median)"})
    files: str = field(default="data/dev/kolaw-files", metadata={"help": "the rendered files, a folder per format"})
    data: str = field(default="", metadata={"help": "data folder with kolaw-dev (default ../shared/data)"})
    config: str = field(default="configs/default.yaml", metadata={"help": "its chunking section chunks the HWPX"})

    def __post_init__(self) -> None:
        unknown = sorted(set(self.formats) - set(FORMATS))
        if unknown:
            raise ValueError(f"unknown format(s) {', '.join(unknown)}; known: {', '.join(FORMATS)}")
        if self.runs < 1:
            raise ValueError("--runs must be at least 1")


def corpus_path(o: Options) -> Path:
    return (Path(o.data) if o.data else data_dir()) / "kolaw-dev" / "corpus.jsonl"


# --------------------------------------------------------------------------- shared comparisons
def collapse(text: str) -> str:
    """Every run of whitespace one space, none at the ends."""
    return " ".join(text.split())


def unmarked(text: str, nfc: bool = False) -> str:
    """``text`` without our ``#`` heading marks and ``**`` bold marks, optionally NFC, collapsed."""
    text = _MARKS.sub("", text)
    return collapse(unicodedata.normalize("NFC", text) if nfc else text)


def ratio(a: str, b: str) -> float:
    """difflib's ratio of two strings, autojunk off (1.0 for equal ones without matching)."""
    if a == b:
        return 1.0
    return difflib.SequenceMatcher(None, a, b, autojunk=False).ratio()


def word_errors(src: list[str], ext: list[str]) -> dict[str, Any]:
    """Glued words (two source tokens one extracted token: a lost space), split words (the other
    way), other differing tokens, and the first examples, from aligning two token sequences."""
    glued = split = other = 0
    examples: list[str] = []
    for op, i1, i2, j1, j2 in difflib.SequenceMatcher(None, src, ext, autojunk=False).get_opcodes():
        if op == "equal":
            continue
        a, b = src[i1:i2], ext[j1:j2]
        if op == "replace" and "".join(a) == "".join(b):
            glued += max(0, len(a) - len(b))
            split += max(0, len(b) - len(a))
            example = f"{' '.join(a)!r} -> {' '.join(b)!r}"
        else:
            other += max(len(a), len(b))
            example = f"{op}: {' '.join(a)[:60]!r} -> {' '.join(b)[:60]!r}"
        if len(examples) < EXAMPLES:
            examples.append(example)
    return {"glued": glued, "split": split, "other_tokens": other, "examples": examples}


def header_footer_left(source: str, extracted: str, title: str) -> int:
    """Running header / footer lines left in ``extracted``: the title and ``- N -`` page numbers
    found more often than in ``source`` (both normalised alike)."""
    left = max(0, extracted.count(title) - source.count(title))
    return left + max(0, len(_PAGE_NUMBER.findall(extracted)) - len(_PAGE_NUMBER.findall(source)))


def heading_levels(text: str) -> list[int]:
    """The levels of the ``#`` heading lines of a markdown text."""
    return [len(m.group(1)) for m in _HEADING.finditer(text)]


def loader_speed(paths: list[Path], fmt: str, runs: int) -> dict[str, Any]:
    """The format's loader over ``paths`` held in memory: per second files, pages (a file without
    pages one), characters and MB of file, for the median of ``runs`` passes."""
    from rag.documents.files import make_loader

    loader = make_loader(cast(Format, fmt))
    blobs = [(p.name, p.read_bytes()) for p in paths]
    secs, pages, chars = [], 0, 0
    for _ in range(runs):
        t0 = time.perf_counter()
        got = [loader.extract(data, name) for name, data in blobs]
        secs.append(time.perf_counter() - t0)
        pages, chars = sum(max(1, len(g.pages)) for g in got), sum(len(g.text) for g in got)
    s = statistics.median(secs)
    return {"runs_s": [round(x, 4) for x in secs], "files_per_s": round(len(blobs) / s, 1),
            "pages_per_s": round(pages / s, 1), "chars_per_s": round(chars / s),
            "mb_per_s": round(sum(len(d) for _, d in blobs) / s / 1e6, 2)}


# --------------------------------------------------------------------------- per format
@dataclass(frozen=True)
class Read:
    """One law's file read: the corpus row, the file, what ``read_file`` made of it and how long it took."""

    doc: dict
    path: Path
    file: ExtractedFile
    seconds: float

    @property
    def text(self) -> str:
        return str(self.file.extracted.text)


def _base(r: Read) -> dict[str, Any]:
    ex = r.file.extracted
    return {"file": f"{r.path.parent.name}/{r.path.name}", "format": ex.format, "chars": len(ex.text)}


def pdf_shown(markdown: str) -> str:
    """The source as the PDF shows it: no heading marks, bold marks or escapes; NFC (as every loader
    writes its text, :func:`rag.documents.assemble.clean`)."""
    text = re.sub(r"(?m)^\s*#{1,6}\s+", "", markdown)
    return unicodedata.normalize("NFC", re.sub(r"\\(.)", r"\1", text.replace("**", "")))


def pdf_plain(text: str) -> str:
    """The PDF loader's text without the heading and bold marks the assembler writes."""
    return re.sub(r"(?m)^#{1,6}\s+", "", text).replace("**", "")


def _pdf_row(r: Read, wrap: str) -> dict[str, Any]:
    ex = r.file.extracted
    src, got = collapse(pdf_shown(r.doc["text"])), collapse(pdf_plain(ex.text))
    words = word_errors(src.split(), got.split())
    return {**_base(r), "wrap": wrap, "pages": len(ex.pages),
            "agreement": round(ratio(src, got), 5),
            "glued": words["glued"], "split": words["split"], "other_tokens": words["other_tokens"],
            "source_words": len(src.split()), "header_footer_left": header_footer_left(src, got, collapse(r.doc["title"])),
            "warnings": [w.code for w in ex.warnings], "examples": words["examples"], "seconds": round(r.seconds, 4)}


def _docx_html_row(r: Read, boilerplate: tuple[str, ...]) -> dict[str, Any]:
    ex = r.file.extracted
    levels = [b.level for b in ex.blocks if b.kind == "heading"]
    source_levels = heading_levels(r.doc["text"])
    return {**_base(r), "ratio": round(ratio(unmarked(ex.text), unmarked(rendered.visible_text(r.doc["text"]))), 4),
            "ratio_raw": round(ratio(unmarked(ex.text), unmarked(r.doc["text"])), 4),
            "headings": len(levels), "source_headings": len(source_levels), "levels_match": levels == source_levels,
            "boilerplate": [s for s in boilerplate if s in ex.text], "title": ex.title,
            "title_matches": ex.title == r.doc["title"] or ex.title.startswith(r.doc["title"] + " |"),
            "warnings": [w.code for w in ex.warnings], "seconds": round(r.seconds, 4)}


def chunk_articles(chunks: Sequence[Chunk]) -> list[str]:
    """The articles the chunks start in, in order, each once (``제8조의2`` of ``제8조의2제2항``)."""
    out: list[str] = []
    for c in chunks:
        m = _ARTICLE.match(c.locator)
        if m and (not out or out[-1] != m.group(0)):
            out.append(m.group(0))
    return out


def _hwpx_structure(r: Read, shown: str) -> dict[str, Any]:
    ex = r.file.extracted
    heads = [(b.level, collapse(r.text[b.start:b.end].lstrip("#"))) for b in ex.blocks if b.kind == "heading"]
    articles = [collapse(m.group(2)) for m in _HEADING.finditer(shown) if _ARTICLE.match(m.group(2))]
    found = {h for _, h in heads}
    missing = [a for a in articles if a not in found]
    return {"headings": len(heads), "source_headings": len(heading_levels(shown)),
            "levels_match": [lv for lv, _ in heads] == heading_levels(shown),
            "articles": len(articles) - len(missing), "source_articles": len(articles), "missing_articles": missing,
            "table_rows": sum(b.kind == "table_row" for b in ex.blocks),
            "source_table_rows": rendered.source_table_rows(r.doc["text"])}


def _hwpx_row(r: Read, chunker: Chunker, manifest: Manifest) -> dict[str, Any]:
    from rag.documents.files import to_document
    from rag.types import Document

    ex, doc = r.file.extracted, r.doc
    shown = rendered.shown_text(doc["text"])
    boiler = rendered.hwpx_boilerplate(doc)
    document = to_document(r.file, r.path.name, manifest.entry_for(r.path.name), folder=r.path.parent.name)
    chunks = chunker.chunk(document)
    source_chunks = chunker.chunk(Document(id=doc["id"], text=doc["text"], version=doc["version"],
                                           title=doc["title"], uri=doc["uri"]))
    row = {**_base(r), "ratio": round(ratio(unmarked(ex.text, nfc=True), unmarked(shown, nfc=True)), 4),
           "ratio_raw": round(ratio(unmarked(ex.text, nfc=True), unmarked(doc["text"], nfc=True)), 4),
           **_hwpx_structure(r, shown), "boilerplate": [s for s in boiler if s in ex.text], "chunks": len(chunks),
           "chunks_with_boilerplate": sum(any(s in c.text for s in boiler) for c in chunks),
           "chunk_articles_match": chunk_articles(chunks) == chunk_articles(source_chunks),
           "id": document.id, "version": document.version, "title": ex.title,
           "title_matches": ex.title == doc["title"], "warnings": [w.code for w in ex.warnings],
           "seconds": round(r.seconds, 4)}
    row["ok"] = (row["ratio"] >= HWPX_MIN_RATIO and row["levels_match"] and not row["missing_articles"]
                 and not row["boilerplate"] and not row["chunks_with_boilerplate"] and row["title_matches"]
                 and row["table_rows"] == row["source_table_rows"] and row["chunk_articles_match"]
                 and (row["id"], row["version"]) == (doc["id"], doc["version"]))
    return row


def _row_maker(fmt: str, folder: Path, o: Options) -> Callable[[Read], dict[str, Any]]:
    """The comparison of one format's file with its law."""
    if fmt == "pdf":
        wraps = {m["file"]: m["wrap"] for m in _read_json(folder / "manifest.json")}
        return lambda r: _pdf_row(r, wraps.get(r.path.name, ""))
    if fmt in ("docx", "html"):
        boiler = rendered.boilerplate_docx() if fmt == "docx" else rendered.boilerplate_html()
        return lambda r: _docx_html_row(r, boiler)
    from rag.config import load_config
    from rag.documents.manifest import load_manifest
    from rag.index.chunking import Chunker

    chunker, manifest = Chunker(load_config(repo_path(o.config)).chunking), load_manifest(folder)
    return lambda r: _hwpx_row(r, chunker, manifest)


def _read_json(path: Path) -> Any:
    return json.loads(path.read_text(encoding="utf-8"))


# --------------------------------------------------------------------------- summaries
def _mean(rows: list[dict], key: str, digits: int = 4) -> float:
    return round(statistics.fmean(r[key] for r in rows), digits)


def _pdf_summary(rows: list[dict]) -> dict[str, Any]:
    return {"files": len(rows), "pages": sum(r["pages"] for r in rows),
            "min_agreement": min(r["agreement"] for r in rows), "mean_agreement": _mean(rows, "agreement", 5),
            **{k: sum(r[k] for r in rows) for k in ("glued", "split", "source_words", "header_footer_left")}}


def _docx_html_summary(rows: list[dict]) -> dict[str, Any]:
    return {"files": len(rows), "min_ratio": min(r["ratio"] for r in rows), "mean_ratio": _mean(rows, "ratio"),
            "mean_ratio_raw": _mean(rows, "ratio_raw"), "levels_match": sum(r["levels_match"] for r in rows),
            "titles_match": sum(r["title_matches"] for r in rows),
            "files_with_boilerplate": sum(bool(r["boilerplate"]) for r in rows),
            "failed": [r["file"] for r in rows if r["boilerplate"]]}


def _hwpx_summary(rows: list[dict]) -> dict[str, Any]:
    def out_of(key: str) -> str:
        return f"{sum(r[key] for r in rows)}/{sum(r['source_' + key] for r in rows)}"

    s = _docx_html_summary(rows)
    return {"files": s["files"], "ok": sum(r["ok"] for r in rows), "min_ratio": s["min_ratio"],
            "mean_ratio": s["mean_ratio"], "mean_ratio_raw": s["mean_ratio_raw"], "levels_match": s["levels_match"],
            "articles": out_of("articles"), "table_rows": out_of("table_rows"), "titles_match": s["titles_match"],
            "files_with_boilerplate": s["files_with_boilerplate"], "chunks": sum(r["chunks"] for r in rows),
            "chunks_with_boilerplate": sum(r["chunks_with_boilerplate"] for r in rows),
            "chunk_articles_match": sum(r["chunk_articles_match"] for r in rows),
            "failed": [r["file"] for r in rows if not r["ok"]]}


SUMMARIES: dict[str, Callable[[list[dict]], dict[str, Any]]] = {
    "pdf": _pdf_summary, "docx": _docx_html_summary, "html": _docx_html_summary, "hwpx": _hwpx_summary}


# --------------------------------------------------------------------------- running
def measure_format(fmt: str, docs: list[dict], o: Options) -> dict[str, Any]:
    """``{"summary", "files"}`` of one format: a row per law (corpus order), then the loader's speed."""
    from rag.documents.files import read_file

    folder = repo_path(o.files) / fmt
    paths = [folder / f"{rendered.file_stem(d)}.{fmt}" for d in docs]
    make_row = _row_maker(fmt, folder, o)
    for path in paths:  # warm-up: imports, and models a file may need (kiwipiepy for a char-wrapped PDF)
        read_file(path)
    rows = []
    for doc, path in zip(docs, paths):
        t0 = time.perf_counter()
        f = read_file(path)
        rows.append(make_row(Read(doc, path, f, time.perf_counter() - t0)))
        log.info("%s: %s", fmt, rows[-1]["file"])
    summary = SUMMARIES[fmt](rows)
    summary["read_file_files_per_s"] = round(len(rows) / sum(r["seconds"] for r in rows), 1)
    summary["loader"] = loader_speed(paths, fmt, o.runs)
    return {"summary": summary, "files": rows}


def _score(fmt: str, row: dict) -> float:
    return float(row["agreement"] if fmt == "pdf" else row["ratio"])


def _detail(fmt: str, row: dict) -> str:
    if fmt == "pdf":
        return (f"{row['wrap']:4} pages {row['pages']:3d} glued {row['glued']} split {row['split']} "
                f"other {row['other_tokens']} header/footer {row['header_footer_left']}")
    head = (f"raw {row['ratio_raw']:.4f} headings {row['headings']}/{row['source_headings']} "
            f"levels {'ok' if row['levels_match'] else 'NO'} boilerplate {len(row['boilerplate'])}")
    if fmt != "hwpx":
        return head
    return (f"{head} articles {row['articles']}/{row['source_articles']} rows {row['table_rows']}/"
            f"{row['source_table_rows']} chunks {row['chunks_with_boilerplate']}/{row['chunks']} with boilerplate "
            f"{'OK' if row['ok'] else 'FAIL'}")


def table(result: dict[str, dict]) -> str:
    lines = [f"{'format':<6} {'file':<52} {'ratio':>7}  detail"]
    for fmt, part in result.items():
        lines += [f"{fmt:<6} {Path(r['file']).name[:52]:<52} {_score(fmt, r):7.5f}  {_detail(fmt, r)}"
                  for r in part["files"]]
    lines.append("")
    for fmt, part in result.items():
        s = {k: v for k, v in part["summary"].items() if k != "loader"}
        speed = part["summary"]["loader"]
        lines.append(f"{fmt}: {s} | loader {speed['files_per_s']} files/s, {speed['pages_per_s']} pages/s")
    return "\n".join(lines)


def run(o: Options) -> Outcome:
    docs = list(read_jsonl(corpus_path(o)))
    result = {fmt: measure_format(fmt, docs, o) for fmt in o.formats}
    return Outcome({"corpus": str(corpus_path(o)), "formats": result}, table(result))


def _requires(o: Options) -> list[str]:
    missing = [] if corpus_path(o).is_file() else [
        f"{corpus_path(o)} not found (kolaw-dev, under ../shared/data or $RAG_DATA_DIR, or --data)"]
    missing += [f"{repo_path(o.files) / fmt} not found (the rendered kolaw-dev files)"
                for fmt in o.formats if not (repo_path(o.files) / fmt).is_dir()]
    return missing


MEASUREMENT = Measurement("file-fidelity", "how well the PDF, DOCX, HTML and HWPX loaders read back kolaw-dev "
                          "rendered as files: text ratio, glued/split words, headings, boilerplate, speed",
                          Options, run, _requires)
