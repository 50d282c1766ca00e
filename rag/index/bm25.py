"""BM25 over analyzed chunk text, with two interchangeable backends.

Both use the Lucene variant: idf = ln(1 + (N - df + .5) / (df + .5)) and
tf / (tf + k1 (1 - b + b dl / avgdl)).

- ``bm25s``: precomputed sparse score matrix (fast; the default). Saved with numpy
  arrays and reloaded memory-mapped.
- ``rank_bm25``: the reference implementation (rank_bm25's BM25Okapi loop with the
  Lucene idf), slow but independent; used to check ``bm25s`` with ``allclose``.

The index stores every chunk's term ids, so adding or deleting chunks refits the score
matrix from stored ids (no re-analysis, no re-embedding): BM25's idf and average
length are corpus-global, so any change alters every score.
"""
from __future__ import annotations

import json
import logging
import math
from pathlib import Path
from typing import Protocol, Sequence

import numpy as np

from rag.config import BM25Config
from rag.errors import IndexCorruptError, missing_dependency

logger = logging.getLogger(__name__)


class _Scorer(Protocol):
    def scores(self, query_ids: np.ndarray) -> np.ndarray: ...


class _Bm25sScorer:
    def __init__(self, model) -> None:
        self.model = model

    @classmethod
    def fit(cls, docs: Sequence[np.ndarray], vocab_size: int, k1: float, b: float) -> "_Bm25sScorer":
        try:
            import bm25s
            from bm25s.tokenization import Tokenized
        except ImportError:
            raise missing_dependency("bm25s", "core", "the bm25s backend") from None
        model = bm25s.BM25(k1=k1, b=b, method="lucene")
        vocab = {f"t{i}": i for i in range(vocab_size)}
        model.index(Tokenized(ids=[d.tolist() for d in docs], vocab=vocab), show_progress=False)
        return cls(model)

    def scores(self, query_ids: np.ndarray) -> np.ndarray:
        if query_ids.size == 0:
            return np.zeros(self.model.scores["num_docs"], dtype=np.float32)
        return self.model.get_scores_from_ids(query_ids.tolist())

    def save(self, folder: Path) -> None:
        self.model.save(str(folder), show_progress=False)

    @classmethod
    def load(cls, folder: Path, mmap: bool) -> "_Bm25sScorer":
        import bm25s

        return cls(bm25s.BM25.load(str(folder), mmap=mmap, show_progress=False))


class _RankBm25Scorer:
    def __init__(self, docs: Sequence[np.ndarray], k1: float, b: float) -> None:
        try:
            from rank_bm25 import BM25Okapi
        except ImportError:
            raise missing_dependency("rank-bm25", "core", "the rank_bm25 backend") from None

        class _LuceneOkapi(BM25Okapi):
            def _calc_idf(self, nd):  # Lucene idf, never negative
                for word, freq in nd.items():
                    self.idf[word] = math.log(1 + (self.corpus_size - freq + 0.5) / (freq + 0.5))

        self.k1 = k1
        self.n = len(docs)
        self.model = _LuceneOkapi([d.tolist() for d in docs], k1=k1, b=b) if docs else None

    def scores(self, query_ids: np.ndarray) -> np.ndarray:
        if self.model is None:
            return np.zeros(0, dtype=np.float32)
        # BM25Okapi multiplies by (k1 + 1); Lucene drops that rank-preserving constant.
        # With b = 1 an empty chunk gives 0/0 for tf = 0; its contribution is 0 by definition.
        raw = np.nan_to_num(self.model.get_scores(query_ids.tolist()), nan=0.0)
        return (raw / (self.k1 + 1)).astype(np.float32)


class BM25Index:
    """Vocabulary, per-chunk term ids and a scorer."""

    def __init__(self, config: BM25Config | None = None) -> None:
        """``config``: the ``bm25`` section (backend, k1, b; the analyzer is applied by the caller)."""
        self.config = config or BM25Config()
        self.vocab: dict[str, int] = {}
        self.doc_ids: list[np.ndarray] = []
        self._scorer: _Scorer | None = None

    @property
    def backend(self) -> str:
        return self.config.backend

    @property
    def k1(self) -> float:
        return self.config.k1

    @property
    def b(self) -> float:
        return self.config.b

    def __len__(self) -> int:
        return len(self.doc_ids)

    def encode(self, terms: Sequence[str], grow: bool) -> np.ndarray:
        if grow:
            for t in terms:
                if t not in self.vocab:
                    self.vocab[t] = len(self.vocab)
            return np.fromiter((self.vocab[t] for t in terms), dtype=np.int32, count=len(terms))
        return np.fromiter((self.vocab[t] for t in terms if t in self.vocab), dtype=np.int32)

    def set_documents(self, doc_ids: list[np.ndarray]) -> None:
        """Replace the indexed documents (term-id arrays, in index row order) and refit."""
        self.doc_ids = list(doc_ids)
        if self.backend == "bm25s":
            self._scorer = _Bm25sScorer.fit(self.doc_ids, max(len(self.vocab), 1), self.k1, self.b) if self.doc_ids else None
        else:
            self._scorer = _RankBm25Scorer(self.doc_ids, self.k1, self.b)

    def subset(self, rows: Sequence[int]) -> "BM25Index":
        """An index of these rows alone (the same vocabulary): its idf and average length are theirs."""
        sub = BM25Index(self.config)
        sub.vocab = self.vocab
        sub.set_documents([self.doc_ids[i] for i in rows])
        return sub

    def scores(self, query_terms: Sequence[str]) -> np.ndarray:
        if self._scorer is None or not self.doc_ids:
            return np.zeros(len(self.doc_ids), dtype=np.float32)
        return np.asarray(self._scorer.scores(self.encode(query_terms, grow=False)), dtype=np.float32)

    def top_k(self, query_terms: Sequence[str], k: int) -> tuple[np.ndarray, np.ndarray]:
        """Row indices and scores of the best ``k`` rows with score > 0; ties by row order."""
        s = self.scores(query_terms)
        return top_k_desc(s, k, positive_only=True)

    # -- persistence -------------------------------------------------------
    def save(self, folder: Path) -> None:
        folder.mkdir(parents=True, exist_ok=True)
        lengths = np.array([len(d) for d in self.doc_ids], dtype=np.int64)
        offsets = np.concatenate([[0], np.cumsum(lengths)]).astype(np.int64)
        flat = np.concatenate(self.doc_ids).astype(np.int32) if self.doc_ids else np.zeros(0, np.int32)
        np.save(folder / "term_ids.npy", flat)
        np.save(folder / "term_offsets.npy", offsets)
        terms = [""] * len(self.vocab)
        for t, i in self.vocab.items():
            terms[i] = t
        (folder / "vocab.json").write_text(json.dumps(terms, ensure_ascii=False), encoding="utf-8")
        (folder / "bm25.json").write_text(json.dumps({"backend": self.backend, "k1": self.k1, "b": self.b}), encoding="utf-8")
        if self.backend == "bm25s" and isinstance(self._scorer, _Bm25sScorer):
            self._scorer.save(folder / "bm25s")

    @classmethod
    def load(cls, folder: Path, config: BM25Config, mmap: bool = True) -> "BM25Index":
        try:
            terms = json.loads((folder / "vocab.json").read_text(encoding="utf-8"))
            flat = np.load(folder / "term_ids.npy", mmap_mode="r" if mmap else None)
            offsets = np.load(folder / "term_offsets.npy")
            saved = json.loads((folder / "bm25.json").read_text(encoding="utf-8"))
        except (OSError, ValueError) as exc:
            raise IndexCorruptError(f"{folder}: BM25 files unreadable ({exc}); rebuild with `rag index`") from None
        idx = cls(config)
        idx.vocab = {t: i for i, t in enumerate(terms)}
        idx.doc_ids = [np.asarray(flat[offsets[i]:offsets[i + 1]]) for i in range(len(offsets) - 1)]
        same = saved.get("backend") == idx.backend and saved.get("k1") == idx.k1 and saved.get("b") == idx.b
        if idx.backend == "bm25s" and same and (folder / "bm25s").is_dir() and idx.doc_ids:
            idx._scorer = _Bm25sScorer.load(folder / "bm25s", mmap=mmap)
        else:
            idx.set_documents(idx.doc_ids)
        return idx


def top_k_desc(scores: np.ndarray, k: int, positive_only: bool = False) -> tuple[np.ndarray, np.ndarray]:
    """Indices of the ``k`` largest scores, sorted by score desc then index asc."""
    n = scores.shape[0]
    if n == 0 or k <= 0:
        return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.float32)
    if positive_only:
        cand = np.flatnonzero(scores > 0)
        if cand.size > k:
            part = np.argpartition(-scores[cand], k - 1)[:k]
            # include every index tied with the k-th score so ties break by index
            kth = scores[cand[part]].min()
            cand = cand[scores[cand] >= kth]
    else:
        cand = np.arange(n)
        if n > k:
            part = np.argpartition(-scores, k - 1)[:k]
            kth = scores[part].min()
            cand = np.flatnonzero(scores >= kth)
    order = np.lexsort((cand, -scores[cand]))[:k]
    sel = cand[order]
    return sel.astype(np.int64), scores[sel].astype(np.float32)
