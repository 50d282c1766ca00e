"""The pipeline: the Python API over one set of components and one ordered tuple of steps."""
from __future__ import annotations

import time
from pathlib import Path
from typing import TYPE_CHECKING, Any, AsyncIterator, Iterable, Mapping, Sequence

from rag.access.model import Principal
from rag.access.scope import check_principal
from rag.answer.contract import Generator
from rag.config import RagConfig, load_config
from rag.context.prompt import Prompt
from rag.errors import InputError
from rag.fields import parse_fields
from rag.models.embedders import Embedder
from rag.index.loaders import CorpusLoad, check_corpus, check_unique, read_corpus
from rag.index.protocol import Index, Operation
from rag.index.updates import Progress, UpdateReport
from rag.pipeline import runner
from rag.pipeline.components import Components
from rag.pipeline.listing import ListedDocument, list_documents
from rag.pipeline.state import Answered, Gated, Request, Retrieved, Searched, StageEvent, State
from rag.pipeline.steps import STEPS
from rag.pipeline.trace import result
from rag.result import AnswerResult
from rag.retrieval.hybrid import HybridRetriever, check_query
from rag.types import Document, Ordering, SearchFilter, SearchResult, Turn, as_turns

if TYPE_CHECKING:
    from rag.pipeline.warmup import Warmup
    from rag.tools import Selection, ToolRegistry

RETRIEVE = runner.select(STEPS, "search", "versions", "quarantine", "rerank", "gate")
PROMPT_ONLY = runner.select(STEPS, "resolve", "search", "versions", "quarantine", "prompt")
# What ``astream`` reports after a step, besides the final result.
_EVENTS = {"search": lambda s: Searched(s.search), "gate": lambda s: Gated(s.retrieved())}


class Pipeline:
    """Entry point of the Python API.

    >>> p = Pipeline.from_config("configs/default.yaml")   # doctest: +SKIP
    >>> p.build_index()                                    # doctest: +SKIP
    >>> p.search("연차 휴가는 며칠인가요?").candidates[0].chunk.evidence_id  # doctest: +SKIP

    The stage objects (embedder, reranker, gate, prompt builder, generator, validator, retriever,
    backend...) are reached through :attr:`components` (:class:`rag.pipeline.components.Components`).
    """

    steps: tuple[runner.Step, ...] = STEPS

    def __init__(self, config: RagConfig, embedder: Embedder | None = None, index: Index | None = None, *,
                 generator: Generator | None = None) -> None:
        """``embedder``, ``index`` and ``generator`` reuse already-built components (e.g. an
        in-memory index from :meth:`new_index` shared by several configs); by default all are made
        lazily from the config."""
        self.config = config
        self.components = Components(config, embedder=embedder, index=index, generator=generator)

    @classmethod
    def from_config(cls, path: str | Path | None = None, **kwargs) -> "Pipeline":
        return cls(load_config(path), **kwargs)

    # -- loading -----------------------------------------------------------------------------
    def warmup(self) -> "Warmup":
        """Load every model the config uses (embedder, reranker when enabled, the extractive
        scorer's model, a llama.cpp model or an LLM client) and answer one short fixed question per
        language (the corpus's main one, and each of ``rerank.languages``) as nobody, so the next
        question pays for no load. Returns the seconds each part took (:class:`rag.pipeline.warmup.Warmup`).
        An LLM is not asked (the questions stop at the prompt). Raises what loading raises."""
        from rag.pipeline.warmup import warm

        return warm(self.components)

    # -- the index ---------------------------------------------------------------------------
    @property
    def index_path(self) -> Path:
        return self.config.resolve(self.config.index.path)

    @property
    def index_location(self) -> str:
        """Where the configured index lives, for messages: its folder, or the Milvus URI and collection."""
        return self.components.backend.location

    def index_exists(self) -> bool:
        return self.components.backend.exists()

    def milvus_index(self, collection: str | None = None):
        """A :class:`rag.index.milvus.MilvusIndex` on ``index.milvus`` (not yet opened)."""
        from rag.index.milvus import MilvusIndex

        c = self.components
        return MilvusIndex(self.config, c.chunker(), c.analyzer(), c.embedder, collection=collection)

    @property
    def index(self) -> Index:
        return self.components.index

    def pinned(self) -> "Pipeline":
        """A pipeline over a read-only snapshot of the current index, sharing every loaded component.

        A service pins one per request, so the whole request (search, version policy, quarantine)
        sees one index version while documents are added or deleted. Load the components first
        (``components.warm_up()``) or each pinned copy loads its own."""
        view = object.__new__(type(self))
        view.config = self.config
        view.components = self.components.with_index(self.index.snapshot())
        return view

    def load_corpus(self) -> list[Document]:
        """The documents of ``corpus.paths`` (files that cannot be read are logged and skipped,
        or raise with ``corpus.on_error: fail``; :meth:`read_corpus` returns them). No document at all
        raises :class:`~rag.errors.EmptyCorpusError` naming the paths and the formats looked for."""
        return check_corpus(self.read_corpus())

    def read_corpus(self, progress: Progress | None = None) -> CorpusLoad:
        """Every path of ``corpus.paths`` read, with the per-file failures, warnings and ignored
        files of folders (docs/documents.md)."""
        parts = [read_corpus(self.config.resolve(p), self.config.corpus.format, self.config.corpus, progress)
                 for p in self.config.corpus.paths]
        return CorpusLoad([d for c in parts for d in c.documents], tuple(x for c in parts for x in c.failures),
                          tuple(x for c in parts for x in c.warnings), tuple(x for c in parts for x in c.ignored),
                          tuple(x for c in parts for x in c.files), tuple(x for c in parts for x in c.sources))

    def new_index(self, docs: Iterable[Document], progress: Progress | None = None) -> Index:
        """An index of ``docs`` apart from the configured one (evaluation, training data mining):
        in memory on the local backend; on Milvus, a collection named after the documents and the
        index settings (``<collection>_<hash>``), reused when it already holds them."""
        return self.components.backend.new(check_unique(list(docs)), progress)

    def build_index(self, docs: Iterable[Document] | None = None, *, force: bool = False,
                    progress: Progress | None = None) -> Index:
        """Index the corpus (or ``docs``): the local backend saves a new version atomically to
        ``index.path``; on Milvus the collection is brought to exactly these documents in
        published batches (an interrupted run resumes when run again).

        An existing index built with another model/analyzer is refused unless ``force``;
        unchanged chunks are not embedded again (embedding cache)."""
        docs = check_unique(self.load_corpus() if docs is None else list(docs))
        idx = self.components.backend.build(docs, force=force, progress=progress)
        self.components.use_index(idx)
        return idx

    def add_documents(self, docs: Iterable[Document]) -> UpdateReport:
        """Add documents to the configured index (an id and version indexed already with the same
        text is left as it is; with other text it is an error: use :meth:`replace_documents`)."""
        docs = list(docs)
        return self.write(lambda idx: idx.add(docs))

    def replace_documents(self, docs: Iterable[Document]) -> UpdateReport:
        """Make each given document the only indexed version of its id."""
        docs = list(docs)
        return self.write(lambda idx: idx.replace(docs))

    def delete_document(self, doc_id: str, version: str | None = None) -> UpdateReport:
        """Remove every version of ``doc_id`` (or one version)."""
        return self.write(lambda idx: idx.delete(doc_id, version))

    def write(self, op: Operation) -> UpdateReport:
        """Apply ``op`` to the configured index the one way every writer does
        (:meth:`rag.index.backend.IndexBackend.write`: under the cross-process writer lock, on the
        newest published version, then published), and serve the result from now on: a pipeline
        whose open copy was stale sees the other writers' versions after its own write."""
        idx, report = self.components.backend.write(self.components.loaded_index, op)
        self.components.use_index(idx)
        return report

    def retriever_over(self, docs: Iterable[Document], progress: Progress | None = None) -> HybridRetriever:
        """A retriever over a new in-memory index of ``docs`` (evaluation, training data mining)."""
        return HybridRetriever(self.new_index(docs, progress), self.components.embedder, self.config.retrieval,
                               self.config.security)

    # -- the request path ----------------------------------------------------------------------
    def _start(self, question: str, history: Sequence[Turn] = (), *, where: SearchFilter | None = None,
               top_k: int | None = None, ordering: Ordering | None = None, tools: "ToolRegistry | None" = None,
               search: SearchResult | None = None, principal: Principal | None = None, answering: bool = False
               ) -> State:
        """The request's first state, after the checks every entry point makes before any work. ``answering``:
        also what every answer checks first (:meth:`Components.before_answering`); that part of the request is
        recorded as its ``start`` step, so the trace names it."""
        t0 = time.perf_counter()
        self.config.limits.check_question(question)  # the limit of every entry point, before any work
        try:
            history = as_turns(history)
        except ValueError as exc:
            raise InputError(f"{exc}; pass Turn(role, content) objects or {{\"role\": ..., \"content\": ...}} "
                             "dicts, oldest first") from None
        check_principal(principal, self.config.security)  # before any work
        if tools is not None:
            self.components.tool_generator()  # a config that cannot call tools fails before any work
        state = State(Request(question, history, where, top_k, ordering, tools, principal), t0, search=search)
        if not answering:
            return state
        self.components.before_answering()
        return state.recorded("start", (time.perf_counter() - t0) * 1e3)

    def where(self, fields: Mapping[str, Any] | None = None, *, document_ids: Sequence[str] = (),
              versions: Sequence[str] = ()) -> SearchFilter:
        """A request filter: documents whose metadata meets ``fields`` (``{"department": "hr", "year":
        {"gte": 2020}}``, on the fields ``retrieval.filter_fields`` declares; a
        :class:`rag.fields.FieldFilterError` names what is wrong), and/or these documents and
        versions. Pass it as ``where=`` to search, retrieve, build_prompt, answer and astream."""
        return SearchFilter(tuple(document_ids), tuple(versions),
                            fields=parse_fields(fields, self.config.retrieval.filter_fields))

    def documents(self, *, principal: Principal | None = None) -> tuple[ListedDocument, ...]:
        """The indexed document versions ``principal`` (None: anonymous, public documents only) may
        read, by id then version, each ``current`` or ``superseded`` among those it may read
        (:mod:`rag.pipeline.listing`): a document it may not read is in no listing or count."""
        check_principal(principal, self.config.security)
        return list_documents(self.components, principal)

    def search(self, query: str, candidates: int | None = None, where: SearchFilter | None = None, *,
               principal: Principal | None = None) -> SearchResult:
        """Fused candidates (``candidates``: how many, default ``retrieval.candidates``); ``where``
        restricts retrieval to some documents and/or versions, within what ``principal`` may read
        (None: anonymous, public documents only; docs/security.md)."""
        self.config.limits.check_question(query)
        check_principal(principal, self.config.security)
        return self.components.retriever.search(query, candidates, where, principal=principal)

    def retrieve(self, question: str, *, search: SearchResult | None = None, where: SearchFilter | None = None,
                 top_k: int | None = None, principal: Principal | None = None) -> Retrieved:
        """Search; set aside other versions than the policy allows (``retrieval.versions``) and
        evidence that carried an injection attempt (``security.quarantine``); rerank (if enabled)
        and decide with the gate whether to answer. ``where`` and ``top_k`` (candidates) as in
        :meth:`search`; a ``where`` that names versions replaces the version policy."""
        state = self._start(question, where=where, top_k=top_k, search=search, principal=principal)
        return runner.run(RETRIEVE, state, self.components).retrieved()

    def build_prompt(self, question: str, history: Sequence[Turn] = (), *, search: SearchResult | None = None,
                     where: SearchFilter | None = None, top_k: int | None = None,
                     ordering: Ordering | None = None, principal: Principal | None = None
                     ) -> tuple[SearchResult, Prompt]:
        """Resolve a follow-up (with ``history``), retrieve (unless ``search`` is given), apply the version
        policy and the quarantine, and build the budgeted prompt (fused order, no rerank)."""
        state = self._start(question, history, where=where, top_k=top_k, ordering=ordering, search=search,
                            principal=principal)
        state = runner.run(PROMPT_ONLY, state, self.components)
        return state.searched, state.prompt

    def answer(self, question: str, history: Sequence[Turn] = (), *, where: SearchFilter | None = None,
               top_k: int | None = None, ordering: Ordering | None = None,
               tools: "ToolRegistry | None" = None, principal: Principal | None = None) -> AnswerResult:
        """Retrieve, rerank, gate, build the context, generate and validate. On abstention by the
        gate (or an empty context) the generator is never called. ``where`` / ``top_k`` restrict and
        size retrieval (:meth:`retrieve`); ``ordering`` overrides ``context.ordering``.

        ``tools`` (a :class:`rag.tools.ToolRegistry`) adds live data: the tools for the question are
        selected and the model may call them (``generation.backend: openai``, any OpenAI-compatible
        server with tool calling); tool results are evidence blocks with their own ``S#`` ids in
        the same budget, validated like documents'. The gate judges the documents; an answer is
        still attempted when a tool returned data.

        ``principal`` (a :class:`rag.access.Principal`; None: anonymous) is who asks: every step sees
        only the documents it may read (docs/security.md)."""
        state = self._start(check_query(question), history, where=where, top_k=top_k, ordering=ordering,
                            tools=tools, principal=principal, answering=True)
        return result(runner.run(self.steps, state, self.components), self.components)

    async def aanswer(self, question: str, history: Sequence[Turn] = (), *, where: SearchFilter | None = None,
                      top_k: int | None = None, ordering: Ordering | None = None,
                      tools: "ToolRegistry | None" = None, principal: Principal | None = None) -> AnswerResult:
        """Async twin of :meth:`answer`: the CPU-bound steps run in a worker thread, the tool phase on
        the tools' own threads, generation awaits the async client."""
        async for event in self.astream(question, history, where=where, top_k=top_k, ordering=ordering, tools=tools,
                                        principal=principal):
            if isinstance(event, Answered):
                return event.result
        raise AssertionError("astream ended without a result")  # pragma: no cover - astream always ends with one

    async def astream(self, question: str, history: Sequence[Turn] = (), *, where: SearchFilter | None = None,
                      top_k: int | None = None, ordering: Ordering | None = None,
                      tools: "ToolRegistry | None" = None, principal: Principal | None = None
                      ) -> AsyncIterator[StageEvent]:
        """:meth:`aanswer` as it happens: :class:`Searched` (fused candidates), :class:`Gated` (rerank and
        the gate's decision), then :class:`Answered` with the final result. The answer text only ever
        travels in ``Answered``, after validation: nothing unvalidated is yielded."""
        state = self._start(check_query(question), history, where=where, top_k=top_k, ordering=ordering,
                            tools=tools, principal=principal, answering=True)
        async for name, state in runner.arun(self.steps, state, self.components):
            if name in _EVENTS:
                yield _EVENTS[name](state)
        yield Answered(result(state, self.components))

    # -- tools (seed 004) ----------------------------------------------------------------------
    def select_tools(self, question: str, tools: "ToolRegistry", max_tools: int | None = None) -> "Selection":
        """The tools of ``tools`` (a :class:`rag.tools.ToolRegistry`) that matter for ``question``."""
        return self.components.tool_selector(tools).select(check_query(question), max_tools)

    def answer_with_tools(self, question: str, tools: "ToolRegistry", history: Sequence[Turn] = (), **kwargs
                          ) -> AnswerResult:
        """Deprecated alias of ``answer(question, history, tools=tools)`` (kept for one release)."""
        return self.answer(question, history, tools=tools, **kwargs)

    async def aanswer_with_tools(self, question: str, tools: "ToolRegistry", history: Sequence[Turn] = (),
                                 **kwargs) -> AnswerResult:
        """Deprecated alias of ``aanswer(question, history, tools=tools)`` (kept for one release)."""
        return await self.aanswer(question, history, tools=tools, **kwargs)
