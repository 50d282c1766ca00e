"""English words and patterns the document loaders (rag.documents) read: Word style names, HWP outline
styles, HTML skip links and PDF page numbers."""
from __future__ import annotations

# The English name of Word's heading styles (Heading 1 … Heading 9) and of its title style; read by
# rag.documents.docx (regex alternatives, matched case-insensitively).
DOCX_HEADING_STYLE = "heading"
DOCX_TITLE_STYLE = "title"
# The English names of Word's table-of-contents styles (TOC 1, Table of Contents) and of its heading (TOC
# Heading); read by rag.documents.docx, which puts the Korean name between the first two.
DOCX_TOC_STYLE = "toc"
DOCX_TOC_STYLE_LONG = "table of contents"
DOCX_TOC_HEADING = "toc heading"
# A word that makes a Word style a list style (List Paragraph, List Bullet); read by rag.documents.docx.
DOCX_LIST_STYLE = "list"

# The English name of the Hangul word processor's outline styles (``engName`` Outline 1 …); read by
# rag.documents.hangul after the Korean name.
HWP_OUTLINE_STYLE = "outline"

# The text of an English skip link (Skip to content, Jump to navigation); read by rag.documents.html.
HTML_SKIP_LINK_WORDS = ("skip to", "jump to")

# The words of an English page number line: "3 of 10" and "page 3" / "p. 3" (regex alternatives); read by
# rag.documents.pdf_layout, matched case-insensitively.
PDF_PAGE_OF = "of"
PDF_PAGE_WORDS = r"page|p\.?"
