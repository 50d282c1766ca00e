"""How well the validator's lexical support score separates supporting sentences from the rest, and
validator latency on realistic answers.

Data (``<data>``, default ../shared/data):

- SciFact ``scifact/claims_dev_with_rationales.jsonl`` + ``corpus.jsonl``: a cited abstract is split
  with ``rag.text.split_sentences``; a sentence is positive when it is a rationale of a SUPPORT claim;
  sentences of abstracts cited by NOT_ENOUGH_INFO claims are negatives; CONTRADICT rationales are
  reported apart (on topic, not support: lexical overlap cannot see it).
- WiCE ``wice/claim_dev.jsonl``: positive = a sentence index in ``supporting_sentences``.

The score is ``rag.text.lexical_support(claim, sentence)``, what ``CitationValidator`` uses. The
threshold is chosen (max F1) on the SciFact dev half (claims with an even SHA-1) and reported unchanged
on the test half and on WiCE. Latency: ``CitationValidator.validate`` per answer with cold caches,
SciFact answers citing their rationales in 5-abstract bundles, and the extractive generator's answers
over the demo corpus. ``--embedder use`` (any ``embedding.backend``) also scores pairs by cosine and
reports the ``support_method: max`` rule.
"""
from __future__ import annotations

import hashlib
import statistics
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from rag.bench.harness import data_dir, percentiles, read_jsonl, repo_path
from rag.bench.measurement import Measurement, Outcome


@dataclass(frozen=True)
class Options:
    data: str = field(default="", metadata={"help": "data folder (default ../shared/data or $RAG_DATA_DIR)"})
    embedder: str = field(default="", metadata={"help": "also measure embedding support with this backend"})
    latency_answers: int = 150


def _data(o: Options) -> Path:
    return Path(o.data) if o.data else data_dir()


def prf(scores: np.ndarray, labels: np.ndarray, t: float) -> dict:
    pred = scores >= t
    tp, fp, fn = int((pred & labels).sum()), int((pred & ~labels).sum()), int((~pred & labels).sum())
    p = tp / (tp + fp) if tp + fp else 0.0
    r = tp / (tp + fn) if tp + fn else 0.0
    f = 2 * p * r / (p + r) if p + r else 0.0
    return {"threshold": round(t, 4), "precision": round(p, 4), "recall": round(r, 4), "f1": round(f, 4),
            "predicted_positive": int(pred.sum())}


def best_threshold(scores: np.ndarray, labels: np.ndarray) -> float:
    return float(max(np.unique(np.round(scores, 4)), key=lambda t: (prf(scores, labels, t)["f1"], -t)))


def _summary(scores: np.ndarray, labels: np.ndarray, t: float, configured: float | None) -> dict:
    from rag.evaluation import auroc

    return {"pairs": len(labels), "positives": int(labels.sum()), "auroc": round(auroc(scores, labels), 4),
            "at_threshold": prf(scores, labels, t),
            "at_configured_threshold": prf(scores, labels, configured) if configured is not None else None,
            "sweep": [prf(scores, labels, x) for x in (0.3, 0.4, 0.5, 0.6, 0.7)]}


def _clear_caches() -> None:
    """Cold per answer as measured before: the content-term and sentence caches emptied (the facts
    caches are left warm; ``rag bench run validation`` measures fully cold validation)."""
    from rag.text import content_terms, split_sentences

    content_terms.cache_clear()
    split_sentences.cache_clear()


def dev_half(key: str) -> bool:
    return int(hashlib.sha1(key.encode()).hexdigest(), 16) % 2 == 0


def scifact_pairs(data: Path):
    from rag.text import lexical_support, normalize, split_sentences

    corpus = {str(d["_id"]): d["text"] for d in read_jsonl(data / "scifact" / "corpus.jsonl")}
    groups: dict[tuple[str, str], dict] = {}
    for r in read_jsonl(data / "scifact" / "claims_dev_with_rationales.jsonl"):
        for doc in ([r["doc_id"]] if r["doc_id"] else r["cited_doc_ids"]):
            g = groups.setdefault((r["claim_id"], str(doc)), {"claim": r["claim"], "label": r["label"], "rats": []})
            g["rats"].extend(r["rationale_sentences"])
    pairs, contradict, total, found = [], [], 0, 0
    for (cid, doc), g in sorted(groups.items()):
        text = corpus.get(doc)
        if text is None:
            continue
        sents = [s.text for s in split_sentences(text)]
        pos: set[int] = set()
        for rt in (normalize(x) for x in g["rats"]):
            total += 1
            hit = [i for i, s in enumerate(sents) if normalize(s) == rt or rt in normalize(s)
                   or (len(normalize(s)) > 30 and normalize(s) in rt)]
            found += bool(hit)
            pos.update(hit)
        for i, s in enumerate(sents):
            score = lexical_support(g["claim"], s)
            if g["label"] == "CONTRADICT":
                if i in pos:
                    contradict.append(score)
                continue
            pairs.append((cid, score, g["label"] == "SUPPORT" and i in pos, g["claim"], s))
    return pairs, contradict, found / max(1, total)


def wice_pairs(data: Path):
    from rag.text import lexical_support

    pairs = []
    for k, d in enumerate(read_jsonl(data / "wice" / "claim_dev.jsonl")):
        pos = {i for group in d["supporting_sentences"] for i in group}
        pairs += [(str(k), lexical_support(d["claim"], s), i in pos, d["claim"], s) for i, s in enumerate(d["evidence"])]
    return pairs


def _arrays(ps) -> tuple[np.ndarray, np.ndarray]:
    return np.array([p[1] for p in ps]), np.array([p[2] for p in ps], dtype=bool)


def _scifact_latency(data: Path, validator, limit: int) -> list[float]:
    from rag.answer import AnswerPayload, CitationItem
    from rag.config import ContextConfig
    from rag.context import ContextBuilder, Evidence
    from rag.text import WhitespaceCounter

    corpus = {str(d["_id"]): d["text"] for d in read_jsonl(data / "scifact" / "corpus.jsonl")}
    ids = sorted(corpus)
    rows = [r for r in read_jsonl(data / "scifact" / "claims_dev_with_rationales.jsonl")
            if r["label"] == "SUPPORT" and r["doc_id"] in corpus][:limit]
    builder = ContextBuilder(WhitespaceCounter(), ContextConfig(max_blocks=8, near_duplicates="keep"))
    times = []
    for n, r in enumerate(rows):
        others = [ids[(n * 7919 + j * 104729) % len(ids)] for j in range(4)]
        texts = [(r["doc_id"], corpus[r["doc_id"]])] + [(x, corpus[x]) for x in others if x != r["doc_id"]]
        ev = [Evidence(f"{doc}:0", doc, "1", t, 0, len(t), 10.0 - i) for i, (doc, t) in enumerate(texts)]
        bundle = builder.build(ev, 100_000)
        payload = AnswerPayload(status="answered", answer=" ".join(f"{q} [S1]" for q in r["rationale_sentences"]),
                                citations=tuple(CitationItem(source_id="S1", claim=r["claim"], quote=q)
                                                for q in r["rationale_sentences"]))
        _clear_caches()
        t0 = time.perf_counter()
        validator.validate(payload, bundle.source_map)
        times.append((time.perf_counter() - t0) * 1000)
    return times


def _demo_latency(validator) -> tuple[list[float], int]:
    from rag.answer import ExtractiveGenerator, build_request
    from rag.config import load_config
    from rag.pipeline import Pipeline

    demo = repo_path("data/demo")
    with tempfile.TemporaryDirectory(prefix="rag-support-") as tmp:
        p = Pipeline(load_config(None).with_overrides({  # the unit tests' demo config: hashing embedder, no reranker
            "corpus.paths": [str(demo / "documents.jsonl")], "corpus.format": "jsonl",
            "index.path": str(Path(tmp) / "index"), "bm25.analyzer": "korean_bigram", "embedding.backend": "hashing",
            "embedding.dim": 128, "embedding.cache_dir": str(Path(tmp) / "cache"), "retrieval.candidates": 10,
            "rerank.enabled": False}))
        p.build_index()
        gen = ExtractiveGenerator()
        times, answered = [], 0
        for row in read_jsonl(demo / "questions.jsonl"):
            _, prompt = p.build_prompt(row["question"])
            out = gen.generate(build_request(prompt, 1, (), row["question"]))
            _clear_caches()
            t0 = time.perf_counter()
            report = validator.validate(out.payload, prompt.source_map)
            times.append((time.perf_counter() - t0) * 1000)
            answered += report.status == "answered" and report.ok
    return times, answered


def _embedding(o: Options, sf: list, wi: list, t: float) -> dict:
    from rag.config import EmbeddingConfig
    from rag.models import make_embedder

    emb = make_embedder(EmbeddingConfig(backend=o.embedder, threads=1))

    def scores(pairs: list) -> np.ndarray:
        claims, sents = sorted({p[3] for p in pairs}), sorted({p[4] for p in pairs})
        cv = dict(zip(claims, np.asarray(emb.embed_queries(claims), dtype=np.float32)))
        sv: dict = {}
        for i in range(0, len(sents), 256):
            sv.update(zip(sents[i:i + 256], np.asarray(emb.embed_passages(sents[i:i + 256]), dtype=np.float32)))
        unit = lambda v: v / max(float(np.linalg.norm(v)), 1e-12)  # noqa: E731
        return np.array([float(unit(cv[p[3]]) @ unit(sv[p[4]])) for p in pairs])

    e_sf, e_wi = scores(sf), scores(wi)
    (lex_sf, lab_sf), (lex_wi, lab_wi) = _arrays(sf), _arrays(wi)
    dev = np.array([dev_half(p[0]) for p in sf])
    te = best_threshold(e_sf[dev], lab_sf[dev])

    def rule(lex, e, lab) -> dict:
        r = prf(((lex >= t) | (e >= te)).astype(float), lab, 1.0)
        return {**r, "threshold": {"lexical": round(t, 4), "embedding": round(te, 4)}}

    return {"embedder": getattr(emb, "model_id", o.embedder), "threshold": round(te, 4),
            "scifact_test_half": _summary(e_sf[~dev], lab_sf[~dev], te, None),
            "wice_dev": _summary(e_wi, lab_wi, te, None),
            "max_rule": {"scifact_test_half": rule(lex_sf[~dev], e_sf[~dev], lab_sf[~dev]),
                         "wice_dev": rule(lex_wi, e_wi, lab_wi)}}


def run(o: Options) -> Outcome:
    from rag.answer import AnswerPayload, CitationValidator
    from rag.config import load_config

    data = _data(o)
    cfg = load_config()
    configured = cfg.validation.support_threshold
    sf, contradict, match_rate = scifact_pairs(data)
    wi = wice_pairs(data)
    dev, test = [p for p in sf if dev_half(p[0])], [p for p in sf if not dev_half(p[0])]
    t = best_threshold(*_arrays(dev))
    t_w = best_threshold(*_arrays(wi))
    sets = {"scifact_dev_half": _summary(*_arrays(dev), t, configured),
            "scifact_test_half": _summary(*_arrays(test), t, configured),
            "scifact_all": _summary(*_arrays(sf), t, configured), "wice_dev": _summary(*_arrays(wi), t, configured),
            "scifact_all_at_wice_threshold": _summary(*_arrays(sf), t_w, configured)}
    contra = np.array(contradict)
    validator = CitationValidator(cfg.validation)
    validator.validate(AnswerPayload(status="insufficient_evidence", answer="warm-up", citations=()), {})
    sf_ms = _scifact_latency(data, validator, o.latency_answers)
    demo_ms, demo_ok = _demo_latency(validator)

    def lat(xs: list[float]) -> dict:
        return {"n": len(xs), "median": round(statistics.median(xs), 3), "p95": round(percentiles(xs, (95,))[0], 3)}

    out = {"chosen_threshold": round(t, 4), "wice_chosen_threshold": round(t_w, 4), "configured_threshold": configured,
           "rationale_sentences_matched": round(match_rate, 4), "sets": sets,
           "contradict_rationales": {"n": len(contra), "mean_score": round(float(contra.mean()), 4),
                                     "share_at_or_above_threshold": round(float((contra >= t).mean()), 4)},
           "validator_ms_per_answer": {"scifact_5_abstract_bundles": lat(sf_ms),
                                       "demo_extractive": {**lat(demo_ms), "answered_and_valid": demo_ok}},
           "scorer": "rag.text.lexical_support (content-term recall of the claim)",
           "caches": "content-term and sentence caches cleared before every answer"}
    if o.embedder:
        out["embedding"] = _embedding(o, sf, wi, t)
    table = [f"threshold chosen on the SciFact dev half (max F1): {t:.4f} (configured {configured})",
             f"{'set':<32}{'pairs':>7}{'pos':>6}{'AUROC':>7}{'P@t':>7}{'R@t':>7}{'F1@t':>7}"]
    for name, r in sets.items():
        a = r["at_threshold"]
        table.append(f"{name:<32}{r['pairs']:>7}{r['positives']:>6}{r['auroc']:>7.3f}{a['precision']:>7.3f}"
                     f"{a['recall']:>7.3f}{a['f1']:>7.3f}")
    v = out["validator_ms_per_answer"]
    table.append(f"validator (cold caches): SciFact median {v['scifact_5_abstract_bundles']['median']} ms, "
                 f"demo median {v['demo_extractive']['median']} ms ({demo_ok}/{len(demo_ms)} answered and valid)")
    return Outcome(out, "\n".join(table), cfg.hash)


def _requires(o: Options) -> list[str]:
    data = _data(o)
    need = (data / "scifact" / "corpus.jsonl", data / "scifact" / "claims_dev_with_rationales.jsonl",
            data / "wice" / "claim_dev.jsonl")
    return [f"{p} is missing" for p in need if not p.is_file()]


MEASUREMENT = Measurement("support", "lexical support score on SciFact and WiCE (AUROC, P/R/F1) and validator latency",
                          Options, run, _requires)
