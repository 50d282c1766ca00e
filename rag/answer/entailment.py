"""The entailment check: a second opinion on each cited claim from the NLI head (``validation.check_entailment``).

Next to the support score and the number and polarity rules (:mod:`rag.answer.support`), a learned
entailment model (:class:`rag.rerank.entailment.EntailmentModel`, trained by ``rag reader nli train``) reads
each citation's (premise, claim) pair and gives calibrated P(entailment, neutral, contradiction):

- the premise is the sentence(s) of the cited block that hold the citation's quote (the quote widened to its
  sentences, :func:`premise_of`); the block's text when the quote is missing or not found;
- a claim whose P(contradiction) reaches ``validation.entailment_max_contradiction`` is a ``claim_contradicted``
  violation; with ``validation.entailment_min`` set, a claim whose P(entailment) stays under it is one too
  (``claim_not_entailed``: a claim the quote does not state, e.g. one that belongs to another article).

One model pass over all the citations of an answer (batched). The check runs only for citations of known
blocks, only when claims are checked (``validation.check_claims``).
"""
from __future__ import annotations

import logging
from typing import Callable, Mapping, Sequence

import numpy as np

from rag.answer.contract import AnswerPayload, Violation
from rag.answer.support import evidence_text
from rag.config import ValidationConfig
from rag.context.builder import ContextBlock
from rag.text.lexical import find_quote
from rag.text.sentences import split_sentences, strip_markers

logger = logging.getLogger(__name__)

# (premise, hypothesis) pairs -> (n, 3) probabilities of entailment, neutral, contradiction
Entail = Callable[[Sequence[tuple[str, str]]], np.ndarray]
CONTRADICTION, ENTAILMENT = 2, 0


def premise_of(quote: str, block: ContextBlock) -> str:
    """The sentences of ``block`` that overlap the quote's span; the block's evidence text when the quote is
    empty or not in the block."""
    span = find_quote(quote, block.text) if quote.strip() else None
    if span is None:
        return evidence_text(block)
    start, end = span
    parts = [s.text for s in split_sentences(block.text) if s.start < end and s.end > start]
    return " ".join(parts) if parts else block.text[start:end]


def _short(text: str, n: int = 80) -> str:
    t = " ".join(text.split())
    return t if len(t) <= n else t[:n - 1] + "…"


def entailment_violations(payload: AnswerPayload, source_map: Mapping[str, ContextBlock], config: ValidationConfig,
                          entail: Entail | None) -> tuple[Violation, ...]:
    """The NLI head's opinion on each citation's claim (see the module docstring); the validator's
    ``check_entailment`` step calls it."""
    if entail is None or not config.check_entailment or not config.check_claims:
        return ()
    todo = [(i, c) for i, c in enumerate(payload.citations)
            if c.source_id in source_map and strip_markers(c.claim).strip()]
    if not todo:
        return ()
    pairs = [(premise_of(c.quote, source_map[c.source_id]), strip_markers(c.claim).strip()) for _, c in todo]
    probs = entail(pairs)
    out: list[Violation] = []
    for (i, c), p in zip(todo, probs):
        what = f"the claim of citation {i + 1} ({_short(c.claim)!r})"
        if float(p[CONTRADICTION]) >= config.entailment_max_contradiction:
            out.append(Violation("claim_contradicted", f"{what} contradicts {c.source_id} (entailment model: "
                                 f"P(contradiction) {float(p[CONTRADICTION]):.2f}); state only what the quote says",
                                 source_id=c.source_id))
        elif config.entailment_min is not None and float(p[ENTAILMENT]) < config.entailment_min:
            out.append(Violation("claim_not_entailed", f"{what} does not follow from its quote in {c.source_id} "
                                 f"(entailment model: P(entailment) {float(p[ENTAILMENT]):.2f}); cite the passage "
                                 "that states it", source_id=c.source_id))
    return tuple(out)


__all__ = ["Entail", "entailment_violations", "premise_of"]
