"""Frozen data types that cross stage boundaries."""
from __future__ import annotations

from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any, Literal, Mapping, Sequence

from rag.access.model import Access, ReaderScope
from rag.fields import FieldCondition

Ordering = Literal["rank", "reverse", "edges"]  # how the context orders its blocks (context.ordering)


def freeze_metadata(meta: Mapping[str, object] | None) -> Mapping[str, object]:
    return MappingProxyType(dict(meta or {}))


def page_at(first: int | None, breaks: tuple[tuple[int, int], ...], offset: int | None) -> int | None:
    """The page at ``offset`` into a text that starts on page ``first`` and has pages beginning
    at ``breaks`` (``(offset, page)``, sorted); ``offset=None``: the last page."""
    page = first
    for at, number in breaks:
        if offset is None or at <= offset:
            page = number
    return page


# Document metadata key: true when an operator marked the document trusted (folder manifest
# ``trusted: true``); a trusted document is never quarantined (rag.context.screen).
TRUSTED_KEY = "trusted"


@dataclass(frozen=True)
class Document:
    """A source document. ``(id, version)`` identifies it in an index."""

    id: str
    text: str
    version: str = "1"
    title: str = ""
    uri: str = ""
    metadata: Mapping[str, object] = field(default_factory=dict)

    def __post_init__(self) -> None:
        object.__setattr__(self, "metadata", freeze_metadata(self.metadata))

    @property
    def key(self) -> tuple[str, str]:
        return (self.id, self.version)


@dataclass(frozen=True)
class Chunk:
    """A span of one document version. ``text == document.text[start_char:end_char]``."""

    evidence_id: str
    document_id: str
    document_version: str
    ordinal: int
    text: str
    start_char: int
    end_char: int
    title: str = ""
    uri: str = ""
    page: int | None = None
    # Where the chunk sits, for people: "제16조제1항" in a statute, "Travel > Per diem" in markdown
    locator: str = ""
    heading_path: tuple[str, ...] = ()  # enclosing headings, outermost first
    # (offset into text, page) of each page that begins inside the chunk (an article across a page break)
    page_breaks: tuple[tuple[int, int], ...] = ()
    # offsets into text where a block the file's loader saw begins (a line, list item, table row)
    boundaries: tuple[int, ...] = ()
    file: str = ""  # the file it was read from, relative to its folder ("" for JSONL documents)
    access: Access | None = None  # who may read it (its document's access metadata); None: public

    @property
    def page_end(self) -> int | None:
        """The last page the chunk's text is on."""
        return page_at(self.page, self.page_breaks, None)

    def page_at(self, offset: int) -> int | None:
        """The page of the character at ``offset`` into the chunk's text."""
        return page_at(self.page, self.page_breaks, offset)


@dataclass(frozen=True)
class ScoredChunk:
    """One hit of one retriever."""

    chunk: Chunk
    score: float
    rank: int  # 1-based


@dataclass(frozen=True)
class RetrieverHit:
    """What one retriever said about a fused candidate (rank is 1-based)."""

    retriever: str
    rank: int
    score: float


@dataclass(frozen=True)
class Candidate:
    """A fused candidate with the per-retriever evidence that produced it."""

    chunk: Chunk
    score: float
    rank: int
    hits: tuple[RetrieverHit, ...]

    def hit(self, retriever: str) -> RetrieverHit | None:
        for h in self.hits:
            if h.retriever == retriever:
                return h
        return None

    def to_json(self) -> dict:
        """The candidate as ``rag search --json`` and ``POST /v1/search`` print it."""
        ch = self.chunk
        return {
            "rank": self.rank,
            "score": round(self.score, 6),
            "evidence_id": ch.evidence_id,
            "document_id": ch.document_id,
            "version": ch.document_version,
            "title": ch.title,
            "uri": ch.uri,
            "page": ch.page,
            "span": [ch.start_char, ch.end_char],
            "retrievers": {h.retriever: {"rank": h.rank, "score": round(h.score, 6)} for h in self.hits},
            "text": ch.text,
        }


@dataclass(frozen=True)
class SearchFilter:
    """Restrict retrieval to some documents and/or versions, and to what its readers may read; an
    empty field restricts nothing.

    ``versions`` are version labels matched against every document's version (``"2024-01-01"``).
    ``fields``: conditions on declared metadata fields (:func:`rag.fields.parse_fields`); a
    document must meet every one. ``readers``: the callers' scopes (:class:`rag.access.ReaderScope`);
    a row must be readable by every one of them. The retrievers add the caller's scope to any request filter
    (:meth:`restricted_to`), so a request filter narrows what the caller may read and never widens
    it. The filter is applied inside each retriever, before its top-k, so a narrow filter still
    fills the candidate list from the allowed rows."""

    document_ids: tuple[str, ...] = ()
    versions: tuple[str, ...] = ()
    readers: tuple[ReaderScope, ...] = ()
    fields: tuple[FieldCondition, ...] = ()

    def __post_init__(self) -> None:
        for name in ("document_ids", "versions"):
            value = getattr(self, name)
            if isinstance(value, str) or not all(isinstance(v, str) and v for v in value):
                raise TypeError(f"SearchFilter.{name} must be a sequence of non-empty strings, got {value!r}")
            object.__setattr__(self, name, tuple(sorted(set(value))))
        if not all(isinstance(r, ReaderScope) for r in self.readers):
            raise TypeError(f"SearchFilter.readers must be ReaderScope values, got {self.readers!r:.120}")
        object.__setattr__(self, "readers", tuple(dict.fromkeys(self.readers)))
        if not all(isinstance(c, FieldCondition) for c in self.fields):
            raise TypeError(f"SearchFilter.fields must be FieldCondition values, got {self.fields!r:.120}")
        object.__setattr__(self, "fields", tuple(sorted(set(self.fields), key=lambda c: (c.field, c.op, repr(c.value)))))

    def __bool__(self) -> bool:
        return bool(self.document_ids or self.versions or self.readers or self.fields)

    def allows(self, document_id: str, version: str, access: Access | None = None,
               metadata: Mapping[str, Any] | None = None) -> bool:
        """Whether the rows of one document version (with its ``access`` and ``metadata``) pass."""
        return ((not self.document_ids or document_id in self.document_ids)
                and (not self.versions or version in self.versions)
                and all(r.allows(access) for r in self.readers)
                and all(c.holds(metadata) for c in self.fields))

    def restricted_to(self, scope: ReaderScope) -> "SearchFilter":
        """This filter intersected with what ``scope`` may read (the request's restrictions kept)."""
        return SearchFilter(self.document_ids, self.versions, self.readers + (scope,), self.fields)

    @staticmethod
    def within(where: "SearchFilter | None", scope: ReaderScope) -> "SearchFilter":
        """``where`` (or no restriction) intersected with ``scope``."""
        return (where or SearchFilter()).restricted_to(scope)


@dataclass(frozen=True)
class SearchResult:
    query: str
    candidates: tuple[Candidate, ...]
    timings_ms: Mapping[str, float] = field(default_factory=dict)

    def __post_init__(self) -> None:
        object.__setattr__(self, "timings_ms", MappingProxyType(dict(self.timings_ms)))


@dataclass(frozen=True)
class Turn:
    """One earlier turn of a conversation (history given to the prompt builder).

    ``citations``: the evidence ids an assistant turn cited (``AnswerResult.citations``'
    ``evidence_id``; :meth:`rag.result.AnswerResult.as_turn` fills them). A follow-up's search
    adds those blocks to its candidates (``conversation.earlier_evidence``); a user turn has none."""

    role: Literal["user", "assistant"]
    content: str
    citations: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        if isinstance(self.citations, str) or not all(isinstance(c, str) and c for c in self.citations):
            raise ValueError(f"Turn.citations must be a sequence of evidence ids (non-empty strings), got "
                             f"{self.citations!r:.80}")
        if self.citations and self.role != "assistant":
            raise ValueError("only an assistant turn has citations")
        object.__setattr__(self, "citations", tuple(self.citations))


def citation_ids(value: Any, where: str) -> tuple[str, ...]:
    """Evidence ids from JSON: each an id string or a citation object with ``evidence_id`` (a
    result's ``citations`` passed back as they came). Raises ``ValueError`` naming ``where``."""
    if value is None:
        return ()
    if not isinstance(value, list):
        raise ValueError(f"{where} must be a list of evidence ids or citations, got {type(value).__name__}")
    out: list[str] = []
    for i, c in enumerate(value):
        eid = c.get("evidence_id") if isinstance(c, dict) else c
        if not isinstance(eid, str) or not eid:
            raise ValueError(f"{where}[{i}] must be an evidence id or an object with 'evidence_id', got {c!r:.80}")
        out.append(eid)
    return tuple(dict.fromkeys(out))


def turns_from_json(value: Any) -> tuple[Turn, ...]:
    """History as JSON (``[{"role": "user"|"assistant", "content": str, "citations": [...]?}, ...]``
    or null) to turns; ``citations`` (assistant turns only) as :func:`citation_ids` reads them.

    Raises ``ValueError`` naming the first bad turn; callers wrap it in their own typed error."""
    if value is None:
        return ()
    if not isinstance(value, list):
        raise ValueError(f"'history' must be a list of {{role, content}} turns, got {type(value).__name__}")
    out = []
    for i, t in enumerate(value):
        if not isinstance(t, dict) or t.get("role") not in ("user", "assistant") or not isinstance(t.get("content"), str):
            raise ValueError(f"history[{i}] must be {{\"role\": \"user\"|\"assistant\", \"content\": str}}, got {t!r:.80}")
        cited = citation_ids(t.get("citations"), f"history[{i}].citations")
        if cited and t["role"] != "assistant":
            raise ValueError(f"history[{i}]: only an assistant turn has citations")
        out.append(Turn(t["role"], t["content"], cited))
    return tuple(out)


def with_previous_citations(history: Sequence[Turn], ids: Sequence[str]) -> tuple[Turn, ...]:
    """``history`` with ``ids`` (the previous answer's evidence ids) added to its last assistant turn's
    citations. Raises ``ValueError`` when there are ids and no assistant turn to carry them."""
    turns = tuple(history)
    if not ids:
        return turns
    last = next((i for i in range(len(turns) - 1, -1, -1) if turns[i].role == "assistant"), None)
    if last is None:
        raise ValueError("previous_citations need the previous answer in the history (an assistant turn)")
    t = turns[last]
    cited = tuple(dict.fromkeys((*t.citations, *ids)))
    return (*turns[:last], Turn(t.role, t.content, cited), *turns[last + 1:])


@dataclass(frozen=True)
class EarlierEvidence:
    """What the previous answer of a conversation cited, for a follow-up's search: the evidence ids
    it carried (``Turn.citations``) and the articles its text names, each as (document id,
    article locator such as ``제17조제1항``)."""

    evidence_ids: tuple[str, ...] = ()
    articles: tuple[tuple[str, str], ...] = ()

    def __bool__(self) -> bool:
        return bool(self.evidence_ids or self.articles)

    @property
    def document_ids(self) -> tuple[str, ...]:
        """The documents the evidence lies in (an evidence id is ``document:version:n``)."""
        ids = [e.rsplit(":", 2)[0] for e in self.evidence_ids if e.count(":") >= 2]
        return tuple(sorted(set(ids) | {d for d, _ in self.articles}))


def as_turns(history: Any) -> tuple[Turn, ...]:
    """History given to the Python API: :class:`Turn` objects or OpenAI-style dicts (``{"role":
    "user"|"assistant", "content": str}``), mixed or not; None is no history. Raises ``ValueError``
    naming the first bad turn."""
    if history is None:
        return ()
    if isinstance(history, (str, bytes, Mapping)) or not isinstance(history, Sequence):
        raise ValueError(f"'history' must be a sequence of turns (Turn or {{role, content}}), got "
                         f"{type(history).__name__}")
    if all(isinstance(t, Turn) for t in history):
        for i, t in enumerate(history):
            if t.role not in ("user", "assistant") or not isinstance(t.content, str):
                raise ValueError(f"history[{i}]: role must be 'user' or 'assistant' and content a string, got {t!r:.80}")
        return tuple(history)
    return turns_from_json([{**t.__dict__, "citations": list(t.citations)} if isinstance(t, Turn) else t
                            for t in history])
