"""Warm-up: load what the config uses, then answer one short fixed question per language, so the
first real question pays for no model load (``rag serve`` reports ready only after it;
``rag warmup`` runs it for batch jobs before they time anything).

The questions are fixed (:func:`questions`), never taken from the corpus, and run as nobody (the
anonymous reader scope, whatever ``security.require_principal`` says): they see only what an
anonymous reader may read, and nothing they retrieve is returned or logged. With an LLM backend
the questions run every step up to the prompt but the model is not asked (a remote model costs
tokens and may be down; its client is made, a llama.cpp model is loaded).
"""
from __future__ import annotations

import logging
import time
from collections import Counter
from dataclasses import dataclass
from typing import TYPE_CHECKING

from rag.pipeline import runner
from rag.pipeline.state import Request, State
from rag.pipeline.steps import STEPS
from rag.lang import detect_language, profiles

if TYPE_CHECKING:
    from rag.pipeline.components import Components

logger = logging.getLogger(__name__)



def questions() -> dict[str, str]:
    """One short question per language the warm-up can ask: each registered profile's ``warmup_question``
    (rag.lang: ko, en; "other" asks in English)."""
    return {p.code: p.warmup_question for p in profiles()}

BEFORE_THE_MODEL = runner.select(STEPS, *(s.name for s in STEPS if s.name != "generate"))
_SAMPLE_DOCUMENTS = 10  # documents whose first chunk decides the corpus's main language


@dataclass(frozen=True)
class Warmup:
    """Seconds each part of a warm-up took (None: the config does not use that part).

    ``index_s`` opening the index; ``embedder_s`` loading the embedder and one query embedding;
    ``reranker_s`` loading the cross-encoder and scoring one pair (None when ``rerank.enabled`` is
    false); ``components_s`` the gate, the prompt builder (its tokenizer) and the citation
    validator; ``generator_s`` the generator's own model (the extractive scorer's, a llama.cpp
    GGUF, an OpenAI-compatible client); ``answer_s`` the warm-up questions end to end (in
    ``languages``; through the generator only when ``generated``)."""

    index_s: float
    embedder_s: float
    reranker_s: float | None
    components_s: float
    generator_s: float
    answer_s: float
    languages: tuple[str, ...]
    generated: bool

    def parts(self) -> dict[str, float]:
        """The parts that ran, in the order they ran: ``{"index": s, "embedder": s, ...}``."""
        out = {"index": self.index_s, "embedder": self.embedder_s, "reranker": self.reranker_s,
               "components": self.components_s, "generator": self.generator_s, "answer": self.answer_s}
        return {k: v for k, v in out.items() if v is not None}

    @property
    def total_s(self) -> float:
        return sum(self.parts().values())

    def to_json(self) -> dict:
        return {"seconds": {k: round(v, 4) for k, v in self.parts().items()}, "total_s": round(self.total_s, 4),
                "languages": list(self.languages), "generated": self.generated}


def warm(c: "Components") -> Warmup:
    """Load every model ``c``'s config uses and answer the warm-up questions (see the module doc)."""
    clock = _Clock()
    index = clock.time("index", lambda: c.index)
    langs = languages(c)
    asked = questions()
    first = asked[langs[0]]
    clock.time("embedder", lambda: c.embedder.embed_queries([first]))
    reranker = c.reranker
    if reranker is not None:
        # One pair through the model (its load and first forward pass) and the calibration file.
        clock.time("reranker", lambda: (reranker.scorer.score(first, ["\x1fwarm-up"], [first]), reranker.calibration))
    def components() -> None:
        c.check_gate()
        _ = (c.gate, c.prompt_builder, c.validator)

    clock.time("components", components)
    clock.time("generator", lambda: c.warm_generator(first))
    generated = c.config.generation.backend == "extractive"
    steps = STEPS if generated else BEFORE_THE_MODEL

    def ask() -> None:
        c.before_answering()
        for lang in langs:
            # No principal: the anonymous scope (search sets it), public documents only.
            runner.run(steps, State(Request(asked[lang]), time.perf_counter()), c)

    clock.time("answer", ask)
    out = Warmup(clock.s["index"], clock.s["embedder"], clock.s.get("reranker"), clock.s["components"],
                 clock.s["generator"], clock.s["answer"], langs, generated)
    logger.debug("warm-up over index %s: %s", getattr(index, "version_name", None), out.to_json())
    return out


def languages(c: "Components") -> tuple[str, ...]:
    """The warm-up's languages: the corpus's main one (from the first chunk of a few documents; ``en``
    for an empty index or "other"), then each other ``rerank.languages`` entry the warm-up can ask in
    when the reranker is on (its model runs only for those)."""
    docs = list(c.index.documents)[:_SAMPLE_DOCUMENTS]
    seen: Counter[str] = Counter()
    for doc_id, version in docs:
        texts = c.index.document_texts(doc_id, version)
        if texts:
            seen[detect_language(texts[0][:500])] += 1
    asked = questions()
    main = next((lang for lang, _ in seen.most_common() if lang in asked), "en")
    out = [main]
    if c.config.rerank.enabled:
        out += [lang for lang in c.config.rerank.languages if lang in asked and lang not in out]
    return tuple(out)


class _Clock:
    def __init__(self) -> None:
        self.s: dict[str, float] = {}

    def time(self, part: str, fn):
        t0 = time.perf_counter()
        out = fn()
        self.s[part] = time.perf_counter() - t0
        return out
