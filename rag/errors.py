"""One error hierarchy for the whole package.

Every error says what was wrong and, where it can, what to do about it.
"""
from __future__ import annotations


class RagError(Exception):
    """Base class of every error raised on purpose by ``rag``."""


class ConfigError(RagError):
    """A configuration file or value is invalid (the message names the dotted path)."""


class ConfigValueError(ConfigError, ValueError):
    """A config section built in Python got a bad value; also a ``ValueError``, as for any bad argument."""


class InputError(RagError):
    """A user-supplied value (query, document, file) is unusable."""


class AccessMetadataError(InputError):
    """A document's access metadata (``access: {groups, users, tenant}``) is malformed; the message
    names the document and the bad key or value."""


class PrincipalRequiredError(InputError):
    """``security.require_principal: true`` and the request named no principal (user, groups or tenant)."""


class EmptyQueryError(InputError):
    """The query is empty or whitespace only."""


class QuestionTooLongError(InputError):
    """The question is longer than ``limits.max_question_chars``; ``length``, ``limit`` and ``key`` say
    by how much and what to raise."""

    def __init__(self, length: int, limit: int, key: str = "limits.max_question_chars") -> None:
        super().__init__(f"the question has {length:,} characters; the limit is {limit:,} ({key}): shorten it, "
                         f"or raise the limit in the config or with --set {key}=N")
        self.length, self.limit, self.key = length, limit, key


class EmptyCorpusError(InputError):
    """There is nothing to index. Raised on a corpus read from paths, ``paths`` names them, ``formats``
    the file formats that were looked for, ``skipped`` the files passed over (another format, or
    excluded by the manifest) and ``failed`` the files that could not be read."""

    def __init__(self, message: str, *, paths: tuple[str, ...] = (), formats: tuple[str, ...] = (),
                 skipped: int = 0, failed: int = 0) -> None:
        super().__init__(message)
        self.paths, self.formats, self.skipped, self.failed = paths, formats, skipped, failed


class DuplicateDocumentError(InputError):
    """The same document id and version appears twice with different text."""


class DocumentDecodeError(InputError):
    """A source file is not valid UTF-8 (or otherwise unreadable)."""


class FileExtractionError(InputError):
    """One file could not be turned into text. ``reason`` is a stable code (``unsupported``,
    ``encrypted``, ``corrupt``, ``scanned``, ``empty``, ``garbage``, ``too_large``); the message
    names the file and says what to do."""

    reason = "unreadable"

    def __init__(self, message: str, *, file: str = "", page: int | None = None) -> None:
        super().__init__(message)
        self.file = file
        self.page = page


class UnsupportedFileError(FileExtractionError):
    """The file's content is not a format any loader reads."""

    reason = "unsupported"


class EncryptedFileError(FileExtractionError):
    """The file is password-protected or DRM-protected (an HWP distribution document)."""

    reason = "encrypted"


class CorruptFileError(FileExtractionError):
    """The file claims a format but its structure is broken."""

    reason = "corrupt"


class ScannedFileError(FileExtractionError):
    """No page of the file has a text layer (an image-only scan)."""

    reason = "scanned"


class EmptyFileError(FileExtractionError):
    """The file holds no text."""

    reason = "empty"


class GarbageFileError(FileExtractionError):
    """The file decodes to binary garbage, NUL bytes or implausibly little text."""

    reason = "garbage"


class FileTooLargeError(FileExtractionError):
    """The file is over ``corpus.max_file_mb``."""

    reason = "too_large"


class DatasetError(InputError):
    """An evaluation dataset is missing files or malformed."""


class IndexError_(RagError):
    """Base for index problems (named with a trailing underscore to avoid the builtin)."""


class IndexNotFoundError(IndexError_):
    """No index exists at the given path."""


class IndexCorruptError(IndexError_):
    """An index folder exists but cannot be read."""


class IndexMismatchError(IndexError_):
    """An index was built with a different model, tokenizer or format than requested."""


class IndexBackendError(IndexError_):
    """The index engine (a Milvus server or milvus-lite file) is unreachable, refused the
    credentials, or failed a call; the message names the URI and what to do."""


class UnsupportedByBackendError(IndexBackendError):
    """The index engine cannot do what was asked (e.g. BM25 on a Milvus server older than 2.5)."""


class BudgetError(RagError):
    """The token budget leaves no room for evidence (or the question alone is too large)."""

    def __init__(self, message: str, terms: object | None = None) -> None:
        super().__init__(message)
        self.terms = terms


class EvidenceError(InputError):
    """An evidence item offered to the context builder is malformed or inconsistent."""


class DependencyError(RagError):
    """An optional dependency is missing; the message names the extra to install."""


class ModelLoadError(RagError):
    """A model could not be loaded from the given name or path."""


class ModelInstallError(RagError):
    """A local model could not be downloaded, assembled or verified (``rag models install-llm``)."""


def missing_dependency(package: str, extra: str, purpose: str) -> DependencyError:
    return DependencyError(
        f"{purpose} needs the '{package}' package, which is not installed. "
        f"Install it with: pip install 'rag[{extra}]'  (or: pip install {package})"
    )


class GenerationError(RagError):
    """The answer generator failed (transport, server or configuration problem)."""


class MissingApiKeyError(GenerationError):
    """The environment variable named by ``generation.api_key_env`` is not set for a remote server."""


class GenerationTimeoutError(GenerationError):
    """The generation server did not answer within ``generation.timeout_s`` (after retries)."""


class GenerationServerError(GenerationError):
    """The generation server kept failing (429, 5xx or connection errors) after the configured retries."""


class CitationError(RagError):
    """An answer's citations or its citation contract could not be verified."""


class AnswerContractError(CitationError):
    """Every attempt broke the answer contract; carries the per-attempt records.

    Raised only when ``generation.on_failure`` is ``"error"``."""

    def __init__(self, message: str, attempts: tuple = ()) -> None:
        super().__init__(message)
        self.attempts = attempts
