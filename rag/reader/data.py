"""The reader's data recipe: labelled (question, passage, sentence) examples from five public datasets,
split once by hash, with BM25-mined hard negatives, written as resumable gzip JSONL shards with a manifest.

``build(Recipe(...), Locations(shared, cache), out)`` (the CLI: ``rag reader data build``):

1. read each source (:mod:`rag.reader.sources`), checking every input file's size and hashes
   (:mod:`rag.reader.inputs`); a missing optional input (KorQuAD's train file) is recorded, not fatal;
2. give every question its split (:func:`rag.reader.splits.split_of` of its source and split key);
   with ``limit``, keep the ``limit`` questions of each source that come first in a hash order;
3. plan shards: per task and split, questions in id order, ``shard_questions`` to a shard,
   ``OUT/<split>/<task>-<nnnn>.jsonl.gz``;
4. build each shard not yet finished (its ``.stats.json`` absent): mine ``negatives`` BM25 passages per
   question from the task's corpus (:mod:`rag.reader.mining`), emit one :class:`ReaderExample` per
   (question language, passage), write the shard, then its stats;
5. write ``manifest.json``: parameters, split rule, inputs (path, size, sha256, git blob, licence,
   provenance), missing inputs, shards (sha256, rows), counts per source / split / question language /
   passage language / label at the question, passage and sentence level, notes, the command, the date
   and the time taken.

``OUT/recipe.json`` fingerprints the plan (parameters, input hashes, shard list): a folder built by
another recipe is refused (:class:`RecipeMismatchError`) unless ``force``.
"""
from __future__ import annotations

import hashlib
import json
import logging
import time
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import asdict, dataclass, field
from datetime import datetime, timezone
from pathlib import Path

from rag._io import write_json
from rag.reader.errors import ReaderDataError, RecipeMismatchError
from rag.reader.examples import ReaderExample, sentences_holding
from rag.reader.inputs import Locations
from rag.reader.mining import Mined, Miner, pick_negatives
from rag.reader.shards import read_shard, read_stats, write_shard, write_stats
from rag.reader.sources import SOURCES, Loaded, Question, Task
from rag.reader.splits import SPLIT_RULE, SPLIT_RULE_VERSION, SPLITS, fractions, split_of
from rag.text.sentences import split_sentences

logger = logging.getLogger(__name__)

RECIPE_VERSION = 1
Progress = Callable[[str, int, int], None]


@dataclass(frozen=True)
class Recipe:
    sources: tuple[str, ...] = tuple(SOURCES)
    negatives: int = 7            # mined hard negative passages per question
    depth: int = 50               # BM25 candidates they are picked from
    shard_questions: int = 2000   # questions per shard
    limit: int | None = None      # at most this many questions per source (a hash-ordered sample)

    def __post_init__(self) -> None:
        unknown = [s for s in self.sources if s not in SOURCES]
        if unknown or not self.sources:
            raise ReaderDataError(f"unknown source(s) {unknown or '(none given)'}; known: {', '.join(SOURCES)}")
        if self.negatives < 0 or self.depth < 1 or self.shard_questions < 1 or (self.limit is not None and self.limit < 1):
            raise ReaderDataError(f"bad recipe parameters: {self}")


@dataclass(frozen=True)
class Shard:
    path: str                # relative to the output folder
    task: str
    split: str
    qids: tuple[str, ...] = field(repr=False)


@dataclass(frozen=True)
class BuildReport:
    out: Path
    manifest: dict
    built: int               # shards built by this run
    reused: int              # shards already finished
    seconds: float           # this run


def sample_order(source: str, qid: str) -> str:
    """The order ``limit`` keeps questions in: a hash, so a sample spans every split and article."""
    return hashlib.sha256(f"{source}\x1fsample\x1f{qid}".encode("utf-8")).hexdigest()


def load_sources(recipe: Recipe, loc: Locations) -> list[Loaded]:
    loaded = []
    for name in recipe.sources:
        got = SOURCES[name](loc)
        if recipe.limit is not None:
            qids = sorted({q.qid for t in got.tasks for q in t.questions}, key=lambda q: sample_order(name, q))
            keep = set(qids[:recipe.limit])
            got = Loaded(tuple(Task(t.name, t.source, t.lang, t.analyzer, t.filter_answers, t.passages,
                                    tuple(q for q in t.questions if q.qid in keep)) for t in got.tasks),
                         got.inputs, got.missing, got.notes)
        loaded.append(got)
        for f in got.missing:
            logger.warning("%s: %s is absent (%s); building without it", name, f.path, f.origin)
    return loaded


def plan_shards(tasks: list[Task], shard_questions: int) -> list[Shard]:
    shards = []
    for t in tasks:
        by_split: dict[str, list[str]] = {s: [] for s in SPLITS}
        for q in sorted(t.questions, key=lambda q: q.qid):
            by_split[split_of(t.source, q.split_key)].append(q.qid)
        for split, qids in by_split.items():
            for i in range(0, len(qids), shard_questions):
                shards.append(Shard(f"{split}/{t.name}-{i // shard_questions:04d}.jsonl.gz", t.name, split,
                                    tuple(qids[i:i + shard_questions])))
    return shards


def eval_passages(t: Task) -> frozenset[str]:
    """Every passage an eval question of ``t`` names (gold, given or unknown)."""
    out: set[str] = set()
    for q in t.questions:
        if split_of(t.source, q.split_key) == "eval":
            out.update(g.pid for g in q.gold)
            out.update(q.given_negative)
            out.update(q.unknown)
    return frozenset(out)


class _Sentences:
    """``(start, end)`` sentence offsets of a task's passages, each split once."""

    def __init__(self, t: Task) -> None:
        self.t = t
        self.cache: dict[str, tuple[tuple[int, int], ...]] = {}

    def __call__(self, pid: str) -> tuple[tuple[int, int], ...]:
        if pid not in self.cache:
            self.cache[pid] = tuple((s.start, s.end) for s in split_sentences(self.t.passages[pid].text))
        return self.cache[pid]


def question_examples(t: Task, q: Question, split: str, mined: list[Mined],
                      sentences: Callable[[str], tuple[tuple[int, int], ...]]) -> list[ReaderExample]:
    """One example per (language the question is asked in, passage): gold, given, unknown, then mined."""
    plan: list[tuple[str, str, str, tuple[int, ...] | None, Mined | None]] = []  # pid, origin, label, answer sents
    for g in q.gold:
        sents = sentences(g.pid)
        held = None if g.spans is None else sentences_holding(sents, g.spans)
        plan.append((g.pid, "gold", "answers", held if held else None, None))
    plan += [(p, "given", "no_answer", None, None) for p in q.given_negative]
    plan += [(p, "given", "unknown", None, None) for p in q.unknown]
    plan += [(m.pid, "bm25", "no_answer", None, m) for m in mined]
    out = []
    for lang, text in q.asks:
        for pid, origin, label, held, m in plan:
            p = t.passages[pid]
            out.append(ReaderExample(
                example_id=f"{t.source}:{lang}-{t.lang}:{q.qid}:{pid}", source=t.source, source_split=q.source_split,
                split=split, split_key=q.split_key, question_id=q.qid, question_lang=lang, passage_lang=t.lang,
                question=text, answers=q.answers, answerable=q.answerable, passage_id=pid, passage_title=p.title,
                passage=p.text, origin=origin, passage_label=label, sentences=sentences(pid), answer_sentences=held,
                stance=q.stance, rank=m.rank if m else None, score=m.score if m else None))
    return out


def count_examples(t: Task, examples: list[ReaderExample], questions: list[tuple[Question, str]]) -> Counter:
    """Counts keyed ``level|source|split|question_lang|passage_lang|label`` (levels: question, passage,
    origin, sentence); a question asked in two languages counts once in each."""
    c: Counter = Counter()
    for q, split in questions:
        for lang, _ in q.asks:
            c[f"question|{t.source}|{split}|{lang}|{t.lang}|{'answerable' if q.answerable else 'unanswerable'}"] += 1
    for ex in examples:
        key = f"{ex.source}|{ex.split}|{ex.question_lang}|{ex.passage_lang}"
        c[f"passage|{key}|{ex.passage_label}"] += 1
        c[f"origin|{key}|{ex.origin}"] += 1
        for i in range(len(ex.sentences)):
            c[f"sentence|{key}|{ex.sentence_label(i)}"] += 1
    return c


def build_shard(t: Task, shard: Shard, miner: Miner | None, banned: frozenset[str], recipe: Recipe,
                sentences: Callable[[str], tuple[tuple[int, int], ...]], out: Path, recipe_id: str,
                progress: Callable[[int], None] | None = None) -> dict:
    t0 = time.perf_counter()
    by_id = {q.qid: q for q in t.questions}
    examples: list[ReaderExample] = []
    questions: list[tuple[Question, str]] = []
    short = 0
    for i, qid in enumerate(shard.qids, 1):
        q = by_id[qid]
        mined: list[Mined] = []
        if miner is not None and recipe.negatives:
            cands = miner.search(q.mine_text, recipe.depth)
            mined = pick_negatives(cands, q, t.passages, recipe.negatives,
                                   banned=banned if shard.split != "eval" else frozenset(),
                                   filter_answers=t.filter_answers)
            short += len(mined) < recipe.negatives
        examples += question_examples(t, q, shard.split, mined, sentences)
        questions.append((q, shard.split))
        if progress and (i % 200 == 0 or i == len(shard.qids)):
            progress(i)
    for ex in examples:
        ex.check()
    n, sha = write_shard(out / shard.path, (ex.to_row() for ex in examples))
    counts = count_examples(t, examples, questions)
    stats = {"path": shard.path, "recipe": recipe_id, "task": t.name, "split": shard.split,
             "questions": len(shard.qids), "rows": n,
             "sha256": sha, "short_of_negatives": short, "seconds": round(time.perf_counter() - t0, 2),
             "counts": dict(sorted(counts.items()))}
    write_stats(out / shard.path, stats)
    return stats


def fingerprint(recipe: Recipe, loaded: list[Loaded], shards: list[Shard]) -> dict:
    plan = hashlib.sha256("\n".join(f"{s.path}\t{','.join(s.qids)}" for s in shards).encode("utf-8")).hexdigest()
    fp = {"recipe_version": RECIPE_VERSION, "split_rule_version": SPLIT_RULE_VERSION, "params": asdict(recipe),
          "inputs": sorted(f"{r.name}={r.sha256}" for g in loaded for r in g.inputs), "plan_sha256": plan}
    return json.loads(json.dumps(fp))  # as it reads back from recipe.json (tuples become lists)


def _check_folder(out: Path, fp: dict, force: bool) -> None:
    p = out / "recipe.json"
    if p.is_file() and not force:
        try:
            old = json.loads(p.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            old = None
        if old != fp:
            raise RecipeMismatchError(f"{out} holds shards of another recipe (see {p}); use another --out, or --force "
                                      f"to rebuild every shard of this one there")
    write_json(p, fp)


def build(recipe: Recipe, loc: Locations, out: Path, *, force: bool = False, command: list[str] | None = None,
          progress: Progress | None = None) -> BuildReport:
    t_start = time.perf_counter()
    out = Path(out)
    loaded = load_sources(recipe, loc)
    tasks = [t for g in loaded for t in g.tasks]
    shards = plan_shards(tasks, recipe.shard_questions)
    out.mkdir(parents=True, exist_ok=True)
    fp = fingerprint(recipe, loaded, shards)
    recipe_id = hashlib.sha256(json.dumps(fp, sort_keys=True).encode("utf-8")).hexdigest()
    _check_folder(out, fp, force)
    built = reused = 0
    for t in tasks:
        mine = [s for s in shards if s.task == t.name]
        todo = [s for s in mine if force or not _finished(out / s.path, recipe_id)]
        total = sum(len(s.qids) for s in mine)
        done = total - sum(len(s.qids) for s in todo)
        reused += len(mine) - len(todo)
        if progress:
            progress(t.name, done, total)
        if not todo:
            continue
        miner = Miner(list(t.passages.values()), t.analyzer) if recipe.negatives else None
        banned, sentences = eval_passages(t), _Sentences(t)
        for s in todo:
            base = done
            stats = build_shard(t, s, miner, banned, recipe, sentences, out, recipe_id,
                                (lambda i, b=base: progress(t.name, b + i, total)) if progress else None)
            done += len(s.qids)
            built += 1
            logger.info("%s: %d questions, %d rows in %.1f s", s.path, stats["questions"], stats["rows"], stats["seconds"])
    manifest = write_manifest(out, recipe, loaded, shards, command, time.perf_counter() - t_start, recipe_id)
    return BuildReport(out, manifest, built, reused, time.perf_counter() - t_start)


def shared_passages(tasks: list[Task]) -> dict[str, dict[str, int]]:
    """Per task: distinct passages that a train or calib question names (as gold, or as a given
    passage) and an eval question names too. The eval *question* is never trained on; this counts its
    passage *text* seen on both sides. Zero for paragraph-keyed sources (KorQuAD, SQuAD); mined
    negatives never come from eval passages."""
    out = {}
    for t in tasks:
        ev = eval_passages(t)
        gold: set[str] = set()
        given: set[str] = set()
        for q in t.questions:
            if split_of(t.source, q.split_key) != "eval":
                gold.update(g.pid for g in q.gold)
                given.update(q.given_negative)
                given.update(q.unknown)
        out[t.name] = {"gold": len(gold & ev), "given": len(given & ev)}
    return out


def _finished(shard: Path, recipe_id: str) -> bool:
    """A shard is finished when its stats exist and name this recipe (a shard left by another recipe, or
    by a forced rebuild that was interrupted, is built again)."""
    st = read_stats(shard)
    return st is not None and st.get("recipe") == recipe_id


def write_manifest(out: Path, recipe: Recipe, loaded: list[Loaded], shards: list[Shard], command: list[str] | None,
                   seconds: float, recipe_id: str) -> dict:
    counts: Counter = Counter()
    shard_rows = []
    build_seconds = 0.0
    short = 0
    for s in shards:
        st = read_stats(out / s.path)
        if st is None or st.get("recipe") != recipe_id:
            raise ReaderDataError(f"{out / s.path}: shard not finished; run the build again")
        counts.update(st["counts"])
        build_seconds += st["seconds"]
        short += st["short_of_negatives"]
        shard_rows.append({"path": s.path, "task": s.task, "split": s.split, "questions": st["questions"],
                           "rows": st["rows"], "sha256": st["sha256"]})
    table = []
    for key, n in sorted(counts.items()):
        level, source, split, ql, pl, label = key.split("|")
        table.append({"level": level, "source": source, "split": split, "question_lang": ql, "passage_lang": pl,
                      "label": label, "count": n})
    tasks = [t for g in loaded for t in g.tasks]
    notes: dict[str, int] = {"questions_short_of_negatives": short}
    for g in loaded:
        for k, v in sorted(g.notes.items()):
            notes[f"{g.tasks[0].source}:{k}"] = v
    manifest = {
        "recipe": "rag.reader.data", "recipe_version": RECIPE_VERSION, "recipe_sha256": recipe_id,
        "created": datetime.now(timezone.utc).isoformat(timespec="seconds"),
        "command": command, "params": asdict(recipe),
        "split_rule": SPLIT_RULE, "split_fractions": fractions(),
        "split_keys": {"korquad1": "gold paragraph (title#index)", "squad2": "gold paragraph (title#index)",
                       "msmarco": "query id (the en and ko versions share it)", "nomiracl-ko": "question id",
                       "scifact": "first gold (or cited) abstract id"},
        "inputs": [asdict(r) for g in loaded for r in g.inputs],
        "missing_inputs": [{"name": f.name, "expected_at": f.path, "root": f.root, "origin": f.origin,
                            "repo": f.repo, "repo_path": f.repo_path, "git_blob": f.git_blob}
                           for g in loaded for f in g.missing],
        "tasks": [{"name": t.name, "source": t.source, "passage_lang": t.lang, "passages": len(t.passages),
                   "questions": len(t.questions), "mining_analyzer": t.analyzer} for t in tasks],
        "passages_named_by_train_and_eval_questions": shared_passages(tasks),
        "shards": shard_rows, "counts": table, "notes": notes,
        "seconds": {"building_shards": round(build_seconds, 1), "this_run": round(seconds, 1)},
    }
    write_json(out / "manifest.json", manifest)
    return manifest


def read_manifest(out: Path) -> dict:
    p = Path(out) / "manifest.json"
    try:
        return json.loads(p.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise ReaderDataError(f"{p}: no readable manifest ({exc}); build the data with `rag reader data build`") from None


def iter_examples(out: Path, split: str | None = None, sources: tuple[str, ...] | None = None) -> Iterator[ReaderExample]:
    """The examples of a built folder (in manifest order), of one split and some sources if given."""
    if split is not None and split not in SPLITS:
        raise ReaderDataError(f"split must be one of {SPLITS}, got {split!r}")
    for s in read_manifest(out)["shards"]:
        if split is not None and s["split"] != split:
            continue
        for row in read_shard(Path(out) / s["path"]):
            if sources is None or row["source"] in sources:
                yield ReaderExample.from_row(row)
