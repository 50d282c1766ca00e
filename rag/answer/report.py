"""What validation reports: each citation's and answer sentence's check, the citation as the server proves it
(:class:`ResolvedCitation`, made by :func:`resolve_citation` from the source map) and the :class:`ValidationReport`
(:mod:`rag.answer.validation` runs the checks)."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from rag.answer.contract import AnswerPayload, Violation
from rag.context.builder import ContextBlock, page_label
from rag.text.lexical import find_quote, unmark
from rag.text.segment import refine_locator


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
    """A citation as the server proves it: everything but ``claim`` and ``quote`` comes from the source map.
    ``quote`` is the checked quote as the file prints it: without the bold the indexed text keeps around
    a statute's paragraph marks (``**①**`` → ``①``, :func:`rag.text.lexical.unmark`); its span
    (``quote_start``/``quote_end``) is where it lies in the indexed text, that bold included."""

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
    file: str = ""  # the file the block was read from (relative to its folder), "" for JSONL documents
    page_end: int | None = None  # the page where the quote ends (differs from ``page`` across a page break)
    quote_start: int | None = None  # the quote's span in the document's text, when it was found verbatim
    quote_end: int | None = None

    @property
    def where(self) -> str:
        """What a person follows: ``근로기준법.pdf p. 4 · 제28조제2항`` (file or title, page, article)."""
        head = " ".join(x for x in (self.file or self.title, page_label(self.page, self.page_end)) if x)
        return " · ".join(x for x in (head, self.locator) if x)


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


def resolve_citation(block: ContextBlock, claim: str, quote: str) -> ResolvedCitation:
    """A citation from the source map. The locator is made precise to where the quote sits in the
    block (``제618조`` + a quote in item 3 gives ``제618조제3호``)."""
    locator = block.locator
    found = find_quote(quote, block.text)  # verbatim, a paragraph mark with or without its bold
    if locator and found is not None:
        locator = refine_locator(locator, block.text, found[0])
    page, page_end = block.page, block.page_end
    span: tuple[int | None, int | None] = (None, None)
    if found is not None:
        at, end = found
        page, page_end = block.page_at(at), block.page_at(end - 1)
        if not block.neutralized:  # offsets of neutralized text do not map back one to one
            span = (block.start_char + at, block.start_char + end)
    return ResolvedCitation(block.source_id, block.evidence_id, block.document_id, block.document_version, block.uri,
                            block.title, page, block.start_char, block.end_char, claim, unmark(quote), locator,
                            block.file, page_end, *span)
