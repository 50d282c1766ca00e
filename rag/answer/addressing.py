"""Does the answer address the question? The validator's check for every generator.

A cited answer can be true to its source and still answer another question ("How many days a week
can I work from home?" → "New hires attend a two-day orientation in their first week. [S1]").
:func:`addressing_violations` reads the question once (:func:`rag.text.question_analysis.analyze_question`)
and finds, over the answer's sentences (markers removed) and the locators and headings of the
blocks they cite:

1. **the asked kind of fact** (``does_not_address``): a numeric question (기한, 기간, 금액, 비율,
   횟수) needs a sentence stating a quantity of that kind, and for a duration of the asked grain
   (몇 시간 is not answered by "2주일"), and for a maximum (최대 며칠, 상한) or a minimum (최소) one that is
   no bound of the other direction ("30일 이상인 경우" says when a rule applies, not how far it goes:
   :func:`rag.text.conditions.against_limit`); 몇 급 / 몇 호봉 a number with that counter; a question of
   several parts needs that for each numeric part; a question for the value actually applied
   ("과태료가 실제로 얼마", :func:`rag.text.conditions.asks_actual`) needs one that is not a bound
   ("1억원 이하의 과태료" is the ceiling, not the fine);
2. **the question's key content** (``does_not_address``): the weighted share of the question's key
   terms found in one answer sentence (with the locators and headings of the blocks it cites) must
   reach ``validation.min_question_coverage`` (sentences that each name one term of the question
   do not add up to an answer). Where the wording differs (호텔비 in the question, 숙박비 in the
   law) but the sentence shares something with the question (coverage above 0), the embedder's
   cosine between the question and the answer reaching ``validation.address_min_cosine`` is
   enough (when a ``similarity`` is given). Skipped
   when the question and the cited text are in different languages (an English question about
   Korean text shares no terms with it), and for a question without key terms;
3. **the question's topic** (``does_not_address``): a noun the question marks as its topic with
   은/는 (:attr:`~rag.text.question_analysis.QuestionAnalysis.topics`: "재산등록은 몇 급부터"; of
   several, one is enough) must occur in the answer or the blocks it cites (their text, title, locator and heading), whole, by
   its head or by its stem (:meth:`~rag.text.question_analysis.QuestionAnalysis.silent_topics`; same-language pairs only).

Both are skipped without a question (``CitationValidator.validate(..., question=None)``).
"""
from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence

from rag.answer.contract import Violation
from rag.context.builder import ContextBlock
from rag.lang import detect_language
from rag.lang.ko.answers import ONLY_LIMIT_EXAMPLE
from rag.text.conditions import asks_actual, bounded
from rag.text.question_analysis import QuestionAnalysis, fitting, holds_fact, states_counter
from rag.text.sentences import marker_ids, strip_markers

_KIND_WORDS = {
    "deadline": "a deadline or period", "period": "a period", "amount": "an amount", "ratio": "a rate or ratio",
    "count": "a number of times, people or years",
}


def _block_context(block: ContextBlock) -> str:
    """What a cited block says about where its sentence sits: its locator and section heading (not
    the document title, which names the whole law or handbook)."""
    return " ".join(x for x in (block.locator, block.section) if x)


Similarity = Callable[[str, str], float]
"""(question, answer text) -> the embedder's cosine of the question's query embedding and the answer's."""


def addressing_violations(question: QuestionAnalysis, sentences: Sequence[str],
                          source_map: Mapping[str, ContextBlock], min_coverage: float, *,
                          similarity: Similarity | None = None, min_cosine: float | None = None) -> list[Violation]:
    """The ``does_not_address`` violations of an answered payload's ``sentences`` (with their
    markers) for ``question`` (see the module docstring)."""
    texts = [strip_markers(s) for s in sentences]
    cited = [source_map[x] for s in sentences for x in marker_ids(s) if x in source_map]
    out: list[Violation] = []
    answer = " ".join(texts)
    if question.counter and not any(states_counter(question.counter, t) for t in texts):
        out.append(Violation("does_not_address", f"the question asks for a number of {question.counter!r} but no "
                             "answer sentence states one; answer with the sentence of the source that states it, "
                             "or use status insufficient_evidence"))
    for p in question.asked_numbers:
        if not any(holds_fact(p.kind, p.grain, t, p.limit) for t in texts):
            grain = {"hours": " in hours", "years": " of a year or more"}.get(p.grain, "")
            what = f"{_KIND_WORDS[p.kind]}{grain}"
            part = f" (the part {p.text!r})" if question.parts else ""
            if p.limit and any(holds_fact(p.kind, p.grain, t) for t in texts):
                what = f"the {'maximum' if p.limit == 'max' else 'minimum'} as {what}"
                part += (" and the answer's values of that kind are only bounds of the other direction (a "
                         f"{'lower' if p.limit == 'max' else 'upper'} bound is a condition, not the limit)")
            out.append(Violation("does_not_address", f"the question asks for {what}{part} but no answer sentence "
                                 "states one; answer with the sentence of the source that states it, or use status "
                                 "insufficient_evidence"))
    if question.asked_numbers and asks_actual(question.text) and not any(
            not bounded(t, q) for p in question.asked_numbers for t in texts for q in fitting(p.kind, p.grain, t)):
        out.append(Violation("does_not_address", "the question asks for the value actually applied, but the answer "
                             f"states only a limit (\"{ONLY_LIMIT_EXAMPLE}\"); answer with the sentence that states "
                             "the value, or use status insufficient_evidence"))
    if not question.key_terms or not cited:
        return out
    langs = {detect_language(b.text) for b in cited}
    if question.language not in langs:
        return out  # a question in another language than its sources: no shared terms to compare
    context = " ".join(dict.fromkeys(f"{b.title} {_block_context(b)} {b.text}" for b in cited))  # the law named too
    absent = question.silent_topics([f"{answer} {context}"])
    if absent:
        out.append(Violation("does_not_address", f"the question is about {', '.join(map(repr, absent))} but the "
                             "answer and the sections it cites never name it; answer with the sentences that are "
                             "about it, or use status insufficient_evidence"))
    cov = max(question.coverage(t + " " + " ".join(_block_context(source_map[x]) for x in marker_ids(s)
                                                   if x in source_map))
              for s, t in zip(sentences, texts))
    if 0 < cov < min_coverage and similarity is not None and min_cosine is not None \
            and similarity(question.text, answer) >= min_cosine:
        return out
    if cov < min_coverage:
        missing = ", ".join(repr(t.form) for t in question.missing(answer)[:4])
        out.append(Violation("does_not_address", f"the answer covers {cov:.0%} of what the question is about "
                             f"(missing: {missing}); answer with the sentences that are about it, or use status "
                             "insufficient_evidence"))
    return out
