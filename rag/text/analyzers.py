"""Text analyzers that turn text into BM25 terms.

- ``english``: lowercase, split on non-alphanumerics, drop stopwords, Snowball stem.
- ``korean_bigram``: Hangul runs become overlapping character bigrams; everything else
  goes through the English path, so mixed Korean/English text works.
- ``korean_kiwi``: Hangul analysed into morphemes by kiwipiepy (content morphemes kept);
  everything else through the English path.
- ``whitespace``: lowercase whitespace tokens (a baseline).
"""
from __future__ import annotations

import re
import threading
import unicodedata
from functools import lru_cache
from typing import Protocol

from rag.config import BM25Config
from rag.errors import DependencyError, missing_dependency
from rag.lang import HANGUL_RUN

_WORD = re.compile(r"[^\W_]+", re.UNICODE)

# A short English stopword list (function words only).
STOPWORDS_EN = frozenset(
    """a an and are as at be been being but by can could did do does doing for from had has have having
    he her hers him his how i if in into is it its itself me my no nor not of off on once only or other
    our ours out over own same she should so some such than that the their theirs them then there these
    they this those through to too under until up very was we were what when where which while who whom
    why will with would you your yours""".split()
)


def _switches(stem: bool | None, stopwords: bool | None) -> tuple[bool, bool]:
    return (BM25Config.default("stem") if stem is None else stem,
            BM25Config.default("stopwords") if stopwords is None else stopwords)


class Analyzer(Protocol):
    name: str

    def __call__(self, text: str) -> list[str]: ...


@lru_cache(maxsize=1)
def _stemmer():
    try:
        import Stemmer
    except ImportError:
        return None
    return Stemmer.Stemmer("english")


class EnglishAnalyzer:
    def __init__(self, stem: bool | None = None, stopwords: bool | None = None) -> None:
        """``stem``/``stopwords``: None takes the ``bm25`` section's default."""
        stem, stopwords = _switches(stem, stopwords)
        self.stem = stem
        self.stopwords = stopwords
        self.name = f"english(stem={stem},stop={stopwords})"

    def __call__(self, text: str) -> list[str]:
        words = _WORD.findall(unicodedata.normalize("NFKC", text).lower())
        if self.stopwords:
            words = [w for w in words if w not in STOPWORDS_EN]
        if self.stem:
            st = _stemmer()
            if st is None:
                raise missing_dependency("PyStemmer", "core", "English stemming")
            words = st.stemWords(words)
        return words


class KoreanBigramAnalyzer:
    def __init__(self, stem: bool | None = None, stopwords: bool | None = None) -> None:
        self._en = EnglishAnalyzer(stem, stopwords)
        self.name = f"korean_bigram+{self._en.name}"

    def __call__(self, text: str) -> list[str]:
        text = unicodedata.normalize("NFKC", text)
        out: list[str] = []
        for i, part in enumerate(HANGUL_RUN.split(text)):
            if i % 2 == 1:  # a Hangul run
                if len(part) == 1:
                    out.append(part)
                else:
                    out.extend(part[k:k + 2] for k in range(len(part) - 1))
            elif part.strip():
                out.extend(self._en(part))
        return out


_KIWI_KEEP = ("NNG", "NNP", "NNB", "NR", "NP", "VV", "VA", "XR", "SL", "SH", "SN", "MAG")
_kiwi_lock = threading.Lock()


@lru_cache(maxsize=1)
def _kiwi():
    try:
        from kiwipiepy import Kiwi
    except ImportError:
        raise missing_dependency("kiwipiepy", "korean", "the korean_kiwi analyzer") from None
    return Kiwi()


def korean_morphemes(text: str) -> tuple[tuple[str, str, int, int], ...] | None:
    """(form, POS tag, start, length) of every morpheme kiwipiepy finds in ``text`` (offsets into
    ``text``, which should be NFKC already); None when kiwipiepy is not installed (the ``korean``
    extra), so a caller can fall back to another reading."""
    try:
        kiwi = _kiwi()
    except DependencyError:  # optional here: the caller falls back
        return None
    with _kiwi_lock:
        tokens = kiwi.tokenize(text)
    return tuple((t.form, t.tag.split("-")[0], t.start, t.len) for t in tokens)


class KoreanKiwiAnalyzer:
    def __init__(self, stem: bool | None = None, stopwords: bool | None = None) -> None:
        self._en = EnglishAnalyzer(stem, stopwords)
        self.name = f"korean_kiwi+{self._en.name}"

    def __call__(self, text: str) -> list[str]:
        text = unicodedata.normalize("NFKC", text)
        if not HANGUL_RUN.search(text):
            return self._en(text)
        out: list[str] = []
        with _kiwi_lock:
            tokens = _kiwi().tokenize(text)
        for t in tokens:
            tag = t.tag.split("-")[0]
            if tag.startswith(_KIWI_KEEP):
                if tag in ("SL", "SH"):
                    out.extend(self._en(t.form))
                else:
                    out.append(t.form.lower())
        return out


class WhitespaceAnalyzer:
    name = "whitespace"

    def __call__(self, text: str) -> list[str]:
        return unicodedata.normalize("NFKC", text).lower().split()


def make_analyzer(name: str, stem: bool | None = None, stopwords: bool | None = None) -> Analyzer:
    """The analyzer named by ``bm25.analyzer``; ``stem``/``stopwords`` None take the section's defaults."""
    if name == "english":
        return EnglishAnalyzer(stem, stopwords)
    if name == "korean_bigram":
        return KoreanBigramAnalyzer(stem, stopwords)
    if name == "korean_kiwi":
        return KoreanKiwiAnalyzer(stem, stopwords)
    if name == "whitespace":
        return WhitespaceAnalyzer()
    raise ValueError(f"unknown analyzer {name!r}; use english, korean_bigram, korean_kiwi or whitespace")
