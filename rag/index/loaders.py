"""Corpus paths: JSONL documents, BEIR datasets, and folders or single files of documents (read
by :mod:`rag.documents`)."""
from __future__ import annotations

import csv
import logging
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Iterator, Mapping

from rag.access.model import Access
from rag._io import parse_jsonl
from rag.config import CorpusConfig
from rag.documents import FileFailure, FileWarning, LoadedFile, load_file
from rag.documents import load_folder as files_in_folder
from rag.documents.detect import SUFFIXES
from rag.errors import DatasetError, DocumentDecodeError, DuplicateDocumentError, EmptyCorpusError, InputError
from rag.types import Document

logger = logging.getLogger(__name__)


def _read_text(path: Path) -> str:
    try:
        return path.read_bytes().decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise DocumentDecodeError(
            f"{path}: not valid UTF-8 (byte {exc.start}: {exc.reason}). Re-encode the file as UTF-8, "
            f"e.g. iconv -f CP949 -t UTF-8 '{path}' > fixed.txt"
        ) from None
    except OSError as exc:
        raise InputError(f"{path}: cannot read ({exc.strerror})") from None


def jsonl_rows(path: Path) -> Iterator[tuple[int, dict]]:
    return parse_jsonl(_read_text(path), path)


def load_jsonl_documents(path: str | Path) -> list[Document]:
    """One document per line: ``id``, ``text`` required; ``version``, ``title``, ``uri``, ``metadata`` and
    ``access`` (``{"groups": [...], "users": [...], "tenant": ...}``, who may read it) optional."""
    p = Path(path)
    docs = []
    for lineno, obj in jsonl_rows(p):
        doc_id = obj.get("id", obj.get("_id"))
        text = obj.get("text")
        if not isinstance(doc_id, (str, int)) or str(doc_id).strip() == "":
            raise InputError(f"{p}:{lineno}: missing or empty 'id'")
        if not isinstance(text, str):
            raise InputError(f"{p}:{lineno}: document {doc_id!r} has no string 'text'")
        meta = obj.get("metadata") or {}
        if not isinstance(meta, Mapping):
            raise InputError(f"{p}:{lineno}: 'metadata' must be an object")
        if obj.get("access") is not None or meta.get("access") is not None:
            # who may read it (docs/security.md); kept in the metadata in its canonical form
            raw = obj["access"] if obj.get("access") is not None else meta["access"]
            meta = {**meta, "access": Access.parse(raw, f"{p}:{lineno}: document {str(doc_id)!r}").to_json()}
        docs.append(
            Document(
                id=str(doc_id),
                text=text,
                version=str(obj.get("version", "1")),
                title=str(obj.get("title") or ""),
                uri=str(obj.get("uri") or f"{p.name}#{doc_id}"),
                metadata=meta,
            )
        )
    return docs


def folder_documents(path: str | Path, config: CorpusConfig | None = None) -> list[Document]:
    """The documents alone of every file under ``path`` (PDF, DOCX, HTML, HWP(X), Markdown, text;
    recursively); a file that cannot be read is logged and skipped (:func:`read_corpus` returns
    the failures too, :func:`rag.documents.load_folder` each file's outcome)."""
    return read_corpus(path, "folder", config).documents


@dataclass(frozen=True)
class CorpusSource:
    """One corpus path as it was read: ``format`` is ``folder``, ``jsonl``, ``beir`` or ``file``."""

    path: str
    format: str


@dataclass(frozen=True)
class CorpusLoad:
    """What reading a corpus path gave: its documents, and for a folder of files the per-file
    failures, warnings and ignored files (empty for JSONL and BEIR); ``sources``: the paths read."""

    documents: list[Document]
    failures: tuple[FileFailure, ...] = ()
    warnings: tuple[FileWarning, ...] = ()
    ignored: tuple[str, ...] = ()
    files: tuple[LoadedFile, ...] = ()
    sources: tuple[CorpusSource, ...] = ()


_FORMAT_NAMES = {"pdf": "PDF", "docx": "DOCX", "html": "HTML", "hwpx": "HWPX", "hwp": "HWP",
                 "markdown": "Markdown", "text": "text"}


def folder_formats() -> tuple[str, ...]:
    """The file formats a folder is read for, each with its file name endings (``PDF (.pdf)`` …)."""
    return tuple(f"{_FORMAT_NAMES.get(fmt, fmt)} ({', '.join(s or 'no extension' for s in suffixes)})"
                 for fmt, suffixes in SUFFIXES.items())


def _source_formats(fmt: str) -> tuple[str, ...]:
    if fmt == "folder":
        return folder_formats()
    if fmt == "jsonl":
        return ("JSONL (one JSON object a line with 'id' and 'text')",)
    if fmt == "beir":
        return ("BEIR (corpus.jsonl with '_id' and 'text')",)
    return ()


def _some(items: list[str], n: int = 3) -> str:
    return ", ".join(items[:n]) + (f" and {len(items) - n} more" if len(items) > n else "")


def empty_corpus_error(load: CorpusLoad) -> EmptyCorpusError:
    """The error for a corpus that gave no document: which paths were read, the formats looked for
    there, and how many files were skipped (another format, or excluded) or could not be read."""
    paths = tuple(s.path for s in load.sources)
    formats = tuple(dict.fromkeys(f for s in load.sources for f in _source_formats(s.format)))
    msg = f"no documents to index in {', '.join(paths) if paths else 'the corpus'}"
    if formats:
        msg += f": looked for {'; '.join(formats)}"
        if any(s.format == "folder" for s in load.sources):
            msg += " files, in subfolders too (hidden files and folders are not read)"
    found = []
    if load.ignored:
        found.append(f"{len(load.ignored)} file(s) skipped as another format or excluded by the manifest "
                     f"({_some(list(load.ignored))})")
    if load.failures:
        found.append(f"{len(load.failures)} file(s) could not be read "
                     f"({_some([f'{f.file}: {f.reason}' for f in load.failures])})")
    msg += f"; {' and '.join(found)}" if found else "; the path holds no such file"
    msg += (". Add documents in one of these formats, or point corpus.paths (or the command's folder) at the "
            "one that holds them")
    return EmptyCorpusError(msg, paths=paths, formats=formats, skipped=len(load.ignored), failed=len(load.failures))


def check_corpus(load: CorpusLoad) -> list[Document]:
    """:func:`check_unique` on a corpus read from paths, with :func:`empty_corpus_error` when it gave
    no document."""
    if not load.documents:
        raise empty_corpus_error(load)
    return check_unique(load.documents)


def read_corpus(path: str | Path, fmt: str = "auto", config: CorpusConfig | None = None,
                progress: Callable[[int], None] | None = None) -> CorpusLoad:
    """Read one corpus path: a JSONL file, a BEIR folder, a folder of files or one file. Folders
    of files collect their failures unless ``corpus.on_error`` is ``fail``."""
    p = Path(path)
    if not p.exists():
        raise InputError(f"corpus path not found: {p}")
    if fmt == "auto":
        if p.is_dir():
            fmt = "beir" if (p / "corpus.jsonl").is_file() else "folder"
        elif p.suffix in (".jsonl", ".json"):
            fmt = "jsonl"
        else:
            f = load_file(p, config)
            return CorpusLoad([f.document], files=(f,), sources=(CorpusSource(str(p), "file"),))
    source = (CorpusSource(str(p), fmt),)
    if fmt == "folder":
        got = files_in_folder(p, config, progress=progress)
        return CorpusLoad(got.documents, got.failures, got.warnings, got.ignored, got.loaded, source)
    loader = {"jsonl": load_jsonl_documents, "beir": load_beir_corpus}[fmt]
    return CorpusLoad(loader(p), sources=source)


@dataclass(frozen=True)
class BeirDataset:
    name: str
    corpus: tuple[Document, ...]
    queries: Mapping[str, str]
    qrels: Mapping[str, Mapping[str, int]]  # query id -> doc id -> relevance


def load_beir_corpus(root: str | Path) -> list[Document]:
    p = Path(root) / "corpus.jsonl"
    if not p.is_file():
        raise DatasetError(f"{root}: no corpus.jsonl (expected the BEIR layout: corpus.jsonl, queries.jsonl, qrels/)")
    docs = []
    for lineno, obj in jsonl_rows(p):
        if "_id" not in obj:
            raise DatasetError(f"{p}:{lineno}: missing '_id'")
        title = str(obj.get("title") or "")
        body = str(obj.get("text") or "")
        # BEIR convention: title and text are indexed together.
        text = f"{title}\n\n{body}" if title else body
        docs.append(Document(id=str(obj["_id"]), text=text, version="1", title=title, uri=f"beir:{Path(root).name}/{obj['_id']}"))
    return docs


def load_qrels(root: str | Path, split: str) -> dict[str, dict[str, int]]:
    """``qrels/<split>.tsv`` of a BEIR folder: query id -> document id -> relevance."""
    r = Path(root)
    if not r.is_dir():
        raise DatasetError(f"dataset folder not found: {r}")
    qrels_path = r / "qrels" / f"{split}.tsv"
    if not qrels_path.is_file():
        have = sorted(x.stem for x in (r / "qrels").glob("*.tsv")) if (r / "qrels").is_dir() else []
        raise DatasetError(f"{r}: no qrels/{split}.tsv (splits present: {have or 'none'})")
    qrels: dict[str, dict[str, int]] = {}
    with open(qrels_path, encoding="utf-8", newline="") as fh:
        for lineno, row in enumerate(csv.reader(fh, delimiter="\t"), 1):
            if not row or (lineno == 1 and row[0] == "query-id"):
                continue
            if len(row) < 3:
                raise DatasetError(f"{qrels_path}:{lineno}: expected 'query-id<TAB>corpus-id<TAB>score'")
            try:
                score = int(float(row[2]))
            except ValueError:
                raise DatasetError(f"{qrels_path}:{lineno}: score {row[2]!r} is not a number") from None
            qrels.setdefault(row[0], {})[row[1]] = score
    return qrels


def load_beir(root: str | Path, split: str) -> BeirDataset:
    r = Path(root)
    qrels = load_qrels(r, split)
    qp = r / "queries.jsonl"
    if not qp.is_file():
        raise DatasetError(f"{r}: no queries.jsonl")
    queries = {str(o["_id"]): str(o.get("text", "")) for _, o in jsonl_rows(qp) if str(o.get("_id")) in qrels}
    missing = sorted(set(qrels) - set(queries))
    if missing:
        logger.warning("%d qrels queries have no text in queries.jsonl (first: %s); skipped", len(missing), missing[0])
        qrels = {q: v for q, v in qrels.items() if q in queries}
    return BeirDataset(name=r.name, corpus=tuple(load_beir_corpus(r)), queries=queries, qrels=qrels)


def load_documents(path: str | Path, fmt: str = "auto", config: CorpusConfig | None = None) -> list[Document]:
    """The documents of one corpus path (:func:`read_corpus` without the per-file report)."""
    return read_corpus(path, fmt, config).documents


def check_unique(docs: list[Document]) -> list[Document]:
    """Drop exact repeats; raise on one (id, version) with two different texts."""
    seen: dict[tuple[str, str], Document] = {}
    out = []
    for d in docs:
        prev = seen.get(d.key)
        if prev is None:
            seen[d.key] = d
            out.append(d)
        elif prev.text != d.text:
            raise DuplicateDocumentError(
                f"document id {d.id!r} version {d.version!r} appears twice with different text; "
                "give the newer one a new version, or use replace() to swap it"
            )
        else:
            logger.info("dropping exact duplicate of %s:%s", d.id, d.version)
    if not out:
        raise EmptyCorpusError("the corpus is empty: no documents were found to index")
    return out


def load_guidelines(path: str | Path) -> list:
    """A YAML (or JSON) list of guidelines, each validated like ``context.guidelines`` entries
    (``{id, content, keywords?, condition?}``); returns ``GuidelineConfig`` objects."""
    import yaml
    from pydantic import ValidationError

    from rag.config import GuidelineConfig

    p = Path(path)
    try:
        data = yaml.safe_load(_read_text(p))
    except yaml.YAMLError as exc:
        raise InputError(f"{p}: not valid YAML ({exc})") from None
    if not isinstance(data, list):
        raise InputError(f"{p}: expected a list of guidelines, got {type(data).__name__}")
    out = []
    for i, g in enumerate(data):
        try:
            out.append(GuidelineConfig.model_validate(g))
        except ValidationError as exc:
            problems = "; ".join(f"{'.'.join(map(str, e['loc'])) or 'entry'}: {e['msg']}" for e in exc.errors())
            raise InputError(f"{p}: guideline {i}: {problems}") from None
    return out
