"""Feedback from use: a ``rag batch`` results file whose lines a person labelled, read for
``rag calibrate --auto --from-batch`` (:func:`rag.calibrate.auto.auto_calibrate` ``feedback=``).

A line is labelled by a ``"label"`` field: ``right``, ``wrong`` or ``should_abstain`` (also
``should-have-abstained`` / ``should_have_abstained``; any case, ``-`` or ``_``). What the gate
should have done with the question (:func:`should_answer`):

========================  ==============  ==================================================
status of the line        label           the gate should
========================  ==============  ==================================================
answered                  right           answer (positive)
answered                  wrong           abstain (negative: answering it was harmful)
any                       should_abstain  abstain (negative)
insufficient_evidence     wrong           answer (positive: it should have answered)
insufficient_evidence     right           abstain (negative: abstaining was right)
========================  ==============  ==================================================

An abstention a stage after the gate made (the line's trace says the gate answered, then the model or the
validation declined: ``stopped_after_gate``) is one no threshold decides: the fit reads it below every value,
as it reads a probe the question's reading stops, so a right abstention there does not push the threshold up
and a wrong one does not pull it down.

Lines without a label (or ``"label": null`` / ``""``) are ignored and counted. Every bad line
(not JSON, not an object, another schema, a labelled line without its question, an unknown label,
``right`` / ``wrong`` on a line with no answer to judge) is collected and all of them are raised
in one :class:`FeedbackFileError` naming ``FILE:LINE``: nothing is fitted or written. When an id
appears on several lines (a ``--retry-failed`` run not compacted yet), the last line counts.
"""
from __future__ import annotations

import json
import logging
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Mapping

from rag.batch.records import SCHEMA
from rag.errors import DatasetError, InputError

logger = logging.getLogger(__name__)
LABELS = ("right", "wrong", "should_abstain")
_ALIASES = {"right": "right", "wrong": "wrong", "should_abstain": "should_abstain",
            "should_have_abstained": "should_abstain"}
ALLOWED = "right, wrong, should_abstain (aliases: should-have-abstained, should_have_abstained; any case)"
JUDGED_STATUSES = ("answered", "insufficient_evidence")  # the statuses right / wrong can judge
KIND = "labelled"  # rag.calibrate.probes.Probe.kind of a labelled question
DEFAULT_WEIGHT = 5  # each labelled question counts as this many probes (docs/rerank-and-gate.md)


class FeedbackFileError(DatasetError):
    """A labelled batch results file has bad lines; ``problems`` lists every one as ``(line, message)``."""

    def __init__(self, message: str, problems: tuple[tuple[int, str], ...] = ()) -> None:
        super().__init__(message)
        self.problems = problems


def normalize_label(value: Any) -> str | None:
    """The canonical label of a ``"label"`` value; None when the line is unlabelled; ValueError when unknown."""
    if value is None or (isinstance(value, str) and not value.strip()):
        return None
    if not isinstance(value, str):
        raise ValueError(f"label must be a string, got {json.dumps(value, ensure_ascii=False)}")
    key = "_".join(value.strip().lower().replace("-", "_").split())
    if key not in _ALIASES:
        raise ValueError(f"unknown label {value!r}")
    return _ALIASES[key]


def should_answer(status: str, label: str) -> bool:
    """Whether the gate should have answered a question the batch gave ``status`` and a person ``label``."""
    if label == "should_abstain":
        return False
    if label not in ("right", "wrong"):
        raise ValueError(f"unknown label {label!r}")
    if status == "answered":
        return label == "right"
    if status == "insufficient_evidence":
        return label == "wrong"
    raise ValueError(f"a {status or 'status-less'} line has no answer to judge right or wrong; label it "
                     "should_abstain or drop its label")


@dataclass(frozen=True)
class FeedbackItem:
    line: int
    id: str
    question: str  # what retrieval saw: the resolved follow-up when the line has one, else the question
    asked: str  # the question as the batch got it
    status: str
    label: str
    should_answer: bool
    stopped_after_gate: bool = False  # insufficient_evidence although the trace's gate answered

    def to_json(self) -> dict:
        return dict(self.__dict__)


@dataclass(frozen=True)
class FeedbackSet:
    path: Path
    items: tuple[FeedbackItem, ...]
    lines: int  # non-blank lines read
    unlabelled: int  # lines without a label (ignored)
    superseded: int  # earlier lines of an id that appears again (the last one counts)
    documents: frozenset[tuple[str, str]]  # (document id, version) the batch retrieved or cited
    results_hashes: tuple[str, ...]  # the configs the batch ran under (RagConfig.results_hash)
    fingerprints: tuple[str, ...]  # corpus fingerprints the lines record, if any

    @property
    def label_counts(self) -> dict[str, int]:
        c = Counter(i.label for i in self.items)
        return {k: c.get(k, 0) for k in LABELS}

    def summary(self) -> dict:
        return {"batch_file": str(self.path), "lines": self.lines, "labelled": len(self.items),
                "labels": self.label_counts, "ignored_unlabelled": self.unlabelled, "superseded": self.superseded,
                "should_answer": sum(i.should_answer for i in self.items),
                "should_abstain": sum(not i.should_answer for i in self.items)}


def _documents(d: Mapping[str, Any]) -> set[tuple[str, str]]:
    res = d.get("result")
    if not isinstance(res, Mapping):
        return set()
    out = set()
    for c in res.get("citations") or ():
        if isinstance(c, Mapping) and c.get("document_id") and c.get("document_version"):
            out.add((str(c["document_id"]), str(c["document_version"])))
    trace = res.get("trace")
    for c in (trace.get("candidates") or ()) if isinstance(trace, Mapping) else ():
        parts = str(c.get("evidence_id", "")).rsplit(":", 2) if isinstance(c, Mapping) else []
        if len(parts) == 3:  # DOC:VERSION:ORDINAL (rag.index.chunking)
            out.add((parts[0], parts[1]))
    return out


def _stopped_after_gate(status: str, res: Any) -> bool:
    """Whether a stage after the gate made the line's abstention: its trace records the gate answering."""
    if status != "insufficient_evidence" or not isinstance(res, Mapping):
        return False
    trace = res.get("trace")
    gate = trace.get("gate") if isinstance(trace, Mapping) else None
    return isinstance(gate, Mapping) and gate.get("reason") == "answer"


def _item(d: Any, lineno: int, path: Path) -> FeedbackItem | None:
    if not isinstance(d, dict):
        raise ValueError("not a JSON object")
    if "schema" in d and d["schema"] != SCHEMA:
        raise ValueError(f"schema {d['schema']!r} is not {SCHEMA} (a `rag batch` results line)")
    label = normalize_label(d.get("label"))
    if label is None:
        return None
    asked = d.get("question")
    if not isinstance(asked, str) or not asked.strip():
        raise ValueError("a labelled line needs its question (\"question\")")
    status = str(d.get("status") or "")
    target = should_answer(status, label)
    res = d.get("result")
    resolution = res.get("resolution") if isinstance(res, Mapping) else None
    resolved = resolution.get("question") if isinstance(resolution, Mapping) else None
    question = resolved if isinstance(resolved, str) and resolved.strip() else asked
    return FeedbackItem(lineno, str(d.get("id") or f"{path.name}:{lineno}"), question.strip(), asked, status, label,
                        target, _stopped_after_gate(status, res))


def read_feedback(path: str | Path) -> FeedbackSet:
    """The labelled lines of a ``rag batch`` results file (see the module docstring for the rules)."""
    path = Path(path)
    if not path.is_file():
        raise InputError(f"--from-batch {path}: no such file (give the RESULTS.jsonl `rag batch -o` wrote)")
    problems: list[tuple[int, str]] = []
    by_id: dict[str, FeedbackItem] = {}
    seen_ids: set[str] = set()
    documents: set[tuple[str, str]] = set()
    hashes: set[str] = set()
    prints: set[str] = set()
    lines = unlabelled = superseded = 0
    with path.open("rb") as fh:
        for lineno, raw in enumerate(fh, 1):
            if not raw.strip():
                continue
            lines += 1
            try:
                d = json.loads(raw.decode("utf-8"))
            except UnicodeDecodeError:
                problems.append((lineno, "not UTF-8"))
                continue
            except json.JSONDecodeError as exc:
                problems.append((lineno, f"not JSON ({exc.msg} at column {exc.colno})"))
                continue
            try:
                item = _item(d, lineno, path)
            except ValueError as exc:
                problems.append((lineno, str(exc)))
                continue
            rid = str(d.get("id") or f"{path.name}:{lineno}")
            if rid in seen_ids:
                superseded += 1
                by_id.pop(rid, None)  # the last line of an id counts, labelled or not
            seen_ids.add(rid)
            documents |= _documents(d)
            if d.get("results_hash"):
                hashes.add(str(d["results_hash"]))
            if d.get("corpus_fingerprint"):
                prints.add(str(d["corpus_fingerprint"]))
            if item is None:
                unlabelled += 1
            else:
                by_id[rid] = item
    if problems:
        listed = "\n".join(f"  {path}:{n}: {msg}" for n, msg in problems)
        raise FeedbackFileError(
            f"{path}: {len(problems)} bad line(s); nothing was fitted or written. Fix or remove them "
            f"(a line without \"label\" is ignored):\n{listed}\nAllowed labels: {ALLOWED}.", tuple(problems))
    items = tuple(sorted(by_id.values(), key=lambda i: i.line))
    if not items:
        raise InputError(f"{path}: none of its {lines} line(s) carries a label; add \"label\": one of {ALLOWED} "
                         "to the lines you judged")
    return FeedbackSet(path, items, lines, unlabelled, superseded, frozenset(documents), tuple(sorted(hashes)),
                       tuple(sorted(prints)))


def corpus_warnings(fs: FeedbackSet, documents: Mapping[tuple[str, str], Any], fingerprint: str) -> list[str]:
    """Why the batch looks run on another corpus than the current index (``documents``: its records by
    (id, version)): a recorded fingerprint that differs, or retrieved documents the index does not hold."""
    out = []
    other = [f for f in fs.fingerprints if f != fingerprint]
    if other:
        out.append(f"the batch records corpus {', '.join(other)}, this index is {fingerprint}")
    missing = sorted(d for d in fs.documents if d not in documents)
    if missing:
        shown = ", ".join(f"{d}@{v}" for d, v in missing[:5]) + (" ..." if len(missing) > 5 else "")
        out.append(f"{len(missing)} of the {len(fs.documents)} document versions the batch retrieved are not in "
                   f"this index ({shown})")
    if out:
        out.append("the batch was probably run on another corpus or an older index; its labelled questions "
                   "were re-scored on the current index anyway")
    return out


__all__ = ["ALLOWED", "DEFAULT_WEIGHT", "FeedbackFileError", "FeedbackItem", "FeedbackSet", "KIND", "LABELS",
           "corpus_warnings", "normalize_label", "read_feedback", "should_answer"]
