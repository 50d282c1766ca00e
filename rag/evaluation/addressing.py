"""Answered for another question? The validator's question check on gold answers (``rag eval-addressing``).

No index and no retrieval. For every answerable question with a gold quote, its *gold answer* is
built from the dataset (:mod:`rag.evaluation.answer_dataset`):

- the *block* (source ``S1``, a :class:`~rag.context.builder.ContextBlock`) is the quote's whole
  paragraph in the current version of the gold document: the text between the blank lines
  around the quote (:func:`gold_paragraph`), its locator where the chunker would put it
  (:func:`rag.text.structure.locate` at the block's start); the quote itself when it is not in
  that version (``block_kind`` ``"quote"``);
- the *answer* is the quote, line by line (:func:`quote_lines`), cleaned of markdown (``**``,
  backslash escapes), amendment notes (``<개정 …>``, :data:`rag.text.structure.NOTE`) and
  line-leading enumerators (``1.``, ``②``), each sentence ending with `` [S1]``
  (:func:`with_markers`): one sentence for most quotes, a line per item for a quote with a list.
  Each answer line has one citation of ``S1`` (claim: the cleaned line; quote: the line verbatim),
  as the extractive generator cites a unit; a one-line quote is cited whole.

Then three kinds of cases are validated with ``validate(payload, {"S1": block}, question=...)``:

- ``matched``: question q's own gold answer, for q: expected accepted;
- ``mismatched``: the gold answer of every other question p whose gold ``(doc_id, article)``
  differs from q's, for q: expected rejected. Pairs where one gold quote contains the other
  (after :func:`~rag.evaluation.answer_scoring.normalize_fact_text`) are left out: that answer does
  hold the other question's gold quote. ``same_doc`` says whether p's gold document is q's;
- ``paraphrased``: every claim labelled ``supported`` in the claims file (by default
  ``claims.jsonl`` next to the questions; :func:`rag.evaluation.claims.load_claims`) whose quote
  occurs in a question's gold quote (same document when the claim names one; both normalised):
  the answer ``"{claim} [S1]"``, its citation ``(S1, claim, the claim's quote)``, the question's
  block, for that question: expected accepted.

A case is *accepted* when the validator reports no violation. Cases come kind by kind (matched,
mismatched, paraphrased), then in question file order (claims in file order for paraphrases).
"""
from __future__ import annotations

import logging
import re
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from types import MappingProxyType
from typing import Any, Literal, Protocol

from rag.answer.contract import AnswerPayload, CitationItem
from rag.config import RagConfig
from rag.context.builder import ContextBlock
from rag.errors import DatasetError
from rag.evaluation.answer_dataset import AnswerQuestion, CurrentDocument, current_documents, load_answer_dataset
from rag.evaluation.answer_scoring import normalize_fact_text
from rag.evaluation.claims import load_claims
from rag.lang.ko.statute import ITEM_NUMBER
from rag.text.sentences import answer_sentences
from rag.text.structure import HANGUL_ENUMERATORS, NOTE, PARAGRAPH_MARKS, locate

logger = logging.getLogger(__name__)

CaseKind = Literal["matched", "mismatched", "paraphrased"]
KINDS: tuple[CaseKind, ...] = ("matched", "mismatched", "paraphrased")
CLAIMS_FILE = "claims.jsonl"
MARKER = " [S1]"
_BLANK_LINE = re.compile(r"\n[ \t]*\n")
_ESCAPE = re.compile(r"\\(.)", re.DOTALL)
_LEADING_ENUMERATOR = re.compile(
    rf"^(?:[{PARAGRAPH_MARKS}]|{ITEM_NUMBER}\.|[{HANGUL_ENUMERATORS}]\.)(?=\s|$)\s*")


class QuestionValidator(Protocol):
    """What :func:`eval_addressing` needs of a validator (:class:`rag.answer.validation.CitationValidator`):
    a report whose ``violations`` each have a ``code``."""

    def validate(self, payload: AnswerPayload, source_map: Mapping[str, ContextBlock], *,
                 question: str | None = None) -> Any: ...


# -- gold answers ----------------------------------------------------------------------
def clean_line(line: str) -> str:
    """The answer form of one line of a gold quote: ``**`` and markdown backslash escapes (``1\\.``)
    removed, amendment notes (``<개정 …>``, ``[본조신설 …]``) removed, a line-leading paragraph mark
    or item enumerator (``②``, ``1.``, ``가.``) removed (as the extractive generator writes units),
    whitespace runs collapsed to one space."""
    t = _ESCAPE.sub(r"\1", line.replace("**", ""))
    t = " ".join(NOTE.sub(" ", t).split())
    return _LEADING_ENUMERATOR.sub("", t).strip()


def quote_lines(quote: str) -> tuple[tuple[str, str], ...]:
    """``(answer line, quote line)`` for each line of ``quote`` that is not empty once cleaned
    (:func:`clean_line`); the quote line is the line verbatim, surrounding whitespace stripped."""
    return tuple((c, raw.strip()) for raw in quote.splitlines() if (c := clean_line(raw)))


def with_markers(text: str) -> str:
    """``text`` with `` [S1]`` after each of its answer sentences (:func:`rag.text.sentences.answer_sentences`;
    every line ends one), the sentences of a line joined by one space, the lines by a newline;
    ``text`` itself ending in the marker when it has no sentence."""
    sents = answer_sentences(text)
    if not sents:
        return text + MARKER
    out = text[:sents[0].start]
    for i, s in enumerate(sents):
        gap = "" if i == 0 else ("\n" if "\n" in text[sents[i - 1].end:s.start] else " ")
        out += gap + s.text + MARKER
    return out.strip()


def gold_paragraph(text: str, quote: str) -> tuple[int, int] | None:
    """``(start, end)`` of the paragraph of ``text`` that holds the first occurrence of ``quote``:
    from just after the last blank line before the quote (or the text's start) to the first blank
    line after it (or the text's end), surrounding whitespace excluded; None when ``quote`` is
    empty or not in ``text``."""
    at = text.find(quote) if quote else -1
    if at < 0:
        return None
    start = max((m.end() for m in _BLANK_LINE.finditer(text, 0, at)), default=0)
    nxt = _BLANK_LINE.search(text, at + len(quote))
    end = nxt.start() if nxt else len(text)
    while start < end and text[start].isspace():
        start += 1
    while end > start and text[end - 1].isspace():
        end -= 1
    return start, end


@dataclass(frozen=True)
class GoldAnswer:
    """One question's gold answer and the block it cites (see the module docstring)."""

    question_id: str
    doc_id: str
    article: str
    block: ContextBlock
    block_kind: Literal["paragraph", "quote"]
    answer: str  # the cleaned quote, a line per quote line, each sentence ending with " [S1]"
    citations: tuple[tuple[str, str], ...]  # (claim, quote) per answer line: the cleaned line, the line verbatim
    quote: str  # the gold quote, verbatim


def gold_answer(q: AnswerQuestion, doc: CurrentDocument | None) -> GoldAnswer:
    """The gold answer of an answerable question with a gold quote, over ``doc`` (the current version
    of its gold document; None when the corpus lacks it: the block is then the quote)."""
    if q.gold is None or not q.gold.quote:
        raise ValueError(f"gold_answer needs an answerable question with a gold quote; {q.id!r} has none")
    g = q.gold
    span = gold_paragraph(doc.text, g.quote) if doc is not None else None
    if doc is not None and span is not None:
        start, end = span
        loc = locate(doc.text, start)
        text, kind, locator = doc.text[start:end], "paragraph", loc.label if loc.article else ""
    else:
        start, end, text, kind, locator = 0, len(g.quote), g.quote, "quote", ""
        logger.warning("eval-addressing: the gold quote of %s is not in the current version of %s; the block is "
                       "the quote itself", q.id, g.doc_id)
    version = doc.version if doc is not None else ""
    block = ContextBlock(source_id="S1", evidence_id=f"{g.doc_id}:{version}:{start}-{end}", document_id=g.doc_id,
                         document_version=version, text=text, start_char=start, end_char=end, truncated=False,
                         tokens=0, score=0.0, rank=1, uri=doc.uri if doc else "", title=doc.title if doc else "",
                         locator=locator)
    lines = quote_lines(g.quote) or ((g.quote.strip(), g.quote.strip()),)
    answer = "\n".join(with_markers(c) for c, _ in lines)
    return GoldAnswer(q.id, g.doc_id, g.article, block, kind, answer, lines, g.quote)


def payload_of(answer: str, citations: Sequence[tuple[str, str]]) -> AnswerPayload:
    """An ``answered`` payload: ``answer`` and one citation of ``S1`` per ``(claim, quote)``."""
    return AnswerPayload(status="answered", answer=answer,
                         citations=tuple(CitationItem(source_id="S1", claim=c, quote=q) for c, q in citations))


# -- the report ----------------------------------------------------------------------------
@dataclass(frozen=True)
class AddressingCase:
    """One validated (answer, question) pair. ``answer_from``: the question (matched, mismatched) or
    the claim (paraphrased) the answer comes from; ``same_doc``: for mismatched, whether its gold
    document is the question's (else None)."""

    kind: CaseKind
    question_id: str
    answer_from: str
    expect_accepted: bool
    accepted: bool
    codes: tuple[str, ...]  # the violation codes reported, each once, in report order
    same_doc: bool | None = None

    @property
    def ok(self) -> bool:
        """Whether the validator did what was expected."""
        return self.accepted == self.expect_accepted

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"kind": self.kind, "question_id": self.question_id, "answer_from": self.answer_from,
                               "expected": "accepted" if self.expect_accepted else "rejected",
                               "accepted": self.accepted, "ok": self.ok, "codes": list(self.codes)}
        if self.same_doc is not None:
            out["same_doc"] = self.same_doc
        return out


@dataclass(frozen=True)
class Share:
    """``k`` of ``n`` cases did what was expected; ``rate`` is None when ``n`` is 0."""

    k: int
    n: int

    @property
    def rate(self) -> float | None:
        return round(self.k / self.n, 6) if self.n else None

    def to_json(self) -> dict[str, Any]:
        return {"k": self.k, "n": self.n, "share": self.rate}


def _share(cases: Sequence[AddressingCase]) -> Share:
    return Share(sum(c.ok for c in cases), len(cases))


@dataclass(frozen=True)
class AddressingReport:
    """What :func:`eval_addressing` hands back. ``questions``: the text of every question with a
    gold answer; ``answers``: each one's gold answer text; ``claims``: each paraphrase's claim;
    ``blocks``: each question's block kind; ``left_out``: mismatched pairs left out because one gold
    quote contains the other, as ``(question id, answer_from)``; ``skipped``: answerable questions
    without a gold quote."""

    dataset: str
    config_hash: str
    cases: tuple[AddressingCase, ...]
    questions: Mapping[str, str]
    answers: Mapping[str, str]
    claims: Mapping[str, str] = field(default_factory=dict)
    blocks: Mapping[str, str] = field(default_factory=dict)
    left_out: tuple[tuple[str, str], ...] = ()
    skipped: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        for name in ("questions", "answers", "claims", "blocks"):
            object.__setattr__(self, name, MappingProxyType(dict(getattr(self, name))))

    def of(self, kind: CaseKind, same_doc: bool | None = None) -> tuple[AddressingCase, ...]:
        """The cases of ``kind`` (and, with ``same_doc``, only those with that ``same_doc``), in order."""
        return tuple(c for c in self.cases if c.kind == kind and (same_doc is None or c.same_doc == same_doc))

    @property
    def shares(self) -> dict[str, Share]:
        """``matched_accepted``, ``mismatched_rejected`` (``_same_doc``, ``_other_doc``) and
        ``paraphrase_accepted``: how many cases of each did what was expected."""
        return {"matched_accepted": _share(self.of("matched")),
                "mismatched_rejected": _share(self.of("mismatched")),
                "mismatched_rejected_same_doc": _share(self.of("mismatched", True)),
                "mismatched_rejected_other_doc": _share(self.of("mismatched", False)),
                "paraphrase_accepted": _share(self.of("paraphrased"))}

    @property
    def codes(self) -> dict[str, dict[str, int]]:
        """``{kind: {violation code: cases reporting it}}``, codes sorted; every kind present."""
        return {kind: dict(sorted(Counter(code for c in self.of(kind) for code in c.codes).items()))
                for kind in KINDS}

    @property
    def failures(self) -> tuple[AddressingCase, ...]:
        """The cases that did not do what was expected, in order."""
        return tuple(c for c in self.cases if not c.ok)

    def to_json(self) -> dict[str, Any]:
        return {"dataset": self.dataset, "config_hash": self.config_hash,
                "metrics": {k: v.to_json() for k, v in self.shares.items()},
                "codes": self.codes, "n_failures": len(self.failures),
                "left_out": [list(p) for p in self.left_out], "skipped": list(self.skipped),
                "questions": dict(self.questions), "answers": dict(self.answers), "claims": dict(self.claims),
                "blocks": dict(self.blocks), "cases": [c.to_json() for c in self.cases]}


# -- the evaluation ----------------------------------------------------------------------
def _codes(report: Any) -> tuple[str, ...]:
    return tuple(dict.fromkeys(v.code for v in report.violations))


def _contains_either(a: str, b: str) -> bool:
    x, y = normalize_fact_text(a), normalize_fact_text(b)
    return bool(x) and bool(y) and (x in y or y in x)


def _paraphrases(claims_path: Path | None, qs: Sequence[AnswerQuestion]) -> list[tuple[dict[str, Any], AnswerQuestion]]:
    """``(claim, question)`` for each supported claim and each question whose gold quote holds the claim's quote."""
    if claims_path is None:
        return []
    out = []
    for _, c in load_claims(claims_path):
        cq = normalize_fact_text(c["quote"])
        if c["label"] != "supported" or not cq:
            continue
        for q in qs:
            assert q.gold is not None
            if (not c.get("doc_id") or c["doc_id"] == q.gold.doc_id) and cq in normalize_fact_text(q.gold.quote):
                out.append((c, q))
    return out


def eval_addressing(dataset_dir: str | Path, config: RagConfig, *, validator: QuestionValidator | None = None,
                    claims_path: str | Path | None = None) -> AddressingReport:
    """Validate matched, mismatched and paraphrased gold answers (see the module docstring) with
    ``validator`` (by default the one the pipeline answers with: ``config.validation``, with the
    embedder when the checks use it).
    ``claims_path``: the claims file for the paraphrases (default: ``claims.jsonl`` in the folder,
    none when it is not there)."""
    data = load_answer_dataset(dataset_dir)
    if validator is None:
        from rag.pipeline.components import Components

        validator = Components(config).validator
    if claims_path is None and (data.path / CLAIMS_FILE).is_file():
        claims_path = data.path / CLAIMS_FILE
    elif claims_path is not None and not Path(claims_path).is_file():
        raise DatasetError(f"claims file not found: {claims_path} (--claims takes a claims JSONL file)")
    docs = current_documents(data)
    qs = [q for q in data.questions if q.answerable and q.gold is not None and q.gold.quote]
    used = {q.id for q in qs}
    skipped = tuple(q.id for q in data.questions if q.answerable and q.id not in used)
    golds = {q.id: gold_answer(q, docs.get(q.gold.doc_id)) for q in qs if q.gold is not None}
    payloads = {qid: payload_of(g.answer, g.citations) for qid, g in golds.items()}

    def run(kind: CaseKind, q: AnswerQuestion, src: str, payload: AnswerPayload, block: ContextBlock,
            expect: bool, same_doc: bool | None = None) -> AddressingCase:
        codes = _codes(validator.validate(payload, {"S1": block}, question=q.question))
        return AddressingCase(kind, q.id, src, expect, not codes, codes, same_doc)

    cases = [run("matched", q, q.id, payloads[q.id], golds[q.id].block, True) for q in qs]
    left_out: list[tuple[str, str]] = []
    for q in qs:
        gq = golds[q.id]
        for p in qs:
            gp = golds[p.id]
            if p.id == q.id or (gp.doc_id, gp.article) == (gq.doc_id, gq.article):
                continue
            if _contains_either(gp.quote, gq.quote):
                left_out.append((q.id, p.id))
                continue
            cases.append(run("mismatched", q, p.id, payloads[p.id], gp.block, False, gp.doc_id == gq.doc_id))
    claims: dict[str, str] = {}
    for c, q in _paraphrases(Path(claims_path) if claims_path is not None else None, qs):
        claims[c["id"]] = c["claim"]
        cases.append(run("paraphrased", q, c["id"], payload_of(with_markers(c["claim"]), [(c["claim"], c["quote"])]),
                         golds[q.id].block, True))
    report = AddressingReport(str(data.path), config.hash, tuple(cases), {q.id: q.question for q in qs},
                              {qid: g.answer for qid, g in golds.items()}, claims,
                              {qid: g.block_kind for qid, g in golds.items()}, tuple(left_out), skipped)
    logger.info("eval-addressing: %s", {k: f"{v.k}/{v.n}" for k, v in report.shares.items()})
    return report
