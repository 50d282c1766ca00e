"""The ``conversation`` section: how a follow-up question is resolved before retrieval (rag.conversation)."""
from __future__ import annotations

from typing import ClassVar, Literal

from pydantic import Field, field_validator

from rag.config.base import Section

__all__ = ["ConversationConfig"]


class ConversationConfig(Section):
    """``resolve``: ``auto`` (the LLM rewrites follow-ups when ``generation.backend`` is an LLM, the
    rules otherwise), ``rules``, ``llm`` (needs an LLM backend) or ``off`` (the history reaches only
    the prompt, as before). ``max_topic_terms``: topic terms the rules carry into a follow-up."""

    section: ClassVar[str] = "conversation"
    resolve: Literal["auto", "rules", "llm", "off"] = "auto"
    max_topic_terms: int = Field(6, ge=0, le=32)

    @field_validator("resolve", mode="before")
    @classmethod
    def _yaml_off(cls, value: object) -> object:
        """YAML reads an unquoted ``off`` as false: take it as ``off``."""
        return "off" if value is False else value
