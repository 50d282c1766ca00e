"""Claim-level evaluation of the validator's support check (``rag eval-claims``).

Each line of the claims file is a labelled ``(claim, quote)`` pair. The claim is validated as
if it cited the quote's block: the text of the quote's article in the corpus (found by its
heading, markdown ``##### 제8조의2 (제목)`` or plain ``제8조의2(제목)`` at a line start, up to the
next article or markdown heading), or the quote itself when the document or the article is
not found. The payload is ``answered``, its answer ``"{claim} [S1]"`` and its one citation
``(S1, claim, quote)``; the claim is accepted when no violation of the support kinds
(:data:`SUPPORT_CODES`) is reported.

Claims file (JSONL): ``id``, ``label`` (one of :data:`LABELS`), ``claim``, ``quote``, and
optionally ``doc_id``, ``version`` and ``article`` (``제8조의2제2항``). Corpus (JSONL, by default
``corpus.jsonl`` next to the claims file): ``id``, ``version``, ``title``, ``uri``, ``text``.
"""
from __future__ import annotations

import logging
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from rag._io import read_jsonl
from rag.answer.contract import AnswerPayload, CitationItem
from rag.answer.entailment import Entail
from rag.answer.validation import CitationValidator
from rag.config import RagConfig
from rag.context.builder import ContextBlock
from rag.errors import DatasetError
from rag.lang.ko.statute import ARTICLE_LABEL_TEXT as ARTICLE
from rag.lang.ko.statute import ARTICLE_LABEL_TIGHT as ARTICLE_HEADING

logger = logging.getLogger(__name__)

LABELS = ("supported", "number_changed", "negated", "other_article")
SUPPORT_CODES = frozenset({"unsupported_claim", "unsupported_sentence", "number_mismatch", "negation_mismatch",
                           "quote_not_found", "claim_contradicted", "claim_not_entailed"})
_REQUIRED = ("id", "label", "claim", "quote")
_ARTICLE = re.compile(ARTICLE)
_ANY_HEADING = re.compile(rf"(?m)^(?:#{{1,6}}\s*{ARTICLE_HEADING}(?=[\s(]|$)|{ARTICLE_HEADING}\s*\(|#{{1,6}}\s)")


@dataclass(frozen=True)
class LabelCount:
    n: int
    accepted: int

    @property
    def rate(self) -> float:
        return self.accepted / self.n if self.n else 0.0


@dataclass(frozen=True)
class ClaimRow:
    id: str
    label: str
    accepted: bool
    codes: tuple[str, ...]  # the support violations reported for the claim
    support: float  # the claim's support score (CitationCheck.support)
    block: str  # "article" (the article's text) or "quote" (article or document not found)

    def to_json(self) -> dict[str, Any]:
        return {"id": self.id, "label": self.label, "accepted": self.accepted, "codes": list(self.codes),
                "support": round(self.support, 4), "block": self.block}


@dataclass(frozen=True)
class ClaimsReport:
    n: int
    by_label: dict[str, LabelCount]
    rows: tuple[ClaimRow, ...]

    def to_json(self) -> dict[str, Any]:
        """``{"n", "by_label": {LABEL: {"n", "accepted", "accepted_n"}}, "rows": [...]}``; ``accepted`` in
        ``by_label`` is the fraction accepted, ``accepted_n`` the count."""
        return {"n": self.n,
                "by_label": {k: {"n": v.n, "accepted": round(v.rate, 6), "accepted_n": v.accepted}
                             for k, v in self.by_label.items()},
                "rows": [r.to_json() for r in self.rows]}


def find_article(text: str, article: str) -> str | None:
    """The text of ``article`` (``제8조의2``, or a longer locator such as ``제8조의2제2항``) in a statute
    body, from its heading to the next article or markdown heading; None when it has no heading."""
    m = _ARTICLE.match(article.strip())
    if m is None:
        return None
    key = re.sub(r"\s+", "", m.group(0))
    head = re.compile(rf"(?m)^(?:#{{1,6}}\s*{re.escape(key)}(?=[\s(]|$)|{re.escape(key)}\s*\()")
    found = head.search(text)
    if found is None:
        return None
    nxt = _ANY_HEADING.search(text, found.end())
    return text[found.start():nxt.start() if nxt else len(text)].strip()


def _corpus(path: Path) -> dict[tuple[str, str], dict[str, Any]]:
    docs: dict[tuple[str, str], dict[str, Any]] = {}
    for lineno, obj in read_jsonl(path, DatasetError):
        for key in ("id", "text"):
            if not isinstance(obj.get(key), str):
                raise DatasetError(f"{path}:{lineno}: corpus line needs a string {key!r}")
        docs[(obj["id"], str(obj.get("version", "")))] = obj
    return docs


def load_claims(path: Path) -> list[tuple[int, dict[str, Any]]]:
    """``(line number, claim object)`` for each line of a claims file, checked (see the module
    docstring); a missing file, a bad line or an unknown label raises :class:`~rag.errors.DatasetError`."""
    path = Path(path)
    if not path.is_file():
        raise DatasetError(f"claims file not found: {path}")
    out = []
    for lineno, obj in read_jsonl(path, DatasetError):
        for key in _REQUIRED:
            if not isinstance(obj.get(key), str) or (key != "quote" and not obj[key].strip()):
                raise DatasetError(f"{path}:{lineno}: claim needs a non-empty string {key!r}")
        if obj["label"] not in LABELS:
            raise DatasetError(f"{path}:{lineno}: unknown label {obj['label']!r} (expected one of {', '.join(LABELS)})")
        out.append((lineno, obj))
    return out


def _document(docs: dict[tuple[str, str], dict[str, Any]], doc_id: str, version: str) -> dict[str, Any] | None:
    if (doc_id, version) in docs:
        return docs[(doc_id, version)]
    if version:
        return None
    same = [d for (i, _), d in sorted(docs.items()) if i == doc_id]
    return same[-1] if same else None  # no version given: the newest by version string


def eval_claims(claims_path: Path, config: RagConfig, *, corpus_path: Path | None = None,
                entailment: Entail | None = None) -> ClaimsReport:
    """Run the validator's support check on each labelled claim (see the module docstring). With
    ``validation.check_entailment`` on, ``entailment`` (or, when None, the configured model) gives the NLI check."""
    claims_path = Path(claims_path)
    claims = load_claims(claims_path)
    if corpus_path is not None:
        if not Path(corpus_path).is_file():
            raise DatasetError(f"corpus file not found: {corpus_path}")
        docs = _corpus(Path(corpus_path))
    elif (claims_path.parent / "corpus.jsonl").is_file():
        docs = _corpus(claims_path.parent / "corpus.jsonl")
    else:
        logger.warning("no corpus.jsonl next to %s: every claim is checked against its quote", claims_path)
        docs = {}
    if entailment is None:
        from rag.rerank.entailment import entailment_for

        entailment = entailment_for(config.validation, config.base_dir)
    validator = CitationValidator(config.validation, entailment=entailment)
    rows: list[ClaimRow] = []
    for _, c in claims:
        doc = _document(docs, str(c.get("doc_id") or ""), str(c.get("version") or ""))
        article = str(c.get("article") or "")
        text = find_article(doc["text"], article) if doc is not None and article else None
        block = ContextBlock(
            source_id="S1", evidence_id=f"{c.get('doc_id', '')}:{c.get('version', '')}:{article}",
            document_id=str(c.get("doc_id") or ""), document_version=str(c.get("version") or ""),
            text=text if text is not None else c["quote"], start_char=0, end_char=len(text or c["quote"]),
            truncated=False, tokens=0, score=0.0, rank=1, uri=str((doc or {}).get("uri", "")),
            title=str((doc or {}).get("title", "")))
        payload = AnswerPayload(status="answered", answer=f"{c['claim']} [S1]",
                                citations=(CitationItem(source_id="S1", claim=c["claim"], quote=c["quote"]),))
        report = validator.validate(payload, {"S1": block})
        codes = tuple(dict.fromkeys(v.code for v in report.violations if v.code in SUPPORT_CODES))
        support = report.citations[0].support if report.citations else 0.0
        rows.append(ClaimRow(c["id"], c["label"], not codes, codes, support, "article" if text else "quote"))
    by_label = {lab: LabelCount(sum(r.label == lab for r in rows), sum(r.label == lab and r.accepted for r in rows))
                for lab in LABELS if any(r.label == lab for r in rows)}
    logger.info("eval-claims: %d claims, accepted %s", len(rows),
                {k: f"{v.accepted}/{v.n}" for k, v in by_label.items()})
    return ClaimsReport(len(rows), by_label, tuple(rows))
