"""Training data, fitting and measures of the learned unit head (:mod:`rag.answer.unit_head`).

1. **Questions** (:func:`unit_questions`): from the built reader data (``rag reader data build``), the
   sources whose answers are spans: KorQuAD 1.0 (Korean) and SQuAD 2.0 (English, with its unanswerable
   questions). A question's bundle is what the generator would read at run time: one window of about an index
   chunk around the answer sentence of the answering passage (none for an unanswerable question) and windows
   of its BM25-mined non-answering passages, in a seeded shuffled order (the training bundles have no
   retrieval order), each block titled with its article title as its section heading. Splits are the
   reader data's fixed hash splits: fitted on ``train``, picked and calibrated on ``calib``, measured on
   ``eval``; a question is drawn by a seeded hash order, so a larger sample extends a smaller one.
2. **Rows** (:func:`question_rows`): the generator's own units and signals of that bundle
   (:meth:`~rag.answer.extractive.ExtractiveGenerator.units`, :func:`~rag.answer.units.unit_signals`, the
   shipped config and model scorer), one :data:`~rag.answer.unit_head.UNIT_FEATURES` vector per unit,
   label 1 when the unit holds a gold answer string. Cached per chunk of questions (``.npz``, written
   crash-safe, no pickle): a killed run resumes.
3. **Fit** (:func:`fit_unit_head`): a logistic head (:func:`rag.rerank.heads.fit_head`, C by calib
   log-loss) and a gradient-boosted one (:func:`rag.rerank.heads.fit_tree_head`), each Platt-calibrated on
   calib; the lower calib log-loss is kept.
4. **Measure** (:func:`measure`): per source, how often the best unit holds the answer (the learned head
   against today's hand-weighted score on the same units), the AUROC of the best unit's score for
   "this question is answerable" (SQuAD 2.0), and the precision and share answered at probability floors.
"""
from __future__ import annotations

import hashlib
import itertools
import logging
import random
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from rag.answer.extractive import ExtractiveGenerator
from rag.answer.unit_head import PRODUCTS, UNIT_FEATURES, UnitHead, unit_vectors
from rag.answer.units import rule_scores, unit_signals
from rag.context.builder import ContextBlock, ContextBundle
from rag.reader.data import iter_examples
from rag.reader.examples import ReaderExample
from rag.reader.groups import window
from rag.rerank.heads import fit_head, fit_tree_head
from rag.text.question_analysis import analyze_question

logger = logging.getLogger(__name__)

SOURCES = ("korquad1", "squad2")
SEED = 43
CHUNK = 50
Progress = Callable[[str, int, int], None]


@dataclass(frozen=True)
class UnitQuestion:
    source: str
    split: str
    question_id: str
    question: str
    answers: tuple[str, ...]
    answerable: bool
    texts: tuple[str, ...]  # the bundle's blocks, in order
    titles: tuple[str, ...]


def _rng(*parts: str) -> random.Random:
    return random.Random(int.from_bytes(hashlib.sha256("\x1f".join((str(SEED), *parts)).encode()).digest()[:8], "big"))


def _question(rows: list[ReaderExample], negatives: int) -> UnitQuestion | None:
    first = rows[0]
    rng = _rng(first.source, first.question_id)
    gold = [r for r in rows if r.passage_label == "answers" and r.answer_sentences]
    negs = sorted((r for r in rows if r.passage_label == "no_answer"), key=lambda r: (r.rank or 0, r.passage_id))
    if first.answerable and not gold:
        return None
    picked = [(window(g, g.answer_sentences[0], rng), g.passage_title) for g in gold[:1]]  # type: ignore[index]
    picked += [(window(n, None, rng), n.passage_title) for n in negs[:negatives + (0 if gold else 1)]]
    if len(picked) < 2:
        return None
    rng.shuffle(picked)
    return UnitQuestion(first.source, first.split, first.question_id, first.question, first.answers,
                        first.answerable and bool(gold), tuple(t for t, _ in picked), tuple(h for _, h in picked))


def unit_questions(data: Path, split: str, per_source: int, negatives: int = 4) -> list[UnitQuestion]:
    """At most ``per_source`` questions of each source in ``split``, drawn by a seeded hash order."""
    by_source: dict[str, list[tuple[str, UnitQuestion]]] = {}
    grouped = itertools.groupby(iter_examples(data, split, SOURCES),
                                key=lambda e: (e.source, e.question_id, e.question_lang, e.passage_lang))
    for _, group in grouped:
        q = _question(list(group), negatives)
        if q is not None:
            order = hashlib.sha256(f"{SEED}\x1f{q.source}\x1f{q.question_id}".encode()).hexdigest()
            by_source.setdefault(q.source, []).append((order, q))
    return [q for s in sorted(by_source) for _, q in sorted(by_source[s], key=lambda t: t[0])[:per_source]]


def bundle_of(texts: Sequence[str], titles: Sequence[str]) -> ContextBundle:
    """A context bundle of plain blocks (S1, S2, ...), each with its title as its section heading."""
    blocks = tuple(ContextBlock(f"S{i + 1}", f"e{i + 1}", f"d{i + 1}", "1", t, 0, len(t), False, 0, 0.0, i + 1,
                                title=h, section=h) for i, (t, h) in enumerate(zip(texts, titles)))
    return ContextBundle(blocks, (), "", 0, 0, 0, 0)


def _norm(text: str) -> str:
    return " ".join(text.split())


@dataclass(frozen=True)
class Rows:
    x: np.ndarray        # [n, len(UNIT_FEATURES)]
    y: np.ndarray        # [n] 1: the unit holds a gold answer
    rules: np.ndarray    # [n] today's hand-weighted score of the unit
    question: np.ndarray  # [n] index of the question in its list
    source: tuple[str, ...]  # per question
    answerable: np.ndarray  # per question


def question_rows(gen: ExtractiveGenerator, q: UnitQuestion) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(features, labels, rule scores) of the generator's units of ``q``'s bundle."""
    bundle = bundle_of(q.texts, q.titles)
    units = gen.units(bundle)
    if not units:
        return np.zeros((0, len(UNIT_FEATURES))), np.zeros(0), np.zeros(0)
    asked = analyze_question(q.question)
    sig = unit_signals(asked, bundle, units, gen.config, gen.scorer)
    weight = gen.config.extractive_model_weight if gen.scorer is not None else 0.0
    answers = [_norm(a) for a in q.answers if a.strip()]
    y = np.array([float(q.answerable and any(a in _norm(u.text) or a in _norm(u.raw) for a in answers))
                  for u in units])
    return unit_vectors(asked, bundle, units, sig), y, np.asarray(rule_scores(sig, weight))


def build_rows(gen: ExtractiveGenerator, questions: list[UnitQuestion], cache: Path,
               progress: Progress | None = None) -> Rows:
    """The rows of every question, computed by chunks of :data:`CHUNK` questions cached under ``cache`` (keyed
    by the questions, the feature names and the generator's settings)."""
    cache.mkdir(parents=True, exist_ok=True)
    # a chunk is reused only for the same questions, features and generator settings (another config or
    # another feature list computes afresh)
    stamp = "\x1f".join([*UNIT_FEATURES, gen.config.model_dump_json(), str(gen.scorer is not None)])
    xs, ys, rs, qs = [], [], [], []
    t0, done = time.perf_counter(), 0
    for start in range(0, len(questions), CHUNK):
        part = questions[start:start + CHUNK]
        key = hashlib.sha256("\x1f".join([stamp, *(f"{q.source}:{q.question_id}" for q in part)]).encode()).hexdigest()[:16]
        path = cache / f"{start // CHUNK:04d}-{key}.npz"
        if path.exists():
            z = np.load(path, allow_pickle=False)
            x, y, r, qi = z["x"], z["y"], z["rules"], z["question"]
        else:
            got = [question_rows(gen, q) for q in part]
            x = np.vstack([g[0] for g in got]) if got else np.zeros((0, len(UNIT_FEATURES)))
            y, r = np.concatenate([g[1] for g in got]), np.concatenate([g[2] for g in got])
            qi = np.concatenate([np.full(len(g[1]), i) for i, g in enumerate(got)]).astype(np.int64)
            tmp = path.with_suffix(".tmp.npz")
            np.savez_compressed(tmp, x=x, y=y, rules=r, question=qi)
            tmp.replace(path)
        xs.append(x)
        ys.append(y)
        rs.append(r)
        qs.append(qi + start)
        done += len(part)
        if progress:
            progress(f"units {cache.name}", done, len(questions))
    logger.info("%d questions' unit rows in %.0f s (%s)", len(questions), time.perf_counter() - t0, cache)
    return Rows(np.vstack(xs) if xs else np.zeros((0, len(UNIT_FEATURES))), np.concatenate(ys) if ys else np.zeros(0),
                np.concatenate(rs) if rs else np.zeros(0), np.concatenate(qs) if qs else np.zeros(0, np.int64),
                tuple(q.source for q in questions), np.array([q.answerable for q in questions]))


def fit_unit_head(train: Rows, calib: Rows, scorer: str, meta: dict) -> UnitHead:
    """The logistic head and the gradient-boosted one, both Platt-calibrated on calib; the one of lower calib
    log-loss is kept (both losses in ``meta['candidates']``)."""
    linear = fit_head(train.x, train.y, calib.x, calib.y, UNIT_FEATURES, PRODUCTS, compare_gbm=False)
    trees = fit_tree_head(train.x, train.y, calib.x, calib.y, UNIT_FEATURES)
    losses = {"logistic": linear.info["calib_log_loss_after_platt"], "trees": trees.info["calib_log_loss_after_platt"]}
    head = trees if losses["trees"] < losses["logistic"] else linear
    return UnitHead(head, scorer, {**meta, "candidates": losses})


def _auroc(score: np.ndarray, label: np.ndarray) -> float | None:
    pos, neg = score[label], score[~label]
    if len(pos) == 0 or len(neg) == 0:
        return None
    wins = (pos[:, None] > neg[None, :]).sum() + 0.5 * (pos[:, None] == neg[None, :]).sum()
    return float(wins / (len(pos) * len(neg)))


def best_per_question(rows: Rows, score: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(the best score, whether that unit holds the answer) per question (-inf, False for no units)."""
    n = len(rows.source)
    best = np.full(n, -np.inf)
    right = np.zeros(n, dtype=bool)
    for qi in range(n):
        idx = np.flatnonzero(rows.question == qi)
        if len(idx):
            j = idx[np.argmax(score[idx])]  # first of equal scores: block and sentence order
            best[qi], right[qi] = score[j], rows.y[j] > 0
    return best, right


def measure(rows: Rows, head: UnitHead, floors: Sequence[float] = (0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7)) -> dict:
    """Per source: the best unit right (head vs rules) over answerable questions, the answerable AUROC of
    the best score, and per floor of the head's probability the share of answerable questions answered and
    the precision of the answered (an unanswerable question answered counts as wrong)."""
    prob = head.head.probability(rows.x)
    out: dict = {}
    src = np.array(rows.source)
    for s in sorted(set(rows.source)) + ["all"]:
        mask = np.ones(len(src), bool) if s == "all" else src == s
        rep: dict = {"questions": int(mask.sum()), "answerable": int((mask & rows.answerable).sum())}
        for name, score in (("head", prob), ("rules", rows.rules)):
            best, right = best_per_question(rows, score)
            ans = mask & rows.answerable
            rep[f"{name}_top1"] = round(float(right[ans].mean()), 4) if ans.any() else None
            a = _auroc(best[mask], rows.answerable[mask])
            rep[f"{name}_answerable_auroc"] = None if a is None else round(a, 4)
            if name == "head":
                curve = []
                for f in floors:
                    answered = mask & (best >= f)
                    curve.append({"floor": f, "answered_of_answerable": round(float((answered & rows.answerable).sum())
                                                                              / max(1, rep["answerable"]), 4),
                                  "precision": round(float(right[answered].mean()), 4) if answered.any() else None})
                rep["head_floors"] = curve
                rep["reliability"] = reliability(best[mask], right[mask])
        out[s] = rep
    return out


def reliability(prob: np.ndarray, right: np.ndarray, bins: int = 10) -> list[dict]:
    """The reliability table of the best unit's probability: per equal-width bin, the questions, their mean
    probability and the share whose best unit holds the answer (empty bins left out)."""
    out = []
    edges = np.linspace(0.0, 1.0, bins + 1)
    for lo, hi in zip(edges[:-1], edges[1:]):
        m = (prob >= lo) & ((prob < hi) if hi < 1.0 else (prob <= hi))
        if m.any():
            out.append({"bin": f"{lo:.1f}-{hi:.1f}", "questions": int(m.sum()), "mean_probability": round(float(prob[m].mean()), 4),
                        "right": round(float(right[m].mean()), 4)})
    return out
