"""Tool selection and tool-result formatting on the GitHub REST catalogue (data/tools-dev/).

1. Selection: for each hand-written question of ``data/tools-dev/questions.jsonl``, the ranking's
   recall@k (a question counts when a gold tool is in the top k; with ``needs_all`` every gold tool
   must be) for BM25 alone, dense alone and the configured hybrid; then what the shipped selection
   sends (recall, tools sent, tools sent for unanswerable questions) and the tokens of the selected
   definitions next to all of them.
2. Formatting: tokens of each committed response example as schema + YAML vs minified vs pretty JSON,
   also with its list of rows repeated to a 20-row page (when the catalogue's folder has ``responses/``).

Any OpenAPI catalogue and question file will do (``--catalogue``, ``--questions``): the second,
held-out one is DigitalOcean's API with ``data/tools-do/questions.jsonl``. Questions may carry a
``kind`` (operation, symptom, in_passing), reported apart.

The catalogue (``.rag/data/tools/catalogue.json``) and its response examples are not in git; how to
fetch them: docs/results/tools.md. Without them the measurement is skipped.
"""
from __future__ import annotations

import json
import statistics
import time
from dataclasses import dataclass, field
from pathlib import Path

from rag.bench.harness import read_jsonl, repo_path
from rag.bench.measurement import Measurement, Outcome

KS = (1, 3, 5, 8, 10, 20)


@dataclass(frozen=True)
class Options:
    config: str = "configs/default.yaml"
    catalogue: str = field(default=".rag/data/tools/catalogue.json", metadata={"help": "OpenAPI catalogue"})
    questions: str = "data/tools-dev/questions.jsonl"


def _hit(gold: list[str], names: list[str], needs_all: bool) -> bool:
    return all(g in names for g in gold) if needs_all else any(g in names for g in gold)


def _selection(sel, tools, questions: list[dict], counter) -> dict:
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
                n += _hit(q["gold"], [t.name for t in rows[:k]], q.get("needs_all", False))
            rec[f"recall@{k}"] = round(n / len(answerable), 4)
        out[f"ranking_{name}"] = rec
    for q in answerable:  # recall@8 of the ranking per language and per kind of question
        hit8 = _hit(q["gold"], [t.name for t in ranked[q["id"]][:8]], q.get("needs_all", False))
        for group in (f"lang:{q['lang']}", f"kind:{q.get('kind', 'operation')}"):
            out.setdefault("ranking_hybrid_recall@8_by", {}).setdefault(group, []).append(hit8)
    out["ranking_hybrid_recall@8_by"] = {k: {"n": len(v), "recall@8": round(sum(v) / len(v), 4)}
                                         for k, v in sorted(out.get("ranking_hybrid_recall@8_by", {}).items())}
    sent, got, none_sent, by_lang, by_kind, sent_defs, per_question = [], 0, 0, {}, {}, [], []
    for q in questions:
        names = list(sel.select(q["question"]).names)
        if names:
            sent_defs.append(counter.count(json.dumps([tools.get(n).definition() for n in names], ensure_ascii=False)))
        if q["gold"]:
            hit = _hit(q["gold"], names, q.get("needs_all", False))
            got += hit
            sent.append(len(names))
            by_lang.setdefault(q["lang"], []).append(hit)
            by_kind.setdefault(q.get("kind", "operation"), []).append(hit)
            per_question.append({"id": q["id"], "hit": hit, "sent": names,
                                 "gold_rank": min((i + 1 for i, t in enumerate(ranked[q["id"]]) if t.name in q["gold"]),
                                                  default=None)})
        else:
            none_sent += not names
    all_defs = counter.count(json.dumps([t.definition() for t in tools], ensure_ascii=False))
    out["selection"] = {"recall": round(got / len(answerable), 4),
                        "by_language": {k: {"n": len(v), "selection_recall": round(sum(v) / len(v), 4)}
                                        for k, v in sorted(by_lang.items())},
                        "by_kind": {k: {"n": len(v), "selection_recall": round(sum(v) / len(v), 4)}
                                    for k, v in sorted(by_kind.items())},
                        "tools_sent_mean": round(statistics.mean(sent), 2), "tools_sent_median": statistics.median(sent),
                        "tools_sent_max": max(sent), "unanswerable_with_no_tool_sent": none_sent,
                        "definition_tokens_all_tools": all_defs,
                        "definition_tokens_sent_median": statistics.median(sent_defs) if sent_defs else 0,
                        "tokenizer": counter.name}
    out["per_question"] = per_question
    out["selection_read_only"] = _read_only(sel, tools, answerable)
    return out


def _read_only(sel, tools, answerable: list[dict]) -> dict:
    """Selection as shipped (write tools not offered) on the questions a read tool answers."""
    full = sel.config
    sel.config = full.model_copy(update={"allow_write": False})
    try:
        readable = [q for q in answerable if any(not tools.get(g).writes(full.undeclared_effect) for g in q["gold"])]
        hits = [any(g in sel.select(q["question"]).names for g in q["gold"]) for q in readable]
    finally:
        sel.config = full
    return {"questions": len(readable), "recall": round(sum(hits) / len(hits), 4) if hits else None}


def _page(data, n: int):
    """The response with its (first) list of rows repeated to ``n`` rows."""
    if isinstance(data, list) and data:
        return [data[i % len(data)] for i in range(n)]
    if isinstance(data, dict):
        for k, v in data.items():
            if isinstance(v, list) and v and isinstance(v[0], dict):
                return {**data, k: [v[i % len(v)] for i in range(n)]}
    return data


def _formatting(responses: Path, counter) -> dict:
    from rag.tools import compare_tokens

    rows = []
    for f in sorted(responses.glob("*.json")):
        if f.name.endswith(".schema.json"):
            continue
        data = json.loads(f.read_text(encoding="utf-8"))
        schema_file = f.with_name(f.name[:-5] + ".schema.json")
        schema = json.loads(schema_file.read_text(encoding="utf-8")) if schema_file.is_file() else None
        c, page = compare_tokens(data, schema, counter), compare_tokens(_page(data, 20), schema, counter)
        rows.append({"response": f.stem, **c.to_json(), **{f"page20_{k}": v for k, v in page.to_json().items()}})
    tot = {k: sum(r[k] for r in rows) for k in rows[0] if k != "response"} if rows else {}
    ratio = lambda a, b: round(tot[a] / tot[b], 3) if tot.get(b) else None  # noqa: E731
    return {"responses": len(rows), "totals": tot, "tokenizer": counter.name,
            "ratio_schema_yaml_to_minified": ratio("schema_yaml", "minified_json"),
            "ratio_schema_yaml_to_pretty": ratio("schema_yaml", "pretty_json"),
            "ratio_yaml_data_to_minified": ratio("yaml_data", "minified_json"),
            "page20_ratio_schema_yaml_to_minified": ratio("page20_schema_yaml", "page20_minified_json"),
            "page20_ratio_schema_yaml_to_pretty": ratio("page20_schema_yaml", "page20_pretty_json")}


def run(o: Options) -> Outcome:
    from rag.config import load_config
    from rag.index import Chunker
    from rag.pipeline import Pipeline
    from rag.text import make_analyzer, make_counter
    from rag.tools import ToolSelector, load_tools

    cfg = load_config(repo_path(o.config))
    catalogue = repo_path(o.catalogue)
    t0 = time.perf_counter()
    tools = load_tools(catalogue)
    b = cfg.bm25
    # Selection is measured over the whole catalogue: the gold of many questions is a write operation.
    tools_cfg = cfg.tools.model_copy(update={"allow_write": True})
    sel = ToolSelector(tools, tools_cfg, cfg, Pipeline(cfg).components.embedder, Chunker(cfg.chunking),
                       make_analyzer(b.analyzer, stem=b.stem, stopwords=b.stopwords))
    index_s = time.perf_counter() - t0
    counter = make_counter(cfg.context.tokenizer, cfg.tokenizer_model)
    questions = list(read_jsonl(repo_path(o.questions)))
    out = {"catalogue": {"tools": len(tools), "products": len({t.product for t in tools}),
                         "load_and_index_s": round(index_s, 1)}, "tools_config": tools_cfg.model_dump(mode="json")}
    out |= _selection(sel, tools, questions, counter)
    responses = catalogue.parent / "responses"
    out["formatting"] = _formatting(responses, counter) if responses.is_dir() else None
    s, f = out["selection"], out["formatting"]
    table = [f"catalogue: {len(tools)} tools; indexed in {index_s:.1f} s"]
    table += [f"ranking {n:<6} " + "  ".join(f"{k} {v:.3f}" for k, v in out[f"ranking_{n}"].items())
              for n in ("bm25", "dense", "hybrid")]
    table.append(f"selection: recall {s['recall']:.3f} {s['by_language']}, tools sent mean {s['tools_sent_mean']}, "
                 f"unanswerable with no tool {s['unanswerable_with_no_tool_sent']}/{out['unanswerable']}")
    table.append("ranking hybrid recall@8 by " + ", ".join(f"{k} {v['recall@8']:.3f} (n={v['n']})"
                                                         for k, v in out["ranking_hybrid_recall@8_by"].items()))
    table.append("selection recall by kind: " + ", ".join(f"{k} {v['selection_recall']:.3f} (n={v['n']})"
                                                          for k, v in s["by_kind"].items()))
    ro = out["selection_read_only"]
    table.append(f"selection as shipped (read tools only): recall {ro['recall']} on the {ro['questions']} questions "
                 "a read tool answers")
    if f:
        table.append(f"formatting ({f['responses']} responses, {f['tokenizer']}): schema+YAML / minified "
                     f"{f['ratio_schema_yaml_to_minified']}, / pretty {f['ratio_schema_yaml_to_pretty']}")
    return Outcome(out, "\n".join(table), cfg.hash)


def _requires(o: Options) -> list[str]:
    cat = repo_path(o.catalogue)
    return [] if cat.is_file() else [f"the tool catalogue {cat} is not there (see docs/results/tools.md)"]


MEASUREMENT = Measurement("tools", "tool selection recall and result-formatting tokens on the GitHub REST catalogue",
                          Options, run, _requires)
