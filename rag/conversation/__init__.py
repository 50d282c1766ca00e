"""Questions asked in a conversation: a follow-up resolved into a question that stands alone,
before retrieval (:class:`RulesResolver` without an LLM, :class:`LLMResolver` with one)."""
from rag.conversation.earlier import earlier_evidence, named_articles
from rag.conversation.llm import LLMResolver, rewrite_problem
from rag.conversation.model import QuestionResolver, Resolution, unchanged
from rag.conversation.rules import RulesResolver, dependence

__all__ = ["LLMResolver", "QuestionResolver", "Resolution", "RulesResolver", "dependence", "earlier_evidence",
           "named_articles", "rewrite_problem", "unchanged"]
