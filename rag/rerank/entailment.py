"""The entailment head at inference: P(entailment, neutral, contradiction) for (premise, hypothesis) pairs.

A compact e5 folder (:mod:`rag.rerank.e5_reranker`) whose ``rag_reranker.json`` says ``"task": "nli"`` and
whose classifier has 3 outputs, trained by ``rag reader nli train`` (:mod:`rag.reader.nli`); its
``calibration.json`` holds the temperature the logits are divided by. The bundled model lives in
``rag/_models/nli-e5-ko-en`` (model card there). Loaded on first use, int8 dynamic quantization by default;
thread-safe (one lock around the forward pass).
"""
from __future__ import annotations

import json
import logging
import threading
from pathlib import Path
from typing import TYPE_CHECKING, Callable, Sequence

import numpy as np

from rag.errors import ModelLoadError

if TYPE_CHECKING:
    from rag.config import ValidationConfig

logger = logging.getLogger(__name__)

LABELS = ("entailment", "neutral", "contradiction")
BUNDLED = Path(__file__).resolve().parents[1] / "_models" / "nli-e5-ko-en"


def model_dir(path: str | None, base_dir: str | Path | None = None) -> Path:
    """The folder of ``path`` (relative to ``base_dir``), or the bundled model when ``path`` is None."""
    if path is None:
        return BUNDLED
    p = Path(path).expanduser()
    return p if p.is_absolute() or base_dir is None else Path(base_dir) / p


def entailment_for(validation: "ValidationConfig",
                   base_dir: str | Path | None) -> "Callable[[Sequence[tuple[str, str]]], np.ndarray] | None":
    """The configured model's ``probabilities`` when ``validation.check_entailment`` is on (the bundled one unless
    ``validation.entailment_model`` names a folder, relative to ``base_dir``); None when the check is off."""
    if not validation.check_entailment:
        return None
    return EntailmentModel(model_dir(validation.entailment_model, base_dir)).probabilities


class EntailmentModel:
    """``probabilities(pairs)`` -> (n, 3) calibrated probabilities in :data:`LABELS` order."""

    def __init__(self, path: Path, *, quantize: bool = True, batch_size: int = 16) -> None:
        meta_path = path / "rag_reranker.json"
        try:
            meta = json.loads(meta_path.read_text(encoding="utf-8"))
        except (OSError, ValueError) as exc:
            raise ModelLoadError(f"{meta_path}: not an entailment model folder ({exc}); train one with "
                                 "`rag reader nli train` or leave validation.entailment_model unset") from None
        if meta.get("task") != "nli":
            raise ModelLoadError(f"{path}: a {meta.get('task')!r} model, not an entailment (nli) one")
        calib = path / "calibration.json"
        self.temperature = float(json.loads(calib.read_text(encoding="utf-8"))["temperature"]) \
            if calib.is_file() else 1.0
        self.path = path
        self.max_length = int(meta.get("max_length", 128))
        self.quantize = quantize
        self.batch_size = batch_size
        self._model = None
        self._tok = None
        self._lock = threading.Lock()

    def _load(self) -> None:
        from rag.rerank import e5_reranker

        model = e5_reranker.load_compact(self.path)
        if int(model.config.num_labels) != len(LABELS):
            raise ModelLoadError(f"{self.path}: {model.config.num_labels} outputs, an entailment model has 3")
        self._model = e5_reranker.quantize_linear(model) if self.quantize else model
        self._tok = e5_reranker.tokenizer()

    def probabilities(self, pairs: Sequence[tuple[str, str]]) -> np.ndarray:
        if not pairs:
            return np.zeros((0, len(LABELS)))
        from rag.rerank.e5_reranker import pair_logits

        with self._lock:
            if self._model is None:
                self._load()
            logits = pair_logits(self._model, self._tok, pairs, self.max_length, self.batch_size)
        return softmax(logits, self.temperature)


def softmax(logits: np.ndarray, temperature: float = 1.0) -> np.ndarray:
    """Row-wise softmax of ``logits / temperature``."""
    z = logits / temperature
    z = z - z.max(axis=1, keepdims=True)
    e = np.exp(z)
    return e / e.sum(axis=1, keepdims=True)


__all__ = ["BUNDLED", "EntailmentModel", "LABELS", "entailment_for", "model_dir", "softmax"]
