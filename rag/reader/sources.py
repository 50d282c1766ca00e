"""Readers of the reader's sources, each into :class:`Task` objects (a corpus and its questions).

| source | questions | passages | labels | split key |
|---|---|---|---|---|
| ``korquad1`` | KorQuAD 1.0 train (when present) and dev, ko | their paragraphs | answer spans | gold paragraph |
| ``squad2`` | SQuAD 2.0 dev half, en (3,168 unanswerable) | its paragraphs | spans; an unanswerable question's own paragraph is a judged negative | gold paragraph |
| ``msmarco`` | MS MARCO dev-small, en and its ko translation, each asked over both corpora | en and ko corpora | judged positives (no spans) | query id (shared by en and ko) |
| ``nomiracl-ko`` | NoMIRACL ko test, 250 answerable + 250 not | its 10 passages a question | all 10 judged non-relevant, or "one of them answers" | question id |
| ``scifact`` | SciFact train claims (qrels) and dev claims with rationales, en | abstracts | rationale sentences (dev); judged documents (train); NEI cited documents as negatives | first gold abstract |

A :class:`Question` may be asked in several languages over one corpus (``asks``); ``mine_text`` is its
text in the corpus's language, which BM25 mining uses. MS MARCO gives two tasks (the en and the ko
corpus), each asked in both languages: the cross-lingual pairs come from the translation for free and
share the query's split.
"""
from __future__ import annotations

import csv
import json
import logging
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from rag._io import read_jsonl
from rag.lang import profile
from rag.reader.errors import ReaderDataError
from rag.reader.inputs import KORQUAD_DEV, KORQUAD_TRAIN, InputFile, InputRecord, Locations, shared, verify

logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class Passage:
    pid: str
    title: str
    text: str


@dataclass(frozen=True)
class Gold:
    """A passage that answers; ``spans``: the answer's character spans in it, None when no span is known."""

    pid: str
    spans: tuple[tuple[int, int], ...] | None


@dataclass(frozen=True)
class Question:
    qid: str
    source_split: str
    split_key: str
    asks: tuple[tuple[str, str], ...]   # (language, text) it is asked in over this task's corpus
    mine_text: str                      # the text in the corpus language (BM25 mining)
    answers: tuple[str, ...]
    answerable: bool
    gold: tuple[Gold, ...] = ()
    given_negative: tuple[str, ...] = ()   # passages the dataset judged not to answer
    unknown: tuple[str, ...] = ()          # passages that may answer (which one is not said)
    stance: str | None = None


@dataclass(frozen=True)
class Task:
    """One corpus and the questions asked over it: the unit that shards are planned and mined in."""

    name: str          # shard name prefix, e.g. korquad1, msmarco-ko
    source: str        # dataset family: the split hashes it
    lang: str          # passage language
    analyzer: str      # BM25 analyzer for mining
    filter_answers: bool   # drop mined passages that contain a gold answer string
    passages: dict[str, Passage] = field(compare=False, repr=False)
    questions: tuple[Question, ...] = field(compare=False, repr=False)


@dataclass(frozen=True)
class Loaded:
    tasks: tuple[Task, ...]
    inputs: tuple[InputRecord, ...]
    missing: tuple[InputFile, ...] = ()
    notes: dict[str, int] = field(default_factory=dict)


def _need(loc: Locations, f: InputFile) -> Path:
    p = loc.resolve(f)
    if not p.is_file():
        raise ReaderDataError(f"{f.name}: input file not found at {p} ({f.origin or f.licence})")
    return p


def _json(path: Path) -> object:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise ReaderDataError(f"{path}: cannot read JSON ({exc})") from None


def _jsonl(path: Path) -> list[dict]:
    return [o for _, o in read_jsonl(path, ReaderDataError)]


def _qrels(path: Path) -> dict[str, list[str]]:
    out: dict[str, list[str]] = {}
    with open(path, encoding="utf-8", newline="") as fh:
        rows = list(csv.reader(fh, delimiter="\t"))
    for r in rows:
        if len(r) < 3 or r[0] == "query-id":  # the header, or a short line
            continue
        try:
            score = float(r[2])
        except ValueError:
            raise ReaderDataError(f"{path}: a qrels line whose score is not a number: {r!r}") from None
        if score > 0:
            out.setdefault(r[0], []).append(r[1])
    return out


def locate(text: str, answer: str, start: int | None) -> tuple[int, int] | None:
    """The span of ``answer`` in ``text``: at ``start`` when it is there, else the occurrence nearest to
    ``start`` (the first when ``start`` is None); None when ``answer`` is not in ``text``."""
    if not answer:
        return None
    if start is not None and text[start:start + len(answer)] == answer:
        return start, start + len(answer)
    hits, i = [], text.find(answer)
    while i >= 0:
        hits.append(i)
        i = text.find(answer, i + 1)
    if not hits:
        return None
    best = min(hits, key=lambda h: (abs(h - (start or 0)), h))
    return best, best + len(answer)


def squad_questions(data: dict, source: str, source_split: str, lang: str, passages: dict[str, Passage],
                    notes: dict[str, int]) -> list[Question]:
    """Questions of a SQuAD-format file (KorQuAD 1.0, SQuAD 2.0); paragraphs are ``title#index``."""
    out = []
    try:
        articles = data["data"]
    except (KeyError, TypeError):
        raise ReaderDataError(f"{source}/{source_split}: not SQuAD-format JSON (no 'data' list)") from None
    for art in articles:
        title = str(art.get("title", ""))
        for pi, para in enumerate(art.get("paragraphs", [])):
            pid = f"{title}#{pi}"
            ctx = para["context"]
            passages[pid] = Passage(pid, title.replace("_", " "), ctx)
            for qa in para.get("qas", []):
                impossible = bool(qa.get("is_impossible", False))
                answers = tuple(dict.fromkeys(a["text"] for a in qa.get("answers", []) if a.get("text")))
                if impossible:
                    out.append(Question(str(qa["id"]), source_split, pid, ((lang, qa["question"]),), qa["question"],
                                        (), False, given_negative=(pid,)))
                    continue
                spans = []
                for a in qa.get("answers", []):
                    sp = locate(ctx, a.get("text", ""), a.get("answer_start"))
                    if sp is None:
                        notes["answer_not_in_passage"] = notes.get("answer_not_in_passage", 0) + 1
                    elif sp not in spans:
                        spans.append(sp)
                gold = Gold(pid, tuple(sorted(spans)) if spans else None)
                out.append(Question(str(qa["id"]), source_split, pid, ((lang, qa["question"]),), qa["question"],
                                    answers, True, gold=(gold,)))
    return out


# -- KorQuAD 1.0 ----------------------------------------------------------------------------------------
KORQUAD_SHARED = (shared("korquad1/shared-corpus", "korquad1/corpus.jsonl", "CC BY-ND 2.0 KR", optional=True),
                  shared("korquad1/shared-queries", "korquad1/queries.jsonl", "CC BY-ND 2.0 KR", optional=True),
                  shared("korquad1/shared-qrels", "korquad1/qrels/test.tsv", "CC BY-ND 2.0 KR", optional=True))


def _korquad_beir(loc: Locations, passages: dict[str, Passage], notes: dict[str, int]) -> tuple[list[Question], list[InputRecord]]:
    """KorQuAD dev from the shared BEIR folder: the answer's first occurrence in the paragraph is its span."""
    paths = [_need(loc, f) for f in KORQUAD_SHARED]
    records = [verify(f, p) for f, p in zip(KORQUAD_SHARED, paths)]
    for o in _jsonl(paths[0]):
        passages[str(o["_id"])] = Passage(str(o["_id"]), str(o.get("title") or "").replace("_", " "), o["text"])
    qrels = _qrels(paths[2])
    out = []
    for o in _jsonl(paths[1]):
        qid = str(o["_id"])
        pids = [p for p in qrels.get(qid, []) if p in passages]
        if not pids:
            notes["no_gold_passage"] = notes.get("no_gold_passage", 0) + 1
            continue
        answers = tuple((o.get("metadata") or {}).get("answers") or ())
        pid = pids[0]
        spans = [sp for a in answers if (sp := locate(passages[pid].text, a, None))]
        out.append(Question(qid, "dev", pid, (("ko", o["text"]),), o["text"], answers, True,
                            gold=(Gold(pid, tuple(sorted(set(spans))) or None),)))
    return out, records


def load_korquad(loc: Locations) -> Loaded:
    passages: dict[str, Passage] = {}
    notes: dict[str, int] = {}
    questions: list[Question] = []
    records: list[InputRecord] = []
    missing: list[InputFile] = []
    for f, split in ((KORQUAD_TRAIN, "train"), (KORQUAD_DEV, "dev")):
        p = loc.resolve(f)
        if not p.is_file():
            missing.append(f)
            if split == "dev":
                qs, recs = _korquad_beir(loc, passages, notes)
                questions += qs
                records += recs
            continue
        records.append(verify(f, p))
        questions += squad_questions(_json(p), "korquad1", split, "ko", passages, notes)
    task = Task("korquad1", "korquad1", "ko", "korean_bigram", True, passages, tuple(questions))
    return Loaded((task,), tuple(records), tuple(missing), notes)


# -- SQuAD 2.0 --------------------------------------------------------------------------------------------
SQUAD2 = shared("squad2/dev-half", "squad2/dev-v2.0-half.json", "CC BY-SA 4.0",
                origin="SQuAD 2.0 dev, first 16 articles (../shared/data/squad2)")


def load_squad2(loc: Locations) -> Loaded:
    p = _need(loc, SQUAD2)
    rec = verify(SQUAD2, p)
    passages: dict[str, Passage] = {}
    notes: dict[str, int] = {}
    qs = squad_questions(_json(p), "squad2", "dev", "en", passages, notes)
    return Loaded((Task("squad2", "squad2", "en", "english", True, passages, tuple(qs)),), (rec,), (), notes)


# -- MS MARCO en / ko ---------------------------------------------------------------------------------------
MSMARCO_LICENCE = "MS MARCO terms (non-commercial research)"


def _msmarco_files(lang: str) -> tuple[InputFile, ...]:
    return tuple(shared(f"msmarco/{lang}/{n}", f"msmarco/{lang}/{n}", MSMARCO_LICENCE)
                 for n in ("corpus.jsonl", "queries.jsonl", "qrels/test.tsv"))


def load_msmarco(loc: Locations) -> Loaded:
    """Two tasks, the en and the ko corpus; each question asked in its corpus's language and in the other."""
    data, records = {}, []
    for lang in ("en", "ko"):
        files = _msmarco_files(lang)
        paths = [_need(loc, f) for f in files]
        records += [verify(f, p) for f, p in zip(files, paths)]
        corpus = {str(o["_id"]): Passage(str(o["_id"]), str(o.get("title") or ""), o["text"]) for o in _jsonl(paths[0])}
        queries = {str(o["_id"]): o["text"] for o in _jsonl(paths[1])}
        data[lang] = (corpus, queries, _qrels(paths[2]))
    notes: dict[str, int] = {}
    tasks = []
    for lang, other in (("en", "ko"), ("ko", "en")):
        corpus, queries, qrels = data[lang]
        other_queries = data[other][1]
        qs = []
        for qid in sorted(queries):
            pids = sorted(p for p in qrels.get(qid, []) if p in corpus)
            if not pids or qid not in other_queries:
                notes[f"{lang}_query_without_pair_or_positive"] = notes.get(f"{lang}_query_without_pair_or_positive", 0) + 1
                continue
            qs.append(Question(qid, "dev", qid, ((lang, queries[qid]), (other, other_queries[qid])), queries[qid],
                               (), True, gold=tuple(Gold(p, None) for p in pids)))
        analyzer = profile(lang).analyzer  # korean_bigram, english
        tasks.append(Task(f"msmarco-{lang}", "msmarco", lang, analyzer, False, corpus, tuple(qs)))
    return Loaded(tuple(tasks), tuple(records), (), notes)


# -- NoMIRACL ko -------------------------------------------------------------------------------------------
NOMIRACL = shared("nomiracl-ko/test", "nomiracl/ko.test.jsonl", "Apache-2.0",
                  origin="NoMIRACL Korean test (../shared/data/nomiracl)")


def load_nomiracl(loc: Locations) -> Loaded:
    p = _need(loc, NOMIRACL)
    rec = verify(NOMIRACL, p)
    passages: dict[str, Passage] = {}
    notes: dict[str, int] = {}
    qs = []
    for o in _jsonl(p):
        pids = []
        for x in o["passages"]:
            pid = str(x["docid"])
            old = passages.get(pid)
            if old is not None and old.text != x["text"]:
                notes["passage_id_with_two_texts"] = notes.get("passage_id_with_two_texts", 0) + 1
            passages.setdefault(pid, Passage(pid, str(x.get("title") or ""), x["text"]))
            if pid not in pids:
                pids.append(pid)
        ans = bool(o["answerable"])
        qid = str(o["query_id"])
        qs.append(Question(qid, "test", qid, (("ko", o["question"]),), o["question"], (), ans,
                           given_negative=() if ans else tuple(pids), unknown=tuple(pids) if ans else ()))
    return Loaded((Task("nomiracl-ko", "nomiracl-ko", "ko", "korean_bigram", False, passages, tuple(qs)),), (rec,), (),
                  notes)


# -- SciFact ------------------------------------------------------------------------------------------------
SCIFACT_LICENCE = "CC BY-NC 2.0"
SCIFACT = tuple(shared(f"scifact/{n}", f"scifact/{n}", SCIFACT_LICENCE)
                for n in ("corpus.jsonl", "queries.jsonl", "qrels/train.tsv", "claims_dev_with_rationales.jsonl"))


def load_scifact(loc: Locations) -> Loaded:
    """Training claims (BEIR qrels: judged abstracts, no sentence labels) and dev claims with rationale
    sentences (located in the abstract: those sentences hold the answer); a NOT_ENOUGH_INFO claim's cited
    abstracts are judged negatives."""
    paths = [_need(loc, f) for f in SCIFACT]
    records = tuple(verify(f, p) for f, p in zip(SCIFACT, paths))
    corpus = {str(o["_id"]): Passage(str(o["_id"]), str(o.get("title") or ""), o["text"]) for o in _jsonl(paths[0])}
    queries = {str(o["_id"]): o["text"] for o in _jsonl(paths[1])}
    notes: dict[str, int] = {}
    qs = []
    for qid, pids in sorted(_qrels(paths[2]).items()):
        pids = sorted(p for p in pids if p in corpus)
        if qid not in queries or not pids:
            notes["train_claim_without_abstract"] = notes.get("train_claim_without_abstract", 0) + 1
            continue
        qs.append(Question(qid, "train", pids[0], (("en", queries[qid]),), queries[qid], (), True,
                           gold=tuple(Gold(p, None) for p in pids)))
    claims: dict[str, dict] = {}
    for o in _jsonl(paths[3]):
        c = claims.setdefault(str(o["claim_id"]), {"claim": o["claim"], "label": o["label"], "docs": {}, "cited": set()})
        c["cited"].update(str(d) for d in o.get("cited_doc_ids") or ())
        if o.get("doc_id") is not None and o["label"] != "NOT_ENOUGH_INFO":
            c["docs"].setdefault(str(o["doc_id"]), []).extend(o.get("rationale_sentences") or ())
    for cid, c in sorted(claims.items()):
        if c["label"] == "NOT_ENOUGH_INFO":
            cited = tuple(sorted(d for d in c["cited"] if d in corpus))
            if cited:
                qs.append(Question(cid, "dev", cited[0], (("en", c["claim"]),), c["claim"], (), False,
                                   given_negative=cited))
            continue
        gold = []
        for doc, sents in sorted(c["docs"].items()):
            if doc not in corpus:
                continue
            spans = [sp for s in sents if (sp := locate(corpus[doc].text, s, None))]
            notes["rationale_not_found"] = notes.get("rationale_not_found", 0) + len(sents) - len(spans)
            gold.append(Gold(doc, tuple(sorted(set(spans))) or None))
        if gold:
            qs.append(Question(cid, "dev", gold[0].pid, (("en", c["claim"]),), c["claim"], (), True, gold=tuple(gold),
                               stance="support" if c["label"] == "SUPPORT" else "contradict"))
    return Loaded((Task("scifact", "scifact", "en", "english", False, corpus, tuple(qs)),), records, (), notes)


SOURCES: dict[str, Callable[[Locations], Loaded]] = {
    "korquad1": load_korquad,
    "squad2": load_squad2,
    "msmarco": load_msmarco,
    "nomiracl-ko": load_nomiracl,
    "scifact": load_scifact,
}
