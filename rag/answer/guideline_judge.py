"""Guidelines matched by the configured LLM (``context.guideline_match: llm``, or ``auto`` with an
LLM backend): the model reads the question, the tools selected for it and each guideline's
condition, and names the guidelines that apply. Keywords alone pick "삭제" out of "삭제된 파일을
복구하려면?"; the model reads what is asked.

The reply is one JSON object ``{"ids": [...]}``; ids the list does not hold are ignored. A model
error or an unreadable reply falls back to the keyword match, with a warning."""
from __future__ import annotations

import json
import logging
from collections.abc import Sequence
from typing import TYPE_CHECKING

from rag.errors import RagError

if TYPE_CHECKING:
    from rag.answer.contract import Generator
    from rag.context.prompt import Guideline

logger = logging.getLogger(__name__)

SCHEMA = {"type": "object", "properties": {"ids": {"type": "array", "items": {"type": "string"}}},
          "required": ["ids"], "additionalProperties": False}
SYSTEM = ("You decide which answering guidelines apply to a user's question. Each guideline has an id and "
          "the condition under which it applies. A guideline applies only when the question itself is of the "
          "kind its condition describes, not when it merely shares a word with it. Reply with one JSON object: "
          '{"ids": ["..."]}, listing the ids that apply (an empty list when none does).')
MAX_TOOLS = 8  # the selected tools shown to the model (names and first description line)


def condition_text(g: "Guideline") -> str:
    """What the model reads of a guideline: its condition, else its keywords and the start of its content."""
    if g.condition.strip():
        return " ".join(g.condition.split())
    words = f"questions about: {', '.join(g.keywords)}. " if g.keywords else ""
    return f"{words}Guideline: {' '.join(g.content.split())[:200]}"


class LLMGuidelineJudge:
    """Asks ``generator`` (an LLM backend) which guidelines apply; ``None`` when it could not tell."""

    def __init__(self, generator: "Generator") -> None:
        self.generator = generator

    def __call__(self, question: str, tools: Sequence[tuple[str, str]],
                 guidelines: Sequence["Guideline"]) -> set[str] | None:
        from rag.answer.contract import GenerationRequest
        from rag.context.prompt import Message

        listing = "\n".join(f"- {g.id}: {condition_text(g)}" for g in guidelines)
        shown = "\n".join(f"- {name}: {' '.join(desc.split())[:120]}" for name, desc in tools[:MAX_TOOLS])
        user = (f"Question: {' '.join(question.split())}\n\n"
                + (f"Tools selected for it:\n{shown}\n\n" if shown else "")
                + f"Guidelines:\n{listing}")
        try:
            out = self.generator.generate(GenerationRequest(
                messages=(Message("system", SYSTEM), Message("user", user)), json_schema=SCHEMA, question=question,
                schema_name="applicable_guidelines"))
            ids = json.loads(out.raw_text)["ids"]
            if not isinstance(ids, list) or not all(isinstance(i, str) for i in ids):
                raise TypeError("ids is not a list of strings")
        except (RagError, ValueError, KeyError, TypeError) as exc:
            logger.warning("guidelines: the LLM match failed (%s); matching by keyword", type(exc).__name__)
            return None
        known = {g.id for g in guidelines}
        return {i for i in ids if i in known}
