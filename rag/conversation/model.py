"""What resolving a chat question gives, and the protocol every resolver follows."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Literal, Protocol, Sequence

from rag.types import Turn

Method = Literal["none", "rules", "llm"]


@dataclass(frozen=True)
class Resolution:
    """The question the request path runs on (``question``: retrieval, the gate, the generator and
    the validator all see it) and how it came from the one asked (``asked``).

    ``standalone``: the asked question needs no earlier turn; then ``question == asked`` always.
    ``method``: ``none`` (standalone, or no history), ``rules`` (the deterministic resolver) or
    ``llm`` (a rewrite by the configured LLM that passed the check). ``carried``: what was taken
    from the history (the earlier question, its topic terms, a law's name), in order.
    ``reason``: one line for the trace ("starts with 그럼", "no own content terms", ...).
    ``prompt_tokens`` / ``completion_tokens`` / ``ms``: what the LLM rewrite cost (a cached one: 0;
    the rules: 0 tokens); ``cached``: the rewrite came from the resolver's cache."""

    asked: str
    question: str
    standalone: bool
    method: Method = "none"
    carried: tuple[str, ...] = ()
    reason: str = ""
    prompt_tokens: int = 0
    completion_tokens: int = 0
    ms: float = 0.0
    cached: bool = False

    @property
    def changed(self) -> bool:
        return self.question != self.asked

    def to_json(self) -> dict[str, object]:
        return {"asked": self.asked, "question": self.question, "standalone": self.standalone,
                "method": self.method, "carried": list(self.carried), "reason": self.reason,
                "cost": {"prompt_tokens": self.prompt_tokens, "completion_tokens": self.completion_tokens,
                         "ms": round(self.ms, 3), "cached": self.cached}}


def unchanged(question: str, reason: str) -> Resolution:
    return Resolution(asked=question, question=question, standalone=True, reason=reason)


class QuestionResolver(Protocol):
    """Turns a question asked after ``history`` into one that stands alone."""

    def resolve(self, question: str, history: Sequence[Turn]) -> Resolution: ...
