"""The index format: the version folders, CURRENT, the records saved beside the arrays, and the
stored parameters every backend checks on open."""
from __future__ import annotations

import json
import logging
import re
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path
from types import MappingProxyType
from typing import Any, Mapping

from rag import __version__
from rag.access.model import Access, stored_access
from rag.errors import IndexCorruptError, IndexMismatchError, IndexNotFoundError
from rag.types import Chunk

logger = logging.getLogger(__name__)

FORMAT_VERSION = 1


def corpus_fingerprint(documents: Mapping[tuple[str, str], "DocumentRecord"]) -> str:
    """A short stable hash of what an index holds (each document's id, version and text hash):
    ``gate.fitted_on`` records it when ``rag calibrate --auto`` fits the gate, so a later run can tell
    the thresholds were fitted on another corpus. Order-independent."""
    from rag.config import digest

    return digest(sorted((r.id, r.version, r.text_sha256) for r in documents.values()))


_VERSION_DIR = re.compile(r"^v-(\d{6})$")


@dataclass(frozen=True)
class DocumentRecord:
    id: str
    version: str
    title: str
    uri: str
    text_sha256: str
    n_chunks: int
    metadata: str  # JSON text, so the record stays hashable and frozen

    @cached_property
    def meta(self) -> Mapping[str, Any]:
        """The metadata, read-only (empty when it is empty or not a JSON object); parsed once."""
        try:
            meta = json.loads(self.metadata) if self.metadata else {}
        except ValueError:
            meta = {}
        return MappingProxyType(meta if isinstance(meta, dict) else {})

    @cached_property
    def access(self) -> Access | None:
        """Who may read the document (its metadata's ``access``): None when it has none (public, as
        every record of an index written before access control), :data:`rag.access.NOBODY` when the
        stored entry cannot be read (fails closed)."""
        return stored_access(self.meta.get("access"))


class RestrictedCache:
    """Whether any record of a documents mapping has access metadata, remembered for the last
    mapping seen (backends replace that mapping on every update, never mutate it)."""

    def __init__(self) -> None:
        self._last: tuple[object, bool] | None = None

    def __call__(self, documents: Mapping[tuple[str, str], DocumentRecord]) -> bool:
        last = self._last
        if last is None or last[0] is not documents:
            last = self._last = (documents, any(rec.access is not None for rec in documents.values()))
        return last[1]


def needs_readers(where, restricted: bool) -> bool:
    """Whether ``where``'s readers (:class:`rag.access.ReaderScope`) can exclude any row: not when no
    document has access metadata and every reader reads public documents."""
    return bool(where.readers) and (restricted or any(r.default_access != "public" for r in where.readers))


@dataclass(frozen=True)
class IndexParams:
    format_version: int
    package_version: str
    index_config_hash: str
    analyzer: str
    bm25_backend: str
    bm25_k1: float
    bm25_b: float
    embedding_model: str
    embedding_dim: int
    dense_index: str
    chunking: str
    n_documents: int
    n_chunks: int


def version_numbers(root: Path) -> list[int]:
    return sorted(int(m.group(1)) for p in root.iterdir() if (m := _VERSION_DIR.match(p.name)) and p.is_dir())


def index_exists(path: str | Path) -> bool:
    return (Path(path) / "CURRENT").is_file()


def current_version(root: Path) -> Path:
    cur = root / "CURRENT"
    if not cur.is_file():
        if root.is_dir() and any(not p.name.startswith(".") for p in root.iterdir()):  # not the lock, a killed save
            raise IndexCorruptError(f"{root}: has files but no CURRENT pointer; it is not a rag index (or was never completed)")
        raise IndexNotFoundError(f"no index at {root}; build it with `rag index --config <your config>`")
    name = cur.read_text(encoding="utf-8").strip()
    folder = root / name
    if not _VERSION_DIR.match(name) or not folder.is_dir():
        raise IndexCorruptError(f"{root}/CURRENT points at {name!r}, which does not exist; rebuild with `rag index`")
    return folder


def chunking_name(chunker) -> str:
    """The chunking an index records in its parameters (a :class:`rag.index.chunking.Chunker`'s
    token counter, sizes and structure mode)."""
    name = f"{chunker.counter.name}:max{chunker.max_tokens}:overlap{chunker.overlap_tokens}"
    # plain keeps the name indexes had before structure-aware chunking, so they still load as plain
    return name if chunker.config.structure == "plain" else f"{name}:structure-{chunker.config.structure}"


def chunk_from_json(o: dict) -> Chunk:
    """A saved chunk record back to a :class:`Chunk`: ``heading_path`` (a JSON list) becomes a tuple;
    records written before ``locator``/``heading_path``/``access`` existed load with their defaults
    (no access: public)."""
    if "heading_path" in o:
        path = o["heading_path"]
        if not isinstance(path, (list, tuple)) or not all(isinstance(h, str) for h in path):
            raise ValueError(f"chunk {o.get('evidence_id')!r}: heading_path must be a list of strings")
        o = {**o, "heading_path": tuple(path)}
    if "page_breaks" in o:
        o = {**o, "page_breaks": tuple((int(a), int(b)) for a, b in o["page_breaks"])}
    if "boundaries" in o:
        o = {**o, "boundaries": tuple(int(b) for b in o["boundaries"])}
    if o.get("access") is not None:  # records written before access control have none: public
        o = {**o, "access": stored_access(o["access"])}
    return Chunk(**o)


def check_params(params: dict, model_id: str, analyzer: str, chunking: str, root: object,
                 elsewhere: str = "index.path") -> None:
    """Refuse an index whose stored parameters differ from what the config asks for (``root``:
    where it is, and ``elsewhere``: the key that names another one, for the messages)."""
    if params.get("format_version") != FORMAT_VERSION:
        raise IndexMismatchError(
            f"{root}: index format {params.get('format_version')} (rag {params.get('package_version')}); this rag "
            f"reads format {FORMAT_VERSION}. Rebuild it with `rag index --config ... --force`."
        )
    want = model_id
    if params.get("embedding_model") != want:
        raise IndexMismatchError(
            f"{root}: index was built with embedding model {params.get('embedding_model')!r} "
            f"(dim {params.get('embedding_dim')}), but the config asks for {want!r}. Its vectors are not comparable: "
            f"point {elsewhere} elsewhere, or rebuild with `rag index --config ... --force`."
        )
    if params.get("analyzer") != analyzer:
        raise IndexMismatchError(
            f"{root}: index was built with BM25 analyzer {params.get('analyzer')!r}, config asks for "
            f"{analyzer!r}; rebuild with `rag index --config ... --force`."
        )
    if params.get("chunking") != chunking:
        raise IndexMismatchError(
            f"{root}: index was chunked as {params.get('chunking')!r}, config asks for {chunking!r}; "
            "rebuild with `rag index --config ... --force`."
        )
    if params.get("package_version") != __version__:
        logger.info("index %s was written by rag %s (this is %s)", root, params.get("package_version"), __version__)
