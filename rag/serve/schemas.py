"""Request bodies of ``rag serve`` (validated with pydantic; unknown keys are refused)."""
from __future__ import annotations

from typing import Any, Literal, Mapping

from pydantic import BaseModel, ConfigDict, Field, model_validator

from rag.fields import parse_fields
from rag.types import Document, Ordering, SearchFilter, Turn, with_previous_citations


class _Body(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class Filters(_Body):
    """Only these documents and/or versions (``versions`` replaces the version policy), and only
    documents whose metadata meets ``fields`` (conditions on ``retrieval.filter_fields``)."""

    document_ids: tuple[str, ...] = ()
    versions: tuple[str, ...] = ()
    fields: dict[str, Any] = Field(default_factory=dict, description='{"department": "hr", "year": {"gte": 2020}}')

    def to_filter(self, declared: Mapping[str, str]) -> SearchFilter | None:
        f = SearchFilter(tuple(x for x in self.document_ids if x), tuple(x for x in self.versions if x),
                         fields=parse_fields(self.fields, declared))
        return f if f else None


class Options(_Body):
    top_k: int | None = Field(None, ge=1, le=200, description="candidates that go to rerank, gate and context")
    ordering: Ordering | None = Field(None, description="context.ordering for this request")


class Cited(BaseModel):
    """A citation passed back: its ``evidence_id`` (the rest of a result's citation object is ignored)."""

    model_config = ConfigDict(extra="allow", frozen=True)
    evidence_id: str = Field(min_length=1)


CitedIds = tuple[str | Cited, ...]


def cited_ids(items: CitedIds) -> tuple[str, ...]:
    ids = (c if isinstance(c, str) else c.evidence_id for c in items)
    return tuple(dict.fromkeys(i for i in ids if i))


class HistoryTurn(_Body):
    role: Literal["user", "assistant"]
    content: str
    citations: CitedIds = Field((), description="an assistant turn's citations (evidence ids or the result's "
                                                "citation objects): a follow-up's search adds them")


class _Question(_Body):
    question: str
    history: tuple[HistoryTurn, ...] = ()
    previous_citations: CitedIds = Field((), description="the previous answer's citations, for the history's last "
                                                         "assistant turn (like its 'citations')")
    filters: Filters | None = None
    options: Options | None = None

    @model_validator(mode="after")
    def _turns_valid(self) -> "_Question":
        self.turns()  # citations on a user turn, or previous citations without an assistant turn: ValueError
        return self

    def turns(self) -> tuple[Turn, ...]:
        """The history as turns, ``previous_citations`` on its last assistant turn."""
        turns = tuple(Turn(t.role, t.content, cited_ids(t.citations)) for t in self.history)
        return with_previous_citations(turns, cited_ids(self.previous_citations))

    def where(self, declared: Mapping[str, str]) -> SearchFilter | None:
        """The request's filter; ``declared``: the config's ``retrieval.filter_fields``."""
        return self.filters.to_filter(declared) if self.filters is not None else None

    @property
    def top_k(self) -> int | None:
        return self.options.top_k if self.options is not None else None

    @property
    def ordering(self) -> str | None:
        return self.options.ordering if self.options is not None else None


class AnswerRequest(_Question):
    """``POST /v1/answer``: a question, its history, filters and options."""

    stream: bool = Field(False, description="server-sent events: retrieval, gate, then the validated answer")
    trace: bool | None = Field(None, description="include the trace; null: serve.trace")
    tools: bool | None = Field(None, description="null: call tools when the server has them; false: documents only")


class ContextRequest(_Question):
    """``POST /v1/context``: the prompt manifest the question would get."""

    show_prompt: bool = Field(False, description="also return the rendered messages")


class SearchRequest(_Body):
    """``POST /v1/search``: the ranked candidates of a query, no answer."""

    query: str
    top: int = Field(10, ge=1, le=200)
    filters: Filters | None = None


class DocumentIn(_Body):
    """One document (one line of a JSONL body)."""

    id: str = Field(min_length=1)
    text: str
    version: str = Field("1", min_length=1)
    title: str = ""
    uri: str = ""
    metadata: dict[str, object] = {}

    def to_document(self) -> Document:
        return Document(self.id, self.text, self.version, self.title, self.uri or f"api#{self.id}", self.metadata)


class DocumentsRequest(_Body):
    """``POST /v1/documents``: documents to add, or to replace every version of their ids with."""

    documents: tuple[DocumentIn, ...] = Field(min_length=1)
    mode: Literal["add", "replace"] = Field("add", description="replace: each document becomes the only version "
                                                                   "of its id")


class ChatExtension(Filters):
    """``rag`` in a chat-completions request: the filters, and the previous answer's citations (the
    ``rag.citations`` of the last reply, passed back as they came)."""

    previous_citations: CitedIds = ()

    def filters(self) -> Filters | None:
        f = Filters(document_ids=self.document_ids, versions=self.versions, fields=self.fields)
        return f if (f.document_ids or f.versions or f.fields) else None


class ChatMessage(BaseModel):
    model_config = ConfigDict(extra="allow", frozen=True)  # name, tool_call_id... are accepted and ignored
    role: Literal["system", "developer", "user", "assistant", "tool"]
    content: str | list[dict] | None = None

    def text(self) -> str:
        if isinstance(self.content, list):  # content parts: only text parts count
            return "".join(str(p.get("text", "")) for p in self.content if p.get("type") == "text")
        return self.content or ""


class ChatRequest(BaseModel):
    """``POST /v1/chat/completions``: the last user message is the question, earlier user and
    assistant messages the history. System messages are ignored: the server's own rules apply.
    Sampling parameters (temperature, max_tokens...) are accepted and ignored."""

    model_config = ConfigDict(extra="allow", frozen=True)
    model: str | None = None
    messages: tuple[ChatMessage, ...] = Field(min_length=1)
    stream: bool = False
    # rag's own extension (the openai SDK sends it with extra_body={"rag": {...}})
    rag: ChatExtension | None = None
