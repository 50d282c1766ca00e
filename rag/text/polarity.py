"""The polarity of predicates (must / may / must not): the sign of a clause's final predicate, whether
that predicate is a bound, the stem of its head word, the opposite forms of words (``유급``/``무급``) and
the limits a claim may drop (``1명에게만`` / ``모두``). Pure functions over text, used by the evidence
windows and :func:`rag.text.facts.polarity_mismatch`; :func:`rag.text.facts.clear_caches` empties the
caches.

Polarity (:func:`predicate_polarity`)
    The polarity of a clause is the sign of its final predicate: the number of negators in
    the predicate chain that ends the clause (``하지 아니한다``, ``할 수 없다``, ``하여서는 아니
    된다``, ``않아도 된다``, ``권리가 없다``, ``금지된다``, ``must not``, ``may not``, ``cannot``,
    ``never``, ``prohibited``) taken modulo two, so a double negative in the predicate itself
    (``하지 아니하면 아니 된다``, ``하지 아니할 수 없다``) is affirmative. Negations elsewhere in the
    clause (modifiers, ``사유 없이``, ``지장이 없으면``) do not count, with one exception: a negated
    condition or concession of the predicate's own verb phrase (``…하지 아니하면``, ``…하지
    아니한 경우에는``, ``…하지 않더라도``, ``unless``, ``even if … not``) counts as one more
    negation, so ``인도하지 아니하면 받을 수 없다`` and ``인도해야 받을 수 있다`` agree, and
    ``이전하지 아니한 경우에는 지급하지 아니한다`` and ``이사하지 않았더라도 지급한다`` do not.
    A bound (``초과할 수 없다``, ``넘지 못한다``, ``may not exceed``) says the same as ``까지``
    and is compared only with another bound.
"""
from __future__ import annotations

import re
from functools import lru_cache

from rag.lang import HANGUL_SYLLABLE, HANGUL_SYLLABLES, has_hangul
from rag.lang.en import polarity as en_polarity
from rag.lang.ko import polarity as ko_polarity
from rag.text.quantities import extract_quantities, normalize_facts
from rag.text.sentences import strip_markers

__all__ = ["antonym_forms", "clause_polarity", "clean_clause", "dropped_limit", "may_drop_limit",
           "may_have_opposites", "opposite_words", "predicate_polarity", "strip_brackets", "word_stems"]


# --------------------------------------------------------------------------- clauses
_PAREN = re.compile(r"\([^()]*\)|\[[^\[\]]*\]|<[^<>]*>")


def strip_brackets(text: str, replacement: str = "") -> str:
    """``text`` with what stands in ``( )``, ``[ ]`` and ``< >`` replaced by ``replacement``, nested
    pairs included."""
    prev = None
    while prev != text:
        prev, text = text, _PAREN.sub(replacement, text)
    return text


def clean_clause(text: str) -> str:
    """A clause as polarity reads it: without what stands in brackets, bold marks and extra whitespace."""
    return " ".join(strip_brackets(text).replace("**", " ").split())


# --------------------------------------------------------------------------- polarity
_KO_PRED_END = re.compile(ko_polarity.PREDICATE_END)
_AUX = re.compile(ko_polarity.AUXILIARY)
_NEG_WORD = re.compile(ko_polarity.NEGATION_WORD)
_EN_SUB = re.compile(en_polarity.SUBORDINATE)
_EN_NEG = re.compile(en_polarity.NEGATION)
# A negated condition or concession of the same clause (…하지 아니하면, …하지 아니한 경우에는, …하지 않더라도,
# unless …, even if … not): it turns the sense of the final predicate around ("if not moved, not paid" says
# "paid only if moved"; "even if not moved, paid" says the opposite), so it counts as one more negation.
_KO_NEG_CONDITION = re.compile(ko_polarity.NEGATED_CONDITION)
_EN_NEG_CONDITION = re.compile(en_polarity.NEGATED_CONDITION)


_BOUND_VERB = re.compile(ko_polarity.BOUND_VERB + "|" + en_polarity.BOUND_VERB)
_EN_BOUND = re.compile(en_polarity.BOUND)


_HEAD_ENDINGS = re.compile(ko_polarity.HEAD_ENDINGS)
_HANGUL_WORD = re.compile(f"[{HANGUL_SYLLABLES}]+")
_NOT_HANGUL_TAIL = re.compile(f"[^{HANGUL_SYLLABLES}]+$")


def _head(word: str) -> str:
    """The stem of the word that carries a predicate (``압류하지`` → ``압류``, ``권리가`` → ``권리``, ``뺀다`` and
    ``빼지`` → ``빼``); '' when it is not specific (fewer than two syllables)."""
    runs = _HANGUL_WORD.findall(word)
    if not runs:
        return ""
    stem = _HEAD_ENDINGS.sub("", runs[-1])
    if stem == runs[-1] and len(stem) > 1 and stem[-1] in ko_polarity.BARE_VERB_ENDINGS:
        stem = stem[:-1]  # a bare verb form: 뺀다 / 빼지 / 뺄
        code = ord(stem[-1]) - 0xAC00
        if 0 <= code < 11172 and code % 28 in (4, 8):  # final ㄴ/ㄹ of a contracted ending: 뺀 → 빼
            stem = stem[:-1] + chr(ord(stem[-1]) - code % 28)
    return stem if len(stem) >= 2 else ""


# English clauses are compared only when they state a rule (must / shall / may / can / required / prohibited …):
# the sign of a descriptive sentence ("was not associated with") is often carried by words ("lacking")
# no grammar of predicates sees.
_EN_DEONTIC = re.compile(en_polarity.DEONTIC)


def clause_polarity(clause: str) -> tuple[int | None, bool, str]:
    """(sign, bound, head): the sign of the final predicate, whether that predicate is a bound
    (``초과할 수 없다``, ``넘지 못한다``, ``may not exceed``, which says the same as ``까지``/``이하``), and the
    stem of the predicate's head word (Korean only)."""
    text = clean_clause(strip_markers(clause)).rstrip(" .。!?\"'”’)]:;,")
    if not text:
        return None, False, ""
    if not has_hangul(text):
        if not _EN_DEONTIC.search(text):
            return None, False, ""
        main = _EN_SUB.sub(" ", text) if _EN_SUB.sub(" ", text).strip() else text
        bound = bool(_EN_BOUND.search(main))
        # English predicates rarely stack negations: any verbal negation makes the clause negative
        negs = (1 if _EN_NEG.search(main) else 0) + (1 if _EN_NEG_CONDITION.search(text) else 0)
        return (-1 if negs % 2 else 1), bound, ""
    words = text.split()
    last = _NOT_HANGUL_TAIL.sub("", words[-1])
    if not last or not _KO_PRED_END.search(last):
        return None, False, ""
    tail = [last]
    i = len(words) - 2
    while i >= 0 and len(tail) < 6 and _AUX.match(tail[0]):
        tail.insert(0, words[i])
        i -= 1
    negs = sum(1 for w in tail if _NEG_WORD.search(w))
    negs += 1 if _KO_NEG_CONDITION.search(" ".join(words[:i + 1])) else 0  # …하지 아니하거나 …하지 아니하면: one
    return (-1 if negs % 2 else 1), any(_BOUND_VERB.match(w) for w in tail), _head(tail[0])


def predicate_polarity(clause: str) -> int | None:
    """+1 affirmative, -1 negative, None when the clause ends in no predicate (a noun phrase)."""
    return clause_polarity(clause)[0]


_EXCLUSIVE = re.compile(r"[^,.;]{0,16}?" + ko_polarity.EXCLUSIVE_LIMIT)
_UNIVERSAL = re.compile(ko_polarity.UNIVERSAL + "|" + en_polarity.UNIVERSAL)


def may_drop_limit(claim: str) -> bool:
    """The claim says ``모두``/``전액``/``all`` and no ``만``/``only``: it could drop a limit of its source
    (see :func:`dropped_limit`)."""
    return not _EXCLUSIVE_ANY.search(claim) and bool(_UNIVERSAL.search(claim))


def dropped_limit(claim: str, evidence: str) -> str | None:
    """The evidence limits a quantity (``1명에게만``, ``2분의 1…까지만``) and the claim drops the limit and
    says ``모두``/``전액``/``all`` instead: the quantity of the claim's statement is flipped."""
    if not may_drop_limit(claim) or _UNIVERSAL.search(evidence):
        return None
    t = normalize_facts(evidence)
    for q in extract_quantities(evidence):
        if q.kind != "reference" and _EXCLUSIVE.match(t, q.end):
            return q.text
    return None


_EXCLUSIVE_ANY = re.compile(ko_polarity.EXCLUSIVE_ANY + "|" + en_polarity.EXCLUSIVE_ANY)


_KO_STEM_SUFFIXES = tuple(sorted(ko_polarity.STEM_SUFFIXES, key=len, reverse=True))
_STEM = re.compile(f"([{HANGUL_SYLLABLES}]{{2,}}?)(?:" + "|".join(_KO_STEM_SUFFIXES) + f")(?![{HANGUL_SYLLABLES}])|"
                   f"([{HANGUL_SYLLABLES}]+)|([A-Za-z][A-Za-z-]+)")


@lru_cache(maxsize=20_000)
def word_stems(text: str) -> frozenset[str]:
    """Words with their longest ending or particle stripped (Korean; a stem keeps two syllables), or
    lowercased (English)."""
    return frozenset(m.group(1) or m.group(2) or m.group(3).lower() for m in _STEM.finditer(text))


@lru_cache(maxsize=20_000)
def antonym_forms(claim: str) -> dict[str, str]:
    """The opposite forms of the claim's words (``공개`` → ``비공개``, ``불공개``…; ``유급`` → ``무급``;
    ``unpaid`` → ``paid``), each mapped to the claim's word."""
    forms: dict[str, str] = {}
    having, lacking = ko_polarity.PRESENCE_SWAP
    for w in word_stems(claim):
        korean = HANGUL_SYLLABLE.match(w[0]) is not None
        prefixes = ko_polarity.ANTONYM_PREFIXES if korean else en_polarity.ANTONYM_PREFIXES
        min_rest = 2 if korean else 4
        for p in prefixes:
            if w.startswith(p) and len(w) - len(p) >= min_rest:
                forms.setdefault(w[len(p):], w)
            if len(w) >= min_rest:
                forms.setdefault(p + w, w)
        if korean and w.startswith(having) and len(w) >= 2:
            forms.setdefault(lacking + w[1:], w)
    return forms


def may_have_opposites(claim: str, evidence_stems: frozenset[str], evidence: str) -> bool:
    """A cheap first test for :func:`opposite_words`: the claim has a word whose opposite form occurs among
    ``evidence_stems`` (:func:`word_stems` of the evidence), or one word of an opposite pair while
    ``evidence`` has the other."""
    return bool(antonym_forms(claim).keys() & evidence_stems) or any(
        (x in claim and y in evidence) or (y in claim and x in evidence) for x, y in ko_polarity.ANTONYM_PAIRS)


def opposite_words(claim: str, evidence: str) -> tuple[str, str] | None:
    """(the claim's word, its opposite in the evidence) when the claim uses the opposite of a word there
    (``유급``/``무급``, ``공개``/``비공개``, ``포함``/``제외``); None otherwise."""
    c, e = word_stems(claim), word_stems(evidence)
    for a, b in ko_polarity.ANTONYM_PAIRS:
        for x, y in ((a, b), (b, a)):
            if x not in claim or y not in evidence or x in evidence:
                continue  # a substring test first: the pairs rarely occur at all
            if any(w.startswith(x) for w in c - e) and any(w.startswith(y) for w in e - c):
                return x, y
    forms = antonym_forms(claim)
    for form in sorted(forms.keys() & e):
        word = forms[form]
        if word not in e and form not in c:
            return word, form
    return None
