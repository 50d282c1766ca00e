"""The deterministic resolver: Korean and English follow-ups made standalone without an LLM.

1. **Does the question stand alone?** It does, and is returned unchanged, unless one of these
   holds (:func:`dependence`):
   - it holds an anaphor (``그건``, ``그 수당``, ``거기에``, ``그쪽``, ``그렇게``; ``it``, ``that``,
     ``those`` in a short English question);
   - it names a decree or "the law" without naming the law (``시행령에서는 …``);
   - it opens with ``그럼``, ``그러면``, ``그렇다면``, ``반대로``, ``만약``, or with a weaker
     connective (``그리고``, ``또``, ``근데``; ``what about``, ``and``, ``what if``) while asking
     nothing itself or naming at most one topic of its own (two in English);
   - it is an ellipsis: it asks no kind of fact itself (no 며칠 / 얼마 / 언제 / yes-no ending) and
     ends like ``신입사원은요?``, ``시행령에는요?``, ``30일이면요?``, or it is an English fragment
     of at most four words;
   - it has no content term at all (``그건 며칠이에요?``).
2. **Carry the topic.** The earlier user turns are resolved first, in order, so a third question
   leans on the second's resolved form. Then:
   - an ellipsis (:func:`elliptical`: it asks nothing itself and ends on a particle or has no verb or
     adjective of its own) is completed by the previous question: its own words first, the previous
     question after them (``신입사원은요?`` after ``연차 휴가는 며칠인가요?`` → ``신입사원은 연차
     휴가는 며칠인가요?``), so the asked kind of fact carries over too; a value it gives in a unit
     the previous question also used replaces the previous value (``만약 25년이면요?`` after ``근속
     15년 차 …`` → ``25년이면 근속 25년 차 …``): a changed condition, not a second one;
   - any other dependent question keeps its words and gets the previous question's content terms
     that it lacks appended (at most :data:`MAX_TOPIC_TERMS`);
   - a law's name the last assistant turn cited (``「근로기준법」``, ``…시행령``) and the
     resolved question does not hold is appended (at most two): the topic is often named only
     in the answer. A question that asks about a decree or rule without naming its law
     (``시행령에서는요?``) gets the law named before joined to it (``주택임대차보호법 시행령``).

Only words of the history and the question are ever used, so an unanswerable follow-up stays
unanswerable: the gate still decides on what the corpus holds.
"""
from __future__ import annotations

import re
from collections.abc import Sequence

from rag.conversation.model import Resolution, unchanged
from rag.lang.en import ENGLISH
from rag.lang.en import conversation as en_words
from rag.lang.ko import conversation as ko_words
from rag.text.analyzers import korean_morphemes
from rag.text.question_analysis import analyze_question
from rag.text.questions import OTHER_FACT
from rag.types import Turn

MAX_TOPIC_TERMS = 6
MAX_LAW_NAMES = 2

# Words that point back to something said before, anywhere in the question (그 + a noun: 그 수당,
# 그 은행, 그 통지; 거기 / 그쪽 / 그것; 그렇게 / 그런 …).
_KO_ANAPHOR = re.compile(ko_words.ANAPHOR)
_KO_THAT_NOUN = re.compile(ko_words.THAT_NOUN)
# Openers that continue the previous question: a strong one always does; a weak one only when
# the question asks nothing itself or names at most one topic.
_KO_STRONG_OPENER = re.compile(ko_words.STRONG_OPENER)
_KO_CONNECTIVE = re.compile(ko_words.CONNECTIVE)
# A decree or rule named without its law: "시행령에서는 …", "이 법에서는 …".
_KO_UNNAMED_LAW = re.compile(ko_words.UNNAMED_LAW)
_KO_ELLIPSIS = re.compile(ko_words.ELLIPSIS)
_KO_ASKS = re.compile(ko_words.ASKS)
_EN_CONNECTIVE = re.compile(en_words.CONNECTIVE, re.IGNORECASE)
_EN_PRONOUN = re.compile(en_words.PRONOUN, re.IGNORECASE)
_KO_DECREE = re.compile(ko_words.DECREE)
# A value with its unit (25년, 30일, 6개월, 10만원, 80퍼센트): a follow-up that gives one changes the condition.
_QUANTITY = re.compile(ko_words.QUANTITY)
_LAW_NAME = re.compile(ko_words.LAW_NAME)
_PREDICATE_TAGS = frozenset({"VV", "VA", "XSV", "XSA"})
# Key terms the analyzer keeps that carry no topic (만약 and 만일 it drops itself).
_NOT_TOPIC = ko_words.NOT_TOPIC | en_words.NOT_TOPIC


def own_terms(question: str) -> list[str]:
    """The question's content terms as it writes them (the analyzer's key terms, whose English
    forms are stems, read back as the words they start; less the words that name no topic)."""
    out: list[str] = []
    for k in analyze_question(question).key_terms:
        word = k.form
        if not k.hangul:
            m = re.match(r"[A-Za-z0-9][\w'-]*", question[k.start:])
            word = m.group(0) if m else k.form
        if word.lower() not in _NOT_TOPIC and word not in out:
            out.append(word)
    return out


def dependence(question: str) -> str:
    """Why ``question`` needs the earlier turns ("" when it stands alone); see the module docstring."""
    q = " ".join(question.split())
    a = analyze_question(q)
    terms = own_terms(q)
    asks = a.kind != OTHER_FACT
    if a.language == ENGLISH.code:
        words = re.findall(r"[A-Za-z0-9']+", q)
        opener = _EN_CONNECTIVE.match(q)
        if opener and (len(terms) <= 2 or not asks):
            return f"opens with {opener.group(0).strip()!r}"
        if _EN_PRONOUN.search(q) and len(terms) <= 2:
            return "refers back (it / that / they) with no topic of its own"
        if len(words) <= 4 and not asks:
            return "a fragment"
    else:
        if _KO_ANAPHOR.search(q) or _points_back(q):
            return ko_words.REFERS_BACK_REASON
        opener = _KO_CONNECTIVE.match(q)  # every strong opener is a connective
        if opener and (_KO_STRONG_OPENER.match(q) or len(terms) <= 1 or not asks):
            return f"opens with {opener.group(0).strip(' ,')!r}"
        if _KO_UNNAMED_LAW.search(q) and not _law_names(q):
            return "names a decree or the law without naming the law"
        if not asks and _KO_ELLIPSIS.search(q) and not _KO_ASKS.search(q) and len(terms) <= 3:
            return ko_words.ELLIPSIS_REASON
    if not terms:
        return "no content term of its own"
    return ""


def elliptical(question: str) -> bool:
    """Whether ``question`` leaves out what it asks, so the previous question's ask carries over: it
    asks no kind of fact itself and, in Korean, ends on a particle (``신입사원은요?``, ``30일이면요?``)
    or has no verb or adjective of its own (``그럼 퇴근은 몇 시예요?``); not ``면제되는 사람도
    있어요?``, which asks yes or no about a predicate of its own."""
    q = " ".join(question.split())
    a = analyze_question(q)
    if a.kind != OTHER_FACT:
        return False
    if a.language == ENGLISH.code:
        return True
    return bool(_KO_ELLIPSIS.search(q) and not _KO_ASKS.search(q)) or _no_predicate(q)


def _no_predicate(q: str) -> bool:
    """No verb or adjective in ``q`` (kiwipiepy's VV, VA and the derived XSV, XSA); False without
    kiwipiepy (the ending alone decides then)."""
    morphs = korean_morphemes(q)
    return morphs is not None and not any(tag in _PREDICATE_TAGS for _, tag, _, _ in morphs)


def _points_back(q: str) -> bool:
    """``그 수당``, ``그 은행``: ``그`` before a noun the question has not named itself ("관리기관은 그
    예치금을" after "예치금" earlier in the same question points inside it, not back)."""
    return any(m.group(1)[:2] not in q[:m.start()] for m in _KO_THAT_NOUN.finditer(q))


def _core(question: str) -> str:
    """An ellipsis without its opening connective and its closing ``요?`` (``그럼 신입사원은요?`` →
    ``신입사원은``; ``What about new hires?`` → ``new hires``)."""
    q = " ".join(question.split())
    q = _EN_CONNECTIVE.sub("", q) if analyze_question(q).language == ENGLISH.code else _KO_CONNECTIVE.sub("", q)
    q = re.sub(ko_words.CLOSING_YO, "", q)
    return q.rstrip(" ?？")


def _law_names(text: str) -> list[str]:
    out: list[str] = []
    for m in _LAW_NAME.finditer(text):
        name = m.group(1) or m.group(2)
        if name not in out:
            out.append(name)
    return out


def changed_values(core: str, previous: str) -> str:
    """``previous`` with its value in a unit ``core`` gives again replaced by ``core``'s value (only
    where each has one value in that unit: with two, which one changed is not known)."""
    def unit(m: re.Match) -> str:
        return "".join(m.group(2).split())

    given: dict[str, list[str]] = {}
    for m in _QUANTITY.finditer(core):
        given.setdefault(unit(m), []).append(m.group(0))
    held: dict[str, int] = {}
    for m in _QUANTITY.finditer(previous):
        held[unit(m)] = held.get(unit(m), 0) + 1
    new = {u: vs[0] for u, vs in given.items() if len(vs) == 1 and held.get(u) == 1}
    if not new:
        return previous
    return _QUANTITY.sub(lambda m: new.get(unit(m), m.group(0)), previous)


def _laws_for(question: str, previous: str, answer: str, text: str) -> list[str]:
    """The law names to append (module docstring): the answer's, or for a question about a decree
    or rule of an unnamed law, the law named before joined to the decree."""
    decree = _KO_DECREE.search(question)
    if decree is None or _law_names(question):
        return [n for n in _law_names(answer) if n not in text][:MAX_LAW_NAMES]
    out: list[str] = []
    for name in _law_names(answer) + _law_names(previous):
        base = re.sub(ko_words.DECREE_SUFFIX, "", name)
        joined = name if name.endswith(decree.group(0)) else f"{base} {decree.group(0)}"
        if joined not in out and joined not in text:
            out.append(joined)
    return out[:MAX_LAW_NAMES]


class RulesResolver:
    """The deterministic resolver (module docstring)."""

    def __init__(self, max_topic_terms: int = MAX_TOPIC_TERMS) -> None:
        self.max_topic_terms = max_topic_terms

    def resolve(self, question: str, history: Sequence[Turn]) -> Resolution:
        previous, answer = self._context(history)
        if previous is None:
            return unchanged(question, "no earlier question")
        return self._one(question, previous, answer)

    def _context(self, history: Sequence[Turn]) -> tuple[str | None, str]:
        """The previous user question, resolved against the turns before it, and the assistant
        turn after it ("" when none)."""
        resolved: str | None = None
        answer = ""
        for turn in history:
            if turn.role == "user" and turn.content.strip():
                resolved = turn.content if resolved is None else self._one(turn.content, resolved, answer).question
                answer = ""
            elif turn.role == "assistant":
                answer = turn.content
        return resolved, answer

    def _one(self, question: str, previous: str, answer: str) -> Resolution:
        why = dependence(question)
        if not why:
            return unchanged(question, "stands alone")
        carried: list[str] = []
        if elliptical(question):
            core = _core(question)
            before = changed_values(core, previous)
            text = f"{core} {before}".strip()
            carried.append(before)
        else:
            have = set(own_terms(question))
            topic = [t for t in own_terms(previous) if t not in have][:self.max_topic_terms]
            text = " ".join([question.strip(), *topic])
            carried.extend(topic)
        laws = _laws_for(question, previous, answer, text)
        if laws:
            text = " ".join([text, *laws])
            carried.extend(laws)
        return Resolution(asked=question, question=text, standalone=False, method="rules", carried=tuple(carried),
                          reason=why)
