"""Fit the gate's answerability model and threshold by the worst case across development sets.

For each development set every question gets the features of :mod:`rag.rerank.answerability`
(computed with ``--config``, i.e. the shipped default's embedder, analyzer and reranker):

- NoMIRACL-style sets (each question with its own passages): NoMIRACL-ko, SQuAD 2.0 (half of dev),
  and the MS MARCO en/ko sets built by ``scripts/make_msmarco_abstention.py`` from queries the
  reranker never trained on; each is split 50/50 by hash into ``calib`` and ``eval`` halves;
- kolaw-dev: its questions run through retrieval over its own statute corpus (all 60 questions).

Then, for each candidate feature subset, leave one data set out: fit on the calib halves of the
others, score every question of the left-out set, report its AUROC. The subset with the best
*worst* left-out AUROC is fitted on every calib half (kolaw-dev whole) and saved as
``answerability.json`` beside the reranker. The threshold: on each set the lowest threshold whose
answered calib questions reach ``--target-precision``; the shipped one is the largest of these
(the strictest set decides), and is checked never to answer every question of a set.

    python scripts/fit_answerability.py --config configs/default.yaml --out results/answerability.json

Feature tables are cached under ``.rag/answerability/`` (keyed by the config's scoring hash).
"""
from __future__ import annotations

import argparse
import json
import math
import sys
import time
from pathlib import Path

import numpy as np

from rag.config import load_config
from rag.evaluation.abstention import calibrate_threshold, score_questions
from rag.evaluation.datasets import load_labelled
from rag.evaluation.metrics import auroc
from rag.pipeline import Pipeline
from rag.rerank import answerability as A
from rag.rerank.train import in_holdout

DATA = Path("../shared/data")
SETS = {  # name -> (path, language)
    "nomiracl-ko": (DATA / "nomiracl/ko.test.jsonl", "ko"),
    "squad2": (DATA / "squad2/dev-v2.0-half.json", "en"),
    "msmarco-en": (Path(".rag/data/msmarco_en_abstention.jsonl"), "en"),
    "scifact-en": (Path(".rag/data/scifact_en_abstention.jsonl"), "en"),
    "msmarco-en2ko": (Path(".rag/data/msmarco_en2ko_abstention.jsonl"), "en"),  # English questions, Korean passages
    "msmarco-ko": (Path(".rag/data/msmarco_ko_abstention.jsonl"), "ko"),
    "kolaw-dev": (DATA / "kolaw-dev", "ko"),
}
SUBSETS = {
    "all": A.FEATURES,
    "no_bm25": ("top_logit", "margin", "top_dense", "agree_dense"),
    "logit_margin_dense": ("top_logit", "margin", "top_dense"),
    "logit_dense": ("top_logit", "top_dense"),
    "logit_margin": ("top_logit", "margin"),
    "logit": ("top_logit",),
    "dense": ("top_dense",),
}


def _rows_labelled(pipe: Pipeline, name: str, path: Path, max_questions: int | None) -> list[dict]:
    items = load_labelled(path, "all")
    if max_questions and len(items) > max_questions:  # a fixed, hash-ordered sample
        items = sorted(sorted(items, key=lambda q: hash_key(name, q.qid))[:max_questions], key=lambda q: q.qid)
    t0 = time.perf_counter()
    scored = score_questions(pipe, items)
    print(f"  {name}: scored {len(scored)} questions in {time.perf_counter() - t0:.0f}s", file=sys.stderr)
    return [{"qid": sq.qid, "answerable": sq.answerable, "language": sq.language,
             "split": "eval" if in_holdout(name, sq.qid, 50) else "calib",
             "features": A.features(sq.candidates, sq.rerank)} for sq in scored]


def hash_key(name: str, qid: str) -> str:
    import hashlib

    return hashlib.sha1(f"{name}:{qid}".encode()).hexdigest()


def _rows_kolaw(cfg, path: Path) -> list[dict]:
    import tempfile

    from rag.evaluation.faithfulness import load_answer_dataset
    from rag.text.lang import detect_language

    data = load_answer_dataset(path)
    rows = []
    with tempfile.TemporaryDirectory(prefix="rag-answerability-") as tmp:
        c = cfg.with_overrides({"corpus.paths": [str(data.corpus_path.resolve())], "corpus.format": "jsonl",
                                "index.path": str(Path(tmp) / "index")})
        p = Pipeline(c)
        p.build_index(force=True)
        for q in data.questions:
            r = p.retrieve(q.question)
            rows.append({"qid": q.id, "answerable": q.answerable, "language": detect_language(q.question),
                         "split": "all", "features": A.features(r.search.candidates, r.rerank)})
    return rows


def feature_table(pipe: Pipeline, name: str, max_questions: int | None) -> list[dict]:
    cfg = pipe.config
    d = cfg.model_dump(mode="json")
    key = hash_key(json.dumps({k: d[k] for k in ("bm25", "embedding", "rerank", "retrieval", "chunking")},
                              sort_keys=True), name)[:16]
    cache = Path(".rag/answerability") / f"{name}-{key}.json"
    if cache.is_file():
        return json.loads(cache.read_text(encoding="utf-8"))
    path, _ = SETS[name]
    rows = _rows_kolaw(cfg, path) if name == "kolaw-dev" else _rows_labelled(pipe, name, path, max_questions)
    cache.parent.mkdir(parents=True, exist_ok=True)
    cache.write_text(json.dumps(rows), encoding="utf-8")
    return rows


def _xy(rows: list[dict], split: str | None = None):
    sel = [r for r in rows if split is None or r["split"] in (split, "all")]
    return [r["features"] for r in sel], [bool(r["answerable"]) for r in sel]


def _rates(p: np.ndarray, y: list[bool], tau: float) -> dict:
    y_ = np.asarray(y, dtype=bool)
    a = p >= tau
    return {"n": len(y_), "answered_when_answerable": round(float(a[y_].mean()), 4) if y_.any() else None,
            "abstained_when_unanswerable": round(float((~a[~y_]).mean()), 4) if (~y_).any() else None,
            "precision_of_answered": round(float(y_[a].mean()), 4) if a.any() else None,
            "answers_all": bool(a.all())}


def _values(rows: list[dict], feature: str) -> list[float]:
    """One feature per row, a missing (non-finite) one as -1e9: ranked below every real value."""
    return [r["features"][feature] if math.isfinite(r["features"][feature]) else -1e9 for r in rows]


def single_signal_gates(tables: dict[str, list[dict]], names: list[str], targets: tuple[float, ...]) -> dict:
    """Each plain signal used alone as the gate (no fitting, so every set is left out): per target
    precision, each set's calib-half threshold, the strictest of them, and the rates that threshold
    gives on each set's eval half (on all of kolaw-dev)."""
    out: dict = {}
    for f in ("top_logit", "top_dense", "top_bm25"):
        out[f] = {}
        for tp in targets:
            per = {}
            for n in names:
                cal = [r for r in tables[n] if r["split"] in ("calib", "all")]
                per[n] = round(calibrate_threshold(_values(cal, f), [r["answerable"] for r in cal], tp)[0], 6)
            tau = max(per.values())
            rates = {}
            for n in names:
                ev = [r for r in tables[n] if r["split"] in ("eval", "all")]
                rates[n] = dict(_rates(np.asarray(_values(ev, f)), [r["answerable"] for r in ev], tau),
                                auroc=round(auroc(_values(ev, f), [r["answerable"] for r in ev]), 4))
            out[f][str(tp)] = {"per_set": per, "strictest": tau, "eval_rates": rates}
            print(f"{f} at precision {tp}: per set {per}; strictest {tau:.4f}")
            for n, r in rates.items():
                print(f"    {n:<12} eval {r}")
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--config", default="configs/default.yaml")
    ap.add_argument("--sets", nargs="*", default=list(SETS))
    ap.add_argument("--max-questions", type=int, default=1200, help="per labelled set (SQuAD 2.0 has 6,078)")
    ap.add_argument("--target-precision", type=float, default=0.8)
    ap.add_argument("--l2", type=float, default=1.0)
    ap.add_argument("--save", action="store_true", help="write answerability.json beside the reranker")
    ap.add_argument("--out", default="results/answerability.json")
    args = ap.parse_args()
    cfg = load_config(args.config)
    pipe = Pipeline(cfg)  # one set of models (embedder, reranker) for every labelled set
    tables = {}
    for name in args.sets:
        if not SETS[name][0].exists():
            print(f"skip {name}: {SETS[name][0]} not found", file=sys.stderr)
            continue
        tables[name] = feature_table(pipe, name, args.max_questions)
    names = sorted(tables)
    # Leave one data set out, per feature subset.
    lodo: dict[str, dict[str, float]] = {}
    for sub, feats in SUBSETS.items():
        lodo[sub] = {}
        for held in names:
            x, y = [], []
            for n in names:
                if n != held:
                    xs, ys = _xy(tables[n], "calib")
                    x += xs
                    y += ys
            m = A.fit(x, y, feats, l2=args.l2)
            hx, hy = _xy(tables[held])
            lodo[sub][held] = round(auroc(m.probabilities(hx).tolist(), hy), 4)
    single = {f: {n: round(auroc(_values(tables[n], f), [r["answerable"] for r in tables[n]]), 4) for n in names}
              for f in A.FEATURES}
    signal_gates = single_signal_gates(tables, names, (0.6, args.target_precision))
    best = max(SUBSETS, key=lambda s: (min(lodo[s].values()), sum(lodo[s].values())))
    print(f"{'features':<20}" + "".join(f"{n:>13}" for n in names) + f"{'worst':>8}")
    for sub in SUBSETS:
        print(f"{sub:<20}" + "".join(f"{lodo[sub][n]:>13.4f}" for n in names) + f"{min(lodo[sub].values()):>8.4f}")
    print(f"chosen by the worst left-out AUROC: {best}")
    # Final fit on every calib half; threshold by the strictest set.
    x, y = [], []
    for n in names:
        xs, ys = _xy(tables[n], "calib")
        x += xs
        y += ys
    reranker = pipe.reranker
    model = A.fit(x, y, SUBSETS[best], l2=args.l2, reranker=reranker.model_id if reranker else "",
                  note=f"fit on the calib halves of {', '.join(names)} (kolaw-dev whole); scripts/fit_answerability.py")
    taus = {}
    for n in names:
        xs, ys = _xy(tables[n], "calib")
        taus[n] = calibrate_threshold(model.probabilities(xs).tolist(), ys, args.target_precision)[0]
    tau = max(taus.values())
    report = {"config": args.config, "target_precision": args.target_precision, "chosen": best,
              "lodo_auroc": lodo, "single_feature_auroc": single, "single_signal_gates": signal_gates, "thresholds_per_set": taus, "threshold": tau,
              "model": model.to_json(), "rates": {}}
    for n in names:
        for split in ("calib", "eval", None):
            xs, ys = _xy(tables[n], split)
            if not ys:
                continue
            p = model.probabilities(xs)
            report["rates"][f"{n}/{split or 'all'}"] = dict(_rates(p, ys, tau), auroc=round(auroc(p.tolist(), ys), 4))
    print(f"threshold {tau:.4f} (per set: {', '.join(f'{k} {v:.4f}' for k, v in taus.items())})")
    for k, v in report["rates"].items():
        print(f"  {k:<22} {v}")
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")
    if args.save and reranker is not None and reranker.scorer.path is not None:
        A.save(model, reranker.scorer.path / A.FILENAME)
        print(f"wrote {reranker.scorer.path / A.FILENAME}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
