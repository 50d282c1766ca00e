"""What the quarantine withholds (``security.quarantine: drop_document``, the default) over real
corpora, the hostile sets it must catch and the hard negatives it must leave alone (issue 40, part 3;
formerly ``benchmarks/quarantine/run.py`` and ``eval_sets.py``).

Blocks are chunks as ``--config`` (``configs/default.yaml``: 200 tokens, 40 overlap) chunks them. A
document is read the way ``rag index`` reads it: ``rag.documents.load_file`` for each ``*.md`` under
``--statutes`` (e.g. legalize-kr's ``kr/``: not in git; empty, the default: not measured), title and
text for a passage of a JSONL corpus (``--corpora``, resolved as :mod:`rag.bench.injection` resolves
them). A block that carries a signal is withheld; its whole document is withheld only for a signal
whose kind has document scope (:data:`rag.context.signals.SIGNAL_SCOPE`).

The sets of ``--fixtures`` (``tests/fixtures/quarantine``): ``hostile`` (the development set),
``hostile_heldout`` and ``hostile_heldout2`` (each written before the signals were changed for it:
what was caught when each was first run is :data:`FIRST_LOOK`, copied into the result), each
injection placed into a lawful carrier of ``carriers.jsonl`` as its own paragraph or at the end of
one (or standing alone); and ``benign.jsonl`` (hard negatives). "Scope as designed": a document-scope
kind withholds every block of the document; any other withholds only the blocks carrying the
injection.

``--question-sets``: the passages of the eval sets (SQuAD 2.0, NoMIRACL) screened block by block,
and their questions against ``limits.max_question_chars``.

Every named input must exist, else the run is skipped with the reason (narrow ``--corpora`` or
``--question-sets`` to measure without one).
"""
from __future__ import annotations

import json
import logging
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from types import MappingProxyType
from typing import TYPE_CHECKING, Any, Callable, Iterable, Iterator, Mapping, Sequence

from rag.bench.harness import read_jsonl, repo_path
from rag.bench.injection import DEFAULT_CORPORA, corpus_key, resolve_corpus
from rag.bench.measurement import Measurement, Outcome
from rag.types import Document

if TYPE_CHECKING:
    from rag.config import RagConfig
    from rag.context.signals import InjectionSignal

log = logging.getLogger(__name__)

HOSTILE_SETS = ("hostile", "hostile_heldout", "hostile_heldout2")
# What the signals caught the first time each held-out set was run, before the misses were studied and
# their whole class fixed (so the catch rate measured now is no longer a held-out figure: these are).
FIRST_LOOK: Mapping[str, str] = MappingProxyType({
    "hostile": "42/48 caught (its first 48 documents; 10 more were added later from probes)",
    "hostile_heldout": "21/30 caught", "hostile_heldout2": "18/25 caught, 17 as the intended kind"})
QUESTION_SETS = ("squad2/dev-v2.0-half.json", "nomiracl/ko.test.jsonl", "korquad1/queries.jsonl",
                 "msmarco/en/queries.jsonl", "msmarco/ko/queries.jsonl")
EXAMPLES = 20  # signals kept per corpus
MODE = "drop_document"  # security.quarantine, the default

BlocksOf = Callable[[Document], Sequence[str]]


@dataclass(frozen=True)
class Options:
    corpora: tuple[str, ...] = field(default=DEFAULT_CORPORA, metadata={"help": "JSONL corpora (title + text)"})
    statutes: str = field(default="", metadata={"help": "folder of statute Markdown files (every *.md under it)"})
    statutes_commit: str = field(default="", metadata={"help": "the statute collection's commit, for the record"})
    question_sets: tuple[str, ...] = field(default=QUESTION_SETS,
                                           metadata={"help": "eval sets: SQuAD JSON, NoMIRACL or BEIR queries JSONL"})
    fixtures: str = field(default="tests/fixtures/quarantine", metadata={"help": "hostile, carrier and benign sets"})
    config: str = field(default="configs/default.yaml", metadata={"help": "config whose chunker makes the blocks"})


# --------------------------------------------------------------------------- counting
@dataclass(frozen=True)
class Screened:
    """The signals of each block of one document, and what ``drop_document`` withholds of it."""

    signals: tuple[tuple[InjectionSignal, ...], ...]  # per block

    @property
    def flagged(self) -> int:
        return sum(1 for s in self.signals if s)

    @property
    def kinds(self) -> frozenset[str]:
        return frozenset(x.kind for s in self.signals for x in s)

    @property
    def whole(self) -> bool:
        return _withholds_document(self.kinds)

    @property
    def withheld(self) -> int:
        return len(self.signals) if self.whole else self.flagged


def _withholds_document(kinds: Iterable[str]) -> bool:
    """Whether a signal of one of ``kinds`` withholds its whole document under ``drop_document``: the
    quarantine's own rule (:func:`rag.context.sanitize.withheld_scope`)."""
    from rag.context.sanitize import withheld_scope

    return any(withheld_scope(k, MODE) == "document" for k in kinds)


def screen(blocks: Sequence[str]) -> Screened:
    from rag.context import injection_signals

    return Screened(tuple(injection_signals(b) for b in blocks))


@dataclass(frozen=True)
class Example:
    document: str
    kind: str
    excerpt: str


@dataclass(frozen=True)
class CorpusCount:
    documents: int
    blocks: int
    blocks_flagged: int
    blocks_withheld: int
    documents_withheld_whole: tuple[str, ...]
    documents_with_blocks_withheld: tuple[str, ...]
    examples: tuple[Example, ...]


def count_corpus(docs: Iterable[tuple[str, Sequence[str]]], examples: int = EXAMPLES) -> CorpusCount:
    """Documents, blocks, blocks flagged and withheld, documents withheld whole or in part, over
    ``(document id, block texts)``."""
    n_docs = n_blocks = flagged = withheld = 0
    whole: list[str] = []
    partial: list[str] = []
    shown: list[Example] = []
    for doc_id, blocks in docs:
        n_docs += 1
        n_blocks += len(blocks)
        s = screen(blocks)
        if not s.flagged:
            continue
        partial.append(doc_id)
        flagged += s.flagged
        withheld += s.withheld
        if s.whole:
            whole.append(doc_id)
        shown += [Example(doc_id, x.kind, x.excerpt) for b in s.signals for x in b][:examples - len(shown)]
    return CorpusCount(n_docs, n_blocks, flagged, withheld, tuple(whole), tuple(partial), tuple(shown))


def compose(row: Mapping[str, Any], carriers: Mapping[str, Mapping[str, Any]]) -> str:
    """A hostile row's document: the injection alone, or placed into its carrier's middle paragraph
    (``paragraph``: as a paragraph of its own; ``inline``: at the end of that paragraph)."""
    if not row.get("carrier"):
        return str(row["text"])
    paras = list(carriers[row["carrier"]]["paragraphs"])
    mid = len(paras) // 2
    if row["placement"] == "inline":
        paras[mid] = paras[mid] + " " + row["text"]
    else:
        paras.insert(mid, row["text"])
    return "\n\n".join(paras)


def carries(block: str, injection: str) -> bool:
    """Whether ``block`` holds a piece (20 characters) of the injection (chunks overlap)."""
    core = " ".join(injection.split())
    flat = " ".join(block.split())
    return any(core[i:i + 20] in flat for i in range(0, max(1, len(core) - 19), 10))


@dataclass(frozen=True)
class KindCount:
    documents: int
    caught: int


@dataclass(frozen=True)
class HostileCount:
    documents: int
    caught: int
    kind_agrees: int
    scope_as_designed: int
    by_kind: Mapping[str, KindCount]  # by the intended (first) kind, sorted
    missed: tuple[Mapping[str, Any], ...]
    kind_differs: tuple[Mapping[str, Any], ...]
    scope_differs: tuple[Mapping[str, Any], ...]
    first_look: str = ""


def _scope_differs(row: Mapping[str, Any], blocks: Sequence[str], s: Screened) -> dict[str, Any] | None:
    """None when the row's blocks are withheld as its intended kinds' scope says, else what happened."""
    carrying = sum(1 for b in blocks if carries(b, row["text"]))
    if _withholds_document(row["kinds"]):
        ok = s.withheld == len(blocks)
    else:
        ok = not s.whole and s.withheld <= max(carrying, 1)
    return None if ok else {"id": row["id"], "blocks": len(blocks), "withheld": s.withheld, "carrying": carrying,
                            "found": sorted(s.kinds)}


def count_hostile(rows: Sequence[Mapping[str, Any]], carriers: Mapping[str, Mapping[str, Any]],
                  blocks_of: BlocksOf, first_look: str = "") -> HostileCount:
    """Caught, caught as an intended kind and withheld with the intended scope, over a hostile set."""
    by_kind: dict[str, list[int]] = {}
    missed: list[dict[str, Any]] = []
    differs: list[dict[str, Any]] = []
    scope: list[dict[str, Any]] = []
    for row in rows:
        blocks = blocks_of(Document(id=row["id"], text=compose(row, carriers)))
        s = screen(blocks)
        k = by_kind.setdefault(row["kinds"][0], [0, 0])
        k[0] += 1
        if not s.kinds:
            missed.append({"id": row["id"], "text": row["text"]})
            continue
        k[1] += 1
        if not s.kinds & set(row["kinds"]):
            differs.append({"id": row["id"], "expected": list(row["kinds"]), "found": sorted(s.kinds)})
        if (d := _scope_differs(row, blocks, s)) is not None:
            scope.append(d)
    caught = len(rows) - len(missed)
    return HostileCount(len(rows), caught, caught - len(differs), caught - len(scope),
                        {k: KindCount(*v) for k, v in sorted(by_kind.items())}, tuple(missed), tuple(differs),
                        tuple(scope), first_look)


def count_benign(rows: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """The hard negatives any signal flags (each should be lawful text)."""
    from rag.context import injection_signals

    flagged = [{"id": r["id"], "signals": [[x.kind, x.excerpt] for x in sigs]}
               for r in rows if (sigs := injection_signals(r["text"]))]
    return {"documents": len(rows), "flagged": flagged}


# --------------------------------------------------------------------------- reading
def _chunker(config: str) -> tuple[RagConfig, BlocksOf]:
    from rag.config import load_config
    from rag.index.chunking import Chunker

    cfg = load_config(repo_path(config))
    chunker = Chunker(cfg.chunking)
    return cfg, lambda doc: [c.text for c in chunker.chunk(doc)]


def passage_document(d: Mapping[str, Any]) -> Document:
    """A JSONL passage as ``rag index`` reads it: title and text, its ``id`` (or ``_id``)."""
    text = "\n\n".join(x for x in (str(d.get("title") or ""), str(d.get("text") or "")) if x)
    return Document(id=str(d.get("id", d.get("_id"))), text=text, version=str(d.get("version", "1")))


def jsonl_blocks(path: Path, blocks_of: BlocksOf) -> Iterator[tuple[str, Sequence[str]]]:
    for d in read_jsonl(path):
        doc = passage_document(d)
        yield doc.id, blocks_of(doc)


def statute_blocks(root: Path, cfg: RagConfig, blocks_of: BlocksOf) -> Iterator[tuple[str, Sequence[str]]]:
    """Every ``*.md`` under ``root`` read as ``rag index`` reads it, its id its path without ``.md``."""
    from rag.documents import load_file

    for path in sorted(root.rglob("*.md")):
        rel = path.relative_to(root).with_suffix("").as_posix()
        yield rel, blocks_of(replace(load_file(path, cfg.corpus).document, id=rel))


def eval_set(path: Path) -> Iterator[tuple[Document | None, tuple[str, ...]]]:
    """``(passage or None, its questions)`` of a SQuAD JSON file, a NoMIRACL JSONL file (``question`` and
    ``passages``) or a BEIR ``queries.jsonl`` (``text``: questions only)."""
    if path.suffix == ".json":
        for a in json.loads(path.read_text(encoding="utf-8"))["data"]:
            for i, p in enumerate(a["paragraphs"]):
                yield (Document(id=f"{a['title']}-{i}", text=p["context"]),
                       tuple(q["question"] for q in p["qas"]))
        return
    for o in read_jsonl(path):
        if "passages" not in o:
            yield None, (str(o["text"]),)
            continue
        for p in o["passages"]:
            yield passage_document({"id": p["docid"], **{k: p.get(k) for k in ("title", "text")}}), (o["question"],)


def count_eval_set(path: Path, blocks_of: BlocksOf, limit: int) -> dict[str, int]:
    """Passages (each once), blocks and blocks with a signal; the longest question and those past ``limit``."""
    seen: set[str] = set()
    blocks = flagged = longest = over = 0
    for doc, questions in eval_set(path):
        for q in questions:
            longest = max(longest, len(q.strip()))
            over += len(q.strip()) > limit
        if doc is None or doc.id in seen:
            continue
        seen.add(doc.id)
        s = screen(blocks_of(doc))
        blocks += len(s.signals)
        flagged += s.flagged
    return {"passages": len(seen), "blocks": blocks, "blocks_flagged": flagged, "longest_question": longest,
            "questions_over_limit": over}


def _rows(path: Path) -> list[dict[str, Any]]:
    return list(read_jsonl(path))


# --------------------------------------------------------------------------- the measurement
def run(o: Options) -> Outcome:
    cfg, blocks_of = _chunker(o.config)
    corpora: dict[str, CorpusCount] = {}
    if o.statutes:
        log.info("screening the statutes under %s", o.statutes)
        corpora["statutes"] = count_corpus(statute_blocks(Path(o.statutes), cfg, blocks_of))
    for name in o.corpora:
        log.info("screening %s", name)
        corpora[corpus_key(name)] = count_corpus(jsonl_blocks(resolve_corpus(name), blocks_of))
    fixtures = repo_path(o.fixtures)
    carriers = {c["id"]: c for c in _rows(fixtures / "carriers.jsonl")}
    sets = {name: count_hostile(_rows(fixtures / f"{name}.jsonl"), carriers, blocks_of, FIRST_LOOK.get(name, ""))
            for name in HOSTILE_SETS}
    benign = count_benign(_rows(fixtures / "benign.jsonl"))
    limit = cfg.limits.max_question_chars
    evals = {corpus_key(name): count_eval_set(resolve_corpus(name), blocks_of, limit) for name in o.question_sets}
    metrics = {"blocks": f"chunks of {o.config} ({cfg.chunking.max_tokens} tokens, "
                         f"{cfg.chunking.overlap_tokens} overlap)", "mode": MODE,
               "corpora": {k: asdict(v) for k, v in corpora.items()},
               "hostile_sets": {k: asdict(v) for k, v in sets.items()}, "benign": benign,
               "max_question_chars": limit, "eval_sets": evals}
    return Outcome(metrics, render(metrics), cfg.hash)


def render(m: Mapping[str, Any]) -> str:
    lines = [f"{'corpus':<22}{'docs':>8}{'blocks':>9}{'flagged':>9}{'withheld':>9}{'whole':>7}{'docs':>6}"]
    for name, c in m["corpora"].items():
        lines.append(f"{name:<22}{c['documents']:>8}{c['blocks']:>9}{c['blocks_flagged']:>9}{c['blocks_withheld']:>9}"
                     f"{len(c['documents_withheld_whole']):>7}{len(c['documents_with_blocks_withheld']):>6}")
    lines += ["", f"{'hostile set':<22}{'docs':>6}{'caught':>8}{'kind ok':>9}{'scope ok':>10}"]
    for name, h in m["hostile_sets"].items():
        lines.append(f"{name:<22}{h['documents']:>6}{h['caught']:>8}{h['kind_agrees']:>9}{h['scope_as_designed']:>10}")
    n = m["benign"]
    lines += [f"benign (hard negatives): {n['documents']} documents, flagged {len(n['flagged'])}", "",
              f"{'eval set':<22}{'passages':>9}{'blocks':>8}{'flagged':>9}{'longest q':>10}"
              f"{'> ' + str(m['max_question_chars']):>8}"]
    for name, e in m["eval_sets"].items():
        lines.append(f"{name:<22}{e['passages']:>9}{e['blocks']:>8}{e['blocks_flagged']:>9}"
                     f"{e['longest_question']:>10}{e['questions_over_limit']:>8}")
    return "\n".join(lines)


def _requires(o: Options) -> list[str]:
    missing = [f"corpus {resolve_corpus(n)} is missing" for n in o.corpora if not resolve_corpus(n).is_file()]
    missing += [f"eval set {resolve_corpus(n)} is missing" for n in o.question_sets if not resolve_corpus(n).is_file()]
    if o.statutes and not Path(o.statutes).is_dir():
        missing.append(f"statute folder {o.statutes} is missing")
    fixtures = repo_path(o.fixtures)
    names = ("carriers", "benign", *HOSTILE_SETS)
    missing += [f"fixture {fixtures / n}.jsonl is missing" for n in names if not (fixtures / f"{n}.jsonl").is_file()]
    return missing


MEASUREMENT = Measurement("quarantine", "what the injection quarantine withholds on real corpora, hostile sets "
                          "and hard negatives", Options, run, _requires)
