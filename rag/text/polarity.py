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
_KO_PRED_END = re.compile(r"(?:다|며|고|되|나|함|음|됨|요|임|지|것|금지|불가|가능|니|라|야|면서)$")
_AUX = re.compile(r"^(?:아니|않|못|없|있|되|된|됨|하|한|함|해|말|안$|수$|것|필요|니|금지|불가)")
_NEG_WORD = re.compile(r"^(?:아니|않|못|없|말(?:아|고|라)|안$|금지|불가)|지(?:않|못|아니|말)|수없|서는안|서는아니")
_EN_SUB = re.compile(r"(?i)\b(?:if|unless|when|whenever|where|although|though|even if|even though|except|provided that|"
                     r"as long as|in case|before|after|until)\b[^,;]*[,;]")
# verbal negation only: "no association was noted" and "there is no" negate the clause, a "no" inside a noun
# phrase ("with or without", "no more than") does not
_EN_NEG = re.compile(r"(?i)\b(?:not|never|cannot|prohibited|forbidden|banned|barred)\b|n't\b|"
                     r"^\s*no\b(?!\s+(?:more|less|later|earlier)\b)|"
                     r"\b(?:is|are|was|were|be|been|has|have|had|there\s+is|there\s+are|shall|may|must)\s+no\b|"
                     r"\bno\s+(?:one|person|employee|member|party|individual|tenant|landlord)\b|"
                     r"\b(?!(?:with|of|and|or|for|in|at|to|by|from|on|that|whether|than)\b)[a-z]+\s+no\b(?!\s+(?:more|less|later))")
# A negated condition or concession of the same clause (…하지 아니하면, …하지 아니한 경우에는, …하지 않더라도,
# unless …, even if … not): it turns the sense of the final predicate around ("if not moved, not paid" says
# "paid only if moved"; "even if not moved, paid" says the opposite), so it counts as one more negation.
_KO_NEG_CONDITION = re.compile(r"지\s?(?:아니하|않으|않)면|지\s?(?:아니한|않은|아니하는|않는|못한|못하는)\s?(?:경우|때)|"
                               r"지\s?(?:아니하|않|못하)(?:았|였)?(?:더라도|어도|아도|여도)")
_EN_NEG_CONDITION = re.compile(r"(?i)\bunless\b|\b(?:if|when|where|even if|even though)\b[^,;]*\b(?:not|never|no)\b"
                               r"[^,;]*[,;]|\b(?:if|when|where|even if|even though)\b[^,;]*n't\b[^,;]*[,;]")


_BOUND_VERB = re.compile(r"^(?:초과|넘|상회|초월)|(?i:^exceed)")


_HEAD_ENDINGS = re.compile(
    r"(?:하여서는|해서는|어서는|아서는|하여야|해야|하여도|해도|하지|할|한다|하며|하고|하되|하여|함|된다|되지|될|되며|되고|되어|됨|"
    r"받지|받을|받는다|받아야|받으며|시키지|시킬|시킨다|이다|이며|이고|으로|로|에게|에|을|를|이|가|은|는|의|도|만)$")


def _head(word: str) -> str:
    """The stem of the word that carries a predicate (``압류하지`` → ``압류``, ``권리가`` → ``권리``, ``뺀다`` and
    ``빼지`` → ``빼``); '' when it is not specific (fewer than two syllables)."""
    runs = re.findall(r"[가-힣]+", word)
    if not runs:
        return ""
    stem = _HEAD_ENDINGS.sub("", runs[-1])
    if stem == runs[-1] and len(stem) > 1 and stem[-1] in "다지고며면게도":
        stem = stem[:-1]  # a bare verb form: 뺀다 / 빼지 / 뺄
        code = ord(stem[-1]) - 0xAC00
        if 0 <= code < 11172 and code % 28 in (4, 8):  # final ㄴ/ㄹ of a contracted ending: 뺀 → 빼
            stem = stem[:-1] + chr(ord(stem[-1]) - code % 28)
    return stem if len(stem) >= 2 else ""


# English clauses are compared only when they state a rule (must / shall / may / can / required / prohibited …):
# the sign of a descriptive sentence ("was not associated with") is often carried by words ("lacking")
# no grammar of predicates sees.
_EN_DEONTIC = re.compile(r"(?i)\b(?:must|shall|may|can|cannot|could|should|need|needs|required|requires|require|"
                         r"prohibited|forbidden|allowed|permitted|entitled|obliged|obligated|eligible)\b|can't|mustn't")


def clause_polarity(clause: str) -> tuple[int | None, bool, str]:
    """(sign, bound, head): the sign of the final predicate, whether that predicate is a bound
    (``초과할 수 없다``, ``넘지 못한다``, ``may not exceed``, which says the same as ``까지``/``이하``), and the
    stem of the predicate's head word (Korean only)."""
    text = clean_clause(strip_markers(clause)).rstrip(" .。!?\"'”’)]:;,")
    if not text:
        return None, False, ""
    if not re.search(r"[가-힣]", text):
        if not _EN_DEONTIC.search(text):
            return None, False, ""
        main = _EN_SUB.sub(" ", text) if _EN_SUB.sub(" ", text).strip() else text
        bound = bool(re.search(r"(?i)\bexceed", main))
        # English predicates rarely stack negations: any verbal negation makes the clause negative
        negs = (1 if _EN_NEG.search(main) else 0) + (1 if _EN_NEG_CONDITION.search(text) else 0)
        return (-1 if negs % 2 else 1), bound, ""
    words = text.split()
    last = re.sub(r"[^가-힣]+$", "", words[-1])
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


_EXCLUSIVE = re.compile(r"[^,.;]{0,16}?(?:까지만|에게만|에만|만을|만이|만\s|만$|에\s?한하여|에\s?한한다|에\s?한정)")
_UNIVERSAL = re.compile(r"(?<![가-힣])(?:모두|전액|전부|모든|누구나|언제나|언제든지)|(?i:\b(?:all|both|entire|full|"
                        r"whole|any time|always)\b)")


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


_EXCLUSIVE_ANY = re.compile(r"(?:까지만|에게만|에만|만을|만이)|에\s?한하여|에\s?한한다|에\s?한정|(?i:\bonly\b)")


_KO_STEM_SUFFIXES = tuple(sorted({
    "으로", "에서", "에게", "이다", "이며", "이고", "한다", "된다", "하며", "하고", "하여", "해야", "은", "는", "이", "가", "을", "를",
    "의", "에", "도", "와", "과", "로", "만", "다"}, key=len, reverse=True))
_ANTONYM_PREFIXES = ("불", "비", "미", "무")
_ANTONYM_PAIRS = (("허용", "금지"), ("포함", "제외"), ("유리", "불리"), ("유급", "무급"), ("가능", "불가"),
                  ("의무", "임의"), ("가산", "감액"))
_EN_ANTONYM_PREFIXES = ("un", "in", "non", "non-", "il", "ir", "im", "dis")


_STEM = re.compile(r"([가-힣]{2,}?)(?:" + "|".join(_KO_STEM_SUFFIXES) + r")(?![가-힣])|([가-힣]+)|([A-Za-z][A-Za-z-]+)")


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
    for w in word_stems(claim):
        korean = "가" <= w[0] <= "힣"
        prefixes = _ANTONYM_PREFIXES if korean else _EN_ANTONYM_PREFIXES
        min_rest = 2 if korean else 4
        for p in prefixes:
            if w.startswith(p) and len(w) - len(p) >= min_rest:
                forms.setdefault(w[len(p):], w)
            if len(w) >= min_rest:
                forms.setdefault(p + w, w)
        if korean and w.startswith("유") and len(w) >= 2:
            forms.setdefault("무" + w[1:], w)
    return forms


def may_have_opposites(claim: str, evidence_stems: frozenset[str], evidence: str) -> bool:
    """A cheap first test for :func:`opposite_words`: the claim has a word whose opposite form occurs among
    ``evidence_stems`` (:func:`word_stems` of the evidence), or one word of an opposite pair while
    ``evidence`` has the other."""
    return bool(antonym_forms(claim).keys() & evidence_stems) or any(
        (x in claim and y in evidence) or (y in claim and x in evidence) for x, y in _ANTONYM_PAIRS)


def opposite_words(claim: str, evidence: str) -> tuple[str, str] | None:
    """(the claim's word, its opposite in the evidence) when the claim uses the opposite of a word there
    (``유급``/``무급``, ``공개``/``비공개``, ``포함``/``제외``); None otherwise."""
    c, e = word_stems(claim), word_stems(evidence)
    for a, b in _ANTONYM_PAIRS:
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
