"""The ``conversation`` section: how a follow-up question is resolved before retrieval (rag.conversation)."""
from __future__ import annotations

from typing import ClassVar, Literal

from pydantic import Field, field_validator

from rag.config.base import Section

__all__ = ["ConversationConfig", "RewriterConfig"]


class RewriterConfig(Section):
    """``conversation.rewriter``: an OpenAI-compatible endpoint of its own for rewriting follow-ups
    (a small fast model, or one beside an extractive answer path). Unset: the answering LLM
    (``generation``), when there is one."""

    section: ClassVar[str] = "conversation.rewriter"
    model: str
    base_url: str | None = None  # None: the OpenAI API; a loopback URL may run without a key
    api_key_env: str = "OPENAI_API_KEY"  # the NAME of the variable holding the key, never the key
    timeout_s: float = Field(20.0, gt=0)
    max_retries: int = Field(1, ge=0)
    structured: Literal["json_schema", "json_object", "json_object_schema"] = "json_schema"


class ConversationConfig(Section):
    """``resolve``: ``auto`` (the LLM rewrites follow-ups when ``generation.backend`` is an LLM, the
    rules otherwise), ``rules``, ``llm`` (needs an LLM backend) or ``off`` (the history reaches only
    the prompt, as before). ``max_topic_terms``: topic terms the rules carry into a follow-up.
    ``earlier_evidence``: a follow-up's search adds the blocks the previous answer cited (its
    ``citations``, and the articles its text names), scored for the follow-up like any other.
    ``rewriter``: the LLM that rewrites follow-ups, when not the answering one (then ``auto``
    rewrites with it whatever the generation backend). ``rewrite_cache``: rewrites kept per
    (conversation, question), so a retried or repeated turn is not sent again."""

    section: ClassVar[str] = "conversation"
    resolve: Literal["auto", "rules", "llm", "off"] = "auto"
    max_topic_terms: int = Field(6, ge=0, le=32)
    earlier_evidence: bool = True
    rewriter: RewriterConfig | None = None
    rewrite_cache: int = Field(1024, ge=0)

    @field_validator("resolve", mode="before")
    @classmethod
    def _yaml_off(cls, value: object) -> object:
        """YAML reads an unquoted ``off`` as false: take it as ``off``."""
        return "off" if value is False else value
