"""The pipeline: wires the stages from one validated config."""
from __future__ import annotations

import asyncio
import copy
import dataclasses
import functools
import logging
import time
from dataclasses import dataclass
from pathlib import Path
from typing import AsyncIterator, Iterable, Literal, Sequence

from rag.answer.contract import Generator
from rag.answer.generators import make_generator
from rag.answer.loop import AnswerOutcome, agenerate_answer, format_overhead, generate_answer
from rag.answer.validation import CitationValidator
from rag.config import RagConfig, load_config
from rag.context.builder import DroppedEvidence, Evidence
from rag.context.prompt import Guideline, GuidelineSelector, Prompt, PromptBuilder
from rag.context.sanitize import QuarantinedEvidence, quarantine
from rag.errors import ConfigError
from rag.index.chunking import Chunker
from rag.index.embedders import CachedEmbedder, Embedder, EmbeddingCache, cosines, make_embedder
from rag.index.loaders import check_unique, load_documents, load_guidelines
from rag.index.backend import IndexBackend, make_backend
from rag.index.protocol import Index
from rag.index.updates import Progress, UpdateReport
from rag.rerank.calibration import Calibration
from rag.rerank.cross_encoder import (BUNDLED_RERANKERS, CrossEncoderReranker, CrossEncoderScorer, RerankResult,
                                      reranked_candidates)
from rag.rerank.gate import Gate, GateDecision
from rag.result import AnswerResult, AnswerTrace, CandidateTrace
from rag.retrieval.hybrid import HybridRetriever, check_query
from rag.retrieval.versions import SupersededVersion, VersionInfo, allowed_versions, effective_date, filter_versions
from rag.text.analyzers import make_analyzer
from rag.text.lang import detect_language
from rag.text.tokens import make_counter
from rag.types import Candidate, Document, SearchFilter, SearchResult, Turn

logger = logging.getLogger(__name__)


class Pipeline:
    """Entry point of the Python API.

    >>> p = Pipeline.from_config("configs/default.yaml")   # doctest: +SKIP
    >>> p.build_index()                                    # doctest: +SKIP
    >>> p.search("연차 휴가는 며칠인가요?").candidates[0].chunk.evidence_id  # doctest: +SKIP
    """

    def __init__(self, config: RagConfig, embedder: Embedder | None = None, index: Index | None = None) -> None:
        """``embedder`` and ``index`` reuse already-built components (e.g. an in-memory index from
        :meth:`new_index` shared by several configs); by default both are made lazily from the config."""
        self.config = config
        self._embedder = embedder
        self._index: Index | None = index
        self._prompt_builder: PromptBuilder | None = None
        self._prompt_builders: dict[str, PromptBuilder] = {}  # per context.ordering asked for by a request
        self._tool_selectors: dict[int, tuple[object, object]] = {}  # id(registry) -> (registry, ToolSelector)
        self._reranker: CrossEncoderReranker | None = None
        self._answerability = None  # rag.rerank.answerability.AnswerabilityModel, loaded on first use
        self._generator: Generator | None = None
        self._validator: CitationValidator | None = None
        # Derived from the index's current documents / chunks; recomputed when the index swaps them
        # (compared by identity: the index replaces, never mutates, these containers)
        self._allowed: tuple[object, dict[str, str | None] | None] | None = None

    @classmethod
    def from_config(cls, path: str | Path | None = None, **kwargs) -> "Pipeline":
        return cls(load_config(path), **kwargs)

    # -- components --------------------------------------------------------------
    @property
    def embedder(self) -> Embedder:
        if self._embedder is None:
            e = self.config.embedding
            inner = make_embedder(e)
            if e.cache_dir:
                inner = CachedEmbedder(inner, EmbeddingCache(self.config.resolve(e.cache_dir) / "embeddings.sqlite"))
            self._embedder = inner
        return self._embedder

    def chunker(self) -> Chunker:
        return Chunker(self.config.chunking)

    def analyzer(self):
        b = self.config.bm25
        return make_analyzer(b.analyzer, stem=b.stem, stopwords=b.stopwords)

    @property
    def index_path(self) -> Path:
        return self.config.resolve(self.config.index.path)

    @functools.cached_property
    def backend(self) -> IndexBackend:
        """Where the configured index lives (``index.backend``, :mod:`rag.index.backend`); made once."""
        return make_backend(self.config, self.chunker, self.analyzer, self.embedder)

    @property
    def index_location(self) -> str:
        """Where the configured index lives, for messages: its folder, or the Milvus URI and collection."""
        return self.backend.location

    def index_exists(self) -> bool:
        return self.backend.exists()

    def new_index(self, docs: Iterable[Document], progress: Progress | None = None) -> Index:
        """An index of ``docs`` apart from the configured one (evaluation, training data mining):
        in memory on the local backend; on Milvus, a collection named after the documents and the
        index settings (``<collection>_<hash>``), reused when it already holds them."""
        return self.backend.new(check_unique(list(docs)), progress)

    def milvus_index(self, collection: str | None = None):
        """A :class:`rag.index.milvus.MilvusIndex` on ``index.milvus`` (not yet opened)."""
        from rag.index.milvus import MilvusIndex

        return MilvusIndex(self.config, self.chunker(), self.analyzer(), self.embedder, collection=collection)

    @property
    def index(self) -> Index:
        if self._index is None:
            self._index = self.backend.open()
        return self._index

    @property
    def retriever(self) -> HybridRetriever:
        return HybridRetriever(self.index, self.embedder, self.config.retrieval)

    def retriever_over(self, docs: Iterable[Document], progress: Progress | None = None) -> HybridRetriever:
        """A retriever over a new in-memory index of ``docs`` (evaluation, training data mining)."""
        return HybridRetriever(self.new_index(docs, progress), self.embedder, self.config.retrieval)

    # -- operations --------------------------------------------------------------
    def load_corpus(self) -> list[Document]:
        docs: list[Document] = []
        for p in self.config.corpus.paths:
            docs.extend(load_documents(self.config.resolve(p), self.config.corpus.format))
        return check_unique(docs)

    def build_index(self, docs: Iterable[Document] | None = None, *, force: bool = False,
                    progress: Progress | None = None) -> Index:
        """Index the corpus (or ``docs``): the local backend saves a new version atomically to
        ``index.path``; on Milvus the collection is brought to exactly these documents in
        published batches (an interrupted run resumes when run again).

        An existing index built with another model/analyzer is refused unless ``force``;
        unchanged chunks are not embedded again (embedding cache)."""
        docs = check_unique(self.load_corpus() if docs is None else list(docs))
        self._index = self.backend.build(docs, force=force, progress=progress)
        return self._index

    def add_documents(self, docs: Iterable[Document]) -> UpdateReport:
        report = self.index.add(docs)
        self._persist()
        return report

    def replace_documents(self, docs: Iterable[Document]) -> UpdateReport:
        report = self.index.replace(docs)
        self._persist()
        return report

    def delete_document(self, doc_id: str, version: str | None = None) -> UpdateReport:
        report = self.index.delete(doc_id, version)
        self._persist()
        return report

    def _persist(self) -> None:
        """The local backend saves a new version folder; Milvus published the update already."""
        self.backend.persist(self.index)

    def search(self, query: str, candidates: int | None = None, where: SearchFilter | None = None) -> SearchResult:
        """Fused candidates (``candidates``: how many, default ``retrieval.candidates``); ``where``
        restricts retrieval to some documents and/or versions."""
        return self.retriever.search(query, candidates, where)

    def use_index(self, index: Index) -> None:
        """Serve ``index`` from now on (a writer publishes the version it just saved); a pipeline
        pinned before keeps the version it pinned."""
        self._index = index

    def pinned(self) -> "Pipeline":
        """A pipeline over a read-only snapshot of the current index, sharing every loaded component.

        A service pins one per request, so the whole request (search, version policy, quarantine)
        sees one index version while documents are added or deleted. Load the components first
        (:meth:`warm_up`) or each pinned copy loads its own."""
        view = copy.copy(self)
        view._index = self.index.snapshot()
        return view

    def warm_up(self) -> None:
        """Load every component a question needs (models, index, prompt builder, generator)."""
        _ = (self.index, self.embedder, self.reranker, self.gate, self.prompt_builder, self.generator, self.validator)
        self.embedder.embed_queries(["warm up"])

    # -- reranking and the gate ---------------------------------------------------
    @property
    def reranker(self) -> CrossEncoderReranker | None:
        """The configured reranker (loaded lazily on first use), or None when disabled."""
        r = self.config.rerank
        if not r.enabled:
            return None
        if self._reranker is None:
            model = r.model
            if model != "default" and model not in BUNDLED_RERANKERS and self.config.resolve(model).exists():
                model = str(self.config.resolve(model))
            cal = Calibration.load(self.config.resolve(r.calibration)) if r.calibration else None
            self._reranker = CrossEncoderReranker(CrossEncoderScorer(r, model=model), cal, r)
        return self._reranker

    @property
    def gate(self) -> Gate:
        g = self.config.gate
        if g.signal != "answerability" or not g.enabled:
            return Gate(g)
        if self._answerability is None:
            from rag.rerank.answerability import FILENAME, load

            if g.answerability_model:
                path = self.config.resolve(g.answerability_model)
            else:
                reranker = self.reranker
                folder = reranker.scorer.path if reranker is not None else None
                if folder is None:
                    raise ConfigError("gate.signal: answerability needs gate.answerability_model when the reranker "
                                      "is disabled or not a local checkpoint")
                path = folder / FILENAME
            self._answerability = load(path)
        return Gate(g, self._answerability)

    def retrieve(self, question: str, *, search: SearchResult | None = None, where: SearchFilter | None = None,
                 top_k: int | None = None) -> "Retrieved":
        """Search; set aside other versions than the policy allows (``retrieval.versions``) and
        evidence that carried an injection attempt (``security.quarantine``); rerank (if enabled)
        and decide with the gate whether to answer. ``where`` and ``top_k`` (candidates) as in
        :meth:`search`; a ``where`` that names versions replaces the version policy."""
        if search is None:
            search = self.search(question, top_k, where)
        result, superseded, quarantined = self._eligible(search, where)
        reranker = self.reranker
        rr = reranker.rerank(question, result.candidates) if reranker is not None else None
        candidates = reranked_candidates(rr) if rr is not None and rr.applied else result.candidates
        decision = self.gate.decide(result.candidates, rr, language=rr.language if rr is not None
                                    else detect_language(question))
        return Retrieved(result, rr, candidates, decision, superseded, quarantined)

    def _eligible(self, result: SearchResult, where: SearchFilter | None = None) -> tuple[
            SearchResult, tuple[SupersededVersion, ...], tuple[QuarantinedEvidence, ...]]:
        if where is not None and where.versions:  # the caller chose the versions: no policy on top
            eligible, superseded = list(result.candidates), ()
        else:
            eligible, superseded = filter_versions(result.candidates, self._allowed_versions())
        eligible, quarantined = quarantine(eligible, self.config.security.quarantine, self._document_texts)
        if superseded or quarantined:
            logger.info("set aside: %d superseded version(s), %d quarantined candidate(s)", len(superseded),
                        len(quarantined))
            result = SearchResult(result.query, eligible, result.timings_ms)
        return result, superseded, quarantined

    def _allowed_versions(self) -> dict[str, str | None] | None:
        """The version policy over the index's documents, recomputed only when the index changed."""
        docs = self.index.documents
        if self._allowed is None or self._allowed[0] is not docs:
            infos = [VersionInfo(rec.id, rec.version, effective_date(rec.version, rec.meta))
                     for rec in docs.values()]
            self._allowed = (docs, allowed_versions(infos, self.config.retrieval))
        return self._allowed[1]

    def _document_texts(self, doc_id: str, version: str) -> tuple[str, ...]:
        """Every chunk text of one document version (for ``quarantine: drop_document``)."""
        return self.index.document_texts(doc_id, version)

    # -- context -----------------------------------------------------------------
    def guidelines(self) -> list[Guideline]:
        c = self.config.context
        entries = list(c.guidelines)
        if c.guidelines_file:
            entries.extend(load_guidelines(self.config.resolve(c.guidelines_file)))
        return [Guideline(g.id, g.content, tuple(g.keywords), g.condition) for g in entries]

    @property
    def prompt_builder(self) -> PromptBuilder:
        """Built once per pipeline (the config is frozen): the guidelines file is read and the
        guideline conditions are embedded once, not on every question."""
        if self._prompt_builder is None:
            self._prompt_builder = self._make_prompt_builder()
        return self._prompt_builder

    def _make_prompt_builder(self) -> PromptBuilder:
        c = self.config.context
        guides = self.guidelines()
        selector = None
        if guides:
            selector = GuidelineSelector(guides, c, self.embedder if c.guideline_match != "keyword" else None)
        counter = make_counter(c.tokenizer, self.config.tokenizer_model)
        return PromptBuilder(counter, c, selector,
                             schema_overhead=format_overhead(counter, c.max_blocks, c.message_overhead))

    def builder_for(self, ordering: Ordering | None = None) -> PromptBuilder:
        """The prompt builder, or one that orders the blocks as ``ordering`` says (shares the rest)."""
        if ordering is None or ordering == self.config.context.ordering:
            return self.prompt_builder
        if ordering not in self._prompt_builders:
            base = self.prompt_builder
            c = self.config.context.model_copy(update={"ordering": ordering})
            self._prompt_builders[ordering] = PromptBuilder(base.counter, c, base.selector,
                                                            schema_overhead=base.schema_overhead)
        return self._prompt_builders[ordering]

    def build_prompt(self, question: str, history: Sequence[Turn] = (), *, search: SearchResult | None = None,
                     where: SearchFilter | None = None, top_k: int | None = None,
                     ordering: Ordering | None = None) -> tuple[SearchResult, Prompt]:
        """Retrieve (unless ``search`` is given), apply the version policy and the quarantine, and build
        the budgeted prompt (fused order, no rerank)."""
        if search is None:
            search = self.search(question, top_k, where)
        result, superseded, quarantined = self._eligible(search, where)
        evidence = [Evidence.from_candidate(c) for c in result.candidates]
        return result, self.builder_for(ordering).build(question, evidence, history,
                                                        set_aside=set_aside_entries(superseded, quarantined))

    # -- answering -----------------------------------------------------------------
    @property
    def generator(self) -> Generator:
        if self._generator is None:
            g = self.config.generation
            scorer = embedding_scorer(self.embedder) if g.backend == "extractive" and \
                g.extractive_scorer == "embedding" else None
            self._generator = make_generator(g, scorer=scorer, validation=self.config.validation,
                                             base_dir=self.config.base_dir)
        return self._generator

    @property
    def validator(self) -> CitationValidator:
        if self._validator is None:
            v = self.config.validation
            self._validator = CitationValidator(v, self.embedder if v.support_method != "lexical" else None,
                                                abstention_texts=self.config.generation.abstention_messages.values())
        return self._validator

    def answer(self, question: str, history: Sequence[Turn] = (), *, where: SearchFilter | None = None,
               top_k: int | None = None, ordering: Ordering | None = None) -> AnswerResult:
        """Retrieve, rerank, gate, build the context, generate and validate. On abstention by the
        gate (or an empty context) the generator is never called. ``where`` / ``top_k`` restrict and
        size retrieval (:meth:`retrieve`); ``ordering`` overrides ``context.ordering``."""
        t0 = time.perf_counter()
        q = check_query(question)
        got = self.retrieve(q, where=where, top_k=top_k)
        if not got.decision.answer:
            return self._result(q, got, None, None, t0)
        prompt, context_ms = self._timed_prompt(q, got, history, ordering)
        outcome = generate_answer(prompt, self.generator, self.validator, self.config.generation, question=q)
        return self._result(q, got, prompt, outcome, t0, context_ms)

    async def aanswer(self, question: str, history: Sequence[Turn] = (), *, where: SearchFilter | None = None,
                      top_k: int | None = None, ordering: Ordering | None = None) -> AnswerResult:
        """Async twin of :meth:`answer`: retrieval and prompt building run in a worker thread (they are
        CPU-bound), generation awaits the async client."""
        async for event in self.astream(question, history, where=where, top_k=top_k, ordering=ordering):
            if isinstance(event, Answered):
                return event.result
        raise AssertionError("astream ended without a result")  # pragma: no cover - astream always ends with one

    async def astream(self, question: str, history: Sequence[Turn] = (), *, where: SearchFilter | None = None,
                      top_k: int | None = None, ordering: Ordering | None = None) -> AsyncIterator["StageEvent"]:
        """:meth:`aanswer` as it happens: :class:`Searched` (fused candidates), :class:`Gated` (rerank and
        the gate's decision), then :class:`Answered` with the final result. The answer text only ever
        travels in ``Answered``, after validation: nothing unvalidated is yielded."""
        t0 = time.perf_counter()
        q = check_query(question)
        search = await asyncio.to_thread(self.search, q, top_k, where)
        yield Searched(search)
        got = await asyncio.to_thread(self.retrieve, q, search=search, where=where)
        yield Gated(got)
        if not got.decision.answer:
            yield Answered(self._result(q, got, None, None, t0))
            return
        # Timed inside the worker thread, so waiting for the executor is not counted as context time.
        prompt, context_ms = await asyncio.to_thread(self._timed_prompt, q, got, history, ordering)
        outcome = await agenerate_answer(prompt, self.generator, self.validator, self.config.generation, question=q)
        yield Answered(self._result(q, got, prompt, outcome, t0, context_ms))

    # -- tools (seed 004) ----------------------------------------------------------------
    def tool_selector(self, tools):
        """The :class:`rag.tools.ToolSelector` of a registry (its tools indexed once per registry)."""
        from rag.tools import ToolSelector

        hit = self._tool_selectors.get(id(tools))
        if hit is None or hit[0] is not tools:
            hit = (tools, ToolSelector(tools, self.config.tools, self.config, self.embedder, self.chunker(),
                                       self.analyzer()))
            self._tool_selectors[id(tools)] = hit
        return hit[1]

    def select_tools(self, question: str, tools, max_tools: int | None = None):
        """The tools of ``tools`` (a :class:`rag.tools.ToolRegistry`) that matter for ``question``."""
        return self.tool_selector(tools).select(check_query(question), max_tools)

    def answer_with_tools(self, question: str, tools, history: Sequence[Turn] = (), *,
                          where: SearchFilter | None = None, top_k: int | None = None,
                          ordering: Ordering | None = None) -> AnswerResult:
        """Answer from documents and live data: select the tools for the question, let the model call
        them (``generation.backend: openai``, any OpenAI-compatible server with tool calling), then
        answer with the same contract as :meth:`answer`: tool results are evidence blocks with their
        own ``S#`` ids in the same budget, and citations of them are validated like documents'. The
        gate judges the documents; an answer is still attempted when a tool returned data.
        ``where``, ``top_k`` and ``ordering`` as in :meth:`answer`."""
        t0 = time.perf_counter()
        prep = self._tools_prepare(question, tools, history, where, top_k)
        phase = prep.loop.run(prep.base.messages, prep.selection)
        done = self._tools_evidence(prep, phase, history, ordering)
        if isinstance(done, AnswerResult):
            return self._retimed(done, t0)
        prompt, context_ms, trace = done
        outcome = generate_answer(prompt, prep.generator, self.validator, self.config.generation, question=prep.q)
        return self._result(prep.q, prep.got, prompt, outcome, t0, context_ms, tools=trace)

    async def aanswer_with_tools(self, question: str, tools, history: Sequence[Turn] = (), *,
                                 where: SearchFilter | None = None, top_k: int | None = None,
                                 ordering: Ordering | None = None) -> AnswerResult:
        """Async twin of :meth:`answer_with_tools`: selection, retrieval and prompt building run in a
        worker thread, the tool phase (waiting on the model and the tools) on the tools' own threads,
        and the answer awaits the async client."""
        from rag.tools import TOOL_PHASE_THREADS

        t0 = time.perf_counter()
        prep = await asyncio.to_thread(self._tools_prepare, question, tools, history, where, top_k)
        phase = await asyncio.get_running_loop().run_in_executor(
            TOOL_PHASE_THREADS, prep.loop.run, prep.base.messages, prep.selection)
        done = await asyncio.to_thread(self._tools_evidence, prep, phase, history, ordering)
        if isinstance(done, AnswerResult):
            return self._retimed(done, t0)
        prompt, context_ms, trace = done
        outcome = await agenerate_answer(prompt, prep.generator, self.validator, self.config.generation,
                                         question=prep.q)
        return self._result(prep.q, prep.got, prompt, outcome, t0, context_ms, tools=trace)

    def _tools_prepare(self, question: str, tools, history: Sequence[Turn], where: SearchFilter | None,
                       top_k: int | None) -> "_ToolsPrep":
        """Selection, retrieval and the prompt the tool phase starts from."""
        from rag.answer.generators import OpenAIGenerator
        from rag.tools import ToolLoop

        q = check_query(question)
        generator = self.generator
        if not isinstance(generator, OpenAIGenerator):
            raise ConfigError("answer_with_tools needs generation.backend: openai (an OpenAI-compatible server "
                              f"with tool calling); this config has {self.config.generation.backend!r}")
        selection = self.select_tools(q, tools)
        got = self.retrieve(q, where=where, top_k=top_k)
        docs = got.evidence() if got.decision.answer else []
        base = self.prompt_builder.build(q, docs, history, set_aside=got.set_aside())
        g = self.config.generation
        loop = ToolLoop(tools, self.config.tools, generator.client, g.model, self.prompt_builder.counter,
                        g.temperature)
        return _ToolsPrep(q, generator, selection, got, docs, base, loop)

    def _tools_evidence(self, prep: "_ToolsPrep", phase, history: Sequence[Turn], ordering: Ordering | None):
        """The quarantine over the tool results, then the answer prompt with documents and live data; or
        the abstention when neither gives evidence."""
        from rag.context.sanitize import injection_signals
        from rag.tools import ToolTrace

        live, withheld = [], []
        for te in phase.evidence:
            signals = injection_signals(te.evidence.text) if self.config.security.quarantine != "off" else ()
            (withheld if signals else live).append((te, signals))
        trace = ToolTrace(prep.selection, phase, tuple(te.evidence.evidence_id for te, _ in withheld))
        if not prep.got.decision.answer and not live:
            return self._result(prep.q, prep.got, None, None, time.perf_counter(), tools=trace)
        set_aside = prep.got.set_aside() + [
            DroppedEvidence(te.evidence.evidence_id, "suspected_injection",
                            "tool result: " + ", ".join(sorted({s.kind for s in sig}))) for te, sig in withheld]
        t1 = time.perf_counter()
        prompt = self.builder_for(ordering).build(prep.q, [*prep.docs, *(te.evidence for te, _ in live)], history,
                                                  set_aside=set_aside)
        return prompt, (time.perf_counter() - t1) * 1e3, trace

    @staticmethod
    def _retimed(result: AnswerResult, t0: float) -> AnswerResult:
        """``result`` with its total time counted from ``t0`` (an abstention decided mid-way)."""
        if result.trace is None:
            return result
        timings = dict(result.trace.timings_ms)
        timings["total"] = (time.perf_counter() - t0) * 1e3
        return dataclasses.replace(result, trace=dataclasses.replace(result.trace, timings_ms=timings))

    def _timed_prompt(self, q: str, got: "Retrieved", history: Sequence[Turn],
                      ordering: Ordering | None = None) -> tuple[Prompt, float]:
        t = time.perf_counter()
        prompt = self.builder_for(ordering).build(q, got.evidence(), history, set_aside=got.set_aside())
        return prompt, (time.perf_counter() - t) * 1e3

    def _result(self, q: str, got: "Retrieved", prompt: Prompt | None, outcome: AnswerOutcome | None, t0: float,
                context_ms: float = 0.0, tools=None) -> AnswerResult:
        timings = dict(got.search.timings_ms)
        rr = got.rerank
        if rr is not None:
            timings["rerank"] = rr.timings_ms.get("rerank_total", 0.0)
        if prompt is not None:
            timings["context"] = context_ms
        attempts = outcome.attempts if outcome is not None else ()
        if attempts:
            timings["generation"] = sum(a.generation_s for a in attempts) * 1e3
            timings["validation"] = sum(a.validation_s for a in attempts) * 1e3
        timings["total"] = (time.perf_counter() - t0) * 1e3
        by_id = {rc.evidence_id: rc for rc in rr.candidates} if rr is not None else {}
        cands = tuple(CandidateTrace(c.chunk.evidence_id, i + 1, float(c.score),
                                     rc.probability if (rc := by_id.get(c.chunk.evidence_id)) else None,
                                     rc.truncated if rc else False)
                      for i, c in enumerate(got.candidates[:10]))
        usage_p = sum(a.usage.prompt_tokens for a in attempts)
        usage_c = sum(a.usage.completion_tokens for a in attempts)
        model_ids = {"embedding": self.embedder.model_id}
        if rr is not None:
            model_ids["reranker"] = rr.model_id
        if outcome is not None:
            model_ids["generator"] = attempts[0].generator if attempts else type(self.generator).__name__
        trace = AnswerTrace(timings, got.decision, bool(rr and rr.applied), rr.reason if rr is not None else "disabled",
                            cands, tuple((e.evidence_id, e.reason) for e in (rr.excluded if rr else ())),
                            prompt.manifest if prompt is not None else None, attempts, usage_p, usage_c,
                            self.config.hash, model_ids,
                            outcome.report.citations if outcome is not None and outcome.report is not None else (),
                            got.quarantined, tools)
        abstain = self.config.generation.abstention_message(detect_language(q))
        if outcome is None:
            return AnswerResult(q, "insufficient_evidence", abstain, (), got.decision.reason, trace, got.superseded)
        answer = outcome.answer if outcome.status == "answered" else abstain
        return AnswerResult(q, outcome.status, answer, outcome.citations, outcome.reason, trace, got.superseded)


def set_aside_entries(superseded: Sequence[SupersededVersion],
                      quarantined: Sequence[QuarantinedEvidence]) -> list[DroppedEvidence]:
    """Manifest entries for what the version policy and the quarantine dropped before the context builder."""
    out = [DroppedEvidence(eid, "superseded", f"{v.document_id} {v.version} superseded by {v.current_version}")
           for v in superseded for eid in v.evidence_ids]
    out += [DroppedEvidence(q.evidence_id, "suspected_injection", f"{q.scope}: {', '.join(q.signals)}")
            for q in quarantined]
    return out


def embedding_scorer(embedder: Embedder):
    """(question, sentences) -> cosine of the question's query embedding and each sentence's passage
    embedding: the model score of the extractive generator."""
    def score(question: str, sentences: Sequence[str]) -> list[float]:
        return [float(x) for x in cosines(embedder, [question], sentences)[0]] if sentences else []

    return score


Ordering = Literal["rank", "reverse", "edges"]  # context.ordering


@dataclass(frozen=True)
class _ToolsPrep:
    """What :meth:`Pipeline.answer_with_tools` knows before the tool phase."""

    q: str
    generator: Generator
    selection: object  # rag.tools.Selection
    got: "Retrieved"
    docs: list
    base: Prompt
    loop: object  # rag.tools.ToolLoop


@dataclass(frozen=True)
class Searched:
    """:meth:`Pipeline.astream`: the fused candidates (after any ``where`` filter), before rerank."""

    search: SearchResult


@dataclass(frozen=True)
class Gated:
    """:meth:`Pipeline.astream`: rerank done and the gate decided (``retrieved.decision``)."""

    retrieved: "Retrieved"


@dataclass(frozen=True)
class Answered:
    """:meth:`Pipeline.astream`: the final, validated result (answered or abstained)."""

    result: AnswerResult


StageEvent = Searched | Gated | Answered


@dataclass(frozen=True)
class Retrieved:
    """What :meth:`Pipeline.retrieve` found: the search, the rerank, the final order and the gate decision."""

    search: SearchResult  # candidates after the version policy and the quarantine
    rerank: RerankResult | None
    candidates: tuple[Candidate, ...]
    decision: GateDecision
    superseded: tuple[SupersededVersion, ...] = ()
    quarantined: tuple[QuarantinedEvidence, ...] = ()

    def set_aside(self) -> list[DroppedEvidence]:
        """What the version policy and the quarantine dropped, as manifest entries."""
        return set_aside_entries(self.superseded, self.quarantined)

    def evidence(self) -> list[Evidence]:
        """Candidates for the context builder, scored by their final (reranked) order."""
        if self.rerank is not None and self.rerank.applied:
            return [Evidence.from_candidate(rc.candidate, rc.score) for rc in self.rerank.candidates]
        return [Evidence.from_candidate(c) for c in self.candidates]
