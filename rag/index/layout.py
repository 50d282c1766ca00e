"""The index folder format: the version folders, CURRENT, and the records saved beside the arrays."""
from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path

from rag.errors import IndexCorruptError, IndexNotFoundError


FORMAT_VERSION = 1


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

    @property
    def meta(self) -> dict:
        """The metadata as a dict (``{}`` when it is empty or not a JSON object)."""
        try:
            meta = json.loads(self.metadata) if self.metadata else {}
        except ValueError:
            return {}
        return meta if isinstance(meta, dict) else {}


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
        if root.is_dir() and any(root.iterdir()):
            raise IndexCorruptError(f"{root}: has files but no CURRENT pointer; it is not a rag index (or was never completed)")
        raise IndexNotFoundError(f"no index at {root}; build it with `rag index --config <your config>`")
    name = cur.read_text(encoding="utf-8").strip()
    folder = root / name
    if not _VERSION_DIR.match(name) or not folder.is_dir():
        raise IndexCorruptError(f"{root}/CURRENT points at {name!r}, which does not exist; rebuild with `rag index`")
    return folder
