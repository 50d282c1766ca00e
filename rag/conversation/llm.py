"""The LLM resolver: a configured LLM rewrites a follow-up, checked, else the rules decide.

1. The rules (:func:`rag.conversation.rules.dependence`) decide whether the question stands
   alone; one that does is never sent to the model and never changed.
2. A follow-up is sent with the conversation in a strict, short prompt that asks for one JSON
   object ``{"question": "..."}``: the question rewritten so that it stands alone, in the
   question's language, using only what the conversation and the question say.
3. The rewrite is checked (:func:`rewrite_problem`): it must parse, be one non-empty line of at
   most :data:`MAX_CHARS` characters, and every content term it holds must occur in the
   question or the conversation (a rewrite may not bring in a fact, a number or a topic of its
   own). A rewrite that fails, or a model error, falls back to :class:`RulesResolver`, and the
   resolution's ``reason`` says why.
"""
from __future__ import annotations

import json
import logging
from collections.abc import Sequence

from rag.answer.contract import Generator, GenerationRequest
from rag.context.prompt import Message
from rag.conversation.model import Resolution, unchanged
from rag.conversation.rules import RulesResolver, dependence
from rag.errors import RagError
from rag.text.lexical import content_terms
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


def rewrite_problem(rewrite: str, question: str, history: Sequence[Turn]) -> str:
    """Why ``rewrite`` may not replace ``question`` ("" when it may)."""
    if not rewrite.strip():
        return "empty rewrite"
    if "\n" in rewrite.strip() or len(rewrite) > MAX_CHARS:
        return "not one short line"
    seen = content_terms(" ".join([question, *(t.content for t in history)]))
    new = sorted(content_terms(rewrite) - seen)
    return f"terms not in the conversation: {', '.join(new[:5])}" if new else ""


class LLMResolver:
    """Follow-ups rewritten by ``generator`` (an LLM backend), checked; the rules otherwise."""

    def __init__(self, generator: Generator, fallback: RulesResolver | None = None) -> None:
        self.generator = generator
        self.fallback = fallback or RulesResolver()

    def resolve(self, question: str, history: Sequence[Turn]) -> Resolution:
        if not any(t.role == "user" and t.content.strip() for t in history):
            return unchanged(question, "no earlier question")
        why = dependence(question)
        if not why:
            return unchanged(question, "stands alone")
        try:
            rewrite = self._ask(question, history)
        except (RagError, ValueError, KeyError, TypeError) as exc:
            return self._fall_back(question, history, f"the LLM rewrite failed ({type(exc).__name__})")
        problem = rewrite_problem(rewrite, question, history)
        if problem:
            return self._fall_back(question, history, f"the LLM rewrite was refused ({problem})")
        return Resolution(asked=question, question=rewrite.strip(), standalone=False, method="llm",
                          carried=(), reason=why)

    def _ask(self, question: str, history: Sequence[Turn]) -> str:
        turns = [t for t in history if t.content.strip()][-MAX_TURNS:]
        convo = "\n".join(f"{t.role}: {' '.join(t.content.split())}" for t in turns)
        user = f"Conversation:\n{convo}\n\nLast question: {question}"
        out = self.generator.generate(GenerationRequest(
            messages=(Message("system", SYSTEM), Message("user", user)), json_schema=SCHEMA, question=question,
            schema_name="standalone_question"))
        value = json.loads(out.raw_text)["question"]
        if not isinstance(value, str):
            raise TypeError("question is not a string")
        return value

    def _fall_back(self, question: str, history: Sequence[Turn], why: str) -> Resolution:
        logger.info("conversation: %s; the rules resolve the follow-up", why)
        r = self.fallback.resolve(question, history)
        return Resolution(r.asked, r.question, r.standalone, r.method, r.carried, f"{r.reason}; {why}")
