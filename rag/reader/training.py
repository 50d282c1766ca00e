"""What the reader's two trainers share (:mod:`rag.reader.neural`: the reader; :mod:`rag.reader.nli`: the
entailment head): a YAML training config resolved against its own folder and fingerprinted, crash-safe
checkpoints that refuse another config's, and the optimiser over e5-small's body and a fresh head."""
from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any, TypeVar

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from rag.errors import ConfigError
from rag.reader.errors import ReaderDataError

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
