"""A Hugging Face sequence-classification checkpoint scored as a cross-encoder with ``transformers`` alone.

What ``sentence_transformers.CrossEncoder(path, activation_fn=Identity()).predict(pairs)`` returns, the raw
logits of each (query, passage) pair, tokenized together (``truncation="longest_first"`` at ``max_length``,
padded per batch), without importing sentence-transformers (its import pulls in scikit-learn and SciPy,
about a second of a cold ``rag ask``). The scores are the same to float rounding
(``tests/models/test_reranker_models.py`` compares both on the bundled checkpoints).
"""
from __future__ import annotations

from pathlib import Path
from typing import Sequence

import numpy as np

from rag.models.quiet import quiet_model_loading


class TransformersCrossEncoder:
    """``predict(pairs) -> logits`` over a checkpoint folder or model name (loaded on construction, fp32, CPU).

    ``tokenizer`` and ``max_seq_length`` are what the scorer reads besides ``predict``; ``model`` is the
    ``torch`` module (the scorer may replace it with its int8-quantized copy)."""

    def __init__(self, path: str | Path, max_length: int | None = None) -> None:
        import torch
        from transformers import AutoModelForSequenceClassification, AutoTokenizer

        with quiet_model_loading():  # no "Loading weights" bar in the caller's output
            self.tokenizer = AutoTokenizer.from_pretrained(str(path))
            self.model = AutoModelForSequenceClassification.from_pretrained(str(path), dtype=torch.float32)
        self.model.eval()
        limit = getattr(self.model.config, "max_position_embeddings", None) or 512
        told = getattr(self.tokenizer, "model_max_length", None)
        # unset: the shorter of what the tokenizer and the position table allow
        self.max_seq_length = int(max_length or (min(told, limit) if told else limit))

    def predict(self, pairs: Sequence[tuple[str, str]], batch_size: int = 32,
                show_progress_bar: bool = False) -> np.ndarray:
        """Raw logits, one row per pair (a single-label checkpoint: one value per pair).
        ``show_progress_bar`` is accepted for the sentence-transformers call's shape and ignored."""
        import torch

        rows: list[np.ndarray] = []
        with torch.inference_mode():
            for i in range(0, len(pairs), max(1, batch_size)):
                batch = pairs[i:i + batch_size]
                enc = self.tokenizer([q for q, _ in batch], [t for _, t in batch], padding=True,
                                     truncation="longest_first", max_length=self.max_seq_length,
                                     return_tensors="pt")
                logits = self.model(**enc).logits.float().numpy()
                rows.append(logits[:, 0] if logits.shape[1] == 1 else logits)
        if not rows:
            return np.zeros(0, dtype=np.float32)
        return np.concatenate(rows, axis=0)
