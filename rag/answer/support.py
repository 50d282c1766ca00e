"""The one support check of a claim against evidence text, shared by the citation validator
and the extractive generator, so that what the generator keeps is exactly what the validator
accepts.

A claim is supported when all three hold:

1. lexical (or embedding) support reaches the threshold: each clause of the claim is scored
   by the share of its content terms found in the one evidence window (sentence, sentence
   pair, or list item with its lead) that covers most of them, and the claim scores as its
   weakest clause (:func:`rag.text.facts.clause_support`), so a claim that adds a fact the
   evidence does not state in one place fails even when its words occur somewhere in it;
2. numbers: every quantity of the claim (number, amount, date, period, ratio, unit, statute
   reference) is stated in the evidence, after unit conversion, in the passage the claim
   restates (:func:`rag.text.facts.unsupported_quantities`,
   :func:`rag.text.facts.misplaced_quantities`); a number the claim computes is not stated;
3. polarity: no clause flips the obligation, permission or prohibition of the evidence
   clause it restates (:func:`rag.text.facts.polarity_mismatch`).
"""
from __future__ import annotations

import logging
from dataclasses import dataclass
from functools import lru_cache

from rag.config import ValidationConfig
from rag.context.builder import ContextBlock
from rag.text.facts import (
    EvidenceText,
    Quantity,
    clause_support,
    misplaced_quantities,
    polarity_mismatch,
    unsupported_quantities,
)
from rag.text.sentences import strip_markers

logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class SupportCheck:
    lexical: float  # clause-aligned lexical support (0..1)
    embedding: float | None  # cosine of claim and evidence when an embedder was used
    score: float  # the score the threshold decision used (lexical, embedding, or the max of both)
    score_ok: bool  # the score reached its threshold
    missing: tuple[Quantity, ...]  # claim quantities the evidence does not state
    misplaced: tuple[Quantity, ...]  # claim quantities the evidence states only outside the restated passage
    polarity: str | None  # why the claim flips the evidence's polarity; None when it does not

    @property
    def numbers_ok(self) -> bool:
        return not self.missing and not self.misplaced

    @property
    def polarity_ok(self) -> bool:
        return self.polarity is None

    @property
    def supported(self) -> bool:
        return self.score_ok and self.numbers_ok and self.polarity_ok

    def quantity_texts(self) -> tuple[str, ...]:
        """The claim's unsupported quantities as written, missing ones first, without repeats."""
        return tuple(dict.fromkeys(q.describe() for q in self.missing + self.misplaced))


def evidence_text(block: ContextBlock) -> str:
    """What a claim citing ``block`` is checked against: the block text after its locator as a heading line
    (a claim may name the article the block belongs to even when the block text does not repeat it).
    The validator and the extractive generator both check against this."""
    return f"# {block.locator}\n\n{block.text}" if block.locator else block.text


def decide(lexical: float, embedding: float | None, config: ValidationConfig) -> tuple[float, bool]:
    """(score, reached): the threshold rule of ``validation.support_method``."""
    if config.support_method == "lexical":
        return lexical, lexical >= config.support_threshold
    e = -1.0 if embedding is None else float(embedding)
    if config.support_method == "embedding":
        return e, e >= config.embedding_threshold
    return max(lexical, e), lexical >= config.support_threshold or e >= config.embedding_threshold


def check_support(claim: str, evidence_text: EvidenceText, config: ValidationConfig, *,
                  embedding: float | None = None) -> SupportCheck:
    """Check ``claim`` (``[S#]`` markers are ignored) against ``evidence_text``: one text, or a tuple of
    the texts of several cited blocks (a window never spans two blocks). ``embedding`` is the
    claim/evidence cosine for the embedding support methods (the caller embeds, in batches)."""
    lex, missing, misplaced, polarity = _facts(strip_markers(claim), evidence_text)
    score, ok = decide(lex, embedding, config)
    return SupportCheck(lex, embedding, score, ok, missing, misplaced, polarity)


@lru_cache(maxsize=4096)
def _facts(claim: str, evidence: EvidenceText) -> tuple[float, tuple[Quantity, ...], tuple[Quantity, ...], str | None]:
    """What does not depend on the config, cached: an answer sentence usually repeats its citation's claim."""
    return (clause_support(claim, evidence), unsupported_quantities(claim, evidence),
            misplaced_quantities(claim, evidence), polarity_mismatch(claim, evidence))


def clear_cache() -> None:
    _facts.cache_clear()
