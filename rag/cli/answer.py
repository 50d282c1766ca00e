"""``rag search | context | ask | demo``: the live request path from the command line."""
from __future__ import annotations

import argparse

import json
from pathlib import Path

from rag.cli.common import (DEFAULT_CONFIG, announce_gate, cli_principal, cli_where, filter_options, load_history,
                            make_pipeline, principal_options, progress_bar, set_option)
from rag.lang.ko.examples import DEMO_QUESTION


def _print_candidates(result, limit: int) -> None:
    for c in result.candidates[:limit]:
        ranks = "  ".join(f"{h.retriever}#{h.rank} ({h.score:.3f})" for h in c.hits)
        snippet = " ".join(c.chunk.text.split())[:110]
        page = f" p.{c.chunk.page}" if c.chunk.page else ""
        print(f"{c.rank:>3}. {c.score:.4f}  {c.chunk.evidence_id}{page}  [{ranks}]")
        print(f"      {c.chunk.title}: {snippet}")


def cmd_search(args) -> int:
    p = make_pipeline(args)
    result = p.search(args.query, candidates=args.top, where=cli_where(args, p), principal=cli_principal(args))
    if args.json:
        print(json.dumps({"query": result.query, "config_hash": p.config.hash,
                          "timings_ms": {k: round(v, 3) for k, v in result.timings_ms.items()},
                          "candidates": [c.to_json() for c in result.candidates]}, ensure_ascii=False, indent=2))
    else:
        _print_candidates(result, args.top)
    return 0


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
    p = make_pipeline(args)
    _, prompt = p.build_prompt(args.question, load_history(args.history), where=cli_where(args, p),
                               principal=cli_principal(args))
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
    """The human form of an AnswerResult: the answer, then its sources (server-resolved), the
    superseded versions that were set aside, what was quarantined, and the stage timings."""
    t = res.trace
    if res.status == "answered":
        print(res.answer)
        print("\nSources:")
        seen = set()
        for c in res.citations:
            if c.source_id in seen:
                continue
            seen.add(c.source_id)
            print(f"  [{c.source_id}] {c.where or c.document_id} (v{c.document_version}) {c.uri}".rstrip())
            print(f"       {c.evidence_id} chars {c.start_char}-{c.end_char}")
    else:
        print(res.answer)
        print(f"\ninsufficient evidence ({res.reason})")
        if t is not None and t.gate.top_score is not None:
            g = t.gate
            print(f"  gate: {g.signal} top {g.top_score:.3f} vs threshold {g.threshold:.3f}, "
                  f"{g.supporting} supporting (need {g.min_supporting})")
        if t is not None and t.gate.explanation and not t.gate.answer:
            print(f"  why: {t.gate.explanation}")
    for v in res.superseded:
        now = f"version {v.current_version} applies" if v.current_version else "no version is in force"
        print(f"  note: {v.document_id} version {v.version} was also found but is superseded ({now})")
    for w in res.warnings:
        print(f"  warning: {w.message}")
    if t is not None and t.quarantined:
        docs = sorted({q.document_id for q in t.quarantined})
        print(f"  note: withheld as suspected prompt injection: {', '.join(docs)}")
    if t is not None:
        stages = ", ".join(f"{k} {v:.0f}" for k, v in t.timings_ms.items())
        print(f"\n[{stages} ms; {len(t.attempts)} generation attempt(s), {t.total_tokens} tokens]")


def cmd_ask(args) -> int:
    p = make_pipeline(args)
    p.config.limits.check_question(args.question)  # refused before the index and the models load
    history = load_history(args.history)
    announce_gate(p)
    res = p.answer(args.question, history, where=cli_where(args, p), principal=cli_principal(args))
    if args.json:
        print(json.dumps(res.to_json(), ensure_ascii=False, indent=2))
    else:
        print_answer(res)
    return 0


def cmd_demo(args) -> int:
    """Index the bundled demo corpus and answer its questions: the README's main job.

    Besides answerable (expected document cited, expected facts present) and unanswerable
    (abstained) questions, three checks count as failures if they regress: ``poisoned`` (the
    injected document is never cited, its planted claim never answered), ``superseded`` (only the
    current version is cited, the old version's facts never answered) and ``number_changed``
    (the validated answer with one number changed must be rejected with ``number_mismatch``)."""
    from rag.evaluation.answer_scoring import reading_aurocs
    from rag.evaluation.faithfulness import gate_reading
    from rag.index.loaders import jsonl_rows

    p = make_pipeline(args)
    with progress_bar(None, "embedding") as bar:
        idx = p.build_index(force=True, progress=bar.update)
    print(f"indexed {len(idx.documents)} documents -> {len(idx)} chunks at {p.index_location}\n")
    qpath = Path(args.questions) if args.questions else p.config.resolve("../data/demo/questions.jsonl")
    announce_gate(p)
    readings = []
    tally = {"answered_ok": 0, "answerable": 0, "abstained_ok": 0, "unanswerable": 0, "checks_ok": 0, "checks": 0}
    for _, q in jsonl_rows(qpath):
        res = p.answer(q["question"])
        readings.append((gate_reading(res), q["expected_doc_id"] is not None))
        ok, notes = demo_verdict(p, q, res, tally)
        print(f"[{'ok ' if ok else 'MISS'}] {q['id']} {q['question']}")
        if res.status == "answered":
            for line in res.answer.splitlines()[:3]:
                print(f"        {line[:110]}")
            srcs = sorted({(c.source_id, c.evidence_id) for c in res.citations}, key=lambda x: int(x[0][1:]))
            print("        sources: " + ", ".join(f"[{s}] {e}" for s, e in srcs))
        else:
            g = res.trace.gate
            why = res.reason
            if not g.answer and g.explanation:
                why += f"; {g.explanation}"
            elif not g.answer and g.top_score is not None:
                why += f"; gate: {g.signal} {g.top_score:.3f} < {g.threshold:.3f}"
            print(f"        insufficient evidence ({why})")
        for v in res.superseded:
            print(f"        superseded: {v.document_id} {v.version} set aside for {v.current_version}")
        for note in notes:
            print(f"        {note}")
    print(f"\nanswered with the expected document cited: {tally['answered_ok']}/{tally['answerable']} answerable "
          f"questions; abstained: {tally['abstained_ok']}/{tally['unanswerable']} unanswerable questions; "
          f"checks passed (poisoned, superseded, number changed): {tally['checks_ok']}/{tally['checks']}")
    aurocs = reading_aurocs([g for g, _ in readings], [y for _, y in readings]) \
        if all(g is not None for g, _ in readings) else {}
    if aurocs:
        print("gate AUROC (answerable vs not): " + ", ".join(f"{k.removeprefix('gate_auroc_')} {v:.3f}"
                                                            for k, v in aurocs.items() if v is not None))
    print(f'one answer in full: rag ask "{DEMO_QUESTION}"   (add --json for the trace)')
    return 0


def demo_verdict(p, q: dict, res, tally: dict) -> tuple[bool, list[str]]:
    """Score one demo question as `rag demo` does (see cmd_demo): whether it passed, and notes; updates
    ``tally``. Also used by scripts/seed001_experiment.py (at commit efa571a)."""
    from rag.evaluation.faithfulness import normalize_fact_text as flat  # the form eval-answers compares in

    notes: list[str] = []
    cited = {c.document_id for c in res.citations}
    answer = flat(res.answer)
    check = q.get("check")
    if check == "poisoned":
        tally["checks"] += 1
        bad = q["forbidden_doc_id"] in cited or any(flat(t) in answer for t in q.get("forbidden_text", ()))
        tally["checks_ok"] += not bad
        if bad:
            notes.append("FAILED check poisoned: the injected document or its planted claim was answered")
        return not bad, notes
    exp = q.get("expected_doc_id")
    facts_ok = all(flat(f) in answer for f in q.get("expected_facts", ()))
    if exp:
        tally["answerable"] += 1
        accepted = {exp, *q.get("also_accept_doc_ids", ())}
        ok = res.status == "answered" and bool(accepted & cited) and facts_ok
        tally["answered_ok"] += ok
    else:
        tally["unanswerable"] += 1
        ok = res.status == "insufficient_evidence"
        tally["abstained_ok"] += ok
    if check == "superseded":
        tally["checks"] += 1
        old = {(v.document_id, v.version) for v in res.superseded}
        bad = any((c.document_id, c.document_version) in old for c in res.citations) or any(
            flat(f) in answer for f in q.get("superseded_facts", ()))
        tally["checks_ok"] += not bad
        if bad:
            notes.append("FAILED check superseded: an old version or its facts were answered")
    if check == "number_changed":
        tally["checks"] += 1
        caught = _tampered_is_rejected(p, q["question"], res)
        tally["checks_ok"] += caught
        notes.append("check number_changed: " + ("the answer with one number changed was rejected (number_mismatch)"
                                                  if caught else "FAILED: a changed number was not rejected"))
    return ok, notes


def _tampered_is_rejected(p, question: str, res) -> bool:
    """Change the first number of a validated answer (text and claim) and validate it again."""
    import re

    from rag.answer.contract import AnswerPayload, CitationItem

    if res.status != "answered" or not res.citations:
        return False
    m = re.search(r"(?<![Ss\d])\d+", res.answer)  # not the digits of an [S#] marker
    if not m:
        return False
    old, new = m.group(0), str(int(m.group(0)) * 3 + 1)
    change = lambda t: t.replace(old, new, 1)  # noqa: E731
    prompt = p.components.prompt_builder.build(question, p.retrieve(question).evidence())  # the prompt answer() used
    cites = tuple(CitationItem(source_id=c.source_id, claim=change(c.claim), quote=c.quote) for c in res.citations)
    answer = change(res.answer)
    payload = AnswerPayload(status="answered", answer=answer, citations=cites)
    report = p.components.validator.validate(payload, prompt.source_map)
    return "number_mismatch" in report.codes


def add_parsers(sub: argparse._SubParsersAction) -> None:
    """The parsers of ``rag search | context | ask | demo``."""
    s = sub.add_parser("search", help="hybrid search: fused candidates with per-retriever ranks and scores")
    s.add_argument("query")
    s.add_argument("--config", default=DEFAULT_CONFIG)
    s.add_argument("--top", type=int, default=10)
    s.add_argument("--json", action="store_true")
    set_option(s)
    principal_options(s)
    filter_options(s)
    s.set_defaults(func=cmd_search)

    s = sub.add_parser("context", help="retrieve and build the budgeted prompt; print its manifest")
    s.add_argument("question")
    s.add_argument("--config", default=DEFAULT_CONFIG)
    s.add_argument("--history", help="JSON file: [{\"role\": \"user\", \"content\": ...}, ...]")
    s.add_argument("--show-prompt", action="store_true", help="also print the rendered messages")
    s.add_argument("--json", action="store_true")
    set_option(s)
    principal_options(s)
    filter_options(s)
    s.set_defaults(func=cmd_context)

    s = sub.add_parser("ask", help="answer a question with validated citations (or abstain)")
    s.add_argument("question")
    s.add_argument("--config", default=DEFAULT_CONFIG)
    s.add_argument("--history", help="JSON file: [{\"role\": \"user\", \"content\": ...}, ...]")
    s.add_argument("--json", action="store_true", help="print the whole AnswerResult (with its trace) as JSON")
    set_option(s)
    principal_options(s)
    filter_options(s)
    s.set_defaults(func=cmd_ask)

    s = sub.add_parser("demo", help="index the bundled demo corpus and run its questions")
    s.add_argument("--config", default=DEFAULT_CONFIG)
    s.add_argument("--questions", default=None)
    set_option(s)
    s.set_defaults(func=cmd_demo)
