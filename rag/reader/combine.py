"""The reader's learned combination: logistic heads over :mod:`rag.reader.features`, stored as JSON.

Heads fitted on the TRAIN split only and calibrated on the CALIB split:

- ``passage``: the candidate passage answers the question (``answers`` 1, ``no_answer`` 0; ``unknown``
  left out);
- ``sentence``: a sentence of an answering passage holds the answer span (1) or not (0);
- ``answerable`` (format 2): the question is answerable from its candidates, from per-question aggregates of
  raw features (:mod:`rag.reader.answerable`).

Each head (:class:`rag.rerank.heads.Head`) is an L2-regularised logistic regression (scikit-learn, ``lbfgs``, fixed seed) on standardised
features plus a few products (:data:`INTERACTIONS`: the ranked signals times the same-language flag, so a
cross-language pair can lean on the cross-encoder rather than BM25). The regularisation strength is
picked by log-loss on the calib split among :data:`C_GRID`; a gradient-boosted tree model
(``HistGradientBoostingClassifier``) is fitted the same way for comparison and its calib log-loss recorded
(:func:`fit_head` ``compare_gbm``), but only the logistic head is stored: it needs no tree evaluator.
The calibrated probability is Platt scaling of the head's logit, fitted on calib.

The artifact (``rag/_models/reader-combiner/combiner.json``) holds, per head, the feature names, the
products, the standardisation, the coefficients and the calibration map; :class:`Combiner` loads and
evaluates it with numpy alone (no pickle, no scikit-learn at inference).
"""
from __future__ import annotations

import logging
from dataclasses import dataclass, field
from pathlib import Path

from rag._io import write_json
from rag.errors import ModelLoadError
# The heads themselves live one stage down (rag.rerank.heads), shared with the extractive generator's unit head;
# these names stay importable from here.
from rag.rerank.heads import C_GRID, SEED, Head, expand, fit_head, fit_platt, log_loss, read_artifact  # noqa: F401

logger = logging.getLogger(__name__)

FORMAT = "rag-reader-combiner/2"
READABLE = ("rag-reader-combiner/1", FORMAT)  # /1: no ``answerable`` head
MODEL_DIR = Path(__file__).resolve().parents[1] / "_models" / "reader-combiner"
INTERACTIONS = {
    "passage": (("ce", "same_language"), ("dense", "same_language"), ("bm25_z", "same_language"),
                ("ce_z", "coverage"), ("asked_fact_missing", "ce_z")),
    "sentence": (("s_ce", "same_language"), ("s_ce_z", "p_ce_z"), ("s_asked_fact_missing", "s_ce_z")),
}


@dataclass(frozen=True)
class Combiner:
    """The heads of one artifact; ``answerable`` (the question-level head of :mod:`rag.reader.answerable`)
    is ``None`` in a format-1 artifact."""

    passage: Head
    sentence: Head
    meta: dict = field(default_factory=dict, compare=False)
    answerable: Head | None = None

    def to_json(self) -> dict:
        heads = {"passage": self.passage.to_json(), "sentence": self.sentence.to_json()}
        if self.answerable is not None:
            heads["answerable"] = self.answerable.to_json()
        return {"format": FORMAT, **heads, **self.meta}

    def save(self, folder: Path) -> Path:
        folder.mkdir(parents=True, exist_ok=True)
        path = folder / "combiner.json"
        write_json(path, self.to_json())
        return path

    @classmethod
    def load(cls, path: Path | None = None) -> "Combiner":
        """From ``combiner.json`` (a folder holding it, or the file; default the committed one)."""
        p, d = read_artifact(path, MODEL_DIR, "combiner.json", "the reader combiner",
                             "train one with `rag reader train-combiner`")
        if d.get("format") not in READABLE:
            raise ModelLoadError(f"{p}: format {d.get('format')!r}, expected one of {', '.join(READABLE)}")
        meta = {k: v for k, v in d.items() if k not in ("format", "passage", "sentence", "answerable")}
        ans = Head.from_json(d["answerable"]) if d.get("answerable") is not None else None
        return cls(Head.from_json(d["passage"]), Head.from_json(d["sentence"]), meta, ans)


