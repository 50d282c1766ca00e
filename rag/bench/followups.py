"""Follow-ups against the same questions asked in full (issue 41; docs/conversations.md).

Each dialogue set holds follow-ups (``questions.jsonl``: the second turn, with the first turn and
an answer to it in ``history``) and the same questions written out (``full_questions.jsonl``).
Per set and per variant, the follow-ups are answered over the set's corpus and scored like
``rag eval-answers`` (:func:`rag.evaluation.answer_scoring.score_answer`); the ratio of their
accuracy to the full questions' is the issue's measure. Variants:

- ``shipped``: the config as given (the rules resolve, the earlier answer's evidence is searched);
- ``no-earlier``: ``conversation.earlier_evidence: false`` (the rules alone, as before issue 41);
- ``own-answer``: the first turn asked for real, and the system's own answer (``AnswerResult.as_turn``,
  citations included) as the history's assistant turn, as a chatbot would pass it back;
- ``rewriter-gold``: an LLM rewriter (``conversation.rewriter``) on a loopback fake server that
  returns each follow-up's written-out question: the ceiling of a rewrite, still checked;
- ``rewriter-garbage``: the same server returning text that is not JSON: must fall back to the rules;
- ``rewriter-url`` (asked for by name): a real OpenAI-compatible rewriter at ``--rewriter-url``
  (e.g. ``python -m rag.answer.llm_server --model qwen2.5-1.5b --port 8088`` on loopback).

Sets: kolaw-dialogues over ../shared/data/kolaw-dev (or ``--data``), and demo-dialogues-en over the
demo corpus, split by id hash into a ``dev`` and an ``eval`` half (``--halves``; the eval half is
the one reported once).
"""
from __future__ import annotations

import hashlib
import json
import threading
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Iterator

from rag.bench.harness import data_dir, repo_path
from rag.bench.measurement import Measurement, Outcome

VARIANTS = ("shipped", "no-earlier", "own-answer", "rewriter-gold", "rewriter-garbage")
KNOWN = (*VARIANTS, "rewriter-url")


@dataclass(frozen=True)
class Options:
    data: str = field(default="", metadata={"help": "data folder (default ../shared/data or $RAG_DATA_DIR)"})
    config: str = field(default="configs/default.yaml", metadata={"help": "the shipped settings"})
    variants: tuple[str, ...] = field(default=VARIANTS, metadata={"help": "which of " + ", ".join(KNOWN)})
    rewriter_url: str = field(default="", metadata={"help": "the rewriter-url variant's endpoint (loopback)"})
    rewriter_model: str = field(default="local", metadata={"help": "the model name sent to --rewriter-url"})
    sets: tuple[str, ...] = field(default=("kolaw-dialogues", "demo-dialogues-en"),
                                  metadata={"help": "dialogue sets under data/dev"})


@dataclass(frozen=True)
class DialogueSet:
    name: str
    folder: Path  # data/dev/<name>: questions.jsonl, full_questions.jsonl
    corpus: Path  # the dataset folder whose corpus.jsonl the questions are asked over


def _sets(o: Options) -> list[DialogueSet]:
    corpus = {"kolaw-dialogues": (Path(o.data) if o.data else data_dir()) / "kolaw-dev",
              "demo-dialogues-en": repo_path("data/dev/demo-dialogues-en")}
    out = []
    for name in o.sets:
        if name not in corpus:
            raise ValueError(f"unknown dialogue set {name!r}; known: {', '.join(sorted(corpus))}")
        out.append(DialogueSet(name, repo_path(f"data/dev/{name}"), corpus[name]))
    return out


def halves(ids: list[str]) -> dict[str, str]:
    """``dev`` / ``eval`` per id: the ids sorted by sha256, the first half ``dev``."""
    order = sorted(ids, key=lambda i: hashlib.sha256(i.encode("utf-8")).hexdigest())
    return {i: ("dev" if n < len(order) // 2 else "eval") for n, i in enumerate(order)}


class RewriterServer:
    """A loopback OpenAI-compatible chat endpoint that answers each rewrite request from a table
    (the follow-up after "Last question:" → its written-out question), or with garbage."""

    def __init__(self, table: dict[str, str], garbage: bool = False) -> None:
        outer = self
        self.table, self.garbage, self.requests = table, garbage, 0

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args) -> None:
                pass

            def do_POST(self) -> None:  # noqa: N802 - http.server API
                body = json.loads(self.rfile.read(int(self.headers.get("Content-Length", "0"))) or b"{}")
                outer.requests += 1
                data = json.dumps(outer.reply(body)).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    def reply(self, body: dict) -> dict:
        user = str(body["messages"][-1]["content"])
        asked = user.rsplit("Last question:", 1)[-1].strip()
        text = "I cannot help with that." if self.garbage else json.dumps(
            {"question": self.table.get(asked, asked)}, ensure_ascii=False)
        return {"id": "rw", "object": "chat.completion", "created": 0, "model": body.get("model", "rw"),
                "choices": [{"index": 0, "message": {"role": "assistant", "content": text}, "finish_reason": "stop"}],
                "usage": {"prompt_tokens": len(user) // 3, "completion_tokens": len(text) // 3,
                          "total_tokens": (len(user) + len(text)) // 3}}

    @property
    def base_url(self) -> str:
        host, port = self._server.server_address[:2]
        return f"http://{host!s}:{port}/v1"  # a str for an AF_INET server

    def __enter__(self) -> "RewriterServer":
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self._server.shutdown()
        self._server.server_close()


def _summary(rows: list, part: dict[str, str], which: str) -> dict:
    rows = [r for r in rows if which == "all" or part[r.id] == which]
    answerable = [r for r in rows if r.answerable]
    unanswerable = [r for r in rows if not r.answerable]
    answered = [r for r in rows if r.status == "answered"]
    right = sum(r.correct for r in answerable)
    return {"n": len(rows), "answerable": len(answerable), "right": right,
            "accuracy": round(right / len(answerable), 4) if answerable else None,
            "answered": len(answered),
            "precision": round(sum(r.correct for r in answered) / len(answered), 4) if answered else None,
            "unanswerable_abstained": (round(sum(r.status != "answered" for r in unanswerable) / len(unanswerable), 4)
                                       if unanswerable else None)}


def _answer_all(p, data, questions, history_for) -> Iterator:
    from rag.evaluation.answer_scoring import score_answer

    for q in questions:
        r = p.answer(q.question, history_for(q))
        yield score_answer(q, r.status, r.answer, [(c.document_id, c.document_version) for c in r.citations],
                           data.latest, r.reason)


def _variant(name: str, base, built, data, follow, full_text: dict[str, str], o: Options):
    """Scored rows of the follow-ups under variant ``name`` (``built``: the shipped pipeline, whose
    embedder and index the others share)."""
    from rag.pipeline import Pipeline
    from rag.types import Turn

    def derived(**overrides):
        return Pipeline(base.with_overrides(overrides), embedder=built.components.embedder, index=built.index)

    if name == "shipped":
        return list(_answer_all(built, data, follow, lambda q: q.history))
    if name == "no-earlier":
        return list(_answer_all(derived(**{"conversation.earlier_evidence": False}), data, follow, lambda q: q.history))
    if name == "own-answer":
        def own(q):
            first = next(t.content for t in q.history if t.role == "user")
            return (Turn("user", first), built.answer(first).as_turn())
        return list(_answer_all(built, data, follow, own))
    if name == "rewriter-url":
        if not o.rewriter_url:
            raise ValueError("the rewriter-url variant needs --rewriter-url")
        p = derived(**{"conversation.rewriter": {"model": o.rewriter_model, "base_url": o.rewriter_url,
                                                 "timeout_s": 120, "max_retries": 0}})
        return list(_answer_all(p, data, follow, lambda q: q.history))
    table = {q.question: full_text[q.id] for q in follow}
    with RewriterServer(table, garbage=name == "rewriter-garbage") as srv:
        p = derived(**{"conversation.rewriter": {"model": "bench-rewriter", "base_url": srv.base_url,
                                                 "max_retries": 0}})
        return list(_answer_all(p, data, follow, lambda q: q.history))


def _one_set(s: DialogueSet, o: Options) -> tuple[dict, list[str]]:
    from rag.config import load_config
    from rag.evaluation.answer_dataset import load_answer_dataset
    from rag.pipeline import Pipeline

    follow_data = load_answer_dataset(s.corpus, [s.folder / "questions.jsonl"], own_questions=False)
    full_data = load_answer_dataset(s.corpus, [s.folder / "full_questions.jsonl"], own_questions=False)
    base = load_config(repo_path(o.config)).with_overrides(
        {"corpus.paths": [str(follow_data.corpus_path.resolve())], "corpus.format": "jsonl"})
    built = Pipeline(base.with_overrides({"index.path": str(repo_path("data/cache/bench-followups") / s.name)}))
    built.build_index(force=True)
    part = halves([q.id for q in follow_data.questions])
    full_text = {q.id: q.question for q in full_data.questions}
    full_rows = list(_answer_all(built, full_data, full_data.questions, lambda q: q.history))
    which = ("all", "dev", "eval") if s.name == "demo-dialogues-en" else ("all",)
    out: dict = {"full": {w: _summary(full_rows, part, w) for w in which}, "variants": {}}
    lines = [f"### {s.name}", "", "| variant | half | follow-ups right / answerable | accuracy | × full | precision "
             "| unanswerable abstained |", "|---|---|---|---|---|---|---|"]
    for w in which:
        f = out["full"][w]
        lines.append(f"| asked in full | {w} | {f['right']} / {f['answerable']} | {f['accuracy']} | 1 | {f['precision']} "
                     f"| {f['unanswerable_abstained']} |")
    for name in o.variants:
        rows = _variant(name, base, built, follow_data, follow_data.questions, full_text, o)
        out["variants"][name] = {w: _summary(rows, part, w) for w in which}
        for w in which:
            v, f = out["variants"][name][w], out["full"][w]
            ratio = round(v["accuracy"] / f["accuracy"], 3) if v["accuracy"] is not None and f["accuracy"] else None
            out["variants"][name][w]["ratio_to_full"] = ratio
            lines.append(f"| {name} | {w} | {v['right']} / {v['answerable']} | {v['accuracy']} | {ratio} "
                         f"| {v['precision']} | {v['unanswerable_abstained']} |")
    return out, lines + [""]


def run(o: Options) -> Outcome:
    unknown = sorted(set(o.variants) - set(KNOWN))
    if unknown:
        raise ValueError(f"unknown variant(s) {', '.join(unknown)}; known: {', '.join(KNOWN)}")
    result: dict = {}
    lines: list[str] = []
    for s in _sets(o):
        result[s.name], more = _one_set(s, o)
        lines += more
    return Outcome(result, "\n".join(lines))


def requires(o: Options) -> list[str]:
    return [f"{p} is missing" for s in _sets(o)
            for p in (s.corpus / "corpus.jsonl", s.folder / "questions.jsonl", s.folder / "full_questions.jsonl")
            if not p.is_file()]


MEASUREMENT = Measurement(
    name="followups", options=Options, run=run, requires=requires,
    summary="follow-ups vs the same questions in full: the shipped resolver, without the earlier evidence, with the "
            "system's own first answer, and a fake LLM rewriter (gold / garbage)")
