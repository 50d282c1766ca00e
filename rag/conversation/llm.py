"""The LLM resolver: a configured LLM rewrites a follow-up, checked, else the rules decide.

1. The rules (:func:`rag.conversation.rules.dependence`) decide whether the question stands
   alone; one that does is never sent to the model and never changed.
2. A follow-up is sent with the conversation in a strict, short prompt that asks for one JSON
   object ``{"question": "..."}``: the question rewritten so that it stands alone, in the
   question's language, using only what the conversation and the question say.
3. The rewrite is checked (:func:`rewrite_problem`): it must parse and be one non-empty line of
   at most :data:`MAX_CHARS` characters; every number, law (「…」), article (제N조) and name
   (a capitalized word: Busan, HR-7) it holds must occur in the question or the conversation;
   and one of its key terms at least (the question analyzer's nouns and stems) must too. A
   rewrite says the question in whole words ("근무가 끝나는 시각" for "퇴근"), so other words are
   let through; what it may not bring is a fact, a number, a law or a name of its own, or a
   question about something else. And it must stand alone by the same rules that found the
   question did not (:func:`rag.conversation.rules.dependence`): a small model that hands the
   follow-up back (``4시간 넘게 걸리면요?``, ``그 수당을 거짓으로 타면?``) is refused. A rewrite that
   fails, or a model error, falls back to :class:`RulesResolver`, and the resolution's ``reason``
   says why.
4. The resolution records what the rewrite cost (tokens, milliseconds) and is cached per
   (conversation, question).
"""
from __future__ import annotations

import dataclasses
import hashlib
import json
import logging
import re
import threading
import time
from collections import OrderedDict
from collections.abc import Sequence

from rag.answer.contract import Generator, GenerationRequest, TokenUsage
from rag.context.prompt import Message
from rag.conversation.model import Resolution, unchanged
from rag.conversation.rules import RulesResolver, dependence, own_terms
from rag.errors import RagError
from rag.lang.en import conversation as en_words
from rag.lang.ko import conversation as ko_words
from rag.types import Turn

logger = logging.getLogger(__name__)

MAX_CHARS = 300
MAX_TURNS = 6  # the last turns shown to the model
SCHEMA = {"type": "object", "properties": {"question": {"type": "string", "maxLength": MAX_CHARS}},
          "required": ["question"], "additionalProperties": False}
SYSTEM = ("You rewrite the last question of a conversation so that it can be understood without the "
          "conversation. Use only words and facts that appear in the conversation or the question; add "
          "nothing else, answer nothing. Keep the question's language. Reply with one JSON object: "
          '{"question": "..."}')
# What a rewrite may not bring in unless the conversation holds it: numbers, laws, articles, names.
_NUMBER = re.compile(r"\d+(?:[,.]\d+)*")
_LAW = re.compile(ko_words.QUOTED_LAW)
_ARTICLE = re.compile(ko_words.ARTICLE_REF)
_NAME = re.compile(en_words.NAME)


def _digits(text: str) -> set[str]:
    return {re.sub(r"[,.]", "", m) for m in _NUMBER.findall(text)}


def _entities(text: str) -> set[str]:
    """The numbers, laws, articles and names of ``text``, normalized for comparison."""
    out = {f"#{d}" for d in _digits(text)}
    out |= {"".join(m.split()) for m in _LAW.findall(text)}
    out |= {"".join(m.group(1).split()) for m in _ARTICLE.finditer(text)}
    out |= {part.lower() for m in _NAME.findall(text) for part in m.split("-") if part[:1].isupper()}
    return out


def rewrite_problem(rewrite: str, question: str, history: Sequence[Turn]) -> str:
    """Why ``rewrite`` may not replace ``question`` ("" when it may): module docstring, step 3."""
    if not rewrite.strip():
        return "empty rewrite"
    if "\n" in rewrite.strip() or len(rewrite) > MAX_CHARS:
        return "not one short line"
    said = " ".join([question, *(t.content for t in history)])
    words = {w.lower() for w in re.findall(r"[A-Za-z0-9]+", said)}
    held = _entities(said)
    new = sorted(e for e in _entities(rewrite) if e not in held and e not in words)
    if new:
        return f"a number, law, article or name not in the conversation: {', '.join(new[:5])}"
    terms = own_terms(rewrite)
    if terms and not any(t.lower() in said.lower() for t in terms):
        return f"about something else: none of {', '.join(terms[:5])} is in the conversation"
    still = dependence(rewrite)
    return f"it does not stand alone: {still}" if still else ""


class LLMResolver:
    """Follow-ups rewritten by ``generator`` (an LLM backend), checked; the rules otherwise. The last
    ``cache_size`` resolutions are kept per (conversation, question): a turn asked again (a retry, a
    repeated batch line) is not sent again, and says so (``cached``)."""

    def __init__(self, generator: Generator, fallback: RulesResolver | None = None, cache_size: int = 1024) -> None:
        self.generator = generator
        self.fallback = fallback or RulesResolver()
        self.cache_size = cache_size
        self._cache: OrderedDict[str, Resolution] = OrderedDict()
        self._lock = threading.Lock()

    def resolve(self, question: str, history: Sequence[Turn]) -> Resolution:
        if not any(t.role == "user" and t.content.strip() for t in history):
            return unchanged(question, "no earlier question")
        why = dependence(question)
        if not why:
            return unchanged(question, "stands alone")
        key = _key(question, history)
        with self._lock:
            hit = self._cache.get(key)
            if hit is not None:
                self._cache.move_to_end(key)
                return dataclasses.replace(hit, prompt_tokens=0, completion_tokens=0, ms=0.0, cached=True)
        res = self._rewrite(question, history, why)
        if self.cache_size:
            with self._lock:
                self._cache[key] = res
                while len(self._cache) > self.cache_size:
                    self._cache.popitem(last=False)
        return res

    def _rewrite(self, question: str, history: Sequence[Turn], why: str) -> Resolution:
        t0 = time.perf_counter()
        try:
            rewrite, usage = self._ask(question, history)
        except (RagError, ValueError, KeyError, TypeError) as exc:
            return self._fall_back(question, history, f"the LLM rewrite failed ({type(exc).__name__})", t0)
        problem = rewrite_problem(rewrite, question, history)
        if problem:
            return self._fall_back(question, history, f"the LLM rewrite was refused ({problem})", t0,
                                   usage.prompt_tokens, usage.completion_tokens)
        return Resolution(asked=question, question=rewrite.strip(), standalone=False, method="llm", carried=(),
                          reason=why, prompt_tokens=usage.prompt_tokens, completion_tokens=usage.completion_tokens,
                          ms=(time.perf_counter() - t0) * 1e3)

    def _ask(self, question: str, history: Sequence[Turn]) -> tuple[str, TokenUsage]:
        turns = [t for t in history if t.content.strip()][-MAX_TURNS:]
        convo = "\n".join(f"{t.role}: {' '.join(t.content.split())}" for t in turns)
        user = f"Conversation:\n{convo}\n\nLast question: {question}"
        out = self.generator.generate(GenerationRequest(
            messages=(Message("system", SYSTEM), Message("user", user)), json_schema=SCHEMA, question=question,
            schema_name="standalone_question"))
        value = json.loads(out.raw_text)["question"]
        if not isinstance(value, str):
            raise TypeError("question is not a string")
        return value, out.usage

    def _fall_back(self, question: str, history: Sequence[Turn], why: str, t0: float, prompt_tokens: int = 0,
                   completion_tokens: int = 0) -> Resolution:
        logger.info("conversation: %s; the rules resolve the follow-up", why)
        r = self.fallback.resolve(question, history)
        return dataclasses.replace(r, reason=f"{r.reason}; {why}", prompt_tokens=prompt_tokens,
                                   completion_tokens=completion_tokens, ms=(time.perf_counter() - t0) * 1e3)


def _key(question: str, history: Sequence[Turn]) -> str:
    """The cache key of a question in its conversation (the turns' roles and texts, in order)."""
    h = hashlib.sha256()
    for part in (question, *(f"{t.role}\x00{t.content}" for t in history)):
        h.update(part.encode("utf-8"))
        h.update(b"\x01")
    return h.hexdigest()
