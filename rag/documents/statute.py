"""A statute in the files the loader writes the markup of, written in the markdown statutes are given in.

Korean statutes are given as markdown with fixed marks (the law sites' renderings, and
``../shared/data/kolaw-dev``): a unit's heading takes the level of its rank (편 ``#``, 장 ``##``,
절 ``###``, 관 ``####``, 조 ``#####``) and a paragraph opens with its mark in bold (``**①**``). A
PDF, DOCX, HTML, HWP or HWPX statute is written the same way (:class:`rag.documents.assemble.TextAssembler`),
whatever its font sizes or styles, so its chunks are the same text as the same statute given as
markdown, and embed the same. (The unit patterns are :mod:`rag.text.structure`'s, which parses
what is written here; the documents stage may not import it.)
"""
from __future__ import annotations

import re

HEADING_LEVELS = {"편": 1, "장": 2, "절": 3, "관": 4, "조": 5}
ARTICLE_LEVEL = HEADING_LEVELS["조"]

_ARTICLE = re.compile(r"[ \t]*제\s*\d+\s*조(?:\s*의\s*\d+)?[ \t]*\((?:[^()\n\f]|\([^()\n\f]*\)){1,100}\)")
_PART = re.compile(r"[ \t]*제\s*\d+\s*(편|장|절|관)(?:\s*의\s*\d+)?(?:[ \t]+[^\n\f]*?)?[ \t\r]*$")
_LEADING_MARK = re.compile(r"([\u2460-\u2473\u3251-\u325f\u32b1-\u32bf])(?=[ \t])")


def heading_level(heading: str) -> int | None:
    """The fixed level of a statute unit's heading (``제2장 근로계약`` → 2, ``제17조(일비의 감액)`` → 5);
    None when the heading is not one (an article heading holds nothing after its title)."""
    m = _ARTICLE.match(heading)
    if m is not None and not heading[m.end():].strip():
        return ARTICLE_LEVEL
    m = _PART.match(heading)
    return HEADING_LEVELS[m.group(1)] if m is not None else None


def opens_article(text: str) -> bool:
    """Whether ``text`` opens with an article's label and title (``제2조(근무시간) …``)."""
    return _ARTICLE.match(text) is not None


def bold_paragraph_mark(paragraph: str) -> str:
    """``① 같은 곳에`` → ``**①** 같은 곳에``; a text not opening with a paragraph mark and a space unchanged."""
    return _LEADING_MARK.sub(r"**\1**", paragraph, count=1) if _LEADING_MARK.match(paragraph) else paragraph
