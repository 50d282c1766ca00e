"""What the quarantine withholds, before and after the signals that read intent (issue 40, part 3).

    .venv/bin/python benchmarks/quarantine/run.py --statutes /tmp/legalize/kr \\
        [--data ../shared/data] [--before REV] [--cache DIR] \\
        [--json results/quarantine.json] [--md docs/results/quarantine.md]

Blocks are chunks as ``configs/default.yaml`` chunks them (200 tokens, 40 overlap); a document is
read the way ``rag index`` reads it (``rag.documents.load_file`` for a statute's Markdown, title and
text for a JSONL passage). "Before" is ``rag/context/sanitize.py`` at ``--before`` (loaded from git
into a temporary module), "after" is the working tree's; both under the default
``security.quarantine: drop_document``:

- before: a document any block of which carries any signal is withheld whole;
- after: a block that carries a signal is withheld; a document is withheld whole only for a signal
  whose kind has document scope (``rag.context.signals.SIGNAL_SCOPE``).

Corpora: ``--statutes`` (every ``*.md`` under it, e.g. legalize-kr's ``kr/``: not in git), SciFact,
MS MARCO en/ko, KorQuAD and kolaw-dev passages from ``--data`` and the demo corpus; and the sets in
tests/fixtures/quarantine: ``hostile.jsonl`` (the development set), ``hostile_heldout.jsonl`` and
``hostile_heldout2.jsonl`` (each written before the signals were changed for it: their first-run
catch is recorded in :data:`FIRST_LOOK`) and ``benign.jsonl`` (hard negatives), the hostile injections
placed into the lawful carriers of ``carriers.jsonl`` as their own paragraph or inside one.
Prints a table, writes JSON and a markdown page.
"""
from __future__ import annotations

import argparse
import datetime
import gzip
import importlib.util
import json
import shlex
import subprocess
import sys
import tempfile
import time
from dataclasses import replace
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
FIXTURES = ROOT / "tests" / "fixtures" / "quarantine"
BEFORE = "d2b583e"  # the last commit with the topic-reading signals
KEEP = "<!-- notes below are kept when the page is written again -->"
HOSTILE_SETS = ("hostile", "hostile_heldout", "hostile_heldout2")
# The held-out sets were written before the signals were changed for them; what the signals caught
# the first time each set was run (then the misses were studied and their whole class fixed).
FIRST_LOOK = {"hostile": "42/48 caught (its first 48 documents; 10 more were added later from probes)",
              "hostile_heldout": "21/30 caught", "hostile_heldout2": "18/25 caught, 17 as the intended kind"}
JSONL = (("scifact", "scifact/corpus.jsonl"), ("msmarco_en", "msmarco/en/corpus.jsonl"),
         ("msmarco_ko", "msmarco/ko/corpus.jsonl"), ("korquad", "korquad1/corpus.jsonl"),
         ("kolaw_dev", "kolaw-dev/corpus.jsonl"), ("demo", str(ROOT / "data/demo/documents.jsonl")))


def old_sanitize(rev: str):
    """``rag.context.sanitize`` as it was at ``rev``."""
    src = subprocess.run(["git", "show", f"{rev}:rag/context/sanitize.py"], cwd=ROOT, check=True,
                         capture_output=True, text=True).stdout
    path = Path(tempfile.mkdtemp()) / "sanitize_before.py"
    # rag.text.lang moved to rag.lang (its names unchanged): the old module reads the language facts there
    path.write_text(src.replace("from rag.text.lang import", "from rag.lang import"), encoding="utf-8")
    spec = importlib.util.spec_from_file_location("sanitize_before", path)
    mod = importlib.util.module_from_spec(spec)
    sys.modules["sanitize_before"] = mod  # dataclasses look their module up
    spec.loader.exec_module(mod)
    return mod


def _chunker():
    from rag.config import load_config
    from rag.index.chunking import Chunker

    cfg = load_config(ROOT / "configs" / "default.yaml")
    return cfg, Chunker(cfg.chunking)


def statute_blocks(root: Path, cache: Path | None):
    """``(document id, [block texts])`` of every Markdown file under ``root`` (cached as gzip JSONL)."""
    if cache is not None and cache.is_file():
        with gzip.open(cache, "rt", encoding="utf-8") as f:
            for line in f:
                row = json.loads(line)
                yield row["id"], row["blocks"]
        return
    from rag.documents.folder import load_file

    cfg, chunker = _chunker()
    out = gzip.open(cache, "wt", encoding="utf-8") if cache is not None else None
    try:
        for path in sorted(root.rglob("*.md")):
            rel = path.relative_to(root).with_suffix("").as_posix()
            doc = replace(load_file(path, cfg.corpus).document, id=rel)
            blocks = [c.text for c in chunker.chunk(doc)]
            if out is not None:
                out.write(json.dumps({"id": rel, "blocks": blocks}, ensure_ascii=False) + "\n")
            yield rel, blocks
    finally:
        if out is not None:
            out.close()


def jsonl_blocks(path: Path):
    from rag.types import Document

    _, chunker = _chunker()
    with path.open(encoding="utf-8") as f:
        for line in f:
            if not line.strip():
                continue
            d = json.loads(line)
            text = "\n\n".join(x for x in (str(d.get("title") or ""), str(d.get("text") or "")) if x)
            doc = Document(id=str(d.get("id", d.get("_id"))), text=text, version=str(d.get("version", "1")))
            yield doc.id, [c.text for c in chunker.chunk(doc)]


def measure(docs, before) -> dict:
    """Documents and blocks withheld before and after, with the documents listed."""
    from rag.context.sanitize import injection_signals

    r = {"documents": 0, "blocks": 0,
         "before": {"documents_withheld": [], "blocks_flagged": 0, "blocks_withheld": 0},
         "after": {"documents_withheld_whole": [], "documents_with_blocks_withheld": [], "blocks_flagged": 0,
                   "blocks_withheld": 0}, "after_examples": []}
    for doc_id, blocks in docs:
        r["documents"] += 1
        r["blocks"] += len(blocks)
        old = [before.injection_signals(t) for t in blocks]
        if any(old):
            r["before"]["documents_withheld"].append(doc_id)
            r["before"]["blocks_flagged"] += sum(1 for s in old if s)
            r["before"]["blocks_withheld"] += len(blocks)
        new = [injection_signals(t) for t in blocks]
        flagged = sum(1 for s in new if s)
        if flagged:
            whole = any(x.scope == "document" for s in new for x in s)
            r["after"]["documents_with_blocks_withheld"].append(doc_id)
            r["after"]["blocks_flagged"] += flagged
            r["after"]["blocks_withheld"] += len(blocks) if whole else flagged
            if whole:
                r["after"]["documents_withheld_whole"].append(doc_id)
            for s in new:
                for x in s:
                    if len(r["after_examples"]) < 20:
                        r["after_examples"].append({"document": doc_id, "kind": x.kind, "excerpt": x.excerpt})
    return r


def compose(row: dict, carriers: dict[str, dict]) -> str:
    """A hostile row's document: the injection alone, or placed into its carrier's middle paragraph
    (``paragraph``: as a paragraph of its own; ``inline``: at the end of that paragraph)."""
    if not row.get("carrier"):
        return row["text"]
    paras = list(carriers[row["carrier"]]["paragraphs"])
    mid = len(paras) // 2
    if row["placement"] == "inline":
        paras[mid] = paras[mid] + " " + row["text"]
    else:
        paras.insert(mid, row["text"])
    return "\n\n".join(paras)


def hostile(path: Path, carriers: dict[str, dict], before) -> dict:
    """Catch rate, kind agreement and scope behaviour on a hostile set."""
    from rag.context.sanitize import injection_signals
    from rag.context.signals import SIGNAL_SCOPE
    from rag.types import Document

    _, chunker = _chunker()
    rows = [json.loads(x) for x in path.read_text(encoding="utf-8").splitlines() if x.strip()]
    out = {"documents": len(rows), "caught": 0, "caught_before": 0, "kind_agrees": 0, "scope_as_designed": 0,
           "by_kind": {}, "missed": [], "kind_differs": [], "scope_differs": []}
    for row in rows:
        text = compose(row, carriers)
        blocks = [c.text for c in chunker.chunk(Document(id=row["id"], text=text))]
        sigs = [injection_signals(b) for b in blocks]
        kinds = {x.kind for s in sigs for x in s}
        k = out["by_kind"].setdefault(row["kinds"][0], {"documents": 0, "caught": 0})
        k["documents"] += 1
        if any(before.injection_signals(b) for b in blocks):
            out["caught_before"] += 1
        if not kinds:
            out["missed"].append({"id": row["id"], "text": row["text"]})
            continue
        out["caught"] += 1
        k["caught"] += 1
        if kinds & set(row["kinds"]):
            out["kind_agrees"] += 1
        else:
            out["kind_differs"].append({"id": row["id"], "expected": row["kinds"], "found": sorted(kinds)})
        # Scope: a document-scope kind withholds every block, any other only the blocks carrying it.
        whole = any(SIGNAL_SCOPE[x] == "document" for x in kinds)
        withheld = len(blocks) if whole else sum(1 for s in sigs if s)
        expect_whole = any(SIGNAL_SCOPE[x] == "document" for x in row["kinds"])
        carrying = sum(1 for b in blocks if _carries(b, row["text"]))
        ok = (withheld == len(blocks)) if expect_whole else (not whole and withheld <= max(carrying, 1))
        if ok:
            out["scope_as_designed"] += 1
        else:
            out["scope_differs"].append({"id": row["id"], "blocks": len(blocks), "withheld": withheld,
                                         "carrying": carrying, "found": sorted(kinds)})
    return out


def _carries(block: str, injection: str) -> bool:
    """Whether ``block`` holds a piece (20 characters) of the injection (chunks overlap)."""
    core = " ".join(injection.split())
    flat = " ".join(block.split())
    return any(core[i:i + 20] in flat for i in range(0, max(1, len(core) - 19), 10))


def benign(path: Path, before) -> dict:
    from rag.context.sanitize import injection_signals

    rows = [json.loads(x) for x in path.read_text(encoding="utf-8").splitlines() if x.strip()]
    flagged_before = [r["id"] for r in rows if before.injection_signals(r["text"])]
    flagged = [{"id": r["id"], "signals": [(x.kind, x.excerpt) for x in injection_signals(r["text"])]}
               for r in rows if injection_signals(r["text"])]
    return {"documents": len(rows), "flagged_before": flagged_before, "flagged_after": flagged}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--statutes", type=Path, help="folder of statute Markdown files (legalize-kr's kr/)")
    ap.add_argument("--statutes-commit", default="", help="the commit of the statute collection, for the record")
    ap.add_argument("--data", type=Path, default=ROOT.parent / "shared" / "data")
    ap.add_argument("--before", default=BEFORE, help="git revision of the signals to compare with")
    ap.add_argument("--cache", type=Path, default=None, help="folder for the chunked statutes (read when present)")
    ap.add_argument("--json", type=Path, default=ROOT / "results" / "quarantine.json")
    ap.add_argument("--md", type=Path, default=ROOT / "docs" / "results" / "quarantine.md")
    args = ap.parse_args(argv)
    before = old_sanitize(args.before)
    t0 = time.perf_counter()
    corpora: dict[str, dict] = {}
    if args.statutes is not None:
        cache = None
        if args.cache is not None:
            args.cache.mkdir(parents=True, exist_ok=True)
            cache = args.cache / "statutes.jsonl.gz"
        corpora["legalize_kr"] = measure(statute_blocks(args.statutes, cache), before)
    for name, rel in JSONL:
        p = Path(rel) if Path(rel).is_absolute() else args.data / rel
        if p.is_file():
            corpora[name] = measure(jsonl_blocks(p), before)
    carriers = {c["id"]: c for c in map(json.loads, (FIXTURES / "carriers.jsonl").read_text(encoding="utf-8").splitlines())}
    sets = {name: hostile(FIXTURES / f"{name}.jsonl", carriers, before) for name in HOSTILE_SETS}
    neg = benign(FIXTURES / "benign.jsonl", before)
    result = {"date": datetime.date.today().isoformat(), "command": " ".join(shlex.quote(a) for a in sys.argv),
              "git": subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True,
                                    text=True).stdout.strip(),
              "before": args.before, "statutes_commit": args.statutes_commit,
              "blocks": "chunks of configs/default.yaml (200 tokens, 40 overlap)", "mode": "drop_document",
              "corpora": corpora, "hostile_sets": sets, "benign": neg, "seconds": round(time.perf_counter() - t0, 1)}
    table = render(result)
    print(table)
    args.json.parent.mkdir(parents=True, exist_ok=True)
    args.json.write_text(json.dumps(result, ensure_ascii=False, indent=1) + "\n", encoding="utf-8")
    args.md.parent.mkdir(parents=True, exist_ok=True)
    kept = ""  # notes written by hand below the marker survive a rerun
    if args.md.is_file() and KEEP in (old := args.md.read_text(encoding="utf-8")):
        kept = old[old.index(KEEP):]
    args.md.write_text(page(result, table) + ("\n" + kept if kept else ""), encoding="utf-8")
    return 0


def render(r: dict) -> str:
    lines = [f"{'corpus':<13}{'docs':>8}{'blocks':>9} | {'before: docs':>12}{'blocks':>8} | "
             f"{'after: whole':>12}{'docs':>6}{'blocks':>8}"]
    for name, c in r["corpora"].items():
        b, a = c["before"], c["after"]
        lines.append(f"{name:<13}{c['documents']:>8}{c['blocks']:>9} | {len(b['documents_withheld']):>12}"
                     f"{b['blocks_withheld']:>8} | {len(a['documents_withheld_whole']):>12}"
                     f"{len(a['documents_with_blocks_withheld']):>6}{a['blocks_withheld']:>8}")
    lines.append("")
    lines.append(f"{'hostile set':<17}{'docs':>6}{'caught':>8}{'before':>8}{'kind ok':>9}{'scope ok':>10}")
    for name, h in r["hostile_sets"].items():
        lines.append(f"{name:<17}{h['documents']:>6}{h['caught']:>8}{h['caught_before']:>8}{h['kind_agrees']:>9}"
                     f"{h['scope_as_designed']:>10}")
    n = r["benign"]
    lines.append(f"benign (hard negatives): {n['documents']} documents, flagged before {len(n['flagged_before'])}, "
                 f"after {len(n['flagged_after'])}")
    return "\n".join(lines)


def page(r: dict, table: str) -> str:
    leg = r["corpora"].get("legalize_kr")
    out = ["# Quarantine: what is withheld, before and after the signals that read intent", "",
           f"Measured {r['date']} at `{r['git']}` (before: `{r['before']}`), {r['seconds']} s.", "",
           "```bash", r["command"], "```", "",
           f"Blocks: {r['blocks']}; mode `{r['mode']}` (the default). Before: a document any block of which "
           "carries any signal is withheld whole. After: a block carrying a signal is withheld, and its whole "
           "document only for a kind with document scope (forged tag or marker, role hijack).", "",
           "```", table, "```", ""]
    if leg is not None:
        out += [f"## legalize-kr ({r['statutes_commit'] or 'head'}): {leg['documents']} law files, "
                f"{leg['blocks']} blocks", "",
                "Withheld before (whole documents): " + (", ".join(f"`{d}`" for d in leg["before"]["documents_withheld"])
                                                        or "none"), "",
                "Withheld after (documents with any block withheld): "
                + (", ".join(f"`{d}`" for d in leg["after"]["documents_with_blocks_withheld"]) or "none"), ""]
    for name, h in r["hostile_sets"].items():
        first = f"; when first run, before the changes it informed: {FIRST_LOOK[name]}" if name in FIRST_LOOK else ""
        out += [f"## {name}: {h['caught']}/{h['documents']} caught (before: {h['caught_before']}){first}", ""]
        out += ["| kind | documents | caught |", "|---|---|---|"]
        out += [f"| {k} | {v['documents']} | {v['caught']} |" for k, v in sorted(h["by_kind"].items())]
        for key in ("missed", "kind_differs", "scope_differs"):
            if h[key]:
                out += ["", f"{key}: " + "; ".join(json.dumps(x, ensure_ascii=False) for x in h[key])]
        out.append("")
    n = r["benign"]
    out += ["## Hard negatives (benign.jsonl)", "",
            f"{n['documents']} lawful sentences about sending data, passwords, AI and modes: flagged before "
            f"{len(n['flagged_before'])} ({', '.join(n['flagged_before']) or 'none'}), after {len(n['flagged_after'])}"
            f" ({', '.join(x['id'] for x in n['flagged_after']) or 'none'}).", ""]
    return "\n".join(out)


if __name__ == "__main__":
    sys.exit(main())
