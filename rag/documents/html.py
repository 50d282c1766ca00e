"""HTML pages: the main content only, as headings, paragraphs, list items and table rows.

The page is parsed with the standard library's :class:`html.parser.HTMLParser` into a small
tree (implied end tags of ``p``, ``li``, ``td`` … closed as a browser would). The content root is
``<main>`` or ``role="main"``, else the one ``<article>`` (the longest when there are several and
it holds most of their text), else ``<body>``. Inside it, page furniture is dropped: scripts,
styles, forms, buttons, frames; ``nav``/``aside`` and site-level ``header``/``footer``;
landmark roles other than main; hidden elements; and elements whose id, class or aria-label
mark navigation, menus, breadcrumbs, cookie or consent banners, footers, sidebars, share widgets
or skip links. An element that holds the main content is never dropped by its name; if the
names would drop everything, the page is read again with only scripts and styles dropped
(warning ``boilerplate_kept``).

The title is ``<title>`` (else ``og:title``, else the first heading); ``description``,
``keywords``, ``author``, the page language and its canonical URL become metadata. The charset
comes from a byte-order mark or ``<meta charset>``, else UTF-8, else detection
(:func:`rag.documents.plain.decode_text`).
"""
from __future__ import annotations

import logging
import re
from html.parser import HTMLParser

from rag.documents.assemble import TextAssembler
from rag.documents.model import BlockKind, Extracted, Format
from rag.documents.plain import decode_text
from rag.lang.en import documents as en_documents
from rag.lang.ko import documents as ko_documents

logger = logging.getLogger(__name__)

_VOID = frozenset("area base br col embed hr img input link meta param source track wbr keygen".split())
_HARD_DROP = frozenset("script style noscript template svg math iframe frame frameset object embed canvas audio "
                       "video button select textarea input head title".split())
_BLOCK = frozenset("address article aside blockquote body caption center dd details dialog div dl dt fieldset "
                   "figcaption figure footer form header hgroup html legend li main menu nav ol p pre section "
                   "summary table tbody td tfoot th thead tr ul search".split())
_CLOSES_P = frozenset("address article aside blockquote center details dialog div dl fieldset figcaption figure "
                      "footer form h1 h2 h3 h4 h5 h6 header hgroup hr main menu nav ol p pre section summary "
                      "table ul search li dd dt".split())
_HEADINGS = {f"h{i}": i for i in range(1, 7)}
# (tag that opens, open tags it closes, tags that stop the search)
_IMPLIED: dict[str, tuple[frozenset[str], frozenset[str]]] = {
    "li": (frozenset({"li"}), frozenset({"ul", "ol", "menu"})),
    "dt": (frozenset({"dt", "dd"}), frozenset({"dl"})),
    "dd": (frozenset({"dt", "dd"}), frozenset({"dl"})),
    "tr": (frozenset({"tr", "td", "th"}), frozenset({"table", "thead", "tbody", "tfoot"})),
    "td": (frozenset({"td", "th"}), frozenset({"tr", "table"})),
    "th": (frozenset({"td", "th"}), frozenset({"tr", "table"})),
    "thead": (frozenset({"thead", "tbody", "tfoot", "tr", "td", "th"}), frozenset({"table"})),
    "tbody": (frozenset({"thead", "tbody", "tfoot", "tr", "td", "th"}), frozenset({"table"})),
    "tfoot": (frozenset({"thead", "tbody", "tfoot", "tr", "td", "th"}), frozenset({"table"})),
    "option": (frozenset({"option"}), frozenset({"select", "datalist"})),
}
_FURNITURE_ROLES = frozenset("navigation banner contentinfo complementary search menu menubar toolbar dialog "
                             "alertdialog".split())
_MARK_SUBSTRINGS = ("breadcrumb", "cookie", "consent", "gdpr", "sidebar", "side-bar", "side_bar", "skip",
                    "navbar", "navigation", "menu", "social", "footer", "masthead", "gnb", "lnb", "snb",
                    *ko_documents.HTML_FURNITURE_WORDS)
_MARK_TOKENS = frozenset("nav navi toc sns util utility crumbs share shares sharing sharebar sharebox sharebuttons "
                         "sharethis addthis".split())
_SKIP_LINK_WORDS = (*en_documents.HTML_SKIP_LINK_WORDS, *ko_documents.HTML_SKIP_LINK_WORDS)
_HEADER_TOKENS = frozenset("header banner".split())  # a header that holds the page's h1 is content
_SR_ONLY = frozenset("sr-only screen-reader-text visually-hidden visuallyhidden blind a11y-hidden".split())
_TOKEN_SPLIT = re.compile(r"[^a-z0-9]+")
_WS = re.compile(r"[ \t\r\n\f]+")
_HIDDEN_STYLE = re.compile(r"display\s*:\s*none|visibility\s*:\s*hidden", re.IGNORECASE)
_META_CHARSET = re.compile(rb"<meta[^>]*?charset\s*=\s*[\"']?\s*([A-Za-z0-9_:.\-]+)"
                           rb"|<\?xml[^>]*?encoding\s*=\s*[\"']([A-Za-z0-9_:.\-]+)", re.IGNORECASE)
_LANDMARK_SCOPE = frozenset({"article", "main", "section", "aside", "nav"})


class _Node:
    __slots__ = ("tag", "attrs", "children", "parent")

    def __init__(self, tag: str, attrs: dict[str, str], parent: "_Node | None") -> None:
        self.tag, self.attrs, self.parent = tag, attrs, parent
        self.children: list[_Node | str] = []

    def iter(self):
        stack: list[_Node] = [self]
        while stack:
            node = stack.pop()
            yield node
            stack.extend(c for c in reversed(node.children) if isinstance(c, _Node))

    def text(self) -> str:
        return "".join(c if isinstance(c, str) else c.text() for c in self.children)


class _TreeBuilder(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.root = _Node("#document", {}, None)
        self.stack = [self.root]

    def _close_until(self, closes: frozenset[str], stops: frozenset[str]) -> None:
        for i in range(len(self.stack) - 1, 0, -1):
            tag = self.stack[i].tag
            if tag in closes:
                del self.stack[i:]
                return
            if tag in stops:
                return

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag in _CLOSES_P:
            self._close_until(frozenset({"p"}), frozenset({"td", "th", "li", "button", "table", "body"}))
        if tag in _IMPLIED:
            self._close_until(*_IMPLIED[tag])
        parent = self.stack[-1]
        node = _Node(tag, {k.lower(): (v or "") for k, v in reversed(attrs)}, parent)
        parent.children.append(node)
        if tag not in _VOID:
            self.stack.append(node)

    def handle_startendtag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        parent = self.stack[-1]
        parent.children.append(_Node(tag, {k.lower(): (v or "") for k, v in reversed(attrs)}, parent))

    def handle_endtag(self, tag: str) -> None:
        if tag == "br":
            self.handle_startendtag("br", [])
            return
        for i in range(len(self.stack) - 1, 0, -1):
            if self.stack[i].tag == tag:
                del self.stack[i:]
                return

    def handle_data(self, data: str) -> None:
        self.stack[-1].children.append(data)


def _marked(node: _Node) -> bool:
    """Whether the element's id, class or aria-label names page furniture."""
    words = " ".join((node.attrs.get("id", ""), node.attrs.get("class", ""),
                      node.attrs.get("aria-label", ""))).lower()
    if not words.strip():
        return False
    if any(s in words for s in _MARK_SUBSTRINGS):
        return True
    tokens = [t for t in _TOKEN_SPLIT.split(words) if t]
    if any(t in _MARK_TOKENS or t.endswith("nav") for t in tokens):
        return True
    if any(t in _HEADER_TOKENS for t in tokens):
        return not any(n.tag == "h1" for n in node.iter())
    if "location" in tokens:  # the usual name of a breadcrumb on Korean sites: "홈 > 공지 > …"
        text = node.text()
        return len(text) < 300 and any(sep in text for sep in (">", "›", "»", "→"))
    return False


def _skip_link(node: _Node) -> bool:
    if node.tag != "a" or not node.attrs.get("href", "").startswith("#"):
        return False
    text = node.text().lower()
    return any(w in text for w in _SKIP_LINK_WORDS)


def _hidden(node: _Node) -> bool:
    a = node.attrs
    return ("hidden" in a or a.get("aria-hidden", "").lower() == "true"
            or bool(_HIDDEN_STYLE.search(a.get("style", ""))) or not _SR_ONLY.isdisjoint(a.get("class", "").split()))


def _role(node: _Node) -> str:
    return node.attrs.get("role", "").strip().lower()


class _Walker:
    """Writes the blocks of a content root into an assembler."""

    def __init__(self, asm: TextAssembler, protected: set[int], soft: bool) -> None:
        self.asm, self.protected, self.soft = asm, protected, soft
        self.buf: list[str] = []
        self.kind: list[tuple[BlockKind, int]] = [("paragraph", 0)]
        self.pre = 0
        self.first_heading = ""
        self.soft_dropped: set[int] = set()

    # -- dropping
    def dropped(self, node: _Node) -> bool:
        if self._dropped(node):
            if self.soft and node.tag not in _HARD_DROP:
                self.soft_dropped.add(id(node))
            return True
        return False

    def _dropped(self, node: _Node) -> bool:
        tag = node.tag
        if tag in _HARD_DROP or _hidden(node):
            return True
        if not self.soft or id(node) in self.protected:
            return False
        if tag in ("nav", "aside", "dialog", "menu", "search") or _role(node) in _FURNITURE_ROLES:
            return True
        if tag in ("header", "footer"):
            p = node.parent
            while p is not None:
                if p.tag in _LANDMARK_SCOPE or _role(p) in ("main", "article"):
                    return False
                p = p.parent
            return True
        if tag == "form":
            return not any(n.tag in ("p", "table", "article", "main") or n.tag in _HEADINGS for n in node.iter())
        return _marked(node) or _skip_link(node)

    # -- output
    def flush(self) -> None:
        text = "".join(self.buf)
        self.buf.clear()
        kind, level = self.kind[-1]
        blk = self.asm.block(kind, text, level)
        if blk is not None and kind == "heading" and not self.first_heading:
            self.first_heading = " ".join(text.split())

    def add(self, s: str) -> None:
        self.buf.append(s if self.pre else _WS.sub(" ", s))

    def walk(self, node: _Node) -> None:
        for child in node.children:
            if isinstance(child, str):
                self.add(child)
            elif not self.dropped(child):
                self.element(child)

    def _as_block(self, node: _Node, kind: BlockKind, level: int = 0) -> None:
        self.flush()
        self.kind.append((kind, level))
        self.walk(node)
        self.flush()
        self.kind.pop()

    def element(self, node: _Node) -> None:
        tag = node.tag
        current = self.kind[-1][0]
        if tag == "br":
            self.buf.append("\n" if current == "paragraph" else " ")
        elif current == "heading":  # everything inside a heading is part of its one line
            if tag in _BLOCK:
                self.buf.append(" ")
            self.walk(node)
        elif tag in _HEADINGS:
            self._as_block(node, "heading", _HEADINGS[tag])
        elif tag == "li":
            self.flush()
            self.kind.append(("list_item", 0))
            if node.parent is not None and node.parent.tag == "ol":
                self.buf.append(f"{self._ordinal(node)}. ")
            self.walk(node)
            self.flush()
            self.kind.pop()
        elif tag in ("ul", "ol", "menu", "dl"):
            self.flush()
            self.walk(node)
            self.flush()
        elif tag == "table":
            self.table(node)
        elif tag == "pre":
            self.pre += 1
            self._as_block(node, "paragraph")
            self.pre -= 1
        elif tag == "hr":
            self.flush()
        elif tag in _BLOCK:
            self._as_block(node, "list_item" if current == "list_item" else "paragraph")
        else:
            self.walk(node)

    @staticmethod
    def _ordinal(li: _Node) -> int:
        ol = li.parent
        assert ol is not None
        try:
            n = int(ol.attrs.get("start", "1")) - 1
        except ValueError:
            n = 0
        for c in ol.children:
            if isinstance(c, _Node) and c.tag == "li":
                value = c.attrs.get("value", "")
                n = int(value) if value.strip().lstrip("-").isdigit() else n + 1
                if c is li:
                    break
        return n

    # -- tables
    def _rows(self, table: _Node) -> list[_Node]:
        out: list[_Node] = []

        def visit(n: _Node) -> None:
            for c in n.children:
                if isinstance(c, _Node) and not self.dropped(c):
                    if c.tag == "tr":
                        out.append(c)
                    elif c.tag in ("thead", "tbody", "tfoot"):
                        visit(c)
        visit(table)
        return out

    def _cell_text(self, cell: _Node) -> str:
        parts: list[str] = []

        def visit(n: _Node) -> None:
            for c in n.children:
                if isinstance(c, str):
                    parts.append(c)
                elif not self.dropped(c):
                    if c.tag in _BLOCK or c.tag == "br" or c.tag in _HEADINGS:
                        parts.append(" ")
                    visit(c)
        visit(cell)
        return _WS.sub(" ", "".join(parts)).strip()

    def table(self, node: _Node) -> None:
        rows = self._rows(node)
        cells = [[c for c in r.children if isinstance(c, _Node) and c.tag in ("td", "th") and not self.dropped(c)]
                 for r in rows]
        n_cells = sum(len(r) for r in cells)
        layout = n_cells <= 1 or any(n.tag in _HEADINGS or n.tag == "table"
                                     for r in cells for c in r for n in c.iter())
        self.flush()
        if layout:  # a table used for page layout: its cells are read as ordinary content
            for child in node.children:
                if isinstance(child, _Node) and not self.dropped(child):
                    self._as_block(child, "paragraph")
            return
        for c in node.children:
            if isinstance(c, _Node) and c.tag == "caption" and not self.dropped(c):
                self._as_block(c, "paragraph")
        self.asm.table([[self._cell_text(c) for c in r] for r in cells])


def _visible(root: _Node):
    """The elements under ``root`` in document order, without hard-dropped or hidden subtrees."""
    stack = [root]
    while stack:
        node = stack.pop()
        if node is not root and (node.tag in _HARD_DROP or _hidden(node)):
            continue
        yield node
        stack.extend(c for c in reversed(node.children) if isinstance(c, _Node))


def _content_root(body: _Node) -> tuple[_Node, bool]:
    """The main content element and whether the page marked it (main / role=main / article)."""
    articles: list[_Node] = []
    for n in _visible(body):
        if n.tag == "main" or _role(n) == "main":
            return n, True
        elif n.tag == "article" or _role(n) == "article":
            articles.append(n)
    if articles:
        sizes = [len("".join(a.text().split())) for a in articles]
        best = max(range(len(articles)), key=lambda i: sizes[i])
        if len(articles) == 1 or sizes[best] >= 0.5 * sum(sizes):
            return articles[best], True
    return body, False


class HtmlLoader:
    """An HTML page: main content as blocks, ``<title>`` and ``<meta>`` as title and metadata."""

    format: Format = "html"

    def extract(self, data: bytes, name: str) -> Extracted:
        asm = TextAssembler(self.format)
        m = _META_CHARSET.search(data[:4096])
        declared = (m.group(1) or m.group(2)).decode("ascii", "replace") if m else None
        builder = _TreeBuilder()
        builder.feed(decode_text(data, name, asm, declared=declared))
        builder.close()
        doc = builder.root
        title, metadata = self._head(doc)
        body = next((n for n in doc.iter() if n.tag == "body"), doc)
        root, marked = _content_root(body)
        protected = {id(p) for n in doc.iter() if n.tag in ("main", "article") or _role(n) in ("main", "article")
                     for p in self._self_and_ancestors(n)}
        walker = _Walker(asm, protected, soft=True)
        walker.element(root) if root is not doc else walker.walk(root)
        walker.flush()
        if not asm.length:
            asm = TextAssembler(self.format)
            asm.warnings.extend(walker.asm.warnings)
            walker = _Walker(asm, protected, soft=False)
            walker.walk(body)
            walker.flush()
            if asm.length:
                asm.warn("boilerplate_kept", "every part of the page looked like navigation or page furniture; "
                         "read the whole page with only scripts and styles dropped")
        elif not marked and walker.soft_dropped:
            asm.warn("main_not_marked", f"the page marks no <main> or <article>; {len(walker.soft_dropped)} parts were "
                     "removed as navigation, headers, footers or banners by their tags and names")
        return asm.done(title=title or walker.first_heading, metadata=metadata)

    @staticmethod
    def _self_and_ancestors(n: _Node):
        p: _Node | None = n
        while p is not None:
            yield p
            p = p.parent

    @staticmethod
    def _head(doc: _Node) -> tuple[str, dict[str, object]]:
        title = ""
        og: dict[str, str] = {}
        meta: dict[str, object] = {}
        for n in doc.iter():
            if n.tag == "title" and not title:
                title = " ".join(n.text().split())
            elif n.tag == "meta":
                key = (n.attrs.get("name") or n.attrs.get("property") or "").strip().lower()
                content = " ".join(n.attrs.get("content", "").split())
                if not content:
                    continue
                if key in ("description", "keywords", "author") and key not in meta:
                    meta[key] = content
                elif key.startswith("og:"):
                    og.setdefault(key[3:], content)
            elif n.tag == "html" and n.attrs.get("lang", "").strip():
                meta["language"] = n.attrs["lang"].strip()
            elif n.tag == "link" and "canonical" in n.attrs.get("rel", "").lower().split() and n.attrs.get("href"):
                meta.setdefault("canonical_url", n.attrs["href"].strip())
        if "description" not in meta and "description" in og:
            meta["description"] = og["description"]
        return title or og.get("title", ""), meta
