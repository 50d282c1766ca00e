"""Entailment (NLI) pairs for the reader's entailment head: the recipe, read from public files.

The data is not committed; ``rag reader nli build --from DIR`` reads whichever of these files are under ``DIR``
(the paths are the ones in their public repositories, so a checkout of each repository, or the files copied
with the same relative paths, will do) and writes one JSONL file of :class:`NliPair` rows:

======================================================  ==========  ======  ===========================
file (repository)                                       language    split   licence (upstream)
======================================================  ==========  ======  ===========================
``KorNLI/xnli.dev.ko.tsv`` (kakaobrain/KorNLUDatasets)  ko          train   CC BY-SA 4.0 (XNLI: CC BY-NC 4.0)
``KorNLI/xnli.test.ko.tsv`` (kakaobrain/KorNLUDatasets) ko          eval    CC BY-SA 4.0 (XNLI: CC BY-NC 4.0)
``klue_benchmark/klue-nli-v1.1/klue-nli-v1.1_dev.json``  ko          train   CC BY-SA 4.0
(KLUE-benchmark/KLUE)
``snli_1.0/snli_1.0_dev.jsonl`` (a public subset)        en          train   CC BY-SA 4.0
``snli_1.0/snli_1.0_test.jsonl`` (a public subset)       en          eval    CC BY-SA 4.0
======================================================  ==========  ======  ===========================

XNLI-ko is the human translation of XNLI's dev and test sets (the machine-translated KorNLI train files, and
KLUE-NLI's train file, are too large for this workplace's fetch). The published test files are the evaluation
half, never trained on; a dev file's pairs go to ``train`` or ``calib`` by their premise's hash
(:func:`split_of_premise`: 15 % calib), so every hypothesis about one premise falls on one side. Pairs whose
gold label is missing (``-`` in SNLI: no annotator majority) are left out.
"""
from __future__ import annotations

import csv
import hashlib
import json
import logging
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Iterator

from rag._io import atomic_write_text, read_jsonl
from rag.reader.errors import ReaderDataError
from rag.rerank.entailment import LABELS

logger = logging.getLogger(__name__)

CALIB_PERCENT = 15


@dataclass(frozen=True)
class NliPair:
    premise: str
    hypothesis: str
    label: int  # index into LABELS
    lang: str
    source: str
    split: str  # train | calib | eval

    @property
    def label_name(self) -> str:
        return LABELS[self.label]


@dataclass(frozen=True)
class NliSource:
    name: str
    path: str  # relative to the --from folder
    lang: str
    role: str  # "train" (split into train / calib by premise) or "eval"
    fmt: str  # tsv | klue | snli


SOURCES = (
    NliSource("xnli-ko-dev", "KorNLI/xnli.dev.ko.tsv", "ko", "train", "tsv"),
    NliSource("xnli-ko-test", "KorNLI/xnli.test.ko.tsv", "ko", "eval", "tsv"),
    NliSource("klue-nli-dev", "klue_benchmark/klue-nli-v1.1/klue-nli-v1.1_dev.json", "ko", "train", "klue"),
    NliSource("snli-dev", "snli_1.0/snli_1.0_dev.jsonl", "en", "train", "snli"),
    NliSource("snli-test", "snli_1.0/snli_1.0_test.jsonl", "en", "eval", "snli"),
)


def split_of_premise(source: str, premise: str) -> str:
    """``calib`` for 15 % of a training file's premises (sha256 of source family and premise), else ``train``."""
    family = source.rsplit("-", 1)[0]
    h = int.from_bytes(hashlib.sha256(f"{family}\x1f{premise}".encode("utf-8")).digest()[:8], "big") % 100
    return "calib" if h < CALIB_PERCENT else "train"


def _rows(src: NliSource, path: Path) -> Iterator[tuple[str, str, str]]:
    """(premise, hypothesis, gold label name) of one file."""
    if src.fmt == "tsv":
        with path.open(encoding="utf-8", newline="") as fh:
            for row in csv.DictReader(fh, delimiter="\t", quoting=csv.QUOTE_NONE):
                yield row["sentence1"], row["sentence2"], row["gold_label"]
    elif src.fmt == "klue":
        for row in json.loads(path.read_text(encoding="utf-8")):
            yield row["premise"], row["hypothesis"], row["gold_label"]
    else:
        for _, row in read_jsonl(path, ReaderDataError):
            yield row["sentence1"], row["sentence2"], row["gold_label"]


def read_source(src: NliSource, path: Path) -> list[NliPair]:
    out: list[NliPair] = []
    skipped = 0
    try:
        for premise, hypothesis, label in _rows(src, path):
            premise, hypothesis = premise.strip(), hypothesis.strip()
            if label not in LABELS or not premise or not hypothesis:
                skipped += 1
                continue
            split = "eval" if src.role == "eval" else split_of_premise(src.name, premise)
            out.append(NliPair(premise, hypothesis, LABELS.index(label), src.lang, src.name, split))
    except (KeyError, ValueError, TypeError) as exc:
        raise ReaderDataError(f"{path}: not a {src.fmt} NLI file as {src.name} is published ({exc}); "
                              "check the file or remove it from the folder") from None
    if skipped:
        logger.info("%s: %d pairs without a gold label left out", src.name, skipped)
    return out


def build(from_dir: Path, out: Path) -> dict[str, dict[str, int]]:
    """Read every known file under ``from_dir``, write ``out`` (JSONL); returns counts per source and split."""
    pairs: list[NliPair] = []
    for src in SOURCES:
        path = from_dir / src.path
        if not path.is_file():
            logger.warning("%s: not found, %s left out", path, src.name)
            continue
        pairs.extend(read_source(src, path))
    if not pairs:
        raise ReaderDataError(f"{from_dir}: none of the NLI files was found; expected any of "
                              + ", ".join(s.path for s in SOURCES))
    atomic_write_text(out, "".join(json.dumps(asdict(p), ensure_ascii=False) + "\n" for p in pairs))
    counts: dict[str, dict[str, int]] = {}
    for p in pairs:
        counts.setdefault(p.source, {}).setdefault(p.split, 0)
        counts[p.source][p.split] += 1
    return counts


def load(path: Path, split: str | None = None) -> list[NliPair]:
    """The pairs of a built file (in file order), those of ``split`` only when given."""
    if not path.is_file():
        raise ReaderDataError(f"{path}: no NLI data; build it with `rag reader nli build --from DIR`")
    rows = [NliPair(**r) for _, r in read_jsonl(path, ReaderDataError)]
    return [p for p in rows if split is None or p.split == split]


__all__ = ["CALIB_PERCENT", "LABELS", "NliPair", "NliSource", "SOURCES", "build", "load", "read_source",
           "split_of_premise"]
