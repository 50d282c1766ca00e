"""The budgeted context builder: evidence in, a deterministic bundle of source blocks out.

    validate -> sort (explicit key) -> dedup -> per-document cap / max blocks / budget
    -> truncate at a safe boundary (span updated) -> order policy -> S1..Sn -> render

Budget (tokens, counted with the real tokenizer)::

    evidence_budget = context_limit - system - guidelines - history - question
                      - output_reserve - schema_overhead - feedback_reserve - wrapper_reserve - safety_margin

``wrapper_reserve`` is the worst case of the source tags and separators for
``max_blocks`` blocks. Each block is rendered as its open tag, a header line
``[title | locator | p. N]`` (missing parts omitted; no line when all are missing; neutralized
like the body), the body and the close tag. A block's ``tokens`` are its body tokens plus its
header line's (``header_tokens``), so headers are paid for out of the evidence budget.
Truncation cuts only where :func:`rag.text.segment.safe_cuts` allows (parser boundaries first,
then ends of sentences/items, then clauses, then word ends if allowed; never inside a word,
number, date, bracket or ``<개정 …>`` note). Invariants, for any input:

- sum of block tokens (bodies + header lines) <= evidence_budget
- tokens of the rendered context (tags + headers + bodies + separators) <= evidence_budget + wrapper_reserve
- source ids are S1..Sn without gaps; the same evidence set in any order gives the same bundle.
"""
from __future__ import annotations

import logging
import math
import re
from dataclasses import asdict, dataclass
from typing import Literal, Sequence

from rag.config import ContextConfig
from rag.context.near_duplicates import jaccard, shingles
from rag.context.sanitize import neutralize
from rag.errors import BudgetError, EvidenceError
from rag.text.segment import safe_cuts
from rag.text.tokens import TokenCounter
from rag.types import Candidate, page_at

logger = logging.getLogger(__name__)

DropReason = Literal["duplicate", "per_document_cap", "budget", "max_blocks", "unsplittable", "invalid_score",
                     "superseded", "suspected_injection"]


# --------------------------------------------------------------------------- input
@dataclass(frozen=True)
class Evidence:
    """One retrieved item offered to the builder. ``text`` is ``document[start_char:end_char]``."""

    evidence_id: str
    document_id: str
    document_version: str
    text: str
    start_char: int
    end_char: int
    score: float
    uri: str = ""
    title: str = ""
    page: int | None = None
    kind: Literal["text", "table", "code", "auto"] = "auto"
    boundaries: tuple[int, ...] = ()  # safe cut offsets into ``text`` from a parser, if known
    locator: str = ""  # human locator of the span (chunk locator), e.g. "제16조제1항"
    section: str = ""  # heading of the section the span belongs to, e.g. "제7조 (정근수당)"
    page_breaks: tuple[tuple[int, int], ...] = ()  # (offset into text, page) of pages beginning inside it
    file: str = ""  # the file the evidence was read from (chunk ``file``)

    @classmethod
    def from_candidate(cls, c: Candidate, score: float | None = None) -> "Evidence":
        ch = c.chunk
        return cls(ch.evidence_id, ch.document_id, ch.document_version, ch.text, ch.start_char, ch.end_char,
                   float(c.score if score is None else score), ch.uri, ch.title, ch.page,
                   boundaries=ch.boundaries, locator=ch.locator,
                   section=ch.heading_path[-1] if ch.heading_path else "", page_breaks=ch.page_breaks,
                   file=ch.file)


# --------------------------------------------------------------------------- budget
@dataclass(frozen=True)
class BudgetTerms:
    """Every term of the evidence budget, in the order they are subtracted."""

    context_limit: int
    system: int
    guidelines: int
    history: int
    question: int
    output_reserve: int
    schema_overhead: int  # the format instruction message and the JSON schema, counted from the real ones
    feedback_reserve: int  # room for the violation feedback message added on a retry
    wrapper_reserve: int
    safety_margin: int
    # The tool phase's prompt only: the tool definitions and tools.phase_reserve (0 for the answer's prompt)
    tools: int = 0

    @property
    def evidence_budget(self) -> int:
        return (self.context_limit - self.system - self.guidelines - self.history - self.question
                - self.output_reserve - self.schema_overhead - self.feedback_reserve - self.wrapper_reserve
                - self.safety_margin - self.tools)

    def check(self) -> int:
        b = self.evidence_budget
        if b <= 0:
            terms = ", ".join(f"{k}={v}" for k, v in asdict(self).items())
            raise BudgetError(
                f"no room for evidence: evidence_budget = {b} tokens ({terms}). Shorten the question, "
                "history or guidelines, lower output_reserve / max_blocks, or use a model with a larger context_limit.",
                terms=self,
            )
        return b


# --------------------------------------------------------------------------- output
@dataclass(frozen=True)
class ContextBlock:
    source_id: str
    evidence_id: str
    document_id: str
    document_version: str
    text: str  # exactly what is sent (after neutralization)
    start_char: int  # span of the original text the block covers
    end_char: int
    truncated: bool
    tokens: int  # body tokens plus the header line's (see header_tokens)
    score: float
    rank: int  # 1-based position in the sorted evidence list
    uri: str = ""
    title: str = ""
    page: int | None = None
    neutralized: int = 0  # number of forged tags/markers defused in this block
    locator: str = ""  # human locator (from the evidence), shown in the block's header line
    section: str = ""  # heading of the section the block belongs to (from the evidence)
    page_breaks: tuple[tuple[int, int], ...] = ()  # (offset into text, page) of pages beginning inside the block
    file: str = ""  # the file the block was read from

    @property
    def page_end(self) -> int | None:
        return page_at(self.page, self.page_breaks, None)

    def page_at(self, offset: int) -> int | None:
        """The page of the character at ``offset`` into the block's text."""
        return page_at(self.page, self.page_breaks, offset)


@dataclass(frozen=True)
class DroppedEvidence:
    evidence_id: str
    reason: DropReason
    detail: str = ""


@dataclass(frozen=True)
class ContextBundle:
    blocks: tuple[ContextBlock, ...]
    dropped: tuple[DroppedEvidence, ...]
    rendered: str
    evidence_tokens: int  # sum of block tokens (bodies and header lines)
    rendered_tokens: int  # tokens of ``rendered`` (tags, bodies, separators)
    evidence_budget: int
    wrapper_reserve: int
    version_conflicts: tuple[str, ...] = ()  # document ids present in more than one version

    @property
    def source_map(self) -> dict[str, ContextBlock]:
        return {b.source_id: b for b in self.blocks}


# --------------------------------------------------------------------------- rendering
SOURCE_OPEN = '<source id="{sid}">'
SOURCE_CLOSE = "</source>"
SEPARATOR = "\n\n"

def page_label(page: int | None, page_end: int | None = None) -> str:
    """``p. 4``, ``pp. 4–5`` for a span across a page break, ``""`` without a page."""
    if page is None:
        return ""
    return f"p. {page}" if page_end is None or page_end == page else f"pp. {page}–{page_end}"


def block_header(title: str, locator: str = "", page: int | None = None, page_end: int | None = None) -> str:
    """The header line of a block, ``[title | locator | p. N]`` with missing parts left out
    (``""`` when all are missing), neutralized like a body."""
    parts = [" ".join(title.split()), " ".join(locator.split()), page_label(page, page_end)]
    parts = [p for p in parts if p]
    return neutralize(f"[{' | '.join(parts)}]")[0] if parts else ""


def header_tokens(counter: TokenCounter, title: str, locator: str = "", page: int | None = None,
                  page_end: int | None = None) -> int:
    """Tokens the header line of a block adds (its text and the newline after it); 0 without one."""
    header = block_header(title, locator, page, page_end)
    return counter.count(header + "\n") if header else 0


def render_block(source_id: str, body: str, header: str = "") -> str:
    head = f"{header}\n" if header else ""
    return f"{SOURCE_OPEN.format(sid=source_id)}\n{head}{body}\n{SOURCE_CLOSE}"


def render_blocks(blocks: Sequence[ContextBlock]) -> str:
    return SEPARATOR.join(render_block(b.source_id, b.text, block_header(b.title, b.locator, b.page, b.page_end))
                          for b in blocks)


def wrapper_reserve(counter: TokenCounter, max_blocks: int) -> int:
    """Worst-case tokens of tags and separators for ``max_blocks`` blocks (real tokenizer)."""
    total = 0
    for i in range(1, max_blocks + 1):
        total += counter.count(render_block(f"S{i}", "")) + counter.count(SEPARATOR) + 2
    return total


# --------------------------------------------------------------------------- helpers
_TABLE_LINE = re.compile(r"^\s*\|.*\|\s*$", re.MULTILINE)


def _kind(e: Evidence) -> str:
    if e.kind != "auto":
        return e.kind
    if "```" in e.text or "~~~" in e.text:
        return "code"
    if len(_TABLE_LINE.findall(e.text)) >= 2:
        return "table"
    return "text"


_Chosen = tuple[Evidence, str, int, int, bool, int, int]  # (evidence, body sent, start, end, cut, tokens, neutralized)


def _sort_key(e: Evidence) -> tuple:
    return (-e.score, e.document_id, e.document_version, e.evidence_id, e.text)


# --------------------------------------------------------------------------- builder
class ContextBuilder:
    """Packs evidence into a bundle under a token budget. Constructor stores config only."""

    def __init__(self, counter: TokenCounter, config: ContextConfig | None = None, *,
                 allow_word_truncation: bool = True) -> None:
        """``config``: the ``context`` section (blocks, caps, ordering, overlap and near-duplicate
        policy). ``allow_word_truncation``: when no sentence end fits, cut at a word end (else drop)."""
        self.counter = counter
        self.config = config or ContextConfig()
        self.allow_word_truncation = allow_word_truncation

    def wrapper_reserve(self) -> int:
        return wrapper_reserve(self.counter, self.config.max_blocks)

    def build(self, evidence: Sequence[Evidence], evidence_budget: int) -> ContextBundle:
        """``evidence`` checked, ranked and merged where it overlaps, chosen greedily by rank
        (:meth:`_choose`), rendered and held to ``evidence_budget`` (:meth:`_render_within`)."""
        if evidence_budget <= 0:
            raise BudgetError(f"evidence_budget must be > 0, got {evidence_budget}")
        dropped: list[DroppedEvidence] = []
        items = self._validate(evidence, dropped)
        items.sort(key=_sort_key)
        rank_of = {e.evidence_id: i + 1 for i, e in enumerate(items)}
        versions: dict[str, set[str]] = {}
        for e in items:
            versions.setdefault(e.document_id, set()).add(e.document_version)
        conflicts = tuple(sorted(d for d, v in versions.items() if len(v) > 1))
        items = self._dedupe_overlaps(items, dropped)
        chosen = self._choose(items, evidence_budget, dropped)
        blocks, rendered, rendered_tokens, reserve = self._render_within(chosen, rank_of, evidence_budget, dropped)
        dropped.sort(key=lambda d: (rank_of.get(d.evidence_id, 10**9), d.evidence_id, d.reason))
        return ContextBundle(
            blocks=blocks,
            dropped=tuple(dropped),
            rendered=rendered,
            evidence_tokens=sum(b.tokens for b in blocks),
            rendered_tokens=rendered_tokens,
            evidence_budget=evidence_budget,
            wrapper_reserve=reserve,
            version_conflicts=conflicts,
        )

    def _choose(self, items: list[Evidence], evidence_budget: int, dropped: list[DroppedEvidence]) -> list[_Chosen]:
        """Blocks in rank order while ``max_blocks``, the per-document cap, the budget and the
        near-duplicate rule allow; each sized to what is left (:meth:`_sized`)."""
        pol = self.config
        chosen: list[_Chosen] = []
        signatures: list[tuple[str, str, frozenset[str]]] = []  # (evidence_id, document_id, shingles) of chosen
        per_doc: dict[str, int] = {}
        used = 0
        for pos, e in enumerate(items):
            if len(chosen) >= pol.max_blocks:
                dropped.extend(DroppedEvidence(x.evidence_id, "max_blocks", f"max_blocks={pol.max_blocks}")
                               for x in items[pos:])
                break
            doc_key = e.document_id  # keyed by document id: two versions of one document share the cap
            if per_doc.get(doc_key, 0) >= pol.max_blocks_per_document:
                dropped.append(DroppedEvidence(e.evidence_id, "per_document_cap",
                                               f"{e.document_id} already has "
                                               f"{pol.max_blocks_per_document} blocks"))
                continue
            remaining = evidence_budget - used
            if remaining < pol.min_block_tokens:
                dropped.append(DroppedEvidence(e.evidence_id, "budget", f"{remaining} tokens left"))
                continue
            sig: frozenset[str] = frozenset()
            if pol.near_duplicates == "drop" and any(did != e.document_id for _, did, _ in signatures):
                sig = shingles(e.text)
                dup = next(((eid, j) for eid, did, other in signatures
                            if did != e.document_id and (j := jaccard(sig, other)) >= pol.near_duplicate_threshold),
                           None)
                if dup is not None:
                    dropped.append(DroppedEvidence(e.evidence_id, "duplicate",
                                                   f"near-duplicate of {dup[0]} (jaccard {dup[1]:.2f})"))
                    continue
            block = self._sized(e, remaining, dropped)
            if block is None:
                continue
            chosen.append(block)
            if pol.near_duplicates == "drop":
                signatures.append((e.evidence_id, e.document_id, sig or shingles(e.text)))
            per_doc[doc_key] = per_doc.get(doc_key, 0) + 1
            used += block[5]
        return chosen

    def _sized(self, e: Evidence, remaining: int, dropped: list[DroppedEvidence]) -> _Chosen | None:
        """``e`` whole when it fits in ``remaining`` tokens, else cut at a safe boundary (a table or
        code block is never cut); None, with the reason in ``dropped``, when neither fits."""
        count = self.counter.count
        body, n_neutral = neutralize(e.text)
        head_tokens = header_tokens(self.counter, e.title, e.locator, e.page, page_at(e.page, e.page_breaks, None))
        tokens = count(body) + head_tokens
        start, end, truncated = e.start_char, e.end_char, False
        if tokens > remaining:
            if _kind(e) in ("table", "code"):
                dropped.append(DroppedEvidence(e.evidence_id, "unsplittable",
                                               f"{_kind(e)} of {tokens} tokens > {remaining} left"))
                return None
            cut = self._fit(e, remaining - head_tokens)
            if cut is None:
                dropped.append(DroppedEvidence(e.evidence_id, "budget",
                                               f"{tokens} tokens, no safe cut of >= {self.config.min_block_tokens} "
                                               f"tokens within {remaining}"))
                return None
            body, n_neutral = neutralize(e.text[:cut])
            # the header names the pages actually sent
            tokens = count(body) + header_tokens(self.counter, e.title, e.locator, e.page,
                                                 page_at(e.page, e.page_breaks, cut - 1))
            end, truncated = e.start_char + cut, True
        return (e, body, start, end, truncated, tokens, n_neutral)

    def _render_within(self, chosen: list[_Chosen], rank_of: dict[str, int], evidence_budget: int,
                       dropped: list[DroppedEvidence]) -> tuple[tuple[ContextBlock, ...], str, int, int]:
        """(blocks, rendered, tokens, reserve): the chosen blocks ordered, numbered and rendered, the lowest
        ranked dropped until the real count fits (tokenizers are not additive across joins)."""
        reserve = self.wrapper_reserve()
        while True:
            ordered = _order(chosen, self.config.ordering)
            blocks = tuple(
                ContextBlock(f"S{i + 1}", e.evidence_id, e.document_id, e.document_version, body, start, end, trunc,
                             tokens, e.score, rank_of[e.evidence_id], e.uri, e.title, e.page, n, e.locator,
                             e.section, tuple(b for b in e.page_breaks if b[0] < end - start), e.file)
                for i, (e, body, start, end, trunc, tokens, n) in enumerate(ordered)
            )
            rendered = render_blocks(blocks)
            rendered_tokens = self.counter.count(rendered) if rendered else 0
            if not chosen or rendered_tokens <= evidence_budget + reserve:
                return blocks, rendered, rendered_tokens, reserve
            worst = chosen.pop()
            dropped.append(DroppedEvidence(worst[0].evidence_id, "budget", "rendered context over budget"))

    # -- steps ---------------------------------------------------------------
    def _validate(self, evidence: Sequence[Evidence], dropped: list[DroppedEvidence]) -> list[Evidence]:
        groups: dict[str, list[Evidence]] = {}
        for i, e in enumerate(evidence):
            if not isinstance(e, Evidence):
                raise EvidenceError(f"evidence item {i}: expected rag.context.Evidence, got {type(e).__name__}")
            where = f"evidence item {i} ({e.evidence_id!r})"
            for name in ("evidence_id", "document_id", "document_version"):
                v = getattr(e, name)
                if not isinstance(v, str) or not v.strip():
                    raise EvidenceError(f"{where}: field {name!r} is missing or empty")
            if not isinstance(e.text, str):
                raise EvidenceError(f"{where}: text must be a string, got {type(e.text).__name__}")
            if not (isinstance(e.start_char, int) and isinstance(e.end_char, int)):
                raise EvidenceError(f"{where}: start_char/end_char must be integers")
            if e.start_char < 0 or e.end_char < e.start_char:
                raise EvidenceError(f"{where}: span [{e.start_char}, {e.end_char}) is negative or reversed")
            if e.end_char - e.start_char != len(e.text):
                raise EvidenceError(
                    f"{where}: text has {len(e.text)} characters but its span [{e.start_char}, {e.end_char}) "
                    f"covers {e.end_char - e.start_char}; the span must describe exactly the text"
                )
            if any(not 0 < b < len(e.text) for b in e.boundaries):
                raise EvidenceError(f"{where}: boundaries must lie strictly inside the text")
            if not isinstance(e.score, (int, float)):
                raise EvidenceError(f"{where}: score must be a number, got {type(e.score).__name__}")
            same = groups.setdefault(e.evidence_id, [])
            if same and _identity(same[0]) != _identity(e):
                raise EvidenceError(
                    f"evidence id {e.evidence_id!r} appears twice with different text, document or span; "
                    "an evidence id must identify one span of one document version"
                )
            same.append(e)
        out: list[Evidence] = []
        for eid in sorted(groups):
            copies = groups[eid]
            valid = [e for e in copies if not math.isnan(e.score)]
            if not valid:
                dropped.append(DroppedEvidence(eid, "invalid_score", f"score is {copies[0].score!r}"))
                continue
            best = max(valid, key=_copy_key)
            dropped.extend(DroppedEvidence(eid, "duplicate", "same evidence_id offered more than once")
                           for _ in range(len(copies) - 1))
            if not best.text.strip():
                dropped.append(DroppedEvidence(eid, "budget", "empty text"))
                continue
            out.append(best)
        return out

    def _dedupe_overlaps(self, items: list[Evidence], dropped: list[DroppedEvidence]) -> list[Evidence]:
        """Overlapping spans of one document version: keep one per overlap (policy)."""
        kept: list[Evidence] = []
        for e in items:  # items are sorted best first
            clashes = [k for k in kept if k.document_id == e.document_id and k.document_version == e.document_version
                       and k.start_char < e.end_char and e.start_char < k.end_char]
            if not clashes:
                kept.append(e)
            elif self.config.overlap_policy == "wider" and all(
                    (e.end_char - e.start_char) > (k.end_char - k.start_char) for k in clashes):
                for k in clashes:
                    kept.remove(k)
                    dropped.append(DroppedEvidence(k.evidence_id, "duplicate", f"overlaps wider {e.evidence_id}"))
                kept.append(e)
            else:
                dropped.append(DroppedEvidence(e.evidence_id, "duplicate",
                                               f"overlaps better-ranked {clashes[0].evidence_id}"))
        kept.sort(key=_sort_key)  # a wider replacement takes its own rank, not the replaced one's
        return kept

    def _fit(self, e: Evidence, max_tokens: int) -> int | None:
        """Largest safe cut (offset into e.text) whose neutralized prefix fits ``max_tokens``.

        Binary search over the cut points of each tier in turn: parser boundaries if given, then
        the segmenter's safe cuts (ends of sentences, items and notes; then clause ends), then (if
        allowed) word ends that are not inside a number, date or bracket."""
        count = self.counter.count
        candidates = [sorted(set(e.boundaries))] if e.boundaries else []
        candidates.append(list(safe_cuts(e.text, "sentence")))
        candidates.append(list(safe_cuts(e.text, "clause")))
        if self.allow_word_truncation:
            candidates.append(list(safe_cuts(e.text, "word")))
        for cuts in candidates:
            cuts = [c for c in cuts if 0 < c < len(e.text) and e.text[:c].strip()]
            if not cuts:
                continue
            fits = lambda c: count(neutralize(e.text[:c].rstrip())[0]) <= max_tokens  # noqa: E731
            lo, hi = 0, len(cuts) - 1
            best = -1
            while lo <= hi:  # counts grow with the cut, so the predicate is monotone
                mid = (lo + hi) // 2
                if fits(cuts[mid]):
                    best, lo = mid, mid + 1
                else:
                    hi = mid - 1
            if best >= 0:
                cut = len(e.text[:cuts[best]].rstrip())
                if count(neutralize(e.text[:cut])[0]) >= self.config.min_block_tokens:
                    return cut
        return None


def _identity(e: Evidence) -> tuple:
    return (e.document_id, e.document_version, e.text, e.start_char, e.end_char)


def _copy_key(e: Evidence) -> tuple:
    """Total order over copies of one evidence id, so the kept copy never depends on input order."""
    return (e.score, e.uri, e.title, -1 if e.page is None else e.page, e.kind, e.boundaries)


def _order(chosen: list, ordering: str) -> list:
    if ordering == "rank":
        return list(chosen)
    if ordering == "reverse":
        return list(reversed(chosen))
    # edges: best at the start, second best at the end, and so on toward the middle
    front: list = []
    back: list = []
    for i, item in enumerate(chosen):
        (front if i % 2 == 0 else back).append(item)
    return front + list(reversed(back))
