"""Public claim sets read as cited claims, for the validator's claim checks (``rag bench run entailment``).

Each claim is validated as if an answer cited it: its quote is the evidence sentences the dataset names, its
block the document they come from, and the claim is accepted when no support violation
(:data:`rag.evaluation.claims.SUPPORT_CODES`) is reported.

- SciFact (``scifact/claims_dev_with_rationales.jsonl`` + ``corpus.jsonl``): a claim with rationale sentences
  in its cited abstract; ``SUPPORT`` claims should be accepted, ``CONTRADICT`` claims rejected (the rationale
  states the opposite). NOT_ENOUGH_INFO claims have no rationale and are left out.
- WiCE (``wice/claim_dev.jsonl``): the claim and the sentences of the cited article its annotators marked;
  ``supported`` should be accepted, ``not_supported`` rejected; ``partially_supported`` is reported apart.

A claim or quote longer than an answer's citation may carry (:class:`rag.answer.contract.CitationItem`: claim
1,000, quote 2,000 characters) is left out and counted in the log: no answer could cite it that way.
"""
from __future__ import annotations

import logging
from dataclasses import dataclass
from pathlib import Path
from typing import Iterable

from rag._io import read_jsonl
from rag.answer.contract import AnswerPayload, CitationItem
from rag.answer.validation import CitationValidator
from rag.context.builder import ContextBlock
from rag.errors import DatasetError
from rag.evaluation.claims import SUPPORT_CODES

logger = logging.getLogger(__name__)


def _fits(claim: str, quote: str) -> bool:
    """Whether a citation could carry this claim and quote (the contract's length limits)."""
    fields = CitationItem.model_fields
    return len(claim) <= _limit(fields["claim"]) and len(quote) <= _limit(fields["quote"])


def _limit(field) -> int:
    return next(m.max_length for m in field.metadata if getattr(m, "max_length", None) is not None)


def _kept(name: str, claims: list["CitedClaim"], seen: int) -> list["CitedClaim"]:
    if seen > len(claims):
        logger.info("%s: %d of %d claims left out (claim or quote over the citation's length limit)", name,
                    seen - len(claims), seen)
    return claims


@dataclass(frozen=True)
class CitedClaim:
    id: str
    label: str
    claim: str
    quote: str
    block: str


def scifact_claims(data: Path) -> list[CitedClaim]:
    """SUPPORT and CONTRADICT claims of the SciFact dev file, one per (claim, cited abstract with rationales)."""
    corpus_path = data / "scifact" / "corpus.jsonl"
    claims_path = data / "scifact" / "claims_dev_with_rationales.jsonl"
    for p in (corpus_path, claims_path):
        if not p.is_file():
            raise DatasetError(f"{p} not found; point --data at the folder holding scifact/")
    corpus = {str(d["_id"]): str(d["text"]) for _, d in read_jsonl(corpus_path, DatasetError)}
    out, seen = [], 0
    for _, r in read_jsonl(claims_path, DatasetError):
        text = corpus.get(str(r.get("doc_id")))
        if r.get("label") not in ("SUPPORT", "CONTRADICT") or not r.get("rationale_sentences") or text is None:
            continue
        seen += 1
        quote = " ".join(s.strip() for s in r["rationale_sentences"])
        if _fits(r["claim"], quote):
            out.append(CitedClaim(f"scifact:{r['claim_id']}:{r['doc_id']}", r["label"].lower(), r["claim"], quote,
                                  text))
    return _kept("scifact", out, seen)


def wice_claims(data: Path) -> list[CitedClaim]:
    """WiCE dev claims with the sentences their annotators marked as the quote."""
    path = data / "wice" / "claim_dev.jsonl"
    if not path.is_file():
        raise DatasetError(f"{path} not found; point --data at the folder holding wice/")
    out, seen = [], 0
    for k, (_, r) in enumerate(read_jsonl(path, DatasetError)):
        idx = sorted({i for group in r["supporting_sentences"] for i in group if 0 <= i < len(r["evidence"])})
        if not idx:
            continue
        seen += 1
        quote = " ".join(r["evidence"][i].strip() for i in idx)
        block = " ".join(s.strip() for s in r["evidence"])
        if _fits(r["claim"], quote):
            out.append(CitedClaim(f"wice:{k}", r["label"], r["claim"], quote, block))
    return _kept("wice", out, seen)


def accepted(claims: Iterable[CitedClaim], validator: CitationValidator) -> dict[str, dict[str, float | int]]:
    """Per label: ``n``, ``accepted_n`` and ``accepted`` (the fraction with no support violation)."""
    tally: dict[str, list[int]] = {}
    for c in claims:
        block = ContextBlock(source_id="S1", evidence_id=c.id, document_id=c.id, document_version="", text=c.block,
                             start_char=0, end_char=len(c.block), truncated=False, tokens=0, score=0.0, rank=1)
        payload = AnswerPayload(status="answered", answer=f"{c.claim} [S1]",
                                citations=(CitationItem(source_id="S1", claim=c.claim, quote=c.quote),))
        report = validator.validate(payload, {"S1": block})
        ok = not any(v.code in SUPPORT_CODES for v in report.violations)
        t = tally.setdefault(c.label, [0, 0])
        t[0] += 1
        t[1] += int(ok)
    return {lab: {"n": n, "accepted_n": a, "accepted": round(a / n, 4)} for lab, (n, a) in sorted(tally.items())}


__all__ = ["CitedClaim", "accepted", "scifact_claims", "wice_claims"]
