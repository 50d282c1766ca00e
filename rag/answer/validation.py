"""Server-side validation of a generated answer against the prompt's source map.

Checks (every failure is a typed :class:`Violation`, nothing is silently dropped):

1. schema: the raw text parses as JSON and matches :class:`~rag.answer.contract.AnswerPayload`;
2. status contract: ``insufficient_evidence`` carries no citations or markers and no assertion
   (its answer is empty, or one of the configured abstention texts), ``answered`` has a
   non-empty answer and at least one citation;
3. source ids: every citation and every ``[S#]`` marker names a block of this prompt;
4. sentence coverage (seed 001): every answer sentence carries at least one valid marker,
   and every id a sentence uses has a citation entry;
5. quotes (seed 002): each quote occurs in its cited block after NFKC and whitespace
   normalization;
6. support (:func:`rag.answer.support.check_support`, the check the extractive generator uses
   too): each cited sentence, and each citation's claim, reaches the support threshold against
   its blocks (clause-aligned lexical term recall and/or an injected embedder's cosine), states
   no number, amount, date, period, ratio or statute reference its blocks do not state where
   it restates them (``number_mismatch``), and does not flip an obligation, permission or
   prohibition (``negation_mismatch``). The block's locator (``제16조제1항``) counts as block
   text for references;
7. no URL in the answer, a claim or a quote (the server's links come from the source map only);
8. no citation repeated: the same source and quote twice is ``duplicate_citation``;
9. with the question: the answer addresses it (:mod:`rag.answer.addressing`): the asked kind of
   fact is stated and enough of the question's key content is covered (``does_not_address``).

:meth:`CitationValidator.validate` parses (1, :func:`parse_answer`), then runs :data:`CHECKS` in
order, each a function from a :class:`CheckInput` to a :class:`CheckOutput`; the violations come out
in that order:

- :func:`check_urls` (7);
- :func:`check_status` (2; an ``insufficient_evidence`` payload stops here);
- :func:`check_citations`: per citation, its source id (3), its quote (5), its claim's support (6);
- :func:`check_sentence_markers`: per sentence, its marker ids (3) and coverage (4);
- :func:`check_sentence_support`: per sentence, its support (6);
- :func:`check_citations_referenced`: every citation is used by a marker (4);
- :func:`check_duplicates` (8);
- :func:`check_addresses` (9; only when the question is given and ``validation.check_addresses``).

Citations are resolved only from the source map: a URL or name the model writes never
becomes a link.
"""
from __future__ import annotations

import logging
import time
from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass
from functools import cached_property
from typing import TYPE_CHECKING

import numpy as np

from rag.config import ValidationConfig
from rag.context.builder import ContextBlock
from rag.errors import ConfigError
from rag.answer.addressing import addressing_violations
from rag.answer.contract import AnswerPayload, Violation, ViolationCode, parse_payload
from rag.answer.entailment import Entail, entailment_violations
from rag.answer.report import CitationCheck, ResolvedCitation, SentenceCheck, ValidationReport, resolve_citation
from rag.answer.support import SupportCheck, check_support, decide, evidence_text
from rag.text.question_analysis import QuestionAnalysis, analyze_question
from rag.text.sentences import Sentence, answer_sentences, marker_ids, strip_markers
from rag.text.lexical import find_urls, normalize, quote_found, unmark
from rag.models.embedders import cosines

if TYPE_CHECKING:
    from rag.models.embedders import Embedder

logger = logging.getLogger(__name__)

def _plural(items: Sequence[str]) -> str:
    return ", ".join(repr(x) for x in items)


def _fact_violations(check: SupportCheck, what: str, sources: str, source_id: str | None,
                     sentence: str | None) -> list[Violation]:
    out: list[Violation] = []
    if not check.numbers_ok:
        missing = [q.describe() for q in check.missing]
        misplaced = [q.describe() for q in check.misplaced if q.describe() not in missing]
        parts = []
        if missing:
            parts.append(f"states {_plural(missing)}, which {sources} does not state")
        if misplaced:
            parts.append(f"states {_plural(misplaced)}, which {sources} does not state for this (only elsewhere)")
        out.append(Violation("number_mismatch", f"{what} {' and '.join(parts)}; use only the numbers, dates and "
                             "units written in the source, and do not compute new ones",
                             source_id=source_id, sentence=sentence))
    if check.polarity is not None:
        out.append(Violation("negation_mismatch", f"{what} contradicts {sources}: {check.polarity}; keep the "
                             "source's must / may / must not", source_id=source_id, sentence=sentence))
    return out


def _short(text: str, n: int = 160) -> str:
    t = " ".join(text.split())
    return t if len(t) <= n else t[:n - 1] + "…"


# -- the checks --------------------------------------------------------------------------
@dataclass(frozen=True)
class CheckInput:
    """What every check reads: the parsed payload, the prompt's source map and the validator's settings."""

    payload: AnswerPayload
    source_map: Mapping[str, ContextBlock]
    config: ValidationConfig
    abstention_texts: frozenset[str]  # normalized (rag.text.normalize)
    cosines: Callable[[Sequence[str], Sequence[str]], np.ndarray]  # the embedder's, for the embedding methods
    question: QuestionAnalysis | None = None  # the question the answer is for, when given
    similarity: Callable[[str, str], float] | None = None  # question vs answer cosine (or the reader's probability)
    address_bar: float | None = None  # what ``similarity`` must reach (the validator passes its configured bar)
    entail: Entail | None = None  # the entailment model (validation.check_entailment), when the validator has one

    @cached_property
    def sentences(self) -> tuple[Sentence, ...]:
        return answer_sentences(self.payload.answer)

    def valid_ids(self, ids: Sequence[str]) -> tuple[str, ...]:
        return tuple(x for x in ids if x in self.source_map)


@dataclass(frozen=True)
class CheckOutput:
    """What one check found. ``final``: no later check runs."""

    violations: tuple[Violation, ...] = ()
    citations: tuple[CitationCheck, ...] = ()
    sentences: tuple[SentenceCheck, ...] = ()
    final: bool = False


Check = Callable[[CheckInput], CheckOutput]


def parse_answer(payload: AnswerPayload | str) -> AnswerPayload | Violation:
    """Check 1 (schema): raw text parsed into an :class:`AnswerPayload`, or the violation that says why not."""
    if not isinstance(payload, str):
        return payload
    parsed = parse_payload(payload)
    if parsed.payload is not None:
        return parsed.payload
    code: ViolationCode = "invalid_json" if (parsed.error or "").startswith(("not valid JSON", "empty")) else "schema"
    return Violation(code, f"the reply is not a valid answer object: {parsed.error}")


def check_urls(inp: CheckInput) -> CheckOutput:
    """Check 7: no URL in the answer, a claim or a quote (``validation.reject_urls``)."""
    if not inp.config.reject_urls:
        return CheckOutput()
    fields = [("the answer", inp.payload.answer)] + [(f"citation {i + 1}", f"{c.claim} {c.quote}")
                                                     for i, c in enumerate(inp.payload.citations)]
    return CheckOutput(tuple(Violation("url_in_answer", f"{where} contains the URL {url!r}; never write URLs, cite "
                                       "sources with their [S#] ids only")
                             for where, text in fields for url in find_urls(text)))


def check_status(inp: CheckInput) -> CheckOutput:
    """Check 2: the status contract. An ``insufficient_evidence`` payload ends the run here."""
    payload, answer = inp.payload, inp.payload.answer
    out: list[Violation] = []
    if payload.status == "insufficient_evidence":
        if payload.citations:
            out.append(Violation("status_contract", f"status is insufficient_evidence but {len(payload.citations)} "
                                 "citations were given; give none"))
        if marker_ids(answer):
            out.append(Violation("status_contract", "status is insufficient_evidence but the answer carries source "
                                 f"markers {list(marker_ids(answer))}; remove them"))
        if answer.strip() and normalize(answer) not in inp.abstention_texts:
            out.append(Violation("status_contract", "an insufficient_evidence answer carries no assertion: leave "
                                 "answer empty"))
        return CheckOutput(tuple(out), final=True)
    if not answer.strip():
        out.append(Violation("empty_answer", "status is answered but the answer text is empty"))
    if not payload.citations:
        out.append(Violation("status_contract", "status is answered but there are no citations; cite the sources "
                             "that support each sentence"))
    return CheckOutput(tuple(out))


def check_citations(inp: CheckInput) -> CheckOutput:
    """Checks 3, 5 and 6 for each citation in turn: its source id, its quote, its claim's support."""
    s, source_map = inp.config, inp.source_map
    known = [(i, c) for i, c in enumerate(inp.payload.citations) if c.source_id in source_map]
    embedding: dict[int, float] = {}
    if s.support_method != "lexical" and known and s.check_claims:
        sims = inp.cosines([c.claim for _, c in known], [source_map[c.source_id].text for _, c in known])
        embedding = {i: float(sims[k, k]) for k, (i, _) in enumerate(known)}
    violations: list[Violation] = []
    checks: list[CitationCheck] = []
    for i, c in enumerate(inp.payload.citations):
        block = source_map.get(c.source_id)
        if block is None:
            violations.append(Violation("unknown_source", f"citation {i + 1} names {c.source_id!r}, which is not a "
                                        f"source of this prompt (valid: {', '.join(source_map)})",
                                        source_id=c.source_id))
            checks.append(CitationCheck(i, c.source_id, False, c.claim, c.quote, False, 0.0, 0.0, None, False))
            continue
        found, quote_violation = _quote(i, c.source_id, c.quote, block, s)
        violations.extend(quote_violation)
        sc = check_support(c.claim, evidence_text(block), s, embedding=embedding.get(i))
        if not s.check_claims:
            checks.append(CitationCheck(i, c.source_id, True, c.claim, c.quote, found, sc.lexical, sc.lexical,
                                        sc.embedding, True))
            continue
        violations.extend(_claim_violations(i, c.source_id, c.claim, sc))
        checks.append(CitationCheck(i, c.source_id, True, c.claim, c.quote, found, sc.score, sc.lexical,
                                    sc.embedding, sc.supported, sc.numbers_ok, sc.polarity_ok, sc.quantity_texts(),
                                    sc.polarity))
    return CheckOutput(tuple(violations), citations=tuple(checks))


def _quote(i: int, source_id: str, quote: str, block: ContextBlock,
           s: ValidationConfig) -> tuple[bool, tuple[Violation, ...]]:
    """Check 5 for citation ``i``: (the quote occurs in its block, the violation if it does not or is missing)."""
    if not quote.strip():
        if s.require_quotes:
            return False, (Violation("missing_quote", f"citation {i + 1} ({source_id}) has no quote; copy a passage "
                                     "from that source exactly", source_id=source_id),)
        return False, ()
    if quote_found(quote, block.text):
        return True, ()
    return False, (Violation("quote_not_found", f"the quote of citation {i + 1} ({_short(quote, 80)!r}) does not "
                             f"occur in {source_id}; copy it exactly from that source", source_id=source_id),)


def _claim_violations(i: int, source_id: str, claim: str, sc: SupportCheck) -> list[Violation]:
    """Check 6 for the claim of citation ``i``: its score, numbers and polarity against its block."""
    out: list[Violation] = []
    if not sc.score_ok:
        out.append(Violation("unsupported_claim", f"the claim of citation {i + 1} ({_short(claim, 80)!r}) is not "
                             f"supported by {source_id} (support {sc.score:.2f})", source_id=source_id))
    out.extend(_fact_violations(sc, f"the claim of citation {i + 1} ({_short(claim, 80)!r})", source_id, source_id,
                                None))
    return out


def check_sentence_markers(inp: CheckInput) -> CheckOutput:
    """Checks 3 and 4 for each answer sentence: its markers name blocks of this prompt, it has at least
    one, and each id it uses has a citation entry."""
    cited = {c.source_id for c in inp.payload.citations}
    out: list[Violation] = []
    for k, sent in enumerate(inp.sentences):
        ids = marker_ids(sent.text)
        valid = inp.valid_ids(ids)
        for bad in (x for x in ids if x not in inp.source_map):
            out.append(Violation("unknown_marker", f"sentence {k + 1} cites [{bad}], which is not a source of this "
                                 "prompt", source_id=bad, sentence=sent.text))
        if not valid:
            if not ids:
                out.append(Violation("missing_marker", f"sentence {k + 1} has no [S#] marker: {_short(sent.text)!r}; "
                                     "end every sentence with the ids of its sources", sentence=sent.text))
            continue
        for x in valid:
            if x not in cited:
                out.append(Violation("marker_without_citation", f"sentence {k + 1} cites [{x}] but the citations "
                                     f"list has no entry for {x}", source_id=x, sentence=sent.text))
    return CheckOutput(tuple(out))


def check_sentence_support(inp: CheckInput) -> CheckOutput:
    """Check 6 for each answer sentence with a valid marker, against the union of its valid blocks."""
    s, source_map = inp.config, inp.source_map
    to_check = [(k, strip_markers(sent.text), inp.valid_ids(marker_ids(sent.text)))
                for k, sent in enumerate(inp.sentences)]
    to_check = [(k, text, valid) for k, text, valid in to_check if valid]
    embedding: dict[int, float] = {}
    if s.support_method != "lexical" and to_check:
        blocks = sorted({x for _, _, v in to_check for x in v})
        sims = inp.cosines([t for _, t, _ in to_check], [source_map[b].text for b in blocks])
        col = {b: j for j, b in enumerate(blocks)}
        embedding = {k: max(float(sims[r, col[x]]) for x in v) for r, (k, _, v) in enumerate(to_check)}
    checked = {k: text for k, text, _ in to_check}
    violations: list[Violation] = []
    checks: list[SentenceCheck] = []
    for k, sent in enumerate(inp.sentences):
        ids = marker_ids(sent.text)
        valid = inp.valid_ids(ids)
        if k not in checked:
            checks.append(SentenceCheck(k, sent.text, ids, valid, None, False))
            continue
        texts = tuple(evidence_text(source_map[x]) for x in valid)  # each block cached on its own
        sc = check_support(checked[k], texts[0] if len(texts) == 1 else texts, s, embedding=embedding.get(k))
        if not sc.score_ok:
            violations.append(Violation("unsupported_sentence", f"sentence {k + 1} ({_short(sent.text)!r}) is not "
                                        f"supported by {', '.join(valid)} (support {sc.score:.2f} < threshold)",
                                        sentence=sent.text))
        violations.extend(_fact_violations(sc, f"sentence {k + 1} ({_short(sent.text)!r})", ", ".join(valid), None,
                                           sent.text))
        checks.append(SentenceCheck(k, sent.text, ids, valid, sc.score, sc.supported, sc.numbers_ok, sc.polarity_ok,
                                    sc.quantity_texts(), sc.polarity))
    return CheckOutput(tuple(violations), sentences=tuple(checks))


def check_citations_referenced(inp: CheckInput) -> CheckOutput:
    """Check 4, the other way round: every citation of a known block is used by a marker (reported once per id)."""
    used = {x for sent in inp.sentences for x in inp.valid_ids(marker_ids(sent.text))}
    out: list[Violation] = []
    for c in inp.payload.citations:
        if c.source_id in inp.source_map and c.source_id not in used:
            out.append(Violation("citation_not_referenced", f"citation {c.source_id} is never cited by a [S#] marker "
                                 "in the answer", source_id=c.source_id))
            used.add(c.source_id)
    return CheckOutput(tuple(out))


def check_duplicates(inp: CheckInput) -> CheckOutput:
    """Check 8: the same citation (source id and normalized quote) given twice; a statute's paragraph mark
    with or without the bold the indexed text keeps (``**①**`` / ``①``, :func:`rag.text.lexical.unmark`) is
    the same quote."""
    seen: set[tuple[str, str]] = set()
    out: list[Violation] = []
    for i, c in enumerate(inp.payload.citations):
        key = (c.source_id, normalize(unmark(c.quote)))
        if key in seen:
            out.append(Violation("duplicate_citation", f"citation {i + 1} repeats an earlier citation of {c.source_id} "
                                 "with the same quote; cite each passage once", source_id=c.source_id))
        seen.add(key)
    return CheckOutput(tuple(out))


def check_addresses(inp: CheckInput) -> CheckOutput:
    """Check 9: the answer addresses the question (:func:`rag.answer.addressing.addressing_violations`)."""
    if inp.question is None or not inp.config.check_addresses:
        return CheckOutput()
    sentences = [s.text for s in inp.sentences]
    return CheckOutput(tuple(addressing_violations(inp.question, sentences, inp.source_map,
                                                   inp.config.min_question_coverage, similarity=inp.similarity,
                                                   min_cosine=inp.address_bar)))


def check_entailment(inp: CheckInput) -> CheckOutput:
    """The entailment model's second opinion on each cited claim (:mod:`rag.answer.entailment`)."""
    return CheckOutput(entailment_violations(inp.payload, inp.source_map, inp.config, inp.entail))


# The order the checks run in, and so the order of the violations in a report.
CHECKS: tuple[Check, ...] = (check_urls, check_status, check_citations, check_entailment, check_sentence_markers,
                             check_sentence_support, check_citations_referenced, check_duplicates, check_addresses)


def run_checks(inp: CheckInput, checks: Sequence[Check] = CHECKS) -> CheckOutput:
    """``checks`` in order, their findings concatenated; a ``final`` output stops the run."""
    violations: list[Violation] = []
    citations: list[CitationCheck] = []
    sentences: list[SentenceCheck] = []
    for check in checks:
        out = check(inp)
        violations.extend(out.violations)
        citations.extend(out.citations)
        sentences.extend(out.sentences)
        if out.final:
            break
    return CheckOutput(tuple(violations), tuple(citations), tuple(sentences))


class CitationValidator:
    """Validates payloads against a source map. Stores settings only; the embedder is optional."""

    def __init__(self, config: ValidationConfig | None = None, embedder: Embedder | None = None, *,
                 abstention_texts: Collection[str] = (), reader: Callable[[str, str], float] | None = None,
                 entailment: Entail | None = None) -> None:
        """``config``: the ``validation`` section. ``embedder`` is needed for the embedding support
        methods, and gives the addressing check its cosine (``address_min_cosine``). ``abstention_texts``: the only
        non-empty answers an ``insufficient_evidence`` payload may carry (compared after :func:`rag.text.normalize`).
        ``reader``: with ``address_model: reader``, the addressing check reads its probability against
        ``address_min_reader`` instead of the cosine. ``entailment``: (premise, claim) pairs -> probabilities of
        entailment / neutral / contradiction, read by :func:`rag.answer.entailment.entailment_violations` when
        ``check_entailment`` is on (ConfigError when it is on and no model is given)."""
        config = config or ValidationConfig()
        if config.support_method != "lexical" and embedder is None:
            raise ConfigError(f"validation.support_method={config.support_method!r} needs an embedder; pass one "
                              "or set support_method: lexical")
        if config.check_entailment and entailment is None:
            raise ConfigError("validation.check_entailment is on but the validator has no entailment model; pass "
                              "one (rag.rerank.entailment.EntailmentModel(...).probabilities) or turn the check off")
        self.config = config
        self.embedder = embedder
        self.entailment = entailment
        self.abstention_texts = frozenset(normalize(t) for t in abstention_texts if t.strip())
        # (question, answer) -> the reader's probability that the answer answers (validation.address_model: reader)
        self.reader = reader

    # -- support ---------------------------------------------------------------
    def _cosines(self, claims: Sequence[str], passages: Sequence[str]) -> np.ndarray:
        assert self.embedder is not None  # checked in __init__ for every method that embeds
        return cosines(self.embedder, claims, passages)

    def _similarity(self, question: str, answer: str) -> float:
        return float(self._cosines([question], [answer])[0, 0])

    def _decide(self, lex: float, emb: float | None) -> tuple[float, bool]:
        return decide(lex, emb, self.config)

    # -- main -------------------------------------------------------------------
    def validate(self, payload: AnswerPayload | str, source_map: Mapping[str, ContextBlock], *,
                 question: str | None = None) -> ValidationReport:
        """Run the checks. ``question``: the question the answer is for; with it the answer must also
        address it (:func:`check_addresses`); without it that check is skipped."""
        t0 = time.perf_counter()
        parsed = parse_answer(payload)
        if isinstance(parsed, Violation):
            return ValidationReport(None, "", None, (parsed,), (), (), (), time.perf_counter() - t0)
        asked = analyze_question(question) if question else None
        similarity = self._similarity if self.embedder is not None else None
        bar = self.config.address_min_cosine
        if self.reader is not None and self.config.address_model == "reader":
            similarity, bar = self.reader, self.config.address_min_reader
        found = run_checks(CheckInput(parsed, source_map, self.config, self.abstention_texts, self._cosines, asked,
                                      similarity, bar, self.entailment))
        return self._report(parsed, list(found.violations), found.citations, found.sentences, source_map, t0)

    def _report(self, payload: AnswerPayload, violations: list[Violation], checks: tuple[CitationCheck, ...],
                sents: tuple[SentenceCheck, ...], source_map: Mapping[str, ContextBlock],
                t0: float) -> ValidationReport:
        resolved: tuple[ResolvedCitation, ...] = ()
        if not violations:
            resolved = tuple(resolve_citation(source_map[c.source_id], c.claim, c.quote) for c in payload.citations)
        if violations:
            logger.info("validation: %d violations (%s)", len(violations),
                        ", ".join(sorted({v.code for v in violations})))
        return ValidationReport(payload.status, payload.answer, payload, tuple(violations), checks, sents, resolved,
                                time.perf_counter() - t0)
