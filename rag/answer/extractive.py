"""The embedded default generator: no model, the block sentences that best match the question,
each cited with itself as the quote."""
from __future__ import annotations

import json
import logging
import math
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from rag.answer.contract import AnswerPayload, CitationItem, GenerationOutput, GenerationRequest, TokenUsage
from rag.context.builder import ContextBundle
from rag.config import GenerationConfig
from rag.errors import GenerationError
from rag.text.sentences import split_sentences
from rag.text.support import content_terms, find_urls

logger = logging.getLogger(__name__)

SentenceScorer = Callable[[str, Sequence[str]], Sequence[float]]
"""(question, sentences) -> one score per sentence, higher is better, comparable to the floor."""

_HOSTILE_ARTIFACTS = ("[source tag removed]", "(ref S")


@dataclass(frozen=True)
class _Candidate:
    score: float
    block_pos: int
    sent_pos: int
    source_id: str
    text: str  # verbatim block text of the sentence


# Question words and interrogative endings that an answer sentence does not repeat
# (Hangul bigrams as the analyzer makes them, and a few English words).
QUESTION_TERMS = frozenset({
    "며칠", "얼마", "언제", "어디", "무엇", "누가", "누구", "어떻", "어떤", "어느", "인가", "가요", "나요", "까요", "니까", "는지", "인지", "은가",
    "는가", "할까", "을까", "습니", "입니", "합니", "되나", "있나", "없나", "하나요", "엇인", "디인", "마인", "마나", "마까", "제인", "칠인",
    "many", "much", "often", "long",
})


def lexical_question_scores(question: str, sentences: Sequence[str]) -> list[float]:
    """IDF-weighted share of the question's content terms found in each sentence.

    IDF comes from the candidate sentences themselves (``log(1 + N / df)``; a term in no
    sentence gets the largest weight), so common words count for little and a question
    whose key terms appear nowhere scores low. Question words (QUESTION_TERMS) are ignored."""
    q = content_terms(question) - QUESTION_TERMS
    if not q or not sentences:
        return [0.0] * len(sentences)
    terms = [content_terms(s) for s in sentences]
    n = len(sentences)
    df = {t: sum(1 for s in terms if t in s) for t in q}
    w = {t: math.log(1 + n / max(df[t], 0.5)) for t in q}
    total = sum(w.values())
    return [sum(w[t] for t in q if t in s) / total for s in terms]


class ExtractiveGenerator:
    """No-LLM answers: the best-matching block sentences, each cited with itself as the quote."""

    def __init__(self, config: GenerationConfig | None = None, scorer: SentenceScorer | None = None, *,
                 min_chars: int = 8, relative_floor: float = 0.6) -> None:
        """``config``: the ``generation`` section (``extractive_max_sentences``, ``extractive_min_score``)."""
        self.config = config or GenerationConfig()
        self.scorer = scorer
        self.min_chars = min_chars
        self.relative_floor = relative_floor  # keep sentences scoring at least this share of the best one
        self.name = "extractive" + ("+scorer" if scorer else "")

    @property
    def max_sentences(self) -> int:
        return self.config.extractive_max_sentences

    @property
    def min_score(self) -> float:
        return self.config.extractive_min_score

    def _candidates(self, bundle: ContextBundle) -> list[_Candidate]:
        out = []
        for bi, block in enumerate(bundle.blocks):
            for si, s in enumerate(split_sentences(block.text)):
                text = s.text
                if len(text) < self.min_chars or find_urls(text) or any(a in text for a in _HOSTILE_ARTIFACTS):
                    continue  # URLs never reach an answer; defused injections are not answers
                out.append(_Candidate(0.0, bi, si, block.source_id, text))
        return out

    def compose(self, question: str, bundle: ContextBundle | None) -> AnswerPayload:
        cands = self._candidates(bundle) if bundle is not None else []
        texts = [c.text for c in cands]
        if self.scorer and texts:
            scores = list(self.scorer(question, texts))
        else:
            scores = lexical_question_scores(question, texts)
        if len(scores) != len(cands):
            raise GenerationError(f"the sentence scorer returned {len(scores)} scores for {len(cands)} sentences")
        ranked = sorted((_Candidate(float(sc), c.block_pos, c.sent_pos, c.source_id, c.text)
                         for c, sc in zip(cands, scores)),
                        key=lambda c: (-c.score, c.block_pos, c.sent_pos))
        chosen: list[_Candidate] = []
        floor = max(self.min_score, self.relative_floor * ranked[0].score) if ranked else self.min_score
        for c in ranked:
            if c.score < floor or len(chosen) >= self.max_sentences:
                break
            terms = content_terms(c.text)
            if any(_overlap(terms, content_terms(x.text)) >= 0.8 for x in chosen):
                continue  # near-repeat of a chosen sentence
            chosen.append(c)
        if not chosen:
            best = ranked[0].score if ranked else 0.0
            logger.info("extractive: best sentence score %.3f < floor %.3f: insufficient evidence", best,
                        self.min_score)
            return AnswerPayload(status="insufficient_evidence", answer="", citations=())
        chosen.sort(key=lambda c: (c.block_pos, c.sent_pos))
        parts, cites = [], []
        for c in chosen:
            flat = " ".join(c.text.split())
            parts.append(f"{flat} [{c.source_id}]")
            cites.append(CitationItem(source_id=c.source_id, claim=flat, quote=c.text))
        return AnswerPayload(status="answered", answer="\n".join(parts), citations=tuple(cites))

    def generate(self, request: GenerationRequest) -> GenerationOutput:
        t0 = time.perf_counter()
        payload = self.compose(request.question, request.bundle)
        raw = json.dumps(payload.model_dump(mode="json"), ensure_ascii=False)
        return GenerationOutput(raw, payload, None, TokenUsage(), time.perf_counter() - t0, self.name, "stop", 0)

    async def agenerate(self, request: GenerationRequest) -> GenerationOutput:
        return self.generate(request)


def _overlap(a: frozenset[str], b: frozenset[str]) -> float:
    return len(a & b) / max(1, min(len(a), len(b)))
