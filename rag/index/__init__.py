"""Index: document loaders, chunking, BM25, and the index backends: the versioned hybrid index
folder (local) and Milvus, chosen by name in :mod:`rag.index.backend` (:class:`IndexBackend`); an
opened index of either follows the :class:`Index` protocol. The embedding models it stores the
vectors of are :mod:`rag.models`."""
from rag.index.loaders import (
    BeirDataset,
    CorpusLoad,
    check_unique,
    load_beir,
    load_beir_corpus,
    load_documents,
    folder_documents,
    load_guidelines,
    load_jsonl_documents,
    read_corpus,
)
from rag.index.chunking import (
    Chunker,
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
    "Chunker",
    "DocumentRecord",
    "FORMAT_VERSION",
    "HybridIndex",
    "Index",
    "IndexBackend",
    "IndexedDocument",
    "LocalBackend",
    "MigrateReport",
    "MilvusBackend",
    "MilvusIndex",
    "IndexParams",
    "Progress",
    "UpdateReport",
    "build_index",
    "check_unique",
    "current_version",
    "index_exists",
    "load_beir",
    "load_beir_corpus",
    "load_documents",
    "folder_documents",
    "read_corpus",
    "CorpusLoad",
    "load_guidelines",
    "load_jsonl_documents",
    "make_backend",
    "migrate",
    "top_k_desc",
    "version_numbers",
]
