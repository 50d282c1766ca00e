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
7. no URL in the answer, a claim or a quote (the server's links come from the source map only).

:meth:`CitationValidator.validate` parses (1, :func:`parse_answer`), then runs :data:`CHECKS` in
order, each a function from a :class:`CheckInput` to a :class:`CheckOutput`; the violations come out
in that order:

- :func:`check_urls` (7);
- :func:`check_status` (2; an ``insufficient_evidence`` payload stops here);
- :func:`check_citations`: per citation, its source id (3), its quote (5), its claim's support (6);
- :func:`check_sentence_markers`: per sentence, its marker ids (3) and coverage (4);
- :func:`check_sentence_support`: per sentence, its support (6);
- :func:`check_citations_referenced`: every citation is used by a marker (4).

Citations are resolved only from the source map: a URL or name the model writes never
becomes a link.
"""
from __future__ import annotations

import logging
import time
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal

import numpy as np

from rag.config import ValidationConfig
from rag.context.builder import ContextBlock
from rag.errors import ConfigError
from rag.answer.contract import AnswerPayload, Violation, ViolationCode, parse_payload
from rag.answer.support import SupportCheck, check_support, decide, evidence_text
from rag.text.segment import refine_locator
from rag.text.sentences import answer_sentences, marker_ids, strip_markers
from rag.text.lexical import find_urls, normalize, quote_found
from rag.index.embedders import cosines

if TYPE_CHECKING:
    from rag.index.embedders import Embedder

logger = logging.getLogger(__name__)

@dataclass(frozen=True)
class CitationCheck:
    index: int  # position in the payload's citations
    source_id: str
    known: bool
    claim: str
    quote: str
    quote_found: bool
    support: float  # the score the decision used (lexical, embedding, or the max of both)
    lexical_support: float  # clause-aligned lexical support (rag.text.facts.clause_support)
    embedding_support: float | None
    supported: bool  # score, numbers and polarity all pass
    numbers_ok: bool = True
    polarity_ok: bool = True
    missing_quantities: tuple[str, ...] = ()  # claim quantities (as written) its block does not state there
    polarity_reason: str | None = None


@dataclass(frozen=True)
class SentenceCheck:
    index: int
    text: str
    source_ids: tuple[str, ...]  # every id its markers name
    valid_ids: tuple[str, ...]  # those that exist in the source map
    support: float | None  # against the union of its valid blocks; None without valid markers
    supported: bool  # score, numbers and polarity all pass
    numbers_ok: bool = True
    polarity_ok: bool = True
    missing_quantities: tuple[str, ...] = ()
    polarity_reason: str | None = None


@dataclass(frozen=True)
class ResolvedCitation:
    """A citation as the server proves it: everything but ``claim`` and ``quote`` comes from the source map."""

    source_id: str
    evidence_id: str
    document_id: str
    document_version: str
    uri: str
    title: str
    page: int | None
    start_char: int
    end_char: int
    claim: str
    quote: str
    locator: str = ""  # the block's human locator (e.g. "제16조제1항"), from the source map


@dataclass(frozen=True)
class ValidationReport:
    status: Literal["answered", "insufficient_evidence"] | None  # None when the payload did not parse
    answer: str
    payload: AnswerPayload | None
    violations: tuple[Violation, ...]
    citations: tuple[CitationCheck, ...]
    sentences: tuple[SentenceCheck, ...]
    resolved: tuple[ResolvedCitation, ...]  # filled only when ``ok``
    latency_s: float

    @property
    def ok(self) -> bool:
        return not self.violations

    @property
    def codes(self) -> tuple[str, ...]:
        return tuple(v.code for v in self.violations)


def resolve(block: ContextBlock, claim: str, quote: str) -> ResolvedCitation:
    """A citation from the source map. The locator is made precise to where the quote sits in the
    block (``제618조`` + a quote in item 3 gives ``제618조제3호``)."""
    locator = block.locator
    at = block.text.find(quote.strip()) if quote.strip() else -1
    if locator and at >= 0:
        locator = refine_locator(locator, block.text, at)
    return ResolvedCitation(block.source_id, block.evidence_id, block.document_id, block.document_version, block.uri,
                            block.title, block.page, block.start_char, block.end_char, claim, quote, locator)


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


class CitationValidator:
    """Validates payloads against a source map. Stores settings only; the embedder is optional."""

    def __init__(self, config: ValidationConfig | None = None, embedder: Embedder | None = None, *,
                 abstention_texts: Collection[str] = ()) -> None:
        """``config``: the ``validation`` section. ``embedder`` is needed only for the embedding
        support methods. ``abstention_texts``: the only non-empty answers an ``insufficient_evidence``
        payload may carry (compared after :func:`rag.text.normalize`)."""
        config = config or ValidationConfig()
        if config.support_method != "lexical" and embedder is None:
            raise ConfigError(f"validation.support_method={config.support_method!r} needs an embedder; pass one "
                              "or set support_method: lexical")
        self.config = config
        self.embedder = embedder
        self.abstention_texts = frozenset(normalize(t) for t in abstention_texts if t.strip())

    # -- support ---------------------------------------------------------------
    def _cosines(self, claims: Sequence[str], passages: Sequence[str]) -> np.ndarray:
        assert self.embedder is not None  # checked in __init__ for every method that embeds
        return cosines(self.embedder, claims, passages)

    def _decide(self, lex: float, emb: float | None) -> tuple[float, bool]:
        return decide(lex, emb, self.config)

    # -- main -------------------------------------------------------------------
    def validate(self, payload: AnswerPayload | str, source_map: Mapping[str, ContextBlock]) -> ValidationReport:
        t0 = time.perf_counter()
        if isinstance(payload, str):
            parsed = parse_payload(payload)
            if parsed.payload is None:
                code: ViolationCode = "invalid_json" if (parsed.error or "").startswith(("not valid JSON", "empty")) \
                    else "schema"
                v = Violation(code, f"the reply is not a valid answer object: {parsed.error}")
                return ValidationReport(None, "", None, (v,), (), (), (), time.perf_counter() - t0)
            payload = parsed.payload
        s = self.config
        violations: list[Violation] = []
        answer = payload.answer

        if s.reject_urls:
            fields = [("the answer", answer)] + [(f"citation {i + 1}", f"{c.claim} {c.quote}")
                                                  for i, c in enumerate(payload.citations)]
            for where, text in fields:
                for url in find_urls(text):
                    violations.append(Violation("url_in_answer", f"{where} contains the URL {url!r}; never write "
                                                "URLs, cite sources with their [S#] ids only"))

        if payload.status == "insufficient_evidence":
            if payload.citations:
                violations.append(Violation("status_contract", f"status is insufficient_evidence but "
                                            f"{len(payload.citations)} citations were given; give none"))
            if marker_ids(answer):
                violations.append(Violation("status_contract", "status is insufficient_evidence but the answer "
                                            f"carries source markers {list(marker_ids(answer))}; remove them"))
            if answer.strip() and normalize(answer) not in self.abstention_texts:
                violations.append(Violation("status_contract", "an insufficient_evidence answer carries no "
                                            "assertion: leave answer empty"))
            return self._report(payload, violations, (), (), source_map, t0)

        if not answer.strip():
            violations.append(Violation("empty_answer", "status is answered but the answer text is empty"))
        if not payload.citations:
            violations.append(Violation("status_contract", "status is answered but there are no citations; cite "
                                        "the sources that support each sentence"))

        # citations: known ids, quotes, claim support
        cited_ids = {c.source_id for c in payload.citations}
        checks: list[CitationCheck] = []
        known_cites = [(i, c) for i, c in enumerate(payload.citations) if c.source_id in source_map]
        emb_claims: dict[int, float] = {}
        if s.support_method != "lexical" and known_cites and s.check_claims:
            sims = self._cosines([c.claim for _, c in known_cites],
                                 [source_map[c.source_id].text for _, c in known_cites])
            emb_claims = {i: float(sims[k, k]) for k, (i, _) in enumerate(known_cites)}
        for i, c in enumerate(payload.citations):
            block = source_map.get(c.source_id)
            if block is None:
                violations.append(Violation("unknown_source", f"citation {i + 1} names {c.source_id!r}, which is "
                                            f"not a source of this prompt (valid: {', '.join(source_map)})",
                                            source_id=c.source_id))
                checks.append(CitationCheck(i, c.source_id, False, c.claim, c.quote, False, 0.0, 0.0, None, False))
                continue
            found = quote_found(c.quote, block.text) if c.quote.strip() else False
            if not c.quote.strip():
                if s.require_quotes:
                    violations.append(Violation("missing_quote", f"citation {i + 1} ({c.source_id}) has no quote; "
                                                "copy a passage from that source exactly", source_id=c.source_id))
            elif not found:
                violations.append(Violation("quote_not_found", f"the quote of citation {i + 1} "
                                            f"({_short(c.quote, 80)!r}) does not occur in {c.source_id}; copy it "
                                            "exactly from that source", source_id=c.source_id))
            sc = check_support(c.claim, evidence_text(block), s, embedding=emb_claims.get(i))
            if not s.check_claims:
                checks.append(CitationCheck(i, c.source_id, True, c.claim, c.quote, found, sc.lexical, sc.lexical,
                                            sc.embedding, True))
                continue
            if not sc.score_ok:
                violations.append(Violation("unsupported_claim", f"the claim of citation {i + 1} "
                                            f"({_short(c.claim, 80)!r}) is not supported by {c.source_id} "
                                            f"(support {sc.score:.2f})", source_id=c.source_id))
            violations.extend(_fact_violations(sc, f"the claim of citation {i + 1} ({_short(c.claim, 80)!r})",
                                               c.source_id, c.source_id, None))
            checks.append(CitationCheck(i, c.source_id, True, c.claim, c.quote, found, sc.score, sc.lexical,
                                        sc.embedding, sc.supported, sc.numbers_ok, sc.polarity_ok,
                                        sc.quantity_texts(), sc.polarity))

        # sentences: coverage and support
        sentences = answer_sentences(answer)
        sent_checks: list[SentenceCheck] = []
        used_ids: set[str] = set()
        to_embed: list[tuple[int, str, tuple[str, ...]]] = []
        for k, sent in enumerate(sentences):
            ids = marker_ids(sent.text)
            valid = tuple(x for x in ids if x in source_map)
            used_ids.update(valid)
            for bad in (x for x in ids if x not in source_map):
                violations.append(Violation("unknown_marker", f"sentence {k + 1} cites [{bad}], which is not a "
                                            f"source of this prompt", source_id=bad, sentence=sent.text))
            if not valid:
                if not ids:
                    violations.append(Violation("missing_marker", f"sentence {k + 1} has no [S#] marker: "
                                                f"{_short(sent.text)!r}; end every sentence with the ids of its "
                                                "sources", sentence=sent.text))
                continue
            for x in valid:
                if x not in cited_ids:
                    violations.append(Violation("marker_without_citation", f"sentence {k + 1} cites [{x}] but the "
                                                f"citations list has no entry for {x}", source_id=x,
                                                sentence=sent.text))
            to_embed.append((k, strip_markers(sent.text), valid))
        emb_of: dict[int, float] = {}
        if s.support_method != "lexical" and to_embed:
            blocks = sorted({x for _, _, v in to_embed for x in v})
            sims = self._cosines([t for _, t, _ in to_embed], [source_map[b].text for b in blocks])
            col = {b: j for j, b in enumerate(blocks)}
            emb_of = {k: max(float(sims[r, col[x]]) for x in v) for r, (k, _, v) in enumerate(to_embed)}
        checked = {k: (text, valid) for k, text, valid in to_embed}
        for k, sent in enumerate(sentences):
            ids = marker_ids(sent.text)
            valid = tuple(x for x in ids if x in source_map)
            if k not in checked:
                sent_checks.append(SentenceCheck(k, sent.text, ids, valid, None, False))
                continue
            texts = tuple(evidence_text(source_map[x]) for x in valid)  # each block cached on its own
            sc = check_support(checked[k][0], texts[0] if len(texts) == 1 else texts, s, embedding=emb_of.get(k))
            if not sc.score_ok:
                violations.append(Violation("unsupported_sentence", f"sentence {k + 1} ({_short(sent.text)!r}) is "
                                            f"not supported by {', '.join(valid)} (support {sc.score:.2f} < "
                                            "threshold)", sentence=sent.text))
            violations.extend(_fact_violations(sc, f"sentence {k + 1} ({_short(sent.text)!r})", ", ".join(valid),
                                               None, sent.text))
            sent_checks.append(SentenceCheck(k, sent.text, ids, valid, sc.score, sc.supported, sc.numbers_ok,
                                             sc.polarity_ok, sc.quantity_texts(), sc.polarity))

        for c in payload.citations:
            if c.source_id in source_map and c.source_id not in used_ids:
                violations.append(Violation("citation_not_referenced", f"citation {c.source_id} is never cited by "
                                            "a [S#] marker in the answer", source_id=c.source_id))
                used_ids.add(c.source_id)  # report once per id
        return self._report(payload, violations, tuple(checks), tuple(sent_checks), source_map, t0)

    def _report(self, payload: AnswerPayload, violations: list[Violation], checks: tuple[CitationCheck, ...],
                sents: tuple[SentenceCheck, ...], source_map: Mapping[str, ContextBlock],
                t0: float) -> ValidationReport:
        resolved: tuple[ResolvedCitation, ...] = ()
        if not violations:
            resolved = tuple(resolve(source_map[c.source_id], c.claim, c.quote) for c in payload.citations)
        if violations:
            logger.info("validation: %d violations (%s)", len(violations),
                        ", ".join(sorted({v.code for v in violations})))
        return ValidationReport(payload.status, payload.answer, payload, tuple(violations), checks, sents, resolved,
                                time.perf_counter() - t0)
