"""Feature vectors of a sample of the reader's data, computed in chunks and cached on disk.

A **group** is one question asked over one corpus (``source``, question id, question and passage
language) with its candidate passages (gold, given and BM25-mined). Groups are taken per source in a fixed
hash order of ``source\\x1fquestion_id`` (so an MS MARCO query comes with its four language pairs and a
larger sample extends a smaller one); ``limits`` caps the groups per (split, source): MS MARCO takes
``ceil(limit / 4)`` queries, each over four language pairs.

Layout under ``DIR`` (default ``data/cache/reader/features``)::

    params.json                          feature names, model ids: another set is refused
    <split>/<source>-<nnnn>-<g>.npz      chunk nnnn of the (split, source) groups, g groups in it

A chunk is written to a temporary file, fsynced and renamed, so a killed run is resumed by running it
again: finished chunks are read back, the rest computed. Each chunk holds:

- ``p_x [n, len(PASSAGE_FEATURES)]``, ``p_group``, ``p_label`` (1 answers, 0 no_answer, -1 unknown),
  ``p_origin``, ``p_id``;
- ``g_key`` (``source|question_id|qlang-plang``), ``g_source``, ``g_pair`` (``ko-en``), ``g_answerable``;
- ``s_x [m, len(SENTENCE_FEATURES)]``, ``s_row`` (its passage's row), ``s_label`` (1 holds the answer, 0 not),
  ``s_index``: sentences of the answering passages whose answer sentences are known (KorQuAD, SQuAD 2.0,
  SciFact's dev claims) only; a passage that does not answer has no sentence that does.

BM25 is scored with the question as asked against an index of every passage of the source in the
passage's language (all splits: collection statistics, no labels).
"""
from __future__ import annotations

import hashlib
import io
import json
import logging
import math
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Iterator, Mapping

import numpy as np

from rag._io import fsync_dir, fsync_file, write_json
from rag.reader.errors import ReaderDataError
from rag.reader.examples import ReaderExample
from rag.reader.features import PASSAGE_FEATURES, SENTENCE_FEATURES, Signals, passage_vectors, sentence_vectors

logger = logging.getLogger(__name__)

SOURCES = ("korquad1", "squad2", "nomiracl-ko", "scifact", "msmarco")
SPLITS = ("train", "calib", "eval")
CHUNK_GROUPS = 25
ANALYZERS = {"ko": "korean_bigram", "en": "english"}
_P_LABEL = {"answers": 1, "no_answer": 0, "unknown": -1}


@dataclass(frozen=True)
class Group:
    key: str
    source: str
    pair: str
    answerable: bool
    examples: tuple[ReaderExample, ...]


@dataclass(frozen=True)
class Chunk:
    """The arrays of one or more chunks (see the module docstring)."""

    p_x: np.ndarray
    p_group: np.ndarray
    p_label: np.ndarray
    p_origin: np.ndarray
    p_id: np.ndarray
    g_key: np.ndarray
    g_source: np.ndarray
    g_pair: np.ndarray
    g_answerable: np.ndarray
    s_x: np.ndarray
    s_row: np.ndarray
    s_label: np.ndarray
    s_index: np.ndarray

    @property
    def groups(self) -> int:
        return int(self.g_key.shape[0])


def _order_key(source: str, qid: str) -> bytes:
    return hashlib.sha256(f"{source}\x1f{qid}".encode()).digest()


def _shards(out: Path, split: str | None, source: str) -> Iterator[dict]:
    from rag.reader.data import read_manifest
    from rag.reader.shards import read_shard

    for s in read_manifest(out)["shards"]:
        if (split is None or s["split"] == split) and (s["task"] == source or s["task"].startswith(source + "-")):
            for row in read_shard(Path(out) / s["path"]):
                if row["source"] == source:
                    yield row


def select_groups(out: Path, split: str, source: str, limit: int) -> list[Group]:
    """The first ``limit`` groups of (split, source) in the fixed hash order (module docstring)."""
    per_q = 4 if source == "msmarco" else 1
    rows_by_group: dict[tuple[str, str, str], list[dict]] = {}
    for row in _shards(out, split, source):
        rows_by_group.setdefault((row["question_id"], row["question_lang"], row["passage_lang"]), []).append(row)
    qids = sorted({k[0] for k in rows_by_group}, key=lambda q: _order_key(source, q))
    keep = set(qids[:math.ceil(limit / per_q)])
    keys = sorted((k for k in rows_by_group if k[0] in keep), key=lambda k: (_order_key(source, k[0]), k[1], k[2]))
    groups = []
    for qid, ql, pl in keys:
        rows = sorted(rows_by_group[(qid, ql, pl)], key=lambda r: r["example_id"])
        exs = tuple(ReaderExample.from_row(r) for r in rows)
        groups.append(Group(f"{source}|{qid}|{ql}-{pl}", source, f"{ql}-{pl}", bool(exs[0].answerable), exs))
    return groups[:limit]


def corpus_docs(out: Path, source: str) -> dict[str, list[tuple[str, str]]]:
    """Every passage of ``source`` (all splits), by passage language: ``(passage_id, title + text)``,
    sorted by id."""
    seen: dict[str, dict[str, str]] = {}
    for row in _shards(out, None, source):
        d = seen.setdefault(row["passage_lang"], {})
        if row["passage_id"] not in d:
            t = row.get("passage_title") or ""
            d[row["passage_id"]] = f"{t}\n{row['passage']}" if t else row["passage"]
    return {lang: sorted(d.items()) for lang, d in sorted(seen.items())}


def featurize_group(g: Group, signals: Signals) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """(passage vectors, sentence vectors, sentence -> passage row, sentence labels / indices [m, 2])."""
    ex = g.examples
    q = ex[0].question
    texts = [e.passage for e in ex]
    ce = signals.cross_encoder(q, texts)
    dense = signals.dense(q, texts)
    bm25 = signals.bm25(f"{g.source}:{ex[0].passage_lang}", q, [e.passage_id for e in ex])
    px = passage_vectors(q, texts, ce, dense, bm25)
    sx, srow, sl = [], [], []
    for i, e in enumerate(ex):
        if e.passage_label != "answers" or e.answer_sentences is None or not e.sentences:
            continue
        sents = [e.sentence_text(k) for k in range(len(e.sentences))]
        x = sentence_vectors(q, sents, signals.cross_encoder(q, sents), signals.dense(q, sents), px[i])
        sx.append(x)
        srow += [i] * len(sents)
        sl += [(int(k in e.answer_sentences), k) for k in range(len(sents))]
    s = np.vstack(sx) if sx else np.zeros((0, len(SENTENCE_FEATURES)))
    return px, s, np.array(srow, dtype=np.int64), np.array(sl, dtype=np.int64).reshape(-1, 2)


def featurize(groups: list[Group], signals: Signals) -> Chunk:
    p_x, p_group, p_label, p_origin, p_id = [], [], [], [], []
    s_x, s_row, s_lab = [], [], []
    offset = 0
    for gi, g in enumerate(groups):
        px, sx, srow, sl = featurize_group(g, signals)
        p_x.append(px)
        p_group += [gi] * len(g.examples)
        p_label += [_P_LABEL[e.passage_label] for e in g.examples]
        p_origin += [e.origin for e in g.examples]
        p_id += [e.passage_id for e in g.examples]
        s_x.append(sx)
        s_row.append(srow + offset)
        s_lab.append(sl)
        offset += len(g.examples)
    sl = np.vstack(s_lab) if s_lab else np.zeros((0, 2), np.int64)
    return Chunk(np.vstack(p_x) if p_x else np.zeros((0, len(PASSAGE_FEATURES))), np.array(p_group, np.int64),
                 np.array(p_label, np.int64), np.array(p_origin, dtype=str), np.array(p_id, dtype=str),
                 np.array([g.key for g in groups], dtype=str), np.array([g.source for g in groups], dtype=str),
                 np.array([g.pair for g in groups], dtype=str), np.array([g.answerable for g in groups], dtype=bool),
                 np.vstack(s_x) if s_x else np.zeros((0, len(SENTENCE_FEATURES))),
                 np.concatenate(s_row) if s_row else np.zeros(0, np.int64), sl[:, 0].copy(), sl[:, 1].copy())


def save_chunk(chunk: Chunk, path: Path) -> None:
    """Crash-safe: a temporary file, fsynced, renamed."""
    path.parent.mkdir(parents=True, exist_ok=True)
    buf = io.BytesIO()
    np.savez(buf, **{k: getattr(chunk, k) for k in Chunk.__dataclass_fields__})
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_bytes(buf.getvalue())
    fsync_file(tmp)
    os.replace(tmp, path)
    fsync_dir(path.parent)


def load_chunk(path: Path) -> Chunk:
    with np.load(path, allow_pickle=False) as z:
        return Chunk(**{k: z[k] for k in Chunk.__dataclass_fields__})


def concat(chunks: list[Chunk]) -> Chunk:
    """One chunk of many: group and row indices shifted."""
    if not chunks:
        raise ReaderDataError("no feature chunks to read; run `rag reader features` first")
    fields: dict[str, list[np.ndarray]] = {k: [] for k in Chunk.__dataclass_fields__}
    g_off = p_off = 0
    for c in chunks:
        for k in fields:
            v = getattr(c, k)
            if k == "p_group":
                v = v + g_off
            elif k == "s_row":
                v = v + p_off
            fields[k].append(v)
        g_off += c.groups
        p_off += c.p_x.shape[0]
    return Chunk(**{k: np.concatenate(v) for k, v in fields.items()})


def params(signals: Signals) -> dict:
    return {"passage_features": list(PASSAGE_FEATURES), "sentence_features": list(SENTENCE_FEATURES),
            "models": signals.model_ids, "chunk_groups": CHUNK_GROUPS}


def _check_params(folder: Path, want: dict) -> None:
    f = folder / "params.json"
    if f.is_file():
        have = json.loads(f.read_text(encoding="utf-8"))
        if have != want:
            raise ReaderDataError(f"{folder} holds features of another recipe ({f}); use another --features "
                                  "folder or remove it")
    else:
        folder.mkdir(parents=True, exist_ok=True)
        write_json(f, want)


def chunk_paths(folder: Path, split: str, source: str) -> list[Path]:
    """The cached chunks of (split, source) in order; of two files for one chunk (a larger sample
    extended its last chunk) the larger."""
    best: dict[int, tuple[int, Path]] = {}
    for p in (folder / split).glob(f"{source}-[0-9][0-9][0-9][0-9]-*.npz"):
        k, g = (int(x) for x in p.stem[len(source) + 1:].split("-"))
        if g > best.get(k, (-1, p))[0]:
            best[k] = (g, p)
    return [best[k][1] for k in sorted(best)]


def build_features(out: Path, folder: Path, limits: Mapping[str, Mapping[str, int]], signals: Signals,
                   progress: Callable[[str, int, int], None] | None = None) -> dict:
    """Compute (or reuse) the chunks of every (split, source) in ``limits``; returns counts per split."""
    _check_params(folder, params(signals))
    counts: dict[str, dict[str, int]] = {}
    for source in SOURCES:
        plan = [(split, limits[split][source]) for split in SPLITS if limits.get(split, {}).get(source)]
        if not plan:
            continue
        selected = {split: select_groups(out, split, source, n) for split, n in plan}
        todo = []
        for split, groups in selected.items():
            for k in range(0, len(groups), CHUNK_GROUPS):
                part = groups[k:k + CHUNK_GROUPS]
                todo.append((folder / split / f"{source}-{k // CHUNK_GROUPS:04d}-{len(part)}.npz", part))
            c = counts.setdefault(split, {})
            c[source] = len(groups)
        missing = [(p, g) for p, g in todo if not p.is_file()]
        logger.info("%s: %d chunks, %d to compute", source, len(todo), len(missing))
        if missing:
            for lang, docs in corpus_docs(out, source).items():
                name = f"{source}:{lang}"
                if not signals.has_corpus(name):
                    signals.add_corpus(name, ANALYZERS.get(lang, "english"), docs)
        for j, (path, part) in enumerate(missing):
            save_chunk(featurize(part, signals), path)
            if progress is not None:
                progress(source, j + 1, len(missing))
        signals.forget_vectors()
    return counts


def read_features(folder: Path, split: str, limits: Mapping[str, int] | None = None) -> Chunk:
    """Every cached chunk of ``split`` (sources in :data:`SOURCES` order; at most ``limits[source]``
    groups of a source when given)."""
    chunks = []
    for source in SOURCES:
        if limits is not None and not limits.get(source):
            continue
        cap = None if limits is None else limits[source]
        n = 0
        for p in chunk_paths(folder, split, source):
            if cap is not None and n >= cap:
                break
            c = load_chunk(p)
            chunks.append(c)
            n += c.groups
    return concat(chunks)
