"""One reading of a question, shared by the gate, the extractive generator and the validator.

:func:`analyze_question` returns a :class:`QuestionAnalysis`:

- ``key_terms``: what the question is about. Korean through kiwipiepy when it is installed (the
  ``korean`` extra): nouns, roots, foreign words and verb or adjective stems of two or more
  syllables; without it, each Hangul word with its particle or ending stripped. English: stemmed
  words without stopwords. Never the interrogative (며칠, 얼마, 몇 시간, how many days), the
  politeness ending, a number the question states, or a generic word (경우, 것, 수, 때, get, need).
- ``kind``: what it asks for (:func:`rag.text.questions.wanted_fact`), and ``grain``: for a
  duration, whether hours (몇 시간), days and months (며칠, 몇 개월) or years (몇 년: a period of
  a year or more) are asked ("" when the wording does not say: 얼마 동안, how long); ``counter``:
  the counter of 몇 급, 몇 호봉, 몇 층, which the answer's number must carry.
- ``parts``: when it asks several things ("하루 몇 시간, 일주일에 몇 시간"), one
  :class:`QuestionPart` each, with the key terms that qualify that part (하루 / 일주일).

A key term is *found* in a text when its Hangul form occurs in the text with whitespace removed
(after NFKC), or its English stem is one of the text's stems. :meth:`QuestionAnalysis.coverage`
is the weighted share of key terms found (nouns and foreign words weigh 1, verb stems and
one-syllable nouns 0.4); :attr:`QuestionAnalysis.topics` are the nouns the question marks as its
topic (은/는), and :func:`stem_found` finds a term by its head (a compound's last piece) or stem too;
:meth:`QuestionAnalysis.holds_asked_fact` says whether a text states a
fact of the asked kind (a quantity of the right dimension and grain for the numeric kinds; any text
for the others, whose form cannot be checked reliably).
"""
from __future__ import annotations

import re
import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache

from rag.lang import HANGUL_SYLLABLE_RUN, HANGUL_SYLLABLES, detect_language
from rag.lang.en import questions as en_questions
from rag.lang.ko import questions as ko_questions
from rag.text.analyzers import EnglishAnalyzer, korean_morphemes
from rag.text.conditions import against_limit, asked_limit
from rag.text.questions import OTHER_FACT, QUANTITY_KINDS, YES_NO, FactKind, wanted_fact

NOUN_WEIGHT = 1.0
MINOR_WEIGHT = 0.4  # verb/adjective stems and one-syllable nouns: they say little on their own

# Interrogatives and the asked unit that follows 몇 / how many (a part of the question's form, not its
# subject), and the asked grain of a duration: Korean alternatives first.
_ASK = re.compile(f"{ko_questions.ASKED}|{en_questions.ASKED}", re.IGNORECASE)
_HOUR_GRAIN = re.compile(f"{ko_questions.HOURS_ASKED}|{en_questions.HOURS_ASKED}", re.IGNORECASE)
_YEAR_GRAIN = re.compile(f"{ko_questions.YEARS_ASKED}|{en_questions.YEARS_ASKED}", re.IGNORECASE)
_DAY_GRAIN = re.compile(f"{ko_questions.DAYS_ASKED}|{en_questions.DAYS_ASKED}", re.IGNORECASE)
# 몇 + a counter the quantity kinds do not cover (몇 급, 몇 호봉, 몇 층, 몇 데시벨): the answer must
# write a number with that counter.
_COUNTER = re.compile(ko_questions.COUNTER_ASKED)

# Words a question uses that say nothing about its subject.
_KO_GENERIC = ko_questions.GENERIC_WORDS
_EN_GENERIC = en_questions.GENERIC_STEMS
_KIWI_NOUNS = ("NNG", "NNP", "XR", "SL", "SH")
_KIWI_STEMS = ("VV", "VA")
_EN = EnglishAnalyzer(stem=True, stopwords=True)
_KO_SUFFIX = re.compile(ko_questions.PARTICLE_ENDING)


@dataclass(frozen=True)
class KeyTerm:
    """One term of the question's subject. ``form``: as the question has it (a morpheme, or an
    English stem); ``hangul``: matched by substring in Hangul text, else as an English stem."""

    form: str
    weight: float
    hangul: bool
    start: int = -1  # where it occurs in the question (NFKC), for splitting into parts
    pieces: tuple[str, ...] = ()  # a compound's nouns of two or more syllables (층간소음: 소음)


@dataclass(frozen=True)
class QuestionPart:
    """One of several things a question asks: its text, kind, grain and qualifying key terms."""

    text: str
    kind: FactKind
    grain: str
    terms: tuple[KeyTerm, ...]

    @property
    def limit(self) -> str:
        """``max`` / ``min`` when the part asks for a limit of that direction (:func:`asked_limit`)."""
        return asked_limit(self.text)


@dataclass(frozen=True)
class QuestionAnalysis:
    text: str
    language: str  # ko | en | other
    kind: FactKind
    grain: str  # "hours" | "days" | "" (a duration's asked grain; "" when not a duration or unknown)
    key_terms: tuple[KeyTerm, ...]
    parts: tuple[QuestionPart, ...] = ()  # two or more when it asks several things
    counter: str = ""  # 몇 급 / 몇 호봉 / 몇 층: the counter the answer's number must carry

    @property
    def numeric(self) -> bool:
        return self.kind in QUANTITY_KINDS

    @property
    def numeric_parts(self) -> tuple[QuestionPart, ...]:
        """The parts that ask for a number (기한, 기간, 금액, 비율, 횟수)."""
        return tuple(p for p in self.parts if p.kind in QUANTITY_KINDS)

    @property
    def asked_numbers(self) -> tuple[QuestionPart, ...]:
        """Each number the question asks for: its numeric parts, else the question itself when it
        is numeric (as one part), else none."""
        if self.numeric_parts:
            return self.numeric_parts
        return (QuestionPart(self.text, self.kind, self.grain, self.key_terms),) if self.numeric else ()

    def found(self, text: str) -> tuple[KeyTerm, ...]:
        """The key terms ``text`` contains (see the module docstring)."""
        return tuple(t for t in self.key_terms if term_found(t, text))

    def missing(self, text: str) -> tuple[KeyTerm, ...]:
        """The key terms ``text`` lacks, heaviest first (ties: question order)."""
        miss = [t for t in self.key_terms if not term_found(t, text)]
        return tuple(sorted(miss, key=lambda t: -t.weight))

    def coverage(self, text: str) -> float:
        """Weighted share of the key terms ``text`` contains (1.0 for a question without key terms)."""
        return weighted_coverage(self.key_terms, text)

    @property
    def topics(self) -> tuple[KeyTerm, ...]:
        """The key terms the question marks as its topic with 은/는 (``기여금은 … 몇 퍼센트``, ``신고는
        어디에``): Korean nouns of weight 1 directly followed by the topic particle."""
        compact = _compact(self.text)
        return tuple(t for t in self.key_terms if t.hangul and t.weight >= NOUN_WEIGHT
                     and re.search(re.escape(t.form) + ko_questions.TOPIC_PARTICLE, compact))

    def silent_topics(self, texts: Sequence[str]) -> tuple[str, ...]:
        """The question's topics when none of them is spoken of (:func:`stem_found`) in any of
        ``texts``; () when one is, or when the question marks no topic (of several, one is enough:
        a follow-up completed by the question before it carries that question's topic too)."""
        topics = self.topics
        if not topics or any(stem_found(t, x) for t in topics for x in texts):
            return ()
        return tuple(t.form for t in topics)

    def silent_nouns(self, texts: Sequence[str]) -> tuple[str, ...]:
        """The question's nouns (key terms of full weight, less a noun made a verb by 하다 / 되다:
        ``근무했으면`` says what was done, not what it is about) when none of them is spoken of
        (:func:`stem_found`) in any of ``texts``; () when one is, or when it has none."""
        text = unicodedata.normalize("NFKC", self.text)  # not compacted: 남편 한 명 is no 남편하다
        nouns = tuple(t for t in self.key_terms if t.weight >= NOUN_WEIGHT
                      and not (t.hangul and re.search(re.escape(t.form) + _VERB_MAKER, text)))
        if not nouns or any(stem_found(t, x) for t in nouns for x in texts):
            return ()
        return tuple(t.form for t in nouns)

    def holds_asked_fact(self, text: str, directed: bool = True) -> bool:
        """Whether ``text`` states a fact of the asked kind: for a numeric question a quantity of a
        fitting kind (and, for a duration, of the asked grain), with the asked counter (몇 급 → 5급)
        when there is one; True for the other kinds. ``directed``: for a question asking a limit
        (:attr:`limit`), not a bound of the other direction (see :func:`fitting`)."""
        limit = self.limit if directed else ""
        return holds_fact(self.kind, self.grain, text, limit) and states_counter(self.counter, text)

    @property
    def limit(self) -> str:
        """``max`` / ``min`` when the question asks for a limit of that direction (:func:`asked_limit`)."""
        return asked_limit(self.text)


_VERB_MAKER = ko_questions.VERB_MAKER  # 하다 / 되다 after a noun: 근무하다, 지정되다
PIECE_CREDIT = 0.4  # a compound not found whole counts this share of its pieces found


def weighted_coverage(terms: tuple[KeyTerm, ...], text: str) -> float:
    """Weighted share of ``terms`` in ``text``; a compound not found whole counts
    :data:`PIECE_CREDIT` times the share of its pieces found (최우선변제 in a text with 우선변제)."""
    total = sum(t.weight for t in terms)
    if total <= 0:
        return 1.0
    return sum(t.weight * term_score(t, text) for t in terms) / total


def term_score(term: KeyTerm, text: str) -> float:
    if term_found(term, text):
        return 1.0
    if not term.pieces:
        return 0.0
    c = _compact(text)
    return PIECE_CREDIT * sum(p in c for p in term.pieces) / len(term.pieces)


@lru_cache(maxsize=20_000)
def _compact(text: str) -> str:
    return "".join(unicodedata.normalize("NFKC", text).lower().split())


@lru_cache(maxsize=20_000)
def _stems(text: str) -> frozenset[str]:
    return frozenset(_EN(unicodedata.normalize("NFKC", text)))


def stem_found(term: KeyTerm, text: str) -> bool:
    """The term, its head (a compound's last piece: 소액임차인: 임차인, 육아휴직: 휴직), or for a
    compound of three or more syllables without pieces its stem before a one-syllable suffix
    (출장비: 출장, 이용료: 이용) occurs in ``text``: the text may speak of the term's subject in other
    words (a statute names a colloquial compound by its head), so only a text with none of these
    counts as silent on it. A modifier alone does not speak of it (육아 in 육아시간 is not 육아휴직:
    Korean compounds are right-headed), nor does the stem made into another noun by another
    suffix (:data:`NOUN_SUFFIXES`: 이용 in 이용자 is not 이용료)."""
    if term_found(term, text):
        return True
    c = _compact(text)
    if term.pieces:
        return term.pieces[-1] in c
    if not (term.hangul and len(term.form) >= 3):
        return False
    stem, suffix = term.form[:-1], term.form[-1]
    return any(c[m.end():m.end() + 1] in (suffix, "") or c[m.end():m.end() + 1] not in NOUN_SUFFIXES
               for m in re.finditer(re.escape(stem), c))


# One-syllable suffixes that make another noun of a stem: 이용자 and 이용권 do not speak of 이용료.
NOUN_SUFFIXES = ko_questions.NOUN_SUFFIXES


def term_found(term: KeyTerm, text: str) -> bool:
    if term.hangul:
        return term.form in _compact(text)
    return term.form in _stems(text)


def holds_fact(kind: str, grain: str, text: str, limit: str = "") -> bool:
    """Whether ``text`` states a quantity that can answer a ``kind`` question of ``grain``
    (always True for a kind that is not numeric); ``limit``: see :func:`fitting`."""
    return kind not in QUANTITY_KINDS or fitting_quantities(kind, grain, text, limit) > 0


def fitting_quantities(kind: str, grain: str, text: str, limit: str = "") -> int:
    """How many quantities of ``text`` can answer a numeric ``kind`` question of ``grain`` (0 for
    another kind); ``limit``: see :func:`fitting`."""
    return len(fitting(kind, grain, text, limit))


def fitting(kind: str, grain: str, text: str, limit: str = "") -> list:
    """The quantities of ``text`` (:class:`rag.text.quantities.Quantity`) that can answer a numeric
    ``kind`` question of ``grain`` ([] for another kind). ``limit`` (``max`` / ``min``, the question's
    :func:`rag.text.conditions.asked_limit`) leaves out a bound of the other direction: "30일 이상인 경우"
    answers no "최대 며칠"."""
    want = QUANTITY_KINDS.get(kind)
    if want is None:
        return []
    from rag.text.facts import extract_quantities

    out = []
    for q in extract_quantities(text):
        if q.kind not in want or q.implied:
            continue
        if q.kind == "date" and kind != "deadline" and grain:
            continue  # 며칠 / 몇 년 / 몇 시간 ask for a length of time, not a date
        if q.kind == "period" and grain == "hours" and q.unit != "second":
            continue
        if q.kind == "period" and grain in ("days", "years") and q.unit == "second":
            continue
        if q.kind == "period" and grain == "years" and not _a_year_or_more(q):
            continue
        if limit and against_limit(text, q, limit):
            continue
        out.append(q)
    return out


def _a_year_or_more(q) -> bool:
    """A period of about a year or more (the answer to 몇 년; 18개월 is, 60일 is not)."""
    if q.unit == "month":
        return q.fvalue >= 12
    return q.unit == "day" and q.fvalue >= 360


def states_counter(counter: str, text: str) -> bool:
    """``text`` writes a number with ``counter`` (5급, 제1급, 3층); True for no counter."""
    return not counter or re.search(rf"\d\s*{re.escape(counter)}", unicodedata.normalize("NFKC", text)) is not None


# -- reading ---------------------------------------------------------------------------------
def _outside(spans: list[tuple[int, int]], start: int, end: int) -> bool:
    return not any(lo < end and start < hi for lo, hi in spans)


def _korean_terms(q: str, asked: list[tuple[int, int]]) -> list[KeyTerm]:
    """Key terms of a Korean question: kiwipiepy's content morphemes, or stripped words without it;
    nothing inside an asked span."""
    morphs = korean_morphemes(q)
    out: list[KeyTerm] = []
    if morphs is None:
        for m in re.finditer(r"\S+", q):
            w = re.sub(f"[^{HANGUL_SYLLABLES}]", "", m.group())
            w = _KO_SUFFIX.sub("", w) or w
            if w and w not in _KO_GENERIC and _outside(asked, m.start(), m.end()):
                out.append(KeyTerm(w, NOUN_WEIGHT if len(w) >= 2 else MINOR_WEIGHT, True, m.start()))
        return out
    for form, tag, at, n, pieces in _compounds(q, morphs):
        if form in _KO_GENERIC or not _outside(asked, at, at + n):
            continue
        if tag in ("SL", "SH"):
            out.extend(KeyTerm(s, NOUN_WEIGHT, False, at) for s in _EN(form) if s not in _EN_GENERIC)
        elif tag in _KIWI_NOUNS:
            form = "".join(form.split())  # a proper noun the analyzer read across a space (비잔티움 제국)
            out.append(KeyTerm(form, NOUN_WEIGHT if len(form) >= 2 else MINOR_WEIGHT, True, at, pieces))
        elif tag in _KIWI_STEMS and len(form) >= 2:
            out.append(KeyTerm(form, MINOR_WEIGHT, True, at))
    return out


_NOUNISH = ("NNG", "NNP", "NNB", "XSN", "XPN", "XR")


def _compounds(q: str, morphs: tuple[tuple[str, str, int, int], ...]
               ) -> list[tuple[str, str, int, int, tuple[str, ...]]]:
    """Morphemes, with the nouns of one whitespace word joined into one compound, from its first
    noun to its last (층간소음, 명절휴가비, 관용차를 → 관용차): the compound is the question's term,
    not its parts (the analyzer may cut a compound it does not know wrongly: 층+가+ㄴ+소음). A word
    whose nouns start with a counter (7개월째) gives no compound."""
    words: dict[int, list[tuple[str, str, int, int]]] = {}
    for m in morphs:
        words.setdefault(len(q[:m[2]].split(" ")) - 1 if m[2] else 0, []).append(m)
    out: list[tuple[str, str, int, int, tuple[str, ...]]] = []
    for _, ms in sorted(words.items()):
        nouns = [m for m in ms if m[1] in _NOUNISH and m[0] not in _KO_GENERIC]
        if nouns and any(m[1] in ("NNG", "NNP") for m in nouns) and nouns[0][1] != "NNB":
            lo, hi = nouns[0][2], nouns[-1][2] + nouns[-1][3]
            pieces = tuple(m[0] for m in ms if m[1] in ("NNG", "NNP") and len(m[0]) >= 2 and lo <= m[2] < hi)
            form = _KO_SUFFIX.sub("", "".join(q[lo:hi].split())) if hi - lo > 2 else q[lo:hi]
            out.append((form or q[lo:hi], "NNG", lo, hi - lo, pieces if len(pieces) > 1 else ()))
            out.extend((*m, ()) for m in ms if not lo <= m[2] < hi)
        else:
            out.extend((*m, ()) for m in ms)
    return out


def _english_terms(q: str, asked: list[tuple[int, int]]) -> list[KeyTerm]:
    out = []
    for m in re.finditer(r"[^\W_]+", q):
        if not _outside(asked, m.start(), m.end()):
            continue
        for s in _EN(m.group()):
            if s not in _EN_GENERIC and not s.isdigit():
                out.append(KeyTerm(s, NOUN_WEIGHT, False, m.start()))
    return out


def _key_terms(q: str) -> tuple[KeyTerm, ...]:
    """Key terms in question order, each form once (its first occurrence), the asked spans left out."""
    asked = [m.span() for m in _ASK.finditer(q)]
    terms = _korean_terms(q, asked) if HANGUL_SYLLABLE_RUN.search(q) else _english_terms(q, asked)
    seen: dict[str, KeyTerm] = {}
    for t in terms:
        if t.form and t.form not in seen:
            seen[t.form] = t
    return tuple(seen.values())


def _grain(text: str, kind: str) -> str:
    if kind not in ("period", "deadline"):
        return ""
    if _HOUR_GRAIN.search(text):
        return "hours"
    if _YEAR_GRAIN.search(text):
        return "years"
    return "days" if _DAY_GRAIN.search(text) else ""


_PLACE = re.compile(f"{ko_questions.PLACE_ASKED}|{en_questions.PLACE_ASKED}", re.IGNORECASE)


def _part_kind(asked: str, text: str) -> FactKind:
    """A part's kind: its interrogative's own kind (어디/where ask for a place or body, read as
    ``who``), else the part text's."""
    if _PLACE.search(asked):
        return "who"
    own = wanted_fact(asked)
    return own if own != OTHER_FACT else wanted_fact(text)


def _parts(q: str, terms: tuple[KeyTerm, ...]) -> tuple[QuestionPart, ...]:
    """One part per interrogative when there are two or more; a part runs from the end of the
    previous interrogative to the end of its own (the last one to the end of the question)."""
    asks = list(_ASK.finditer(q))
    if len(asks) < 2:
        return ()
    cuts = [0] + [m.end() for m in asks[:-1]] + [len(q)]
    parts = []
    for k, m in enumerate(asks):
        lo, hi = cuts[k], cuts[k + 1]
        text = q[lo:hi].strip(" ,.?")
        kind = _part_kind(m.group(), text)
        own = tuple(t for t in terms if lo <= t.start < hi)
        parts.append(QuestionPart(text, kind, _grain(m.group(), kind), own))
    return tuple(parts)


@lru_cache(maxsize=4096)
def analyze_question(question: str) -> QuestionAnalysis:
    """The reading of ``question`` (see the module docstring)."""
    q = " ".join(unicodedata.normalize("NFKC", question).split())
    kind = wanted_fact(q)
    if kind in QUANTITY_KINDS and not _ASK.search(q) and YES_NO.search(q):
        kind = "yesno"  # "가족수당을 각자 받을 수 있나요?": a noun like 수당 does not make it a question of amount
    terms = _key_terms(q)
    counter = m.group(1) if (m := _COUNTER.search(q)) else ""
    return QuestionAnalysis(q, detect_language(q), kind, _grain(q, kind), terms, _parts(q, terms), counter)
