"""Comparing answer text with source text: normalization, verbatim quotes, URLs, content
terms and the lexical support score (the share of a claim's content terms found in evidence)."""
from __future__ import annotations

import re
import unicodedata
from functools import lru_cache

from rag.text.analyzers import EnglishAnalyzer
from rag.lang import HANGUL_SYLLABLE_RUN, ZERO_WIDTH
from rag.lang.ko import lexical as ko_lexical
from rag.text.sentences import strip_markers
from rag.text.structure import PARAGRAPH_MARKS

_URL = re.compile(r"(?i)\b(?:https?://|www\.)\S+")


def find_urls(text: str) -> tuple[str, ...]:
    return tuple(_URL.findall(text))


@lru_cache(maxsize=20_000)
def normalize(text: str) -> str:
    """NFKC, zero-width characters removed, whitespace collapsed: the form quotes are compared in."""
    return " ".join(unicodedata.normalize("NFKC", text).translate(ZERO_WIDTH).split())


def quote_found(quote: str, block_text: str) -> bool:
    """``quote`` occurs in ``block_text`` after normalization (surrounding quotation marks ignored),
    as written or with the bold around paragraph marks dropped on both sides (:func:`unmark`): a
    quote of ``**①** 같은 곳에`` may read ``① 같은 곳에``, as the file prints it."""
    q = _quote_form(quote)
    return bool(q) and (q in normalize(block_text) or _quote_form(unmark(quote)) in normalize(unmark(block_text)))


def _quote_form(quote: str) -> str:
    return normalize(quote).strip("\"'“”‘’「」『』").strip()


# The bold statute markdown puts around a paragraph mark (``**①** 같은 곳에``), which the loaders also
# write for a statute read from a PDF, DOCX, HTML, HWP or HWPX file (rag.documents.statute): markup the
# indexed text keeps (a statute chunks and embeds the same from a file as from markdown), not text a
# file prints.
_BOLD_MARK = re.compile(rf"\*\*([{PARAGRAPH_MARKS}])\*\*")


def unmark(text: str) -> str:
    """``text`` without the bold around its paragraph marks (``**①** 같은`` → ``① 같은``): the form a
    citation's quote is shown in. Nothing else changes (bold elsewhere, escapes the author wrote)."""
    return _BOLD_MARK.sub(r"\1", text) if "**" in text else text


def find_quote(quote: str, text: str) -> tuple[int, int] | None:
    """Where ``quote`` (stripped) lies verbatim in ``text`` as ``(start, end)``, a paragraph mark in it
    matching with or without the bold around it (``① 같은`` is found in ``**①** 같은``, the span
    covering the bold); None when it is not there as such."""
    q = quote.strip()
    if not q:
        return None
    at = text.find(q)
    if at >= 0:
        return at, at + len(q)
    plain = unmark(q)
    if not _MARK.search(plain):
        return None
    pattern = "".join(rf"(?:\*\*)?{c}(?:\*\*)?" if _MARK.fullmatch(c) else re.escape(c) for c in plain)
    m = re.search(pattern, text)
    return (m.start(), m.end()) if m else None


_MARK = re.compile(rf"[{PARAGRAPH_MARKS}]")


_EN = EnglishAnalyzer(stem=True, stopwords=True)
# Korean endings and particles stripped from a Hangul word before it is cut into bigrams, longest first.
_KO_SUFFIXES = tuple(sorted(ko_lexical.SUFFIXES, key=lambda x: (-len(x), x)))


def _hangul_terms(word: str) -> list[str]:
    for suf in _KO_SUFFIXES:
        if word.endswith(suf) and len(word) - len(suf) >= (1 if len(suf) >= 2 else 2):
            word = word[:-len(suf)]
            break
    if len(word) <= 2:
        return [word]
    return [word[k:k + 2] for k in range(len(word) - 1)]


@lru_cache(maxsize=50_000)
def content_terms(text: str) -> frozenset[str]:
    """Content terms: stemmed English words without stopwords, numbers, and Hangul words with
    their ending or particle stripped, as character bigrams (a word of one or two syllables
    stays whole)."""
    text = unicodedata.normalize("NFKC", text)
    out: list[str] = []
    for i, part in enumerate(HANGUL_SYLLABLE_RUN.split(text)):
        if i % 2 == 1:
            out.extend(_hangul_terms(part))
        elif part.strip():
            out.extend(_EN(part))
    return frozenset(out)


def lexical_support(claim: str, evidence: str | frozenset[str]) -> float:
    """Share of the claim's content terms that occur in the evidence (0..1; 0 for an empty claim)."""
    c = content_terms(strip_markers(claim))
    if not c:
        return 0.0
    e = evidence if isinstance(evidence, frozenset) else content_terms(evidence)
    return len(c & e) / len(c)
