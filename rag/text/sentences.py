"""Sentence splitting, citation markers, quote normalization and lexical support scores.

Shared by the extractive generator and the validator, so that a sentence the generator
picks is exactly one sentence to the validator too.

Sentence rules (Korean and English):

- a boundary follows ``. ! ? … 。 ！ ？`` (plus closing quotes/brackets and any ``[S#]``
  markers right after them) when whitespace or the end of text follows;
- Korean written without a space after the period (``했다.그리고``) is split too;
- no split inside numbers and dates (``2024. 6. 28.``, ``3.5``), after common English
  abbreviations and initials (``e.g.``, ``Dr.``, ``K.``), or before a lowercase word;
- blank lines always end a sentence; single newlines do too when ``newlines=True``
  (answers, where a line is usually a list item).
"""
from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass
from functools import lru_cache

from rag.text.analyzers import EnglishAnalyzer

MARKER = re.compile(r"\[\s*[Ss]\s*\d+(?:\s*[,;]\s*[Ss]?\s*\d+)*\s*\]")
_MARKER_RUN = r"(?:\s*\[\s*[Ss]\s*\d+(?:\s*[,;]\s*[Ss]?\s*\d+)*\s*\])*"
_CLOSERS = "\"'”’»)\\]}」』〉》"
_BOUNDARY = re.compile(r"(?:[.!?…]+|[。！？]+)[" + re.escape(_CLOSERS) + r"]*" + _MARKER_RUN)
_HANGUL = re.compile(r"[\uac00-\ud7a3]")
_URL = re.compile(r"(?i)\b(?:https?://|www\.)\S+")
_DATE_END = re.compile(r"\d{2,4}\.\s?\d{1,2}\.\s?\d{1,2}$")  # "2024. 6. 28" before the final period
_WORDCHAR = re.compile(r"[^\W_]")
_ZERO_WIDTH = dict.fromkeys(map(ord, "\u200b\u200c\u200d\u2060\ufeff\u00ad"), None)
_ABBREVIATIONS = frozenset({
    "e.g", "i.e", "vs", "etc", "al", "fig", "figs", "eq", "eqs", "dr", "mr", "mrs", "ms", "prof", "no", "nos",
    "vol", "vols", "approx", "cf", "st", "jr", "sr", "inc", "ltd", "co", "corp", "dept", "est", "min", "max",
    "ca", "resp", "u.s", "u.k", "ph.d", "a.m", "p.m", "jan", "feb", "mar", "apr", "jun", "jul", "aug", "sep",
    "sept", "oct", "nov", "dec",
})


@dataclass(frozen=True)
class Sentence:
    """One sentence: ``text == source[start:end]`` (stripped of surrounding whitespace)."""

    text: str
    start: int
    end: int


def _is_boundary(text: str, m: re.Match) -> bool:
    end = m.end()
    punct = m.group(0)
    if end >= len(text):
        return True
    nxt = text[end]
    if punct[0] in "。！？" or "[" in punct:
        return True  # full-width ends, and a citation marker after the punctuation, always close a sentence
    if not nxt.isspace():
        # Korean without a space: 다.그리고 / 요?네
        before = text[m.start() - 1] if m.start() > 0 else ""
        return bool(_HANGUL.match(before)) and (bool(_HANGUL.match(nxt)) or nxt.isupper())
    rest = text[end:].lstrip(" \t")
    if not rest or rest[0] == "\n":
        return True
    if punct[0] == ".":
        before = text[:m.start()]
        word = re.search(r"(\S+)$", before)
        w = word.group(1).lower().lstrip("(\"'") if word else ""
        if w in _ABBREVIATIONS or (len(w) == 1 and w.isalpha() and w.isascii()):
            return False  # e.g. / Dr. / initials
        if before[-1:].isdigit() and (rest[0].isdigit() or _DATE_END.search(before)):
            return False  # 2024. 6. 28.
        if word and w.isdigit() and len(w) <= 3 and (word.start() == 0 or before[word.start() - 1] == "\n"):
            return False  # a list enumerator at the start of a line: "1. 밀폐공간의 위험성"
    return not (rest[0].islower() and rest[0].isascii())  # no split before "and" in "etc. and"


@lru_cache(maxsize=20_000)
def split_sentences(text: str, newlines: bool = False) -> tuple[Sentence, ...]:
    """Split ``text`` into sentences with offsets into ``text`` (cached per text)."""
    cuts: set[int] = set()
    for m in _BOUNDARY.finditer(text):
        if _is_boundary(text, m):
            cuts.add(m.end())
    for m in re.finditer(r"\n\s*\n" if not newlines else r"\n", text):
        cuts.add(m.start())
    out: list[Sentence] = []
    pos = 0
    for cut in sorted(cuts) + [len(text)]:
        if cut <= pos:
            continue
        piece = text[pos:cut]
        lead = len(piece) - len(piece.lstrip())
        body = piece.strip()
        if body:
            out.append(Sentence(body, pos + lead, pos + lead + len(body)))
        pos = cut
    return tuple(out)


def answer_sentences(answer: str) -> tuple[Sentence, ...]:
    """Sentences of an answer; a fragment made only of markers or punctuation joins the sentence before it."""
    merged: list[Sentence] = []
    for s in split_sentences(answer, newlines=True):
        if merged and not _WORDCHAR.search(MARKER.sub("", s.text)):
            prev = merged[-1]
            merged[-1] = Sentence(answer[prev.start:s.end], prev.start, s.end)
        else:
            merged.append(s)
    return tuple(m for m in merged if _WORDCHAR.search(MARKER.sub("", m.text)))


def marker_ids(text: str) -> tuple[str, ...]:
    """Source ids named by ``[S#]`` markers in ``text``, in order of appearance, without repeats."""
    seen: dict[str, None] = {}
    for m in MARKER.finditer(text):
        for d in re.findall(r"\d+", m.group(0)):
            seen.setdefault(f"S{int(d)}", None)
    return tuple(seen)


def strip_markers(text: str) -> str:
    return " ".join(MARKER.sub(" ", text).split())


def find_urls(text: str) -> tuple[str, ...]:
    return tuple(_URL.findall(text))


def normalize(text: str) -> str:
    """NFKC, zero-width characters removed, whitespace collapsed: the form quotes are compared in."""
    return " ".join(unicodedata.normalize("NFKC", text).translate(_ZERO_WIDTH).split())


def quote_found(quote: str, block_text: str) -> bool:
    """``quote`` occurs in ``block_text`` after normalization (surrounding quotation marks ignored)."""
    q = normalize(quote).strip("\"'“”‘’「」『』")
    q = q.strip()
    return bool(q) and q in normalize(block_text)


_EN = EnglishAnalyzer(stem=True, stopwords=True)
_HANGUL_RUN = re.compile(r"([\uac00-\ud7a3]+)")
# Endings and particles stripped from the end of a Hangul word before it is cut into
# bigrams (longest first), so "연차는" and "연차의" both give "연차" and "정지합니다" gives "정지".
_KO_SUFFIXES = tuple(sorted({
    "입니다", "합니다", "됩니다", "습니다", "있습니다", "없습니다", "했습니다", "였습니다", "었습니다", "이었다", "였다", "었다", "했다", "한다", "된다",
    "이다", "하다", "되며", "하며", "이며", "으며", "하고", "이고", "되고", "하여", "되어", "해야", "에서는", "에게는", "으로는", "에서", "에게",
    "으로", "까지", "부터", "처럼", "보다", "이나", "에는", "에도", "과는", "와는", "이라", "라는", "이라는", "은", "는", "이", "가", "을",
    "를", "의", "에", "도", "와", "과", "로", "만",
}, key=lambda x: (-len(x), x)))


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
    for i, part in enumerate(_HANGUL_RUN.split(text)):
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
