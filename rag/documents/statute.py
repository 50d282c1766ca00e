"""A statute in the files the loader writes the markup of, written in the markdown statutes are given in.

Korean statutes are given as markdown with fixed marks (the law sites' renderings, and
``../shared/data/kolaw-dev``): a unit's heading takes the level of its rank (편 ``#``, 장 ``##``,
절 ``###``, 관 ``####``, 조 ``#####``), an article's heading is its label and title on a line of
their own (``##### 제3조 (개인정보 보호 원칙)``, where a print runs them into the first paragraph:
``제3조(개인정보 보호 원칙) ① …``) and a paragraph opens with its mark in bold (``**①**``). A
PDF, DOCX, HTML, HWP or HWPX statute is written the same way (:class:`rag.documents.assemble.TextAssembler`),
whatever its font sizes or styles, so its chunks are the same text as the same statute given as
markdown, and embed the same. (The unit patterns are :mod:`rag.lang.ko.statute`'s, shared with :mod:`rag.text.structure`,
which parses what is written here.)
"""
from __future__ import annotations

import re

from rag.lang.ko import statute as ko_statute

HEADING_LEVELS = ko_statute.HEADING_LEVELS
ARTICLE_LEVEL = HEADING_LEVELS[ko_statute.ARTICLE_RANK]

# an article's label and title, followed by a space or the end (``제5조(정의)에 따른`` is a reference)
_ARTICLE = re.compile(rf"[ \t]*({ko_statute.ARTICLE_LABEL_TEXT})[ \t]*({ko_statute.ARTICLE_TITLE})(?=\s|$)")
_PART = re.compile(rf"[ \t]*{ko_statute.PART_LABEL_RANK}(?:[ \t]+[^\n\f]*?)?[ \t\r]*$")
_LEADING_MARK = re.compile(rf"([{ko_statute.PARAGRAPH_MARKS}])(?=[ \t])")


def split_article(text: str) -> tuple[str, int] | None:
    """For a text opening with an article's label and title: the article's heading as statute markdown
    writes it (``제3조(개인정보 보호 원칙)`` → ``제3조 (개인정보 보호 원칙)``) and where the rest of the
    text starts (after the spaces that follow the title); None for any other text."""
    m = _ARTICLE.match(text)
    if m is None:
        return None
    rest = m.end()
    while rest < len(text) and text[rest] in " \t\n":
        rest += 1
    return f"{m.group(1)} {m.group(2)}", rest


def article_heading(heading: str) -> str | None:
    """An article's heading as statute markdown writes it (``제17조(일비의 감액)`` → ``제17조 (일비의 감액)``);
    None when the heading is not one (an article heading holds nothing after its title)."""
    split = split_article(heading)
    return split[0] if split is not None and split[1] == len(heading) else None


def part_level(heading: str) -> int | None:
    """The fixed level of a part's heading (``제2장 근로계약`` → 2); None when it is not one."""
    m = _PART.match(heading)
    return HEADING_LEVELS[m.group(1)] if m is not None else None


def bold_paragraph_mark(paragraph: str) -> str:
    """``① 같은 곳에`` → ``**①** 같은 곳에``; a text not opening with a paragraph mark and a space unchanged."""
    return _LEADING_MARK.sub(r"**\1**", paragraph, count=1) if _LEADING_MARK.match(paragraph) else paragraph
