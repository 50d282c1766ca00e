"""Tool selection and tool-result formatting on the GitHub REST catalogue (data/tools-dev/).

1. Selection: for each hand-written question, the ranking's recall@k (a question counts when a
   gold tool is in the top k; with ``needs_all`` every gold tool must be) for BM25 alone, dense
   alone and the configured hybrid, then what the shipped selection sends (recall of the selected
   set, number of tools sent, tools sent for the unanswerable questions) and the tokens of the
   selected definitions next to all 1,223.
2. Formatting: tokens of each committed response as schema + YAML vs minified vs pretty JSON.
3. End to end with the scripted OpenAI server on 127.0.0.1 (tests/fakes.py): the model calls the
   first gold tool (bound to its example response), then answers quoting the result; counts of
   calls run, answers validated and abstentions.

    scripts/fetch_tool_catalogue.sh
    PYTHONPATH=. python scripts/measure_tools.py [--config configs/default.yaml] [--out results/tools_selection.json]
"""
from __future__ import annotations

import argparse
import datetime
import json
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

from rag.config import load_config
from rag.pipeline import Pipeline
from rag.text.tokens import make_counter
from rag.tools import compare_tokens, load_tools

DATA = ROOT / "data" / "tools-dev"
CATALOGUE = ROOT / ".rag" / "data" / "tools" / "catalogue.json"
RESPONSES = CATALOGUE.parent / "responses"  # written by scripts/fetch_tool_catalogue.sh
KS = (1, 3, 5, 8, 10, 20)


def hit(gold: list[str], names: list[str], needs_all: bool) -> bool:
    return all(g in names for g in gold) if needs_all else any(g in names for g in gold)


def selection(p: Pipeline, tools, questions: list[dict]) -> dict:
    sel = p.tool_selector(tools)
    answerable = [q for q in questions if q["gold"]]
    out: dict = {"questions": len(questions), "answerable": len(answerable),
                 "unanswerable": len(questions) - len(answerable)}
    ranked = {q["id"]: sel.rank(q["question"]) for q in questions}
    for name, key in (("bm25", "bm25"), ("dense", "dense"), ("hybrid", None)):
        rec = {}
        for k in KS:
            n = 0
            for q in answerable:
                rows = ranked[q["id"]]
                if key:
                    rows = sorted((t for t in rows if getattr(t, key) is not None), key=lambda t: (-getattr(t, key), t.name))
                n += hit(q["gold"], [t.name for t in rows[:k]], q.get("needs_all", False))
            rec[f"recall@{k}"] = round(n / len(answerable), 4)
        out[f"ranking_{name}"] = rec
    sent, got, per_q, none_sent = [], 0, [], 0
    for q in questions:
        s = sel.select(q["question"])
        names = list(s.names)
        row = {"id": q["id"], "lang": q["lang"], "gold": q["gold"], "selected": names,
               "scores": [round(t.score, 3) for t in s.selected], "products": list(s.products),
               "top_dense": round(max((t.dense or 0) for t in ranked[q["id"]]), 4)}
        if q["gold"]:
            row["hit"] = hit(q["gold"], names, q.get("needs_all", False))
            got += row["hit"]
            sent.append(len(names))
        else:
            none_sent += not names
            row["sent_for_unanswerable"] = len(names)
        per_q.append(row)
    by_lang = {}
    for lang in ("ko", "en"):
        rows = [r for r in per_q if r["lang"] == lang and r["gold"]]
        if rows:
            by_lang[lang] = {"n": len(rows), "selection_recall": round(sum(r["hit"] for r in rows) / len(rows), 4)}
    counter = make_counter(p.config.context.tokenizer, p.config.tokenizer_model)
    all_defs = counter.count(json.dumps([t.definition() for t in tools], ensure_ascii=False))
    sel_defs = [counter.count(json.dumps([tools.get(n).definition() for n in r["selected"]], ensure_ascii=False))
                for r in per_q if r["selected"]]
    out["selection"] = {"recall": round(got / len(answerable), 4), "by_language": by_lang,
                        "tools_sent_mean": round(statistics.mean(sent), 2), "tools_sent_median": statistics.median(sent),
                        "tools_sent_max": max(sent), "unanswerable_with_no_tool_sent": none_sent,
                        "definition_tokens_all_tools": all_defs,
                        "definition_tokens_sent_median": statistics.median(sel_defs) if sel_defs else 0,
                        "tokenizer": counter.name}
    out["per_question"] = per_q
    return out


def formatting(counter) -> dict:
    rows = []
    for f in sorted(RESPONSES.glob("*.json")):
        if f.name.endswith(".schema.json"):
            continue
        data = json.loads(f.read_text(encoding="utf-8"))
        schema_file = f.with_name(f.name[:-5] + ".schema.json")
        schema = json.loads(schema_file.read_text(encoding="utf-8")) if schema_file.is_file() else None
        c = compare_tokens(data, schema, counter)
        page = compare_tokens(_page(data, 20), schema, counter)  # the examples hold 1-2 rows; a page holds more
        rows.append({"response": f.stem, **c.to_json(), **{f"page20_{k}": v for k, v in page.to_json().items()}})
    keys = [k for k in rows[0] if k != "response"]
    tot = {k: sum(r[k] for r in rows) for k in keys}
    return {"responses": len(rows), "totals": tot, "rows": rows, "tokenizer": counter.name,
            "ratio_schema_yaml_to_minified": round(tot["schema_yaml"] / tot["minified_json"], 3),
            "ratio_schema_yaml_to_pretty": round(tot["schema_yaml"] / tot["pretty_json"], 3),
            "ratio_yaml_data_to_minified": round(tot["yaml_data"] / tot["minified_json"], 3),
            "page20_ratio_schema_yaml_to_minified": round(tot["page20_schema_yaml"] / tot["page20_minified_json"], 3),
            "page20_ratio_schema_yaml_to_pretty": round(tot["page20_schema_yaml"] / tot["page20_pretty_json"], 3)}


def _page(data, n: int):
    """The response with its (first) list of rows repeated to ``n`` rows."""
    if isinstance(data, list) and data:
        return [data[i % len(data)] for i in range(n)]
    if isinstance(data, dict):
        for k, v in data.items():
            if isinstance(v, list) and v and isinstance(v[0], dict):
                return {**data, k: [v[i % len(v)] for i in range(n)]}
    return data


def end_to_end(cfg, tools, questions: list[dict]) -> dict:
    from tests.fakes import FakeChatServer, Reply, tool_calls

    responses = {f.stem.replace("__", "/"): json.loads(f.read_text(encoding="utf-8"))
                 for f in RESPONSES.glob("*.json") if not f.name.endswith(".schema.json")}
    bound = tools.bind_map({name: (lambda value: (lambda **_: value))(v) for name, v in responses.items()
                            if name in tools})
    picked = [q for q in questions if q["gold"] and q["gold"][0] in responses]
    rows = []
    with FakeChatServer() as srv:
        c = cfg.with_overrides({"generation.backend": "openai", "generation.base_url": srv.base_url,
                                "generation.model": "scripted", "generation.max_retries": 0,
                                "generation.max_attempts": 1})
        p = Pipeline(c)
        p.build_index()
        for q in picked:
            offered = p.select_tools(q["question"], bound).names
            # A model can only call what it was offered: the gold tool when selected, else the best offered one.
            spec = tools.get(q["gold"][0] if q["gold"][0] in offered else (offered[0] if offered else q["gold"][0]))
            args = {k: "octo-org" if "owner" in k or k == "org" else ("web" if k == "repo" else 1)
                    for k in spec.parameters.get("required", [])}
            args = {k: (v if spec.parameters["properties"].get(k, {}).get("type") != "string" else str(v))
                    for k, v in args.items()}
            first_line = _first_data_line(responses.get(spec.name, {"none": "none"}), spec, c)
            srv.script(tool_calls((spec.wire_name, args), model="scripted"), Reply("done"),
                       Reply(json.dumps({"status": "answered", "answer": f"{first_line} [S1]",
                                         "citations": [{"source_id": "S1", "claim": first_line, "quote": first_line}]},
                                        ensure_ascii=False)))
            t0 = time.perf_counter()
            res = p.answer_with_tools(q["question"], bound)
            tr = res.trace.tools
            rows.append({"id": q["id"], "selected_gold": q["gold"][0] in tr.selection.names, "called": spec.name,
                         "calls": [x.status for x in tr.phase.calls], "status": res.status, "reason": res.reason,
                         "cited_tool": any(x.document_id.startswith("tool:") for x in res.citations),
                         "prompt_tokens": res.trace.manifest.to_json()["prompt_tokens"] if res.trace.manifest else None,
                         "seconds": round(time.perf_counter() - t0, 3)})
            srv._replies.clear()
    return {"questions": len(rows), "gold_selected": sum(r["selected_gold"] for r in rows),
            "calls_ok": sum(r["calls"] == ["ok"] for r in rows),
            "answered_citing_tool": sum(r["status"] == "answered" and r["cited_tool"] for r in rows),
            "abstained": sum(r["status"] != "answered" for r in rows), "rows": rows}


def _first_data_line(value, spec, cfg) -> str:
    """A quotable line of the evidence the model will see (after trimming), without a URL."""
    from rag.text.tokens import make_counter
    from rag.tools import format_result

    text = format_result(value, spec.response, make_counter(cfg.context.tokenizer, cfg.tokenizer_model),
                         cfg.tools.max_result_tokens).text
    data = text.split("# Data\n", 1)[-1].split("\n\n# Trimmed", 1)[0]
    for line in data.splitlines():
        line = line.strip().lstrip("- ").strip()
        if ": " in line and len(line) > 8 and not line.endswith(":") and "http" not in line and "@" not in line:
            return line
    return data.splitlines()[0].strip()


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--config", default="configs/default.yaml")
    ap.add_argument("--set", action="append", default=[], metavar="KEY=VALUE")
    ap.add_argument("--out", default="results/tools_selection.json")
    ap.add_argument("--skip-e2e", action="store_true")
    args = ap.parse_args()
    if not CATALOGUE.is_file() or not RESPONSES.is_dir():
        raise SystemExit(f"{CATALOGUE} or {RESPONSES} is missing: run scripts/fetch_tool_catalogue.sh")
    import yaml

    cfg = load_config(args.config)
    if args.set:
        cfg = cfg.with_overrides({k: yaml.safe_load(v) for k, _, v in (s.partition("=") for s in args.set)})
    t0 = time.perf_counter()
    tools = load_tools(CATALOGUE)
    p = Pipeline(cfg)
    p.tool_selector(tools)
    index_s = time.perf_counter() - t0
    questions = [json.loads(x) for x in (DATA / "questions.jsonl").read_text(encoding="utf-8").splitlines() if x.strip()]
    out = {"date": datetime.date.today().isoformat(), "config": args.config, "overrides": args.set,
           "catalogue": {"tools": len(tools), "products": len({t.product for t in tools}),
                         "load_and_index_s": round(index_s, 1)},
           "tools_config": cfg.tools.model_dump(mode="json")}
    out |= selection(p, tools, questions)
    out["formatting"] = formatting(make_counter(cfg.context.tokenizer, cfg.tokenizer_model))
    if not args.skip_e2e:
        out["end_to_end_scripted"] = end_to_end(cfg, tools, questions)
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text(json.dumps(out, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    s = out["selection"]
    print(f"catalogue: {len(tools)} tools, {out['catalogue']['products']} products; indexed in {index_s:.1f} s")
    for name in ("bm25", "dense", "hybrid"):
        print(f"ranking {name:<6} " + "  ".join(f"{k} {v:.3f}" for k, v in out[f"ranking_{name}"].items()))
    print(f"selection: recall {s['recall']:.3f} ({s['by_language']}), tools sent mean {s['tools_sent_mean']} "
          f"median {s['tools_sent_median']} max {s['tools_sent_max']}; unanswerable with no tool: "
          f"{s['unanswerable_with_no_tool_sent']}/{out['unanswerable']}; definition tokens: all {s['definition_tokens_all_tools']}, "
          f"sent median {s['definition_tokens_sent_median']}")
    f = out["formatting"]
    print(f"formatting ({f['responses']} responses, {f['tokenizer']}): {f['totals']}")
    print(f"  schema+YAML / minified {f['ratio_schema_yaml_to_minified']}, / pretty {f['ratio_schema_yaml_to_pretty']}; "
          f"YAML alone / minified {f['ratio_yaml_data_to_minified']}; 20-row pages: schema+YAML / minified "
          f"{f['page20_ratio_schema_yaml_to_minified']}, / pretty {f['page20_ratio_schema_yaml_to_pretty']}")
    if "end_to_end_scripted" in out:
        e = out["end_to_end_scripted"]
        print(f"end to end (scripted model): {e['questions']} questions, gold selected {e['gold_selected']}, "
              f"calls ok {e['calls_ok']}, answered citing the tool {e['answered_citing_tool']}, abstained {e['abstained']}")
    print(f"written {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
