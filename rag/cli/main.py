"""Command line: ``rag index | search | context | eval-retrieval | train-reranker | calibrate | eval-abstention | demo``."""
from __future__ import annotations

import argparse
import json
import logging
import sys
from pathlib import Path

from rag.errors import ConfigError, RagError

DEFAULT_CONFIG = "configs/default.yaml"


def _overrides(pairs: list[str] | None) -> dict[str, object]:
    import yaml

    out: dict[str, object] = {}
    for pair in pairs or []:
        key, sep, value = pair.partition("=")
        if not sep or not key:
            raise ConfigError(f"--set expects KEY=VALUE (e.g. retrieval.fusion.k=30), got {pair!r}")
        out[key.strip()] = yaml.safe_load(value)
    return out


def _pipeline(args):
    from rag.config import load_config
    from rag.pipeline import Pipeline

    cfg = load_config(args.config)
    ov = _overrides(getattr(args, "set", None))
    return Pipeline(cfg.with_overrides(ov) if ov else cfg)


def _bar(total: int | None, desc: str):
    from tqdm import tqdm

    return tqdm(total=total, desc=desc, unit="chunk", file=sys.stderr, disable=None, dynamic_ncols=True)


def cmd_index(args) -> int:
    p = _pipeline(args)
    docs = p.load_corpus()
    n_docs = len(docs)
    with _bar(None, "embedding") as bar:
        idx = p.build_index(docs, force=args.force, progress=bar.update)
    emb = p.embedder
    cached = f", {getattr(emb, 'hits', 0)} chunk embeddings reused from cache" if hasattr(emb, "hits") else ""
    print(f"indexed {n_docs} documents -> {len(idx)} chunks at {p.index_path}{cached}")
    return 0


def cmd_add(args) -> int:
    from rag.index.loaders import load_documents

    p = _pipeline(args)
    docs = load_documents(args.path)
    rep = p.replace_documents(docs) if args.replace else p.add_documents(docs)
    print(f"added {len(rep.added)}, removed {len(rep.removed)}, unchanged {len(rep.unchanged)} "
          f"({rep.chunks_embedded} chunks embedded); index now {len(p.index)} chunks")
    return 0


def cmd_delete(args) -> int:
    p = _pipeline(args)
    rep = p.delete_document(args.doc_id, args.version)
    print(f"removed {', '.join(rep.removed)}; index now {len(p.index)} chunks")
    return 0


def _candidate_json(c) -> dict:
    ch = c.chunk
    return {
        "rank": c.rank,
        "score": round(c.score, 6),
        "evidence_id": ch.evidence_id,
        "document_id": ch.document_id,
        "version": ch.document_version,
        "title": ch.title,
        "uri": ch.uri,
        "page": ch.page,
        "span": [ch.start_char, ch.end_char],
        "retrievers": {h.retriever: {"rank": h.rank, "score": round(h.score, 6)} for h in c.hits},
        "text": ch.text,
    }


def _print_candidates(result, limit: int) -> None:
    for c in result.candidates[:limit]:
        ranks = "  ".join(f"{h.retriever}#{h.rank} ({h.score:.3f})" for h in c.hits)
        snippet = " ".join(c.chunk.text.split())[:110]
        page = f" p.{c.chunk.page}" if c.chunk.page else ""
        print(f"{c.rank:>3}. {c.score:.4f}  {c.chunk.evidence_id}{page}  [{ranks}]")
        print(f"      {c.chunk.title}: {snippet}")


def cmd_search(args) -> int:
    p = _pipeline(args)
    result = p.search(args.query, candidates=args.top)
    if args.json:
        print(json.dumps({"query": result.query, "config_hash": p.config.hash,
                          "timings_ms": {k: round(v, 3) for k, v in result.timings_ms.items()},
                          "candidates": [_candidate_json(c) for c in result.candidates]}, ensure_ascii=False, indent=2))
    else:
        _print_candidates(result, args.top)
    return 0


def _load_history(path: str | None):
    from rag.context.prompt import Turn

    if not path:
        return ()
    try:
        data = json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise ConfigError(f"--history {path}: cannot read a JSON list of turns ({exc})") from None
    if not isinstance(data, list) or not all(isinstance(t, dict) and {"role", "content"} <= set(t) for t in data):
        raise ConfigError(f"--history {path}: expected [{{\"role\": \"user\"|\"assistant\", \"content\": ...}}, ...]")
    return tuple(Turn(t["role"], t["content"]) for t in data)


def print_manifest(m: dict) -> None:
    b = m["budget"]
    terms = " - ".join(f"{k} {b[k]}" for k in ("system", "guidelines", "history", "question", "output_reserve",
                                                "schema_overhead", "wrapper_reserve", "safety_margin"))
    print(f"prompt {m['prompt_version']}  tokenizer {m['tokenizer']}")
    print(f"budget: context_limit {b['context_limit']} - {terms} = evidence_budget {b['evidence_budget']}")
    print(f"used: evidence {m['evidence_tokens']} / {m['evidence_budget']}, rendered context "
          f"{m['rendered_context_tokens']}, whole prompt {m['prompt_tokens']}")
    h = m["history"]
    print(f"history: kept {h['kept_turns']} turns ({h['tokens']} tokens), dropped {h['dropped_turns']} oldest")
    if m["guidelines"]:
        print(f"guidelines: {', '.join(m['guidelines'])}")
    if m["version_conflicts"]:
        print(f"several versions retrieved for: {', '.join(m['version_conflicts'])}")
    for blk in m["blocks"]:
        flags = (" truncated" if blk["truncated"] else "") + (f" neutralized={blk['neutralized']}" if blk["neutralized"] else "")
        print(f"  [{blk['source_id']}] {blk['evidence_id']}  span {blk['span'][0]}-{blk['span'][1]}  "
              f"{blk['tokens']} tokens{flags}")
    for d in m["dropped"]:
        print(f"  not sent: {d['evidence_id']}  {d['reason']}  {d['detail']}")


def print_messages(messages) -> None:
    for msg in messages:
        extra = ""
        if msg.tool_calls:
            extra = " tool_calls=" + ", ".join(f"{t.name}({t.arguments})" for t in msg.tool_calls)
        if msg.tool_call_id:
            extra = f" tool_call_id={msg.tool_call_id}"
        print(f"----- {msg.role}{extra}")
        print(msg.content)


def cmd_context(args) -> int:
    p = _pipeline(args)
    _, prompt = p.build_prompt(args.question, _load_history(args.history))
    manifest = prompt.manifest.to_json()
    if args.json:
        out = {"question": args.question, "config_hash": p.config.hash, "manifest": manifest}
        if args.show_prompt:
            out["messages"] = prompt.to_openai()
        print(json.dumps(out, ensure_ascii=False, indent=2))
        return 0
    print_manifest(manifest)
    if args.show_prompt:
        print()
        print_messages(prompt.messages)
    return 0


def print_answer(res) -> None:
    """The human form of an AnswerResult: the answer, then its sources (server-resolved)."""
    t = res.trace
    if res.status == "answered":
        print(res.answer)
        print("\nSources:")
        seen = set()
        for c in res.citations:
            if c.source_id in seen:
                continue
            seen.add(c.source_id)
            page = f", p.{c.page}" if c.page is not None else ""
            print(f"  [{c.source_id}] {c.title or c.document_id} (v{c.document_version}{page}) {c.uri}".rstrip())
            print(f"       {c.evidence_id} chars {c.start_char}-{c.end_char}")
    else:
        print(f"insufficient evidence ({res.reason})")
        if t is not None and t.gate.top_score is not None:
            g = t.gate
            print(f"  gate: {g.signal} top {g.top_score:.3f} vs threshold {g.threshold:.3f}, "
                  f"{g.supporting} supporting (need {g.min_supporting})")
    if t is not None:
        stages = ", ".join(f"{k} {v:.0f}" for k, v in t.timings_ms.items())
        print(f"\n[{stages} ms; {len(t.attempts)} generation attempt(s), {t.total_tokens} tokens]")


def cmd_ask(args) -> int:
    p = _pipeline(args)
    res = p.answer(args.question, _load_history(args.history))
    if args.json:
        print(json.dumps(res.to_json(), ensure_ascii=False, indent=2))
    else:
        print_answer(res)
    return 0


def _progress_bars():
    """A ``progress(stage, done, total)`` callback with one tqdm bar per stage; the ``embed`` stage
    reports increments (chunks embedded per batch), every other stage its running count."""
    from tqdm import tqdm

    bars: dict[str, tqdm] = {}

    def progress(stage: str, done: int, total: int) -> None:
        if stage not in bars:
            bars[stage] = tqdm(total=total or None, desc=stage, file=sys.stderr, disable=None, dynamic_ncols=True)
        if stage == "embed":
            bars[stage].update(done)
        else:
            bars[stage].n = done
            bars[stage].refresh()
    return progress, bars


def cmd_eval_retrieval(args) -> int:
    from rag.evaluation.retrieval import evaluate_retrieval

    p = _pipeline(args)
    progress, bars = _progress_bars()

    try:
        qf = None
        if args.holdout:
            from rag.rerank.train import in_holdout

            name = Path(args.dataset).name
            qf = lambda q: in_holdout(name, q, args.holdout)  # noqa: E731
        res = evaluate_retrieval(p, args.dataset, args.split, max_queries=args.max_queries, progress=progress,
                                 rerank=not args.no_rerank, query_filter=qf)
    finally:
        for b in bars.values():
            b.close()
    out = res.to_json()
    print(f"{res.dataset} / {res.split}: {res.n_queries} queries  (config {res.config_hash}, {res.embedding_model}, {res.analyzer})")
    names = list(next(iter(res.metrics.values())).keys())
    print(f"{'':10}" + "".join(f"{n:>12}" for n in names))
    for r, m in res.metrics.items():
        print(f"{r:10}" + "".join(f"{m[n]:>12.4f}" for n in names))
    if args.json:
        Path(args.json).parent.mkdir(parents=True, exist_ok=True)
        Path(args.json).write_text(json.dumps(out, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
        print(f"wrote {args.json}")
    return 0


def cmd_train_reranker(args) -> int:
    from rag.rerank.train import load_groups, load_train_config, mine_groups, save_groups, train, write_model_card

    cfg = load_train_config(args.config)
    progress, bars = _progress_bars()
    cache = Path(".rag/train") / cfg.name / "groups.jsonl"
    try:
        if cache.is_file():
            groups = load_groups(cache)
            print(f"reusing {len(groups)} mined training groups from {cache}")
        else:
            groups = mine_groups(cfg, progress)
            save_groups(groups, cache)
        report = train(cfg, groups, progress)
    finally:
        for b in bars.values():
            b.close()
    metrics = {}
    if args.eval_dataset:
        from rag.config import load_config
        from rag.evaluation.retrieval import evaluate_retrieval
        from rag.pipeline import Pipeline
        from rag.rerank.train import in_holdout

        pc = load_config(args.eval_config).with_overrides({"rerank.model": str(report.output.resolve())})
        name = Path(args.eval_dataset).name
        res = evaluate_retrieval(Pipeline(pc), args.eval_dataset, "train",
                                 query_filter=lambda q: in_holdout(name, q, args.eval_holdout))
        metrics = {f"{name}_heldout_{k}": dict(v) for k, v in res.metrics.items() if k in ("hybrid", "rerank")}
        metrics["n_queries"] = res.n_queries
    card = write_model_card(cfg, report, groups, metrics)
    print(f"trained {report.steps} steps on {report.groups} groups in {report.seconds / 60:.1f} min "
          f"({report.pairs_per_second:.1f} pairs/s) -> {report.output}\nmodel card: {card}")
    return 0


def _scored(args):
    from rag.evaluation.abstention import load_labelled, score_questions

    p = _pipeline(args)
    items = load_labelled(args.dataset, args.split, args.max_questions)
    progress, bars = _progress_bars()
    try:
        return p, score_questions(p, items, progress)
    finally:
        for b in bars.values():
            b.close()


def cmd_calibrate(args) -> int:
    from rag.evaluation.abstention import calibrate, write_calibrated_config

    from rag.errors import InputError

    out = Path(args.out) if args.out else Path(args.config).with_suffix(".calibrated.yaml")
    if out.resolve().parent != Path(args.config).resolve().parent:
        raise InputError(f"--out must be next to {args.config} (relative paths in the config are resolved from there)")
    if not 0 < args.target_precision <= 1:
        raise InputError(f"--target-precision must be in (0, 1], got {args.target_precision}")
    p, scored = _scored(args)
    report_dir = Path(args.report or f"results/calibrate-{Path(args.config).stem}-{Path(args.dataset).stem}")
    rep = calibrate(p, scored, args.target_precision, report_dir, dataset=str(args.dataset), split=args.split)
    write_calibrated_config(Path(args.config), out, rep.config_updates)
    print(json.dumps(rep.summary, indent=2, ensure_ascii=False))
    print(f"wrote {out} and {report_dir}/(calibration.json, risk_coverage.png, histograms.png)")
    return 0


def cmd_eval_abstention(args) -> int:
    from rag.evaluation.abstention import evaluate_abstention, thresholds_from_report

    compare = thresholds_from_report(args.compare) if args.compare else None
    p, scored = _scored(args)
    out = evaluate_abstention(p, scored, compare)
    print(json.dumps(out, indent=2, ensure_ascii=False))
    if args.json:
        Path(args.json).parent.mkdir(parents=True, exist_ok=True)
        Path(args.json).write_text(json.dumps(out, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
        print(f"wrote {args.json}")
    return 0


def cmd_demo(args) -> int:
    """Index the bundled demo corpus and answer its questions: the README's main job."""
    from rag.index.loaders import _jsonl

    p = _pipeline(args)
    with _bar(None, "embedding") as bar:
        idx = p.build_index(force=True, progress=bar.update)
    print(f"indexed {len(idx.documents)} documents -> {len(idx)} chunks at {p.index_path}\n")
    qpath = Path(args.questions) if args.questions else p.config.resolve("../data/demo/questions.jsonl")
    tally = {"answered_ok": 0, "answerable": 0, "abstained_ok": 0, "unanswerable": 0}
    for _, q in _jsonl(qpath):
        res = p.answer(q["question"])
        exp = q.get("expected_doc_id")
        cited = {c.document_id for c in res.citations}
        if exp:
            tally["answerable"] += 1
            ok = res.status == "answered" and exp in cited
            tally["answered_ok"] += ok
        else:
            tally["unanswerable"] += 1
            ok = res.status == "insufficient_evidence"
            tally["abstained_ok"] += ok
        print(f"[{'ok ' if ok else 'MISS'}] {q['id']} {q['question']}")
        if res.status == "answered":
            for line in res.answer.splitlines()[:3]:
                print(f"        {line[:110]}")
            srcs = sorted({(c.source_id, c.evidence_id) for c in res.citations}, key=lambda x: int(x[0][1:]))
            print("        sources: " + ", ".join(f"[{s}] {e}" for s, e in srcs))
        else:
            g = res.trace.gate
            why = res.reason
            if not g.answer and g.top_score is not None:
                why += f"; gate: {g.signal} {g.top_score:.3f} < {g.threshold:.3f}"
            print(f"        insufficient evidence ({why})")
    print(f"\nanswered with the expected document cited: {tally['answered_ok']}/{tally['answerable']} answerable questions; "
          f"abstained: {tally['abstained_ok']}/{tally['unanswerable']} unanswerable questions")
    print('one answer in full: rag ask "연차 휴가는 며칠인가요?"   (add --json for the trace)')
    return 0


def build_parser() -> argparse.ArgumentParser:
    ap = argparse.ArgumentParser(prog="rag", description="Grounded answers with provable citations.")
    ap.add_argument("-v", "--verbose", action="count", default=0, help="more logging (-vv for debug)")
    sub = ap.add_subparsers(dest="command", required=True)

    s = sub.add_parser("index", help="index the corpus named in the config")
    s.add_argument("--config", default=DEFAULT_CONFIG)
    s.add_argument("--force", action="store_true", help="overwrite an index built with another model/analyzer")
    s.set_defaults(func=cmd_index)

    s = sub.add_parser("add", help="add documents (JSONL, folder or file) to an existing index")
    s.add_argument("path")
    s.add_argument("--config", default=DEFAULT_CONFIG)
    s.add_argument("--replace", action="store_true", help="make each given document the only version of its id")
    s.set_defaults(func=cmd_add)

    s = sub.add_parser("delete", help="delete a document (all versions, or one) from the index")
    s.add_argument("doc_id")
    s.add_argument("--version", default=None)
    s.add_argument("--config", default=DEFAULT_CONFIG)
    s.set_defaults(func=cmd_delete)

    s = sub.add_parser("search", help="hybrid search: fused candidates with per-retriever ranks and scores")
    s.add_argument("query")
    s.add_argument("--config", default=DEFAULT_CONFIG)
    s.add_argument("--top", type=int, default=10)
    s.add_argument("--json", action="store_true")
    s.set_defaults(func=cmd_search)

    s = sub.add_parser("context", help="retrieve and build the budgeted prompt; print its manifest")
    s.add_argument("question")
    s.add_argument("--config", default=DEFAULT_CONFIG)
    s.add_argument("--history", help="JSON file: [{\"role\": \"user\", \"content\": ...}, ...]")
    s.add_argument("--show-prompt", action="store_true", help="also print the rendered messages")
    s.add_argument("--json", action="store_true")
    s.add_argument("--set", action="append", metavar="KEY=VALUE", help="override a config value (repeatable)")
    s.set_defaults(func=cmd_context)

    s = sub.add_parser("ask", help="answer a question with validated citations (or abstain)")
    s.add_argument("question")
    s.add_argument("--config", default=DEFAULT_CONFIG)
    s.add_argument("--history", help="JSON file: [{\"role\": \"user\", \"content\": ...}, ...]")
    s.add_argument("--json", action="store_true", help="print the whole AnswerResult (with its trace) as JSON")
    s.add_argument("--set", action="append", metavar="KEY=VALUE", help="override a config value (repeatable)")
    s.set_defaults(func=cmd_ask)

    s = sub.add_parser("eval-retrieval", help="nDCG/recall/MRR of bm25, dense and hybrid on a BEIR dataset")
    s.add_argument("--dataset", required=True, help="folder with corpus.jsonl, queries.jsonl, qrels/")
    s.add_argument("--split", default="test")
    s.add_argument("--config", default="configs/en.yaml")
    s.add_argument("--json", help="write the result JSON here")
    s.add_argument("--max-queries", type=int, default=None)
    s.add_argument("--holdout", type=int, default=0, metavar="PERCENT",
                   help="only the queries a training config with this holdout_percent kept out of training")
    s.add_argument("--no-rerank", action="store_true", help="skip the 'rerank' entry")
    s.add_argument("--set", action="append", metavar="KEY=VALUE", help="override a config value (repeatable)")
    s.set_defaults(func=cmd_eval_retrieval)

    s = sub.add_parser("train-reranker", help="fine-tune a cross-encoder reranker from a training config")
    s.add_argument("--config", required=True, help="e.g. configs/reranker/minilm-listwise.yaml")
    s.add_argument("--eval-dataset", default=None, help="BEIR folder whose held-out queries go in the model card")
    s.add_argument("--eval-config", default="configs/en.yaml")
    s.add_argument("--eval-holdout", type=int, default=40)
    s.set_defaults(func=cmd_train_reranker)

    s = sub.add_parser("calibrate", help="fit the gate threshold for a target precision on labelled questions")
    s.add_argument("--dataset", required=True, help="NoMIRACL-style JSONL or SQuAD 2.0 JSON")
    s.add_argument("--config", required=True)
    s.add_argument("--target-precision", type=float, required=True)
    s.add_argument("--split", default="all", choices=["all", "calib", "eval"],
                   help="calib/eval: a fixed 50/50 split of the questions (fit on calib, report on eval)")
    s.add_argument("--max-questions", type=int, default=None)
    s.add_argument("--out", default=None, help="config to write (default: CONFIG with .calibrated.yaml)")
    s.add_argument("--report", default=None, help="folder for the JSON and PNGs (default results/calibrate-NAME)")
    s.add_argument("--set", action="append", metavar="KEY=VALUE", help="override a config value (repeatable)")
    s.set_defaults(func=cmd_calibrate)

    s = sub.add_parser("eval-abstention", help="rerank each question's own passages and apply the gate")
    s.add_argument("--dataset", required=True, help="NoMIRACL-style JSONL or SQuAD 2.0 JSON")
    s.add_argument("--config", required=True)
    s.add_argument("--split", default="all", choices=["all", "calib", "eval"])
    s.add_argument("--max-questions", type=int, default=None)
    s.add_argument("--json", default=None, help="write the result JSON here")
    s.add_argument("--compare", default=None, metavar="CALIBRATION_JSON",
                   help="also apply each signal's threshold from a `rag calibrate` report (e.g. fit on --split calib)")
    s.add_argument("--set", action="append", metavar="KEY=VALUE", help="override a config value (repeatable)")
    s.set_defaults(func=cmd_eval_abstention)

    s = sub.add_parser("demo", help="index the bundled demo corpus and run its questions")
    s.add_argument("--config", default=DEFAULT_CONFIG)
    s.add_argument("--questions", default=None)
    s.add_argument("--set", action="append", metavar="KEY=VALUE", help="override a config value (repeatable)")
    s.set_defaults(func=cmd_demo)

    from rag.cli.batch import add_parsers as _batch_parsers  # batch | experiment | compare

    _batch_parsers(sub)
    return ap


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    level = logging.WARNING - 10 * min(args.verbose, 2)
    logging.basicConfig(level=level, format="%(levelname)s %(name)s: %(message)s")
    # bm25s sets its own logger to DEBUG when it is imported (lazily, later): filter at the handler.
    for h in logging.getLogger().handlers:
        h.setLevel(level)
    try:
        return args.func(args)
    except RagError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(main())
