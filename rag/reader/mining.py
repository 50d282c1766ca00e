"""Hard negative passages mined by the project's own BM25 (:mod:`rag.index.bm25`, the analyzers of
:mod:`rag.text.analyzers`): the passages of a task's corpus that rank high for a question and are not
its answer.

A candidate is dropped when it is one of the question's gold, given or unknown passages, has the same
text as a gold passage, contains a gold answer string (span datasets: it may answer after all), or,
for a train or calib question, is a passage of an eval question (so no eval passage enters training).
"""
from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Sequence

from rag.config import BM25Config
from rag.index.bm25 import BM25Index
from rag.reader.sources import Passage, Question
from rag.text.analyzers import make_analyzer

logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class Mined:
    pid: str
    rank: int       # 1-based rank among BM25's candidates, before the filters
    score: float


class Miner:
    """BM25 over one corpus (title and text of each passage), built once, queried per question."""

    def __init__(self, passages: Sequence[Passage], analyzer: str) -> None:
        self.pids = [p.pid for p in passages]
        self.analyzer = make_analyzer(analyzer)
        self.index = BM25Index(BM25Config(analyzer=analyzer))
        docs = [self.index.encode(self.analyzer(f"{p.title}\n{p.text}" if p.title else p.text), grow=True)
                for p in passages]
        self.index.set_documents(docs)
        logger.info("BM25 over %d passages (%s)", len(docs), self.analyzer.name)

    def search(self, text: str, depth: int) -> list[tuple[str, float]]:
        rows, scores = self.index.top_k(self.analyzer(text), depth)
        return [(self.pids[int(r)], float(s)) for r, s in zip(rows, scores)]


def pick_negatives(candidates: Sequence[tuple[str, float]], q: Question, passages: dict[str, Passage], k: int,
                   banned: frozenset[str] | set[str] = frozenset(), filter_answers: bool = False) -> list[Mined]:
    """The first ``k`` candidates that pass the filters (module docstring); ``banned``: passages this
    question may not use (the eval passages, for a train or calib question)."""
    own = {g.pid for g in q.gold} | set(q.given_negative) | set(q.unknown)
    gold_texts = {passages[g.pid].text for g in q.gold if g.pid in passages}
    answers = [a for a in q.answers if a.strip()]
    out: list[Mined] = []
    for rank, (pid, score) in enumerate(candidates, 1):
        if len(out) >= k:
            break
        if pid in own or pid in banned:
            continue
        text = passages[pid].text
        if text in gold_texts or (filter_answers and any(a in text for a in answers)):
            continue
        out.append(Mined(pid, rank, round(score, 4)))
    return out
