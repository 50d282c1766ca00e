"""Probe questions built from a corpus, for fitting the gate without labels (``rag calibrate --auto``).

Answerable probes ask what one sentence of the corpus states, the way a user would: two of the
sentence's distinctive terms (the ones fewest chunks contain) and an interrogative for the kind of
fact the sentence holds (a period → 며칠 / how long, an amount → 얼마 / how much, a rate, a count;
no quantity → 어떻게 되나요 / what are the rules on). Never the sentence itself: at most its two
terms appear in the question.

Unanswerable probes are near misses of three kinds, each absent from the corpus by construction:

- ``absent_fact``: the same two terms, asking for a kind of fact no chunk that holds both terms
  states (a question about an amount where the corpus gives only a period);
- ``absent_term``: one of the terms with an everyday topic no chunk mentions (``EVERYDAY_TOPICS`` of
  :mod:`rag.lang.ko.probes` and :mod:`rag.lang.en.probes`);
- ``absent_topic``: two such topics, nothing from the corpus.

Everything is deterministic for a ``seed``: chunks are visited in the order of a hash of their
evidence ids, one probe per document before a second one from any.
"""
from __future__ import annotations

import hashlib
import re
import unicodedata
from dataclasses import dataclass
from typing import Iterable, Sequence

from rag.lang import HANGUL_SYLLABLE, detect_language
from rag.lang.en import ENGLISH
from rag.lang.en import probes as en
from rag.lang.ko import KOREAN
from rag.lang.ko import probes as ko
from rag.text.analyzers import korean_morphemes
from rag.text.question_analysis import analyze_question, holds_fact
from rag.text.quantities import extract_quantities
from rag.text.sentences import split_sentences

ANSWERABLE = "answerable"
UNANSWERABLE_KINDS = ("absent_fact", "absent_term", "absent_topic")
_EN_STOP = en.STOPWORDS
_WORD = re.compile(en.WORD)


@dataclass(frozen=True)
class ProbeSource:
    """One chunk of the corpus a probe may be built from."""

    evidence_id: str
    document_id: str
    text: str


@dataclass(frozen=True)
class Probe:
    id: str
    question: str
    answerable: bool
    kind: str  # answerable | absent_fact | absent_term | absent_topic
    language: str  # ko | en
    document_id: str = ""  # the source chunk's document (answerable probes)
    evidence_id: str = ""
    source: str = ""  # the sentence it asks about (answerable) / what is absent (unanswerable)

    def to_json(self) -> dict:
        return dict(self.__dict__)


# -- Korean and English wording ---------------------------------------------------------------------
def _final_consonant(word: str) -> bool:
    for ch in reversed(word):
        if HANGUL_SYLLABLE.match(ch):
            return (ord(ch) - 0xAC00) % 28 != 0
        if ch.isdigit():
            return ch in ko.DIGITS_ENDING_IN_CONSONANT
    return False


def topic(word: str) -> str:
    """``word`` with its topic particle (은 after a final consonant, else 는)."""
    return word + (ko.TOPIC_PARTICLE_AFTER_CONSONANT if _final_consonant(word) else ko.TOPIC_PARTICLE_AFTER_VOWEL)


# (fact kind, grain) → Korean templates and English templates; {t}: the terms, {T}: with particle
_KO = ko.QUESTION_TEMPLATES
_EN = en.QUESTION_TEMPLATES
_ASKABLE = (("amount", ""), ("ratio", ""), ("period", "days"), ("count", ""), ("period", "hours"))


def _pick(options: Sequence[str], key: str) -> str:
    return options[int(hashlib.sha256(key.encode()).hexdigest(), 16) % len(options)]


def phrase(terms: Sequence[str], kind: tuple[str, str], language: str, key: str) -> str:
    """A question asking for ``kind`` about ``terms`` (joined with spaces), in ``language``."""
    t = " ".join(terms)
    if language == KOREAN.code:
        return _pick(_KO.get(kind, _KO[("other", "")]), key).format(t=t, T=topic(t))
    return _pick(_EN.get(kind, _EN[("other", "")]), key).format(t=t)


def asked_kind(sentence: str) -> tuple[str, str]:
    """The kind of fact a sentence states that a question can ask for: the first period, amount,
    rate or count it states (dates and article references are not asked for), else ``other``."""
    for q in extract_quantities(sentence):
        if q.implied:
            continue
        if q.kind == "period":
            if q.unit == "second":
                return "period", "hours"
            months = q.fvalue if q.unit == "month" else q.fvalue / 30
            return "period", "years" if months >= 12 and months % 12 == 0 else "days"
        if q.kind in ("money", "measure"):
            return "amount", ""
        if q.kind in ("percent", "ratio"):
            return "ratio", ""
        if q.kind == "count":
            return "count", ""
    return "other", ""


# -- terms ------------------------------------------------------------------------------------------
def compact(text: str) -> str:
    return "".join(unicodedata.normalize("NFKC", text).split()).lower()


# Nouns that say how, not what (a question about them would not name a topic).
_KO_FUNCTIONAL = ko.FUNCTIONAL_NOUNS
_KO_RUN = ko.NOUN_RUN_TAGS
_KO_TERM = re.compile(ko.TERM)


def _korean_terms(sentence: str) -> list[str]:
    """Each whitespace word's leading run of nouns (one compound: 저축연가, 임대인), read with
    kiwipiepy; without it, the question reading's key terms."""
    text = unicodedata.normalize("NFKC", sentence)
    morphs = korean_morphemes(text)
    if morphs is None:
        return [t.form for t in analyze_question(text).key_terms if t.hangul and t.weight >= 1.0]
    out: list[str] = []
    run: list[tuple[str, str, int, int]] = []

    def close() -> None:
        if run and any(m[1] in ko.NOUN_TAGS for m in run) and run[-1][0] != ko.ADJECTIVAL_SUFFIX:
            word = text[run[0][2]:run[-1][2] + run[-1][3]]
            if _KO_TERM.fullmatch(word) and word not in _KO_FUNCTIONAL:
                out.append(word)
        run.clear()

    for m in morphs:
        contiguous = run and m[2] == run[-1][2] + run[-1][3]
        if m[1] in _KO_RUN or (m[1] == ko.DETERMINER_TAG and not run):
            if run and not contiguous:
                close()
            run.append(m)
        else:
            close()
    close()
    return out


def sentence_terms(sentence: str, language: str) -> list[str]:
    """Content terms of a sentence in order, each once: Korean noun compounds of two or more
    syllables, English non-stopwords and their adjacent pairs."""
    if language == KOREAN.code:
        out = _korean_terms(sentence)
    else:
        words = [w.lower() for w in _WORD.findall(sentence)]
        out = []
        for i, w in enumerate(words):
            if w in _EN_STOP:
                continue
            if i + 1 < len(words) and words[i + 1] not in _EN_STOP and words[i + 1] != w:
                out.append(f"{w} {words[i + 1]}")
    return list(dict.fromkeys(out))


class TermCounts:
    """In how many chunks each term occurs (Hangul: in the compacted text; English: as words)."""

    def __init__(self, sources: Sequence[ProbeSource]) -> None:
        self._compact = [compact(s.text) for s in sources]
        self._lower = [" " + " ".join(_WORD.findall(s.text.lower())) + " " for s in sources]
        self._cache: dict[str, int] = {}

    def count(self, term: str) -> int:
        if term not in self._cache:
            if HANGUL_SYLLABLE.search(term):
                c = compact(term)
                self._cache[term] = sum(1 for t in self._compact if c in t)
            else:
                w = f" {term.lower()} "
                self._cache[term] = sum(1 for t in self._lower if w in t)
        return self._cache[term]

    def texts_with(self, terms: Sequence[str], sources: Sequence[ProbeSource]) -> list[str]:
        keys = [compact(t) for t in terms]
        return [s.text for s, c in zip(sources, self._compact) if all(k in c for k in keys)]


# -- building ---------------------------------------------------------------------------------------
def _order(sources: Sequence[ProbeSource], seed: int) -> list[ProbeSource]:
    """One chunk of each document first (in hash order), then a second of each, and so on."""
    def h(s: ProbeSource) -> str:
        return hashlib.sha256(f"{seed}:{s.evidence_id}".encode()).hexdigest()

    by_doc: dict[str, list[ProbeSource]] = {}
    for s in sorted(sources, key=h):
        by_doc.setdefault(s.document_id, []).append(s)
    docs = sorted(by_doc, key=lambda d: hashlib.sha256(f"{seed}:{d}".encode()).hexdigest())
    out: list[ProbeSource] = []
    for rnd in range(max((len(v) for v in by_doc.values()), default=0)):
        out += [by_doc[d][rnd] for d in docs if rnd < len(by_doc[d])]
    return out


def _usable(sentence: str) -> bool:
    s = sentence.strip()
    return (15 <= len(s) <= 400 and not s.startswith("#") and s.count("|") < 2
            and not re.search(r"<[a-zA-Z/]|https?://|\bsrc=", s))


def _distinct(terms: list[str], counts: TermCounts, n: int) -> list[str]:
    """The ``n`` terms fewest chunks contain (at least one does), in sentence order."""
    ranked = sorted((counts.count(t), i, t) for i, t in enumerate(terms) if counts.count(t) > 0)
    chosen = sorted(ranked[:n], key=lambda x: x[1])
    picked: list[str] = []
    for _, _, t in chosen:
        if not any(t in p or p in t for p in picked):
            picked.append(t)
    return picked


def answerable_probe(src: ProbeSource, counts: TermCounts, seed: int) -> Probe | None:
    """The first usable sentence of the chunk as a question (None when no sentence has two terms)."""
    for s in split_sentences(src.text):
        if not _usable(s.text):
            continue
        lang = detect_language(s.text)
        if lang not in (KOREAN.code, ENGLISH.code):
            continue
        terms = _distinct(sentence_terms(s.text, lang), counts, 2 if lang == KOREAN.code else 1)
        if len(terms) < (2 if lang == KOREAN.code else 1) or (lang == ENGLISH.code and " " not in terms[0]):
            continue
        kind = asked_kind(s.text)
        q = phrase(terms, kind, lang, f"{seed}:{src.evidence_id}")
        return Probe(f"a:{src.evidence_id}", q, True, ANSWERABLE, lang, src.document_id, src.evidence_id, s.text)
    return None


def _terms_of(p: Probe, counts: TermCounts) -> list[str]:
    return _distinct(sentence_terms(p.source, p.language), counts, 2 if p.language == KOREAN.code else 1)


def absent_fact_probe(p: Probe, counts: TermCounts, sources: Sequence[ProbeSource], seed: int) -> Probe | None:
    """The answerable probe's terms, asking for a kind of fact no chunk holding both terms states."""
    terms = _terms_of(p, counts)
    texts = counts.texts_with(terms, sources)
    own = asked_kind(p.source)
    for kind, grain in _ASKABLE:
        if (kind, grain) == own:
            continue
        if not any(holds_fact(kind, grain, t) for t in texts):
            q = phrase(terms, (kind, grain), p.language, f"{seed}:f:{p.id}")
            return Probe(f"f:{p.evidence_id}", q, False, "absent_fact", p.language, source=f"no {kind} with {terms}")
    return None


def _absent_topics(language: str, counts: TermCounts) -> list[str]:
    words = ko.EVERYDAY_TOPICS if language == KOREAN.code else en.EVERYDAY_TOPICS
    return [w for w in words if counts.count(w) == 0 and all(counts.count(x) == 0 for x in w.split() if len(x) > 3)]


def absent_term_probe(p: Probe, counts: TermCounts, absent: Sequence[str], seed: int) -> Probe | None:
    terms = _terms_of(p, counts)
    if not absent or not terms:
        return None
    topic_word = _pick(absent, f"{seed}:t:{p.id}")
    kind = asked_kind(p.source)
    context = terms[0] if p.language == KOREAN.code else terms[0].split()[0]
    q = phrase([context, topic_word], kind, p.language, f"{seed}:t:{p.id}")
    return Probe(f"t:{p.evidence_id}", q, False, "absent_term", p.language, source=f"{topic_word!r} is in no chunk")


def absent_topic_probe(i: int, language: str, absent: Sequence[str], seed: int) -> Probe | None:
    if len(absent) < 2:
        return None
    a = _pick(absent, f"{seed}:o1:{language}:{i}")
    b = _pick([w for w in absent if w != a], f"{seed}:o2:{language}:{i}")
    kind = _pick(list(_KO), f"{seed}:o3:{language}:{i}")
    q = phrase([a, b], kind, language, f"{seed}:o:{language}:{i}")
    return Probe(f"o:{language}:{i}", q, False, "absent_topic", language, source=f"{a!r} and {b!r} are in no chunk")


def make_probes(sources: Iterable[ProbeSource], per_language: int = 80, seed: int = 0) -> tuple[Probe, ...]:
    """Up to ``per_language`` answerable probes for each corpus language (ko, en) and as many
    unanswerable ones (about 2 ``absent_fact`` or ``absent_term`` for every ``absent_topic``)."""
    srcs = [s for s in sources if s.text.strip()]
    counts = TermCounts(srcs)
    answerable: dict[str, list[Probe]] = {}
    for src in _order(srcs, seed):
        p = answerable_probe(src, counts, seed)
        if p is not None and len(answerable.setdefault(p.language, [])) < per_language:
            answerable[p.language].append(p)
        if answerable and all(len(v) >= per_language for v in answerable.values()) and len(answerable) == 2:
            break
    out: list[Probe] = []
    for lang in sorted(answerable):
        ans = answerable[lang]
        absent = _absent_topics(lang, counts)
        neg: list[Probe] = []
        for i, p in enumerate(ans):
            if i % 3 == 2:
                made = absent_topic_probe(i, lang, absent, seed)
            elif i % 3 == 0:
                made = absent_fact_probe(p, counts, srcs, seed) or absent_term_probe(p, counts, absent, seed)
            else:
                made = absent_term_probe(p, counts, absent, seed)
            if made is not None:
                neg.append(made)
        out += ans + neg
    return tuple(out)
