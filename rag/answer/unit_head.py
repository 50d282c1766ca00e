"""The learned unit head: the extractive generator's signals weighed by a logistic head fitted on thousands of
labelled questions instead of by hand (issue 43: the rules stay, as features).

:data:`UNIT_FEATURES` is one frozen vector per unit of a question's bundle, built only from what
:func:`rag.answer.units.unit_signals` and the question analysis already compute: the lexical match of the unit
and of its block, with the unit's reciprocal rank and z-score in the question's list; the kind fit and the
case fit; the model's score (the embedder's cosine), whether the model scored the unit, and its rank and
z-score in the question's list (an unscored unit counts at the lowest scored value there, and gets no
rank, margin or z-score of its own); the key-term coverage and whether it is the best in the list; whether the
question asks a number and whether the unit states the asked fact; the question's terms in the block's
section heading; delegation, list item, position in the block, length, and a block in another language.
The block's place in the retrieval order is not a feature: the training bundles have no retrieval order.

:class:`UnitHead` reads the stored head (``rag/_models/unit-head/unit_head.json``: a
:class:`rag.rerank.heads.Head` or :class:`rag.rerank.heads.TreeHead`, with the scorer it was fitted with) and gives each unit the calibrated
probability that it holds the answer. Training and measures: :mod:`rag.evaluation.unit_training`
(``rag reader train-units``, docs/reader.md).
"""
from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from rag.answer.units import Unit, UnitSignals, holds_asked, section_terms
from rag.context.builder import ContextBundle
from rag.config import GenerationConfig
from rag.errors import ConfigError, ModelLoadError
from rag.rerank.heads import Head, TreeHead, head_from_json, ranked_block, read_artifact
from rag.text.question_analysis import QuestionAnalysis

FORMAT = "rag-unit-head/1"
MODEL_DIR = Path(__file__).resolve().parents[1] / "_models" / "unit-head"
UNIT_FEATURES: tuple[str, ...] = (
    "lexical", "context", "pre", "pre_rrank", "pre_z", "fit", "fit_full",
    "model", "model_scored", "model_rrank", "model_margin", "model_z",
    "coverage", "coverage_best", "numeric", "holds", "section_terms",
    "delegates", "item", "position", "first", "log_chars", "cross",
)
# Products the head may read: the model score where it is the whole evidence (another language), the
# lexical match of a unit that states the asked fact, the model where the fit is full.
PRODUCTS: tuple[tuple[str, str], ...] = (("model", "cross"), ("pre", "holds"), ("model_z", "fit_full"))


def unit_vectors(asked: QuestionAnalysis, bundle: ContextBundle, units: Sequence[Unit],
                 signals: UnitSignals) -> np.ndarray:
    """``[len(units), len(UNIT_FEATURES)]`` for one question's units (module docstring)."""
    n = len(units)
    if n == 0:
        return np.zeros((0, len(UNIT_FEATURES)))
    pre = ranked_block(np.asarray(signals.pre))
    scored = np.array([m is not None for m in signals.model])
    raw = np.array([m if m is not None else np.nan for m in signals.model], dtype=np.float64)
    fill = float(np.nanmin(raw)) if scored.any() else signals.floor
    model = ranked_block(np.where(scored, raw, fill))
    model[~scored, 1:] = 0.0  # an unscored unit has no rank, margin or z among the scored ones
    cov = np.asarray(signals.coverage, dtype=np.float64)
    sec_terms = [n or 0 for n in section_terms(asked.text, bundle)]
    per_block: dict[int, int] = {}
    for u in units:
        per_block[u.block_pos] = max(per_block.get(u.block_pos, 0), u.sent_pos)
    rows = []
    for i, u in enumerate(units):
        last = per_block[u.block_pos]
        rows.append((
            signals.lexical[i], signals.context[i], pre[i, 0], pre[i, 1], pre[i, 3],
            signals.fit[i], float(signals.fit[i] >= 1.0 - 1e-9),
            model[i, 0], float(scored[i]), model[i, 1], model[i, 2], model[i, 3],
            cov[i], float(cov[i] >= cov.max() - 1e-12), float(asked.numeric),
            float(asked.numeric and holds_asked(asked, u.text)), float(sec_terms[u.block_pos]),
            float(u.delegates), float(bool(u.lead)), u.sent_pos / last if last else 0.0, float(u.sent_pos == 0),
            math.log1p(len(u.text)), float(signals.cross[i]),
        ))
    x = np.asarray(rows, dtype=np.float64)
    assert x.shape[1] == len(UNIT_FEATURES)
    return x


@dataclass(frozen=True)
class UnitHead:
    """A stored unit head over :data:`UNIT_FEATURES` (a logistic :class:`Head` or gradient-boosted
    :class:`TreeHead`, whichever had the lower calib log-loss) and the scorer it was fitted with."""

    head: Head | TreeHead
    scorer: str  # the generation.extractive_scorer whose model scores it was fitted on
    meta: dict = field(default_factory=dict, compare=False)

    def probabilities(self, asked: QuestionAnalysis, bundle: ContextBundle, units: Sequence[Unit],
                      signals: UnitSignals) -> np.ndarray:
        """The calibrated probability that each unit holds the answer."""
        return self.head.probability(unit_vectors(asked, bundle, units, signals))

    def to_json(self) -> dict:
        return {"format": FORMAT, "scorer": self.scorer, "head": self.head.to_json(), **self.meta}

    @classmethod
    def load(cls, path: Path | str | None = None) -> "UnitHead":
        """From ``unit_head.json`` (a folder holding it, or the file; default the bundled one)."""
        p, d = read_artifact(path, MODEL_DIR, "unit_head.json", "the unit head", "train one with `rag reader "
                             "train-units`, or set generation.extractive_ranker: rules")
        if d.get("format") != FORMAT:
            raise ModelLoadError(f"{p}: format {d.get('format')!r}, expected {FORMAT}")
        head = head_from_json(d["head"])
        if head.features != UNIT_FEATURES:
            raise ModelLoadError(f"{p}: fitted on other features ({len(head.features)}) than this version's "
                                 f"{len(UNIT_FEATURES)}; retrain it with `rag reader train-units`")
        meta = {k: v for k, v in d.items() if k not in ("format", "scorer", "head")}
        return cls(head, str(d["scorer"]), meta)


def unit_head_for(config: GenerationConfig, base_dir: str | Path | None = None) -> UnitHead | None:
    """The head ``generation.extractive_ranker: learned`` asks for (None for ``rules``): the bundled one or
    ``extractive_unit_head`` (relative to ``base_dir``, the config file's folder); it must have been fitted
    with the configured ``extractive_scorer``."""
    if config.extractive_ranker != "learned":
        return None
    path: Path | None = None
    if config.extractive_unit_head:
        path = Path(config.extractive_unit_head)
        if not path.is_absolute() and base_dir is not None:
            path = Path(base_dir) / path
    head = UnitHead.load(path)
    if head.scorer != config.extractive_scorer:
        raise ConfigError(f"generation.extractive_ranker: learned: the unit head was fitted with the "
                          f"{head.scorer!r} scorer, but generation.extractive_scorer is {config.extractive_scorer!r}; "
                          f"set extractive_scorer: {head.scorer} or extractive_ranker: rules")
    return head
