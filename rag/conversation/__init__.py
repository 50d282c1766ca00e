"""Questions asked in a conversation: a follow-up resolved into a question that stands alone,
before retrieval (:class:`RulesResolver` without an LLM)."""
from rag.conversation.model import QuestionResolver, Resolution, unchanged
from rag.conversation.rules import RulesResolver, dependence

__all__ = ["QuestionResolver", "Resolution", "RulesResolver", "dependence", "unchanged"]
