"""Korean statute structure: the unit labels (제3조의2, 제2장), their ranks, the item enumerators, the
amendment notes and the citation form. Read by the text stage (rag.text.structure parses it) and the
documents stage (rag.documents.statute writes it): the one definition both share."""
from __future__ import annotations

import re

# The ranks of a statute's units, from the largest, and the heading level each takes in statute markdown
# (편 #, 장 ##, 절 ###, 관 ####, 조 #####).
PART_RANKS = ("편", "장", "절", "관")
ARTICLE_RANK = "조"
HEADING_LEVELS = {rank: level for level, rank in enumerate((*PART_RANKS, ARTICLE_RANK), start=1)}

# Paragraph marks ①..⑳, ㉑..㉟, ㊱..㊿ (a regex character class).
PARAGRAPH_MARKS = "\u2460-\u2473\u3251-\u325f\u32b1-\u32bf"

# Item enumerators after the numbered items (가. 나. …), in order.
ENUMERATORS = "가나다라마바사아자차카타파하"

_RANK = "(?:" + "|".join(PART_RANKS) + ")"
_RANK_GROUP = "(" + "|".join(PART_RANKS) + ")"

# An article's label: 제3조, 제 3 조, 제3조의2. ARTICLE_LABEL captures the numbers, ARTICLE_LABEL_TEXT does not.
ARTICLE_LABEL = r"제\s*(\d+)\s*조(?:\s*의\s*(\d+))?"
ARTICLE_LABEL_TEXT = r"제\s*\d+\s*조(?:\s*의\s*\d+)?"
# An article's label as a citation writes it, without spaces: 제8조, 제8조의2.
ARTICLE_LABEL_TIGHT = r"제\d+조(?:의\d+)?"
# An article's title after its label: parentheses holding at most one level of inner parentheses.
ARTICLE_TITLE = r"\((?:[^()\n\f]|\([^()\n\f]*\)){1,100}\)"
# A part's label: 제2장, 제1편의2. PART_LABEL captures number, rank and sub-number; PART_LABEL_RANK only the rank.
PART_LABEL = rf"제\s*(\d+)\s*{_RANK_GROUP}(?:\s*의\s*(\d+))?"
PART_LABEL_RANK = rf"제\s*\d+\s*{_RANK_GROUP}(?:\s*의\s*\d+)?"
PART_LABEL_TEXT = rf"제\s*\d+\s*{_RANK}(?:\s*의\s*\d+)?"
# A numbered item's number: 1, 12, 1의2.
ITEM_NUMBER = r"\d{1,3}(?:의\d{1,2})?"
ITEM_SUB = "의"  # between an item's number and its sub-number

# An amendment note: <개정 2024. 6. 28.>, ‹신설 …›, 〈…〉, <2021.5.25>, [본조신설 …], [유효기간 …].
NOTE = (
    r"[<‹〈]\s*(?:개정|신설|삭제|전문개정|제목개정|본조신설|타법개정|종전|시행일|\d{4}\s*\.)[^<>‹›〈〉\f]{0,300}[>›〉]"
    r"|\[\s*(?:본조|제목개정|전문개정|제목신설|종전|시행일|한시법|제목변경|신설|개정|타법개정|유효기간)"
    r"[^\[\]\f]{0,300}\]"
)
# What follows an article label that is a reference, not a heading (제5조 및, 제5조에 따른).
REFERENCE_NEXT = r"(?:및|또는|내지|부터|까지|에서|에|의|와|과|ㆍ|·|,)(?:\s|$)"
# A citation label as Locator.label writes it: article, then paragraph (항), item (호), sub-item (목).
CITATION_LABEL = rf"({ARTICLE_LABEL_TIGHT})(?:제(\d+)항)?(?:제(\d+)호(?:의(\d+))?)?(?:([가-하])목)?"


def citation_parts(label: str) -> tuple[str, ...]:
    """A citation label's units, largest first, spaces ignored: ``제11조의3제1항제2호`` → ``("제11조의3",
    "1항", "2호")``; ``()`` when it does not start with an article."""
    m = re.match(CITATION_LABEL, "".join(label.split()))
    if m is None:
        return ()
    parts = [m.group(1)]
    if m.group(2):
        parts.append(f"{m.group(2)}항")
    if m.group(3):
        parts.append(f"{m.group(3)}호" + (f"의{m.group(4)}" if m.group(4) else ""))
    if m.group(5):
        parts.append(f"{m.group(5)}목")
    return tuple(parts)


def article_label(number: str, sub: str | None) -> str:
    """``제3조``, ``제3조의2``."""
    return f"제{number}조" + (f"의{sub}" if sub else "")


def part_label(number: str, rank: str, sub: str | None) -> str:
    """``제2장``, ``제1편의2``."""
    return f"제{number}{rank}" + (f"의{sub}" if sub else "")


def paragraph_label(number: int) -> str:
    """``제2항``."""
    return f"제{number}항"


def item_label(number: str, sub: str) -> str:
    """``제1호``, ``제1호의2``."""
    return f"제{number}호" + (f"의{sub}" if sub else "")


def subitem_label(enumerator: str) -> str:
    """``가목``."""
    return f"{enumerator}목"
