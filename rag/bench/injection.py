"""False positives of the injection signals on real corpora: how many documents of each JSONL corpus
(``title`` + ``text``) ``rag.context.injection_signals`` would quarantine, with the first matches.

Corpora: ``--corpora`` (JSONL files; names relative to the data folder or the checkout), by default the
demo corpus (one document is injected on purpose) and SciFact, KorQuAD, MS MARCO en/ko and kolaw-dev
from the data folder. Every named corpus must exist (else the run is skipped with the reason).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from rag.bench.harness import ROOT, data_dir, read_jsonl, repo_path
from rag.bench.measurement import Measurement, Outcome

DEFAULT_CORPORA = ("data/demo/documents.jsonl", "scifact/corpus.jsonl", "korquad1/corpus.jsonl",
                   "msmarco/en/corpus.jsonl", "msmarco/ko/corpus.jsonl", "kolaw-dev/corpus.jsonl")


@dataclass(frozen=True)
class Options:
    corpora: tuple[str, ...] = field(default=DEFAULT_CORPORA, metadata={"help": "JSONL corpora"})
    show: int = field(default=3, metadata={"help": "matches kept per corpus"})


def resolve_corpus(name: str) -> Path:
    """A corpus named by path: absolute as it is, else in the checkout when there, else in the data folder."""
    p = Path(name)
    if p.is_absolute():
        return p
    return repo_path(p) if repo_path(p).is_file() else data_dir() / p


def corpus_key(name: str) -> str:
    """A metric key for a corpus path: ``scifact/corpus.jsonl`` -> ``scifact``, ``data/demo/...`` -> ``demo``,
    ``msmarco/en/corpus.jsonl`` -> ``msmarco_en``; an absolute path is taken relative to the data folder
    or the checkout when it is inside one, else by its folder's name."""
    p = Path(name)
    if p.is_absolute():
        for base in (data_dir(), ROOT):
            if p.is_relative_to(base):
                p = p.relative_to(base)
                break
        else:
            p = Path(p.parent.name) / p.name
    parts = [x for x in p.with_suffix("").parts if x not in ("data", "corpus", "documents")]
    return "_".join(parts) or p.stem


def run(o: Options) -> Outcome:
    from rag.context import injection_signals

    corpora: dict[str, dict] = {}
    missing = []
    for name in o.corpora:
        path = resolve_corpus(name)
        if not path.is_file():
            missing.append(str(path))
            continue
        n, flagged = 0, 0
        shown: list[dict[str, str]] = []
        for d in read_jsonl(path):
            n += 1
            signals = injection_signals(f"{d.get('title', '')} {d.get('text', '')}".strip())
            if signals:
                flagged += 1
                if len(shown) < o.show:
                    shown.append({"id": str(d.get("id", d.get("_id", "?"))), "kind": signals[0].kind,
                                  "excerpt": signals[0].excerpt})
        corpora[corpus_key(name)] = {"path": str(path), "documents": n, "flagged": flagged, "examples": shown}
    table = [f"{'corpus':<20}{'documents':>10}{'flagged':>9}"]
    for key, r in corpora.items():
        table.append(f"{key:<20}{r['documents']:>10}{r['flagged']:>9}")
        table += [f"    {x['id']}: {x['kind']} {x['excerpt']!r}" for x in r["examples"]]
    table += [f"missing: {m}" for m in missing]
    return Outcome({"corpora": corpora, "missing": missing,
                    "flagged_total": sum(r["flagged"] for r in corpora.values())}, "\n".join(table))


def _requires(o: Options) -> list[str]:
    return [f"corpus {resolve_corpus(name)} is missing" for name in o.corpora if not resolve_corpus(name).is_file()]


MEASUREMENT = Measurement("injection", "false positives of the injection signals on real corpora", Options, run,
                          _requires)
