"""The embedded default generator: no LLM; it answers with the source sentences that answer the
question, each cited with itself as the quote.

1. **Units.** Every block is cut with the project's one segmenter
   (:func:`~rag.text.segment.segment`), so a unit is exactly one sentence, paragraph or item to the
   validator too; a list item is read with its lead sentence. Headings, amendment notes,
   markup-only lines, lines of drawn tables or formulas, URLs and defused injection artifacts are
   never units.
2. **What is asked.** The question is read once (:func:`~rag.text.question_analysis.analyze_question`):
   its kind (기한/기간, 금액, 비율, 횟수 ...), the grain of a duration (몇 시간 / 며칠 / 몇 년), the
   counter of 몇 급, and its parts ("하루 몇 시간, 일주일에 몇 시간"). For a numeric question a
   unit that states no fitting value is multiplied by ``extractive_kind_penalty``; for a question
   of several numeric parts, by the share of parts it answers. A unit whose brackets on a number
   a numeric question states all miss it ("4시간 이상인 공무원에게는 2만원" for a 3-hour trip;
   :mod:`rag.text.conditions`) is multiplied by the same penalty.
3. **Scores.** A lexical score (IDF-weighted share of the question's content terms in the unit,
   and in its whole block, which carries the article heading) picks the
   ``extractive_model_candidates`` best units; a model (``scorer``: the embedder's cosine between
   question and unit) then scores those, and the final score mixes both
   (``extractive_model_weight``). With ``extractive_ranker: learned`` the learned unit head
   (:mod:`rag.answer.unit_head`) turns the same signals into the probability that the unit answers,
   read against ``extractive_learned_floor``.
4. **Choice.** The best units above the floors that pass the validator's support check; after the
   first, a unit of a numeric question must state the asked fact too, and no definition follows
   (nothing that answers nothing), nor a unit of a bracket the question's number misses. Each
   numeric part left unanswered brings the best unit that answers it; a unit announcing a list
   brings its items (not those of other brackets). Then padding goes: a unit of another article
   than the lead stays only when it covers more of the question's key terms than the lead.
5. **Writing.** For a numeric question a short first line with the asked value as the source
   writes it ("2주일 이내", "1일 8시간, 1주 40시간"; ``extractive_answer_line``,
   :mod:`rag.answer.spans`: the value of the asker's bracket, never a bound on the asker's own
   number), then the units that state it (the asker's bracket first, then by key-term coverage and
   score), then the others in source order. The answer text is the unit without
   markup (``**``, escapes, ``<개정 …>`` notes, heading prefixes, enumerators), whitespace
   collapsed; the quote is the verbatim block text.
6. **Abstention.** Nothing reaches ``extractive_min_score``, the best match delegates the value
   (별표, a decree), or the result would not address the question (the validator's own
   :mod:`~rag.answer.addressing` check): ``insufficient_evidence`` with an empty answer (the
   pipeline shows the configured abstention message). So the generator never proposes what the
   validator would reject.
"""
from __future__ import annotations

import json
import logging
import re
import time
from dataclasses import replace
from typing import TYPE_CHECKING

from rag.answer.addressing import addressing_violations
from rag.answer.spans import answer_spans
from rag.answer.contract import (NO_CAPABILITIES, AnswerPayload, CitationItem, GenerationOutput, GenerationRequest,
                                 TokenUsage)
from rag.answer.support import check_support
from rag.answer.support import evidence_text
from rag.answer.units import (QUESTION_TERMS, SentenceScorer, Unit, case_numbers, holds_asked, idf_recall,  # noqa: F401
                              rule_scores, section_terms, unit_signals)
from rag.config import GenerationConfig, ValidationConfig
from rag.context.builder import ContextBundle
from rag.lang.en import answers as en_answers
from rag.lang.ko import answers as ko_answers
from rag.text.facts import extract_quantities
from rag.text.question_analysis import QuestionAnalysis, analyze_question, holds_fact
from rag.text.questions import QUANTITY_KINDS, wanted_fact
from rag.text.segment import NOTE, segment
from rag.text.sentences import answer_sentences
from rag.text.conditions import Given, bracket
from rag.text.lexical import content_terms, find_urls

if TYPE_CHECKING:
    from rag.answer.unit_head import UnitHead

logger = logging.getLogger(__name__)

_Unit = Unit  # the name used before the units moved to rag.answer.units
lexical_question_scores = idf_recall  # the name used before units and models

_HOSTILE_ARTIFACTS = ("[source tag removed]", "(ref S")
_HEADING_PREFIX = re.compile(r"^\s*#{1,6}\s*|" + ko_answers.ARTICLE_HEADING)
_ENUMERATOR = re.compile(r"^\s*(?:[①-⑳]|\(\d{1,2}\)|\d{1,2}\s*\\?\.|" + ko_answers.ITEM_ENUMERATOR + r")\s+")
_WORDCHAR = re.compile(r"[^\W_]")
_ANNOUNCES = re.compile(ko_answers.ANNOUNCES + "|" + en_answers.ANNOUNCES, re.IGNORECASE)
# A unit that says the value is set somewhere else: an appended table, a decree, a notice.
DELEGATION = re.compile(ko_answers.DELEGATION + "|" + en_answers.DELEGATION)


def clean_unit(raw: str) -> str:
    """The answer form of a source unit: markup, amendment notes, a leading heading and a leading
    paragraph/item enumerator removed, whitespace collapsed."""
    t = raw.replace("**", "").replace("__", "")
    t = re.sub(r"\\([.\-*_#()\[\]])", r"\1", t)
    t = NOTE.sub(" ", t)
    t = " ".join(t.split())
    for _ in range(3):  # "제7조 (제목) ① 1. …"
        t2 = _ENUMERATOR.sub("", _HEADING_PREFIX.sub("", t))
        if t2 == t:
            break
        t = t2
    return t.strip()




class ExtractiveGenerator:
    """No-LLM answers: the source units that answer the question, each cited with itself as the quote."""

    capabilities = NO_CAPABILITIES

    def __init__(self, config: GenerationConfig | None = None, scorer: SentenceScorer | None = None, *,
                 validation: ValidationConfig | None = None, head: "UnitHead | None" = None) -> None:
        """``config``: the ``generation`` section (``extractive_*`` keys). ``scorer``: the model that
        scores units against the question (None: lexical scores only). ``validation``: the
        ``validation`` section whose support check every chosen unit must pass. ``head``: the learned
        unit head (``generation.extractive_ranker: learned``) that turns the signals into the score;
        None: the hand-weighted rules."""
        self.config = config or GenerationConfig()
        self.validation = validation or ValidationConfig()
        self.scorer = scorer
        self.head = head
        self.name = "extractive" + ("+model" if scorer else "") + ("+learned" if head is not None else "")

    def units(self, bundle: ContextBundle) -> list[_Unit]:
        out = []
        c = self.config
        for bi, block in enumerate(bundle.blocks):
            lead = ""
            for si, seg in enumerate(segment(block.text)):
                raw = seg.text
                if seg.kind in ("heading", "article", "note"):
                    continue  # headings and amendment notes are not answers (nor leads)
                is_item = seg.kind == "item"
                if not is_item:
                    lead = clean_unit(raw)
                if find_urls(raw) or any(a in raw for a in _HOSTILE_ARTIFACTS):
                    continue  # URLs never reach an answer; defused injections are not answers
                if _DRAWING.search(raw):
                    continue  # a line of a drawn table or formula (│월 지급금액 = …│) is not a sentence
                text = clean_unit(raw)
                if len(text) < c.extractive_min_chars or not _WORDCHAR.search(text) or len(text) > 1000:
                    continue
                kinds = frozenset(q.kind for q in extract_quantities(text) if q.kind != "reference" and not q.implied)
                out.append(_Unit(bi, si, block.source_id, raw, text, kinds, bool(DELEGATION.search(text)),
                                 lead if is_item else "", block.section))
        return out

    def score(self, question: str, bundle: ContextBundle, units: list[_Unit]) -> list[_Unit]:
        """Units with their final scores, best first (ties: block order, then sentence order).

        The signals of :func:`~rag.answer.units.unit_signals`; the score is the learned unit head's
        calibrated probability that the unit answers (``head``), or else the hand-weighted
        :func:`~rag.answer.units.rule_scores`."""
        if not units:
            return []
        asked = analyze_question(question)
        sig = unit_signals(asked, bundle, units, self.config, self.scorer)
        if self.head is not None:
            final = [float(x) for x in self.head.probabilities(asked, bundle, units, sig)]
        else:
            final = rule_scores(sig, self.config.extractive_model_weight if self.scorer is not None else 0.0)
        ranked = [replace(u, score=final[i], lexical=sig.lexical[i], context=sig.context[i], pre=sig.pre[i],
                          model=sig.model[i], coverage=sig.coverage[i]) for i, u in enumerate(units)]
        ranked.sort(key=lambda u: (-u.score, u.block_pos, u.sent_pos))
        return ranked

    def compose(self, question: str, bundle: ContextBundle | None) -> AnswerPayload:
        """The answer: score the units, choose those that answer, complete the parts and lists,
        write the lines; abstain when the result would not address the question."""
        c = self.config
        asked = analyze_question(question)
        units = self.units(bundle) if bundle is not None else []
        ranked = self.score(question, bundle, units) if bundle is not None else []
        source_text = {b.source_id: evidence_text(b) for b in bundle.blocks} if bundle is not None else {}
        if ranked and self._delegated(question, ranked):
            logger.info("extractive: the best match says the value is set elsewhere (an appended table or a "
                        "decree): insufficient evidence")
            return _ABSTAIN
        if ranked and c.extractive_section_margin > 0:
            ranked = self._in_best_sections(question, bundle, ranked)
        chosen = self._choose(asked, ranked, source_text)
        if not chosen:
            best = ranked[0].score if ranked else 0.0
            logger.info("extractive: best unit score %.3f < floor %.3f: insufficient evidence", best, self.min_score)
            return _ABSTAIN
        chosen = self._with_parts(asked, chosen, ranked, source_text)
        chosen = self._with_list_items(chosen, units, source_text, case_numbers(asked))
        chosen = _without_padding(asked, chosen)
        payload = self._write(asked, chosen, source_text)
        if self.validation.check_addresses:
            similarity = (lambda q, a: float(self.scorer(q, [a])[0])) if self.scorer is not None else None
            problems = addressing_violations(asked, [s.text for s in answer_sentences(payload.answer)],
                                             bundle.source_map, self.validation.min_question_coverage,
                                             similarity=similarity, min_cosine=self._address_bar())
            if problems:
                logger.info("extractive: the best units do not address the question (%s): insufficient evidence",
                            problems[0].message)
                return _ABSTAIN
        return payload

    def _choose(self, asked: QuestionAnalysis, ranked: list[_Unit], source_text: dict[str, str]) -> list[_Unit]:
        """The best units above the floors that pass the support check, near-repeats skipped. For a
        numeric question a unit after the first must state the asked kind of fact too (a unit
        that states none answers nothing)."""
        c = self.config
        chosen: list[_Unit] = []
        given = case_numbers(asked)
        floor = self.min_score  # raised to relative_floor x the best unit that passes the support check
        for u in ranked:
            if u.score < floor or len(chosen) >= c.extractive_max_sentences:
                break
            if chosen and asked.numeric and not holds_asked(asked, u.text, directed=False):
                continue
            if chosen and bracket(u.text, given).applies is False:
                continue  # a bracket the question's own numbers do not fall in: another case
            if chosen and _DEFINES.search(u.text):
                continue  # a definition after the answer answers nothing the question asked
            terms = content_terms(u.text)
            if any(_overlap(terms, content_terms(x.text)) >= 0.8 for x in chosen):
                continue  # near-repeat of a chosen unit
            if not check_support(u.text, source_text[u.source_id], self.validation).supported:
                logger.debug("extractive: unit %s/%d fails the validator's support check", u.source_id, u.sent_pos)
                continue
            if not chosen:
                floor = max(floor, c.extractive_relative_floor * u.score)
            chosen.append(u)
        return chosen

    def _with_parts(self, asked: QuestionAnalysis, chosen: list[_Unit], ranked: list[_Unit],
                    source_text: dict[str, str]) -> list[_Unit]:
        """Each numeric part of a several-part question ("하루 몇 시간, 일주일에 몇 시간") is answered
        by a chosen unit, else the best-ranked unit above ``extractive_min_score`` that states it
        (and passes the support check) is added. A part nothing answers is left to the
        addressing check, which abstains."""
        out = list(chosen)
        for part in asked.numeric_parts:
            if any(holds_fact(part.kind, part.grain, u.text, part.limit) for u in out):
                continue
            for u in ranked:
                if u.score < self.min_score:
                    break
                if holds_fact(part.kind, part.grain, u.text, part.limit) and \
                        check_support(u.text, source_text[u.source_id], self.validation).supported:
                    out.append(u)
                    break
        return out

    def _answer_line(self, asked: QuestionAnalysis, first: list[_Unit], source_text: dict[str, str]) -> str:
        """The short answer line from the best unit's values (a several-part question: from every
        unit that states one), kept only when it passes the support check against its source on
        its own (a value shown without the words that bound it can be misread); else ""."""
        units = first if asked.parts else first[:1]
        spans = answer_spans(asked, units)
        while spans:
            sid = spans[0][1]
            text = ", ".join(t for t, x in spans if x == sid)
            if check_support(text, source_text[sid], self.validation).supported:
                return f"{text} [{sid}]"
            spans = spans[:-1]  # fewer values, each with less to misread
        return ""

    def _write(self, asked: QuestionAnalysis, chosen: list[_Unit], source_text: dict[str, str]) -> AnswerPayload:
        """The answer lines: for a numeric question first a short line with the asked values as the
        source writes them ("2주일 이내"), then the units that state the asked fact, best first,
        then the others in source order; every sentence carries its source's marker."""
        first, rest = _answer_order(asked, chosen)
        lines, cites = [], []
        line = self._answer_line(asked, first, source_text) if self.config.extractive_answer_line else ""
        if line:
            lines.append(line)
        for u in [*first, *rest]:
            marker = f" [{u.source_id}]"
            # every sentence the validator will see in this line carries the marker
            parts = [s.text for s in answer_sentences(u.text)] or [u.text]
            lines.append(" ".join(p + marker for p in parts))
            cites.append(CitationItem(source_id=u.source_id, claim=u.text, quote=u.raw))
        return AnswerPayload(status="answered", answer="\n".join(lines), citations=tuple(_unique(cites)))

    def _with_list_items(self, chosen: list[_Unit], units: list[_Unit], source_text: dict[str, str],
                         given: tuple[Given, ...]) -> list[_Unit]:
        """A chosen unit that announces a list (``다음 각 호의 어느 하나에 해당하는 경우``, "the
        following") says nothing without it: its items follow it into the answer (at most
        ``extractive_list_items``, each passing the support check), but not an item whose bracket
        the question's own numbers do not fall in (``given``)."""
        out = list(chosen)
        have = {(u.block_pos, u.sent_pos) for u in out}
        for u in chosen:
            if not _ANNOUNCES.search(u.text):
                continue
            items = [x for x in units if x.block_pos == u.block_pos and x.sent_pos > u.sent_pos and x.lead == u.text
                     and bracket(x.text, given).applies is not False]  # not the items of other cases
            for x in items[:self.config.extractive_list_items]:
                if (x.block_pos, x.sent_pos) not in have and \
                        check_support(x.text, source_text[x.source_id], self.validation).supported:
                    out.append(x)
                    have.add((x.block_pos, x.sent_pos))
        return out

    @property
    def min_score(self) -> float:
        """The floor a unit's score must reach: ``extractive_learned_floor`` for the learned head's
        probability, else ``extractive_min_score``."""
        c = self.config
        return c.extractive_learned_floor if self.head is not None else c.extractive_min_score

    def _address_bar(self) -> float | None:
        """The scorer's bar for "the answer addresses the question": a cosine, or the reader's probability."""
        v = self.validation
        return v.address_min_reader if self.config.extractive_scorer == "reader" else v.address_min_cosine

    def _in_best_sections(self, question: str, bundle: ContextBundle, ranked: list[_Unit]) -> list[_Unit]:
        """When another section's heading names the question's subject clearly better (by at least
        ``extractive_section_margin`` content terms) than the section of the best unit, that unit
        quotes the wrong article: keep only units of the best-named sections (none may qualify)."""
        named = [-1 if n is None else n for n in section_terms(question, bundle)]
        best = max(named)
        if best - max(named[ranked[0].block_pos], 0) < self.config.extractive_section_margin:
            return ranked
        keep = [u for u in ranked if named[u.block_pos] > best - self.config.extractive_section_margin]
        logger.info("extractive: the best unit's section names the question less well than another section; "
                    "%d of %d units kept", len(keep), len(ranked))
        return keep

    def _delegated(self, question: str, ranked: list[_Unit]) -> bool:
        """A numeric question whose best-matching unit delegates the value (``별표 2에 따른다``,
        ``법무부령으로 정한다``) and states no quantity of the wanted kind, while no unit stating one
        matches as well: the value is not in these sources. A delegating unit whose own block states
        a quantity of the wanted kind does not count."""
        want = QUANTITY_KINDS.get(wanted_fact(question))
        if want is None:
            return False
        answering = [u for u in ranked if u.kinds & want]
        stated_in = {u.block_pos for u in answering}
        # A delegation in a block that itself states the asked kind of value (① keeps records 15 years,
        # ② leaves their kinds to a decree) delegates something else.
        deleg = [u.pre for u in ranked if u.delegates and not u.kinds & want and u.block_pos not in stated_in]
        return bool(deleg) and max(deleg) > max((u.pre for u in answering), default=0.0)

    def warm(self, question: str) -> None:
        """Load the scorer's model: one sentence (the question itself) scored against ``question``."""
        if self.scorer is not None:
            self.scorer(question, [question])

    def generate(self, request: GenerationRequest) -> GenerationOutput:
        t0 = time.perf_counter()
        payload = self.compose(request.question, request.bundle)
        raw = json.dumps(payload.model_dump(mode="json"), ensure_ascii=False)
        return GenerationOutput(raw, payload, None, TokenUsage(), time.perf_counter() - t0, self.name, "stop", 0)

    async def agenerate(self, request: GenerationRequest) -> GenerationOutput:
        return self.generate(request)


_DRAWING = re.compile(r"[\u2500-\u257f]|<img\b", re.IGNORECASE)
_DEFINES = re.compile(ko_answers.DEFINES + "|" + en_answers.DEFINES)
_ABSTAIN = AnswerPayload(status="insufficient_evidence", answer="", citations=())


def _answer_order(asked: QuestionAnalysis, chosen: list[_Unit]) -> tuple[list[_Unit], list[_Unit]]:
    """(the units that state the asked fact, the unit of the asker's bracket first, then best
    first; the other units in source order)."""
    given = case_numbers(asked)
    first = [u for u in chosen if asked.numeric and holds_asked(asked, u.text)]
    first.sort(key=lambda u: (bracket(u.text, given).closeness, -u.coverage, -u.score, u.block_pos, u.sent_pos))
    rest = sorted((u for u in chosen if u not in first), key=lambda u: (u.block_pos, u.sent_pos))
    return first, rest


def _without_padding(asked: QuestionAnalysis, chosen: list[_Unit]) -> list[_Unit]:
    """The chosen units less those of another article than the answer's lead unit that cover no more
    of the question's key terms than the lead does (another article, no closer to the question:
    padding). A unit closer to the question than the lead keeps its article's units too (a list
    item its list); a numeric part that only a dropped unit answers brings that unit back."""
    if len(chosen) < 2:
        return chosen
    first, _ = _answer_order(asked, chosen)
    lead = first[0] if first else max(chosen, key=lambda u: (u.score, -u.block_pos, -u.sent_pos))
    anchors = [lead] + [u for u in chosen if u.coverage > lead.coverage]
    keep = [u for u in chosen if any(_same_article(u, a) for a in anchors)]  # a list stays whole
    for part in asked.numeric_parts:
        if not any(holds_fact(part.kind, part.grain, u.text, part.limit) for u in keep):
            back = next((u for u in chosen
                         if u not in keep and holds_fact(part.kind, part.grain, u.text, part.limit)), None)
            if back is not None:
                keep.append(back)
    return keep


def _same_article(a: _Unit, b: _Unit) -> bool:
    """Same block, or blocks of one source under the same section heading (an article cut in chunks)."""
    return a.block_pos == b.block_pos or (a.source_id == b.source_id and bool(a.section) and a.section == b.section)


def _unique(cites: list[CitationItem]) -> list[CitationItem]:
    seen: set[tuple[str, str]] = set()
    out = []
    for c in cites:
        if (c.source_id, c.quote) not in seen:
            seen.add((c.source_id, c.quote))
            out.append(c)
    return out


def _overlap(a: frozenset[str], b: frozenset[str]) -> float:
    return len(a & b) / max(1, min(len(a), len(b)))
