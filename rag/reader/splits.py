"""The reader's fixed hash split: train / calib / eval, decided once and shared by every stage.

The rule (``SPLIT_RULE``): ``h = sha256(dataset + "\\x1f" + key)``; its first 8 bytes as a big-endian
integer modulo 10,000 give a bucket; buckets 0-5,999 are ``train`` (60 %), 6,000-6,999 ``calib`` (10 %),
7,000-9,999 ``eval`` (30 %). ``key`` is the question's *split key* (:mod:`rag.reader.sources` says
which per source): the gold paragraph for KorQuAD / SQuAD / SciFact, so that every question about
one paragraph falls on the same side and an eval paragraph is never a training positive; the
query id for MS MARCO, shared by its English and Korean versions, so a question and its translation
fall on the same side. ``dataset`` is the dataset family (``korquad1``, ``squad2``, ``msmarco``,
``nomiracl-ko``, ``scifact``), never a language or a pairing.

The rule depends on nothing but the two strings: not on Python's ``hash`` (salted per process), the
order of the data, the machine or the other questions. The eval split is never trained on; calib is
for fitting calibrations and thresholds.
"""
from __future__ import annotations

import hashlib

SPLITS = ("train", "calib", "eval")
BUCKETS = 10_000
# upper bucket bound (exclusive) of each split, in SPLITS order
BOUNDS = (6_000, 7_000, 10_000)
SPLIT_RULE = ("bucket = int.from_bytes(sha256(f'{dataset}\\x1f{key}'.encode()).digest()[:8], 'big') % 10000; "
              "train < 6000 <= calib < 7000 <= eval")
SPLIT_RULE_VERSION = 1


def bucket(dataset: str, key: str) -> int:
    """The bucket (0..9,999) of ``key`` in ``dataset``."""
    digest = hashlib.sha256(f"{dataset}\x1f{key}".encode("utf-8")).digest()
    return int.from_bytes(digest[:8], "big") % BUCKETS


def split_of(dataset: str, key: str) -> str:
    """``train``, ``calib`` or ``eval`` for the question (or group) ``key`` of ``dataset``."""
    b = bucket(dataset, key)
    for name, bound in zip(SPLITS, BOUNDS):
        if b < bound:
            return name
    raise AssertionError("unreachable: the last bound is BUCKETS")


def fractions() -> dict[str, float]:
    """The expected share of each split."""
    lo = 0
    out = {}
    for name, bound in zip(SPLITS, BOUNDS):
        out[name] = (bound - lo) / BUCKETS
        lo = bound
    return out


# BEIR-layout folders of the reader's sources: how a query's split key is read from the folder.
_BEIR_FAMILIES = {"korquad1": "gold", "msmarco": "qid"}


def beir_query_filter(dataset_dir: str, qrels: dict[str, dict[str, int]], split: str):
    """A ``qid -> bool`` that keeps the queries of a BEIR folder that fall in the reader's ``split``
    (``rag eval-retrieval --reader-split eval``): KorQuAD by its gold paragraph, MS MARCO (en or ko, or a
    cross-language folder under ``msmarco``) by its query id, as the data recipe splits them."""
    from pathlib import Path

    from rag.errors import ConfigError

    if split not in SPLITS:
        raise ConfigError(f"--reader-split must be one of {SPLITS}, got {split!r}")
    parts = [p.lower() for p in Path(dataset_dir).resolve().parts]
    family = next((f for f in _BEIR_FAMILIES if f in parts or any(p.startswith(f) for p in parts[-2:])), None)
    if family is None:
        raise ConfigError(f"{dataset_dir}: the reader's split is known for {sorted(_BEIR_FAMILIES)} folders only")

    def keep(qid: str) -> bool:
        if _BEIR_FAMILIES[family] == "qid":
            return split_of(family, qid) == split
        gold = sorted(d for d, r in qrels.get(qid, {}).items() if r > 0)
        return bool(gold) and split_of(family, gold[0]) == split

    return keep
