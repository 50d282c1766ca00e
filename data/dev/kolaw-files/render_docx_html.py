"""Render every kolaw-dev law as one DOCX and one HTML page (development files for the loaders).

    .venv/bin/python data/dev/kolaw-files/render_docx_html.py

Reads ../shared/data/kolaw-dev/corpus.jsonl (markdown: ``#`` title, ``##`` 장, ``#####`` 조) and
writes ``docx/<id>_<version>.docx`` and ``html/<id>_<version>.html`` next to this script:

- DOCX: ``#`` … ``#####`` as Heading 1 … 5 styles, every other source line one paragraph (``**①**``
  as a bold run), the law's title and fixed dates in the core properties, a page header and a
  page footer (which a loader must not read as body text);
- HTML: the law in ``<main>`` (h1 … h5, ``<p>`` with ``<br>`` between a block's lines, the
  ``<img>`` / box-drawing formula blocks as ``<figure><img><pre>``), wrapped in site navigation,
  a header with a search form, a breadcrumb, a cookie banner, a sidebar menu and a footer, plus a
  script and a style. 주택임대차보호법 is written in EUC-KR (declared by ``http-equiv``), the others
  in UTF-8 (``<meta charset>``).

:func:`visible_text` is what a reader of either file sees of a source text (inline markdown
removed); ``rag bench run file-fidelity`` compares the loaders' output with it (through its
mirror :mod:`rag.bench.rendered_laws`, which holds the furniture strings below too; a test checks
that both agree). The output is deterministic (fixed ZIP timestamps and core-property dates).
"""
from __future__ import annotations

import datetime as dt
import html
import io
import json
import re
import sys
import zipfile
from pathlib import Path

from rag.bench.rendered_laws import blocks, file_stem, inline_runs  # what the files show

HERE = Path(__file__).resolve().parent
CORPUS = HERE.parents[3] / "shared" / "data" / "kolaw-dev" / "corpus.jsonl"
EUC_KR_IDS = {"주택임대차보호법"}

# Page furniture (furniture.json, read by rag.bench.rendered_laws too): every string is in the HTML (or
# the DOCX header/footer) and must not be in what a loader extracts. None occurs in any law text.
_FURNITURE = json.loads((HERE / "furniture.json").read_text(encoding="utf-8"))
_H = _FURNITURE["html"]
SKIP_LINK = _H["skip_link"]
NAV_ITEMS = tuple(_H["nav_items"])
HEADER_TEXT = _H["header_text"]
SEARCH_LABEL = _H["search_label"]
BREADCRUMB = tuple(_H["breadcrumb"])
COOKIE_TEXT = _H["cookie_text"]
COOKIE_BUTTON = _H["cookie_button"]
SIDEBAR_ITEMS = tuple(_H["sidebar_items"])
SHARE_TEXT = _H["share_text"]
FOOTER_TEXT = tuple(_H["footer_text"])
SCRIPT_TEXT = _H["script_text"]
DOCX_HEADER = _FURNITURE["docx"]["header"]
DOCX_FOOTER = _FURNITURE["docx"]["footer"]
BOILERPLATE_HTML = ((SKIP_LINK,) + NAV_ITEMS + (HEADER_TEXT, SEARCH_LABEL, BREADCRUMB[2], COOKIE_TEXT,
                    COOKIE_BUTTON) + SIDEBAR_ITEMS + (SHARE_TEXT,) + FOOTER_TEXT + (SCRIPT_TEXT,))
BOILERPLATE_DOCX = (DOCX_HEADER, DOCX_FOOTER)



def load_corpus(path: Path = CORPUS) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


# ----------------------------------------------------------------------------- DOCX

def _fixed_zip(data: bytes) -> bytes:
    """The same archive with every entry dated 1980-01-01 (byte-identical on every run)."""
    src = zipfile.ZipFile(io.BytesIO(data))
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as dst:
        for info in src.infolist():
            fixed = zipfile.ZipInfo(info.filename, date_time=(1980, 1, 1, 0, 0, 0))
            fixed.compress_type = zipfile.ZIP_DEFLATED
            dst.writestr(fixed, src.read(info.filename))
    return buf.getvalue()


def render_docx(doc: dict) -> bytes:
    import docx

    d = docx.Document()
    cp = d.core_properties
    when = dt.datetime.fromisoformat(doc["version"]).replace(tzinfo=dt.timezone.utc)
    cp.title, cp.author, cp.subject = doc["title"], "kolaw-dev renderer", "대한민국 법령 (kolaw-dev)"
    cp.keywords, cp.created, cp.modified, cp.last_modified_by = doc["id"], when, when, "kolaw-dev renderer"
    cp.revision = 1
    section = d.sections[0]
    section.header.paragraphs[0].text = DOCX_HEADER
    section.footer.paragraphs[0].text = DOCX_FOOTER
    for level, lines in blocks(doc["text"]):
        if level > 0:
            d.add_heading("".join(t for t, _ in inline_runs(lines[0])), level)
            continue
        for line in lines:
            runs = inline_runs(line)
            if not "".join(t for t, _ in runs).strip():
                continue
            p = d.add_paragraph()
            for text, bold in runs:
                p.add_run(text).bold = bold or None
    buf = io.BytesIO()
    d.save(buf)
    return _fixed_zip(buf.getvalue())


# ----------------------------------------------------------------------------- HTML

def _inline_html(line: str) -> str:
    return "".join(f"<strong>{html.escape(t, quote=False)}</strong>" if b else html.escape(t, quote=False)
                   for t, b in inline_runs(line))


def _main_html(doc: dict) -> list[str]:
    out = []
    for level, lines in blocks(doc["text"]):
        if level > 0:
            out.append(f"<h{level}>{_inline_html(lines[0])}</h{level}>")
        elif level < 0:
            alt = re.search(r'alt="([^"]*)"', lines[0])
            box = [b for b in (_inline_html(ln) for ln in lines) if b.strip()]
            out.append(f'<figure><img src="formula.png" alt="{html.escape(alt.group(1) if alt else "")}">'
                       f"<pre>{chr(10).join(box)}</pre></figure>")
        else:
            out.append("<p>" + "<br>\n".join(_inline_html(ln) for ln in lines) + "</p>")
    return out


def render_html(doc: dict, charset: str) -> bytes:
    title = html.escape(doc["title"])
    meta_charset = (f'<meta http-equiv="Content-Type" content="text/html; charset={charset}">'
                    if charset != "utf-8" else '<meta charset="utf-8">')
    nav = "".join(f'<li><a href="/m{i}">{t}</a></li>' for i, t in enumerate(NAV_ITEMS))
    side = "".join(f'<li><a href="/s{i}">{t}</a></li>' for i, t in enumerate(SIDEBAR_ITEMS))
    crumbs = " &gt; ".join(f'<a href="/c{i}">{t}</a>' for i, t in enumerate(BREADCRUMB))
    parts = [
        "<!DOCTYPE html>", '<html lang="ko">', "<head>", meta_charset,
        f"<title>{title} | {HEADER_TEXT}</title>",
        f'<meta name="description" content="{title} 전문 (시행 {doc["version"]})">',
        f'<meta name="keywords" content="{html.escape(doc["id"])}, 법령, 대통령령">',
        '<meta name="author" content="kolaw-dev renderer">',
        f'<meta property="og:title" content="{title}">',
        "<style>.cookie-banner{position:fixed;bottom:0} nav a{color:#036}</style>",
        f"<script>{SCRIPT_TEXT} = {{id: 'kolaw'}}; /* <p>not text</p> */</script>",
        "</head>", "<body>",
        f'<div id="skipnav"><a href="#content">{SKIP_LINK}</a></div>',
        f'<header class="site-header"><div class="logo">{HEADER_TEXT}</div>',
        f'<form class="search" action="/search" role="search"><label for="q">{SEARCH_LABEL}</label>'
        '<input id="q" name="q" type="text"><button type="submit">검색</button></form>',
        f'<nav class="gnb" aria-label="주메뉴"><ul>{nav}</ul></nav></header>',
        f'<div class="cookie-banner" role="dialog" aria-label="쿠키 안내"><p>{COOKIE_TEXT}.</p>'
        f"<button>{COOKIE_BUTTON}</button></div>",
        '<div class="container">',
        f'<div class="breadcrumb" aria-label="이동경로">{crumbs}</div>',
        f'<aside class="lnb"><h2>법령 메뉴</h2><ul>{side}</ul></aside>',
        '<main id="content">', *_main_html(doc),
        f'<div class="share-buttons"><a href="/share">{SHARE_TEXT}</a></div>',
        "</main>", "</div>",
        f'<footer id="footer"><ul><li>{FOOTER_TEXT[0]}</li><li>{FOOTER_TEXT[1]}</li></ul>'
        f"<p>{FOOTER_TEXT[2]}</p></footer>",
        "</body>", "</html>", "",
    ]
    return "\n".join(parts).encode(charset)


def main() -> int:
    docs = load_corpus()
    (HERE / "docx").mkdir(exist_ok=True)
    (HERE / "html").mkdir(exist_ok=True)
    for doc in docs:
        stem = file_stem(doc)
        (HERE / "docx" / f"{stem}.docx").write_bytes(render_docx(doc))
        charset = "euc-kr" if doc["id"] in EUC_KR_IDS else "utf-8"
        try:
            page = render_html(doc, "cp949" if charset == "euc-kr" else charset)
            if charset == "euc-kr":
                page = page.replace(b"charset=cp949", b"charset=euc-kr")
        except UnicodeEncodeError:
            page = render_html(doc, "utf-8")
        (HERE / "html" / f"{stem}.html").write_bytes(page)
        print(f"{stem}: docx and html written", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
