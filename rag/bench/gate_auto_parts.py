"""The pieces of the ``gate-auto`` measurement (:mod:`rag.bench.gate_auto`) that read and write files
but run no command: pooling a labelled set's passages into a corpus, a config with the corpus, index
and cache swapped, the 50/50 halves, labelling a batch run as a person would, the label fit on
kolaw-dev's recorded gate scores, and the rates an answers run scores.

No label is read while pooling: :func:`pooled_passages` reads only the passages.
"""
from __future__ import annotations

import json
import logging
import math
from collections import Counter
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any, Iterable, Mapping, Sequence

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Passage:
    id: str
    title: str
    text: str


# --------------------------------------------------------------------------- pooled corpora
def pooled_passages(dataset: Path) -> dict[str, Passage]:
    """docid -> passage of a labelled abstention set; the first text seen for a docid wins.

    SQuAD 2.0 JSON: one passage per paragraph, with the id ``rag eval-abstention`` gives it
    (``<article title>#<paragraph index>``, the title with spaces); NoMIRACL-style JSONL: the passage
    ``docid``."""
    docs: dict[str, Passage] = {}
    conflicts = 0

    def put(p: Passage) -> None:
        nonlocal conflicts
        old = docs.setdefault(p.id, p)
        conflicts += old is not p and old != p

    if dataset.suffix == ".json":
        for art in json.loads(dataset.read_text(encoding="utf-8"))["data"]:
            title = str(art.get("title", ""))
            for pi, para in enumerate(art.get("paragraphs", [])):
                put(Passage(f"{title}#{pi}", title.replace("_", " "), para["context"]))
    else:
        from rag._io import read_jsonl

        for _, row in read_jsonl(dataset):
            for ps in row["passages"]:
                put(Passage(str(ps["docid"]), str(ps.get("title") or ""), str(ps.get("text") or "")))
    if conflicts:
        log.warning("%s: %d repeated docids with another text (the first kept)", dataset, conflicts)
    return docs


def write_pooled_corpus(dataset: Path, out: Path, limit: int | None = None) -> int:
    """The set's passages as a JSONL corpus (id, title, text), sorted by id; ``limit``: the first N."""
    docs = pooled_passages(dataset)
    ids = sorted(docs)[:limit] if limit else sorted(docs)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text("".join(json.dumps(asdict(docs[d]), ensure_ascii=False) + "\n" for d in ids), encoding="utf-8")
    return len(ids)


def write_swapped_config(base: Path, out: Path, *, index: Path, cache: Path, corpus: Path | None = None) -> None:
    """``base`` with ``corpus.paths`` (None: the base's own paths, made absolute), ``index.path`` and
    ``embedding.cache_dir`` replaced by absolute paths and ``name`` set to ``out``'s stem."""
    import yaml

    data = yaml.safe_load(base.read_text(encoding="utf-8")) or {}
    data["name"] = out.stem
    if corpus is not None:
        data.setdefault("corpus", {})["paths"] = [str(corpus.resolve())]
        data["corpus"]["format"] = "jsonl"
    else:
        data["corpus"]["paths"] = [str((base.parent / p).resolve()) for p in data["corpus"]["paths"]]
    data.setdefault("index", {})["path"] = str(index.resolve())
    data.setdefault("embedding", {})["cache_dir"] = str(cache.resolve())
    out.parent.mkdir(parents=True, exist_ok=True)
    header = f"# {base.name} with the corpus, index and embedding cache swapped (rag bench run gate-auto)\n"
    out.write_text(header + yaml.safe_dump(data, sort_keys=False, allow_unicode=True), encoding="utf-8")


def threshold_of(config: Path, key: str = "threshold") -> float | None:
    """The gate's ``threshold`` (or ``language_thresholds.<key>``) a config file sets, if any."""
    import yaml

    gate = (yaml.safe_load(config.read_text(encoding="utf-8")) or {}).get("gate") or {}
    value = gate.get("threshold") if key == "threshold" else (gate.get("language_thresholds") or {}).get(key)
    return None if value is None else float(value)


# --------------------------------------------------------------------------- halves and labels
def half(qid: str, name: str = "questions.jsonl") -> str:
    """``calib`` or ``eval``: the fixed 50/50 hash split ``rag calibrate --split`` uses, named after the file."""
    from rag.rerank.train import in_holdout

    return "eval" if in_holdout(name, qid, 50) else "calib"


def split_halves(questions: Path, out_dir: Path) -> dict[str, int]:
    """``out_dir/calib.jsonl`` and ``out_dir/eval.jsonl``: the question file's lines cut by :func:`half`."""
    lines: dict[str, list[str]] = {"calib": [], "eval": []}
    for raw in questions.read_text(encoding="utf-8").splitlines():
        if raw.strip():
            lines[half(str(json.loads(raw)["id"]), questions.name)].append(raw)
    out_dir.mkdir(parents=True, exist_ok=True)
    for name, rows in lines.items():
        (out_dir / f"{name}.jsonl").write_text("".join(r + "\n" for r in rows), encoding="utf-8")
    return {name: len(rows) for name, rows in lines.items()}


def label_of(answerable: bool, answered: bool, correct: bool) -> str:
    """What a person checking a batch line writes: an answerable question is ``right`` only when answered
    correctly; an unanswerable one only when abstained."""
    if answerable:
        return "right" if answered and correct else "wrong"
    return "wrong" if answered else "right"


def label_batch(dataset: Path, batch: Path, out: Path) -> Counter[tuple[str, str, str]]:
    """Each answered or abstained line of a ``rag batch`` results file judged against the dataset's gold
    with the scorer ``rag eval-answers`` uses, and labelled (:func:`label_of`); a failed line gets none."""
    from rag._io import read_jsonl
    from rag.evaluation.answer_dataset import load_answer_dataset
    from rag.evaluation.answer_scoring import score_answer

    data = load_answer_dataset(dataset)
    by_id = {q.id: q for q in data.questions}
    counts: Counter[tuple[str, str, str]] = Counter()
    written = []
    for n, o in read_jsonl(batch):
        q = by_id.get(str(o.get("id")))
        if q is None:
            raise ValueError(f"{batch}:{n}: id {o.get('id')!r} is not a question of {dataset}")
        if o.get("status") in ("answered", "insufficient_evidence"):
            result = o.get("result") or {}
            cited = [(c["document_id"], c["document_version"]) for c in result.get("citations", [])]
            row = score_answer(q, o["status"], result.get("answer", ""), cited, data.latest)
            o["label"] = label_of(q.answerable, row.answered, row.correct)
            counts[("answerable" if q.answerable else "unanswerable", o["status"], o["label"])] += 1
        else:
            counts[("-", str(o.get("status")), "no label")] += 1
        written.append(json.dumps(o, ensure_ascii=False))
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text("".join(w + "\n" for w in written), encoding="utf-8")
    return counts


# --------------------------------------------------------------------------- scores and rates
def read_score(row: Mapping[str, Any]) -> float:
    """The gate score an answers row recorded; a question the gate's reading stopped is below every score."""
    g = row.get("gate") or {}
    s = g.get("score")
    return -math.inf if s is None or g.get("stopped_by_reading") else float(s)


def gate_auroc(rows: Sequence[Mapping[str, Any]]) -> float | None:
    from rag.evaluation.metrics import auroc

    a = auroc([read_score(r) for r in rows], [bool(r["answerable"]) for r in rows])
    return None if math.isnan(a) else round(a, 4)


def answer_rates(rows: Sequence[Mapping[str, Any]]) -> dict[str, float | int | None]:
    """Abstained on unanswerable, answered of answerable, precision (answerable among answered), correct
    among answered, accuracy, and the gate's AUROC, of ``rag eval-answers`` rows."""
    ans = [r for r in rows if r["answerable"]]
    una = [r for r in rows if not r["answerable"]]
    answered = [r for r in rows if r["status"] != "insufficient_evidence"]

    def share(a: int, b: int) -> float | None:
        return round(a / b, 4) if b else None

    return {"n": len(rows), "n_answerable": len(ans), "n_unanswerable": len(una),
            "abstained_when_unanswerable": share(sum(r["status"] == "insufficient_evidence" for r in una), len(una)),
            "answered_when_answerable": share(sum(r["status"] != "insufficient_evidence" for r in ans), len(ans)),
            "precision_of_answered": share(sum(r["answerable"] for r in answered), len(answered)),
            "correct_among_answered": share(sum(bool(r.get("correct")) for r in answered if r["answerable"]),
                                            len(answered)),
            "accuracy_answerable": share(sum(bool(r.get("correct")) for r in ans), len(ans)),
            "gate_auroc": gate_auroc(rows)}


def fit_on_answers(rows: Iterable[Mapping[str, Any]], questions: Path, language: str, target: float,
                   base: Path, out: Path) -> dict[str, Any]:
    """kolaw-dev has no passages per question, so ``rag calibrate --dataset`` cannot read it: fit
    ``gate.threshold`` at ``target`` precision on the gate scores an answers run recorded, on the calib
    half's questions in ``language``, and write ``base`` with it to ``out``."""
    from rag._io import read_jsonl
    from rag.calibrate import calibrate_threshold, write_calibrated_config
    from rag.evaluation.metrics import auroc
    from rag.lang import detect_language

    text = {str(o["id"]): str(o["question"]) for _, o in read_jsonl(questions)}
    picked = [r for r in rows if half(r["id"], questions.name) == "calib" and detect_language(text[r["id"]]) == language]
    scores = [read_score(r) for r in picked]
    labels = [bool(r["answerable"]) for r in picked]
    finite = [s for s in scores if math.isfinite(s)]
    low = min(finite) - 1 if finite else 0.0
    tau, point = calibrate_threshold([s if math.isfinite(s) else low for s in scores], labels, target)
    write_calibrated_config(base, out, {"gate.threshold": round(float(tau), 6)})
    return {"config_key": "gate.threshold", "threshold": round(float(tau), 6), "n": len(picked),
            "n_answerable": sum(labels), "n_unanswerable": len(labels) - sum(labels), "target_precision": target,
            "auroc_calib": round(auroc(scores, labels), 4), "split": f"calib ({language} questions)",
            "reached": None if point is None else asdict(point)}


def reachable(curve: Sequence[Mapping[str, float]], n: int, n_pos: int,
              min_abstained: float = 0.85) -> dict[str, float] | None:
    """On a risk-coverage curve: the threshold answering the most answerable questions while still
    abstaining on ``min_abstained`` of the unanswerable (can any one threshold meet the targets?)."""
    best: dict[str, float] | None = None
    for p in curve:
        answered, tp = round(p["coverage"] * n), round(p["recall"] * n_pos)
        abst = 1 - (answered - tp) / max(1, n - n_pos)
        if abst >= min_abstained and (best is None or p["recall"] > best["answered_when_answerable"]):
            best = {"threshold": round(p["threshold"], 6), "answered_when_answerable": round(p["recall"], 4),
                    "abstained_when_unanswerable": round(abst, 4), "precision_of_answered": round(p["precision"], 4)}
    return best


def labels_fit_summary(report: Mapping[str, Any]) -> dict[str, Any]:
    """A ``rag calibrate --dataset`` report without its curves, with what each signal could reach in sample."""
    d = {k: v for k, v in report.items() if k != "curves"}
    fitted = next(iter((report.get("fitted") or {}).values()), None)
    if fitted and fitted.get("reached"):
        r, n = fitted["reached"], report["n"]
        n_pos = round(r["recall"] and (r["coverage"] * n * r["precision"]) / r["recall"])
        d["targets_reachable_in_sample"] = {sig: reachable(c, n, n_pos)
                                            for sig, c in sorted((report.get("curves") or {}).items())}
    return d


def auto_summary(report: Mapping[str, Any]) -> dict[str, Any]:
    """What ``rag calibrate --auto`` found: chunks, probes, the signal chosen, each signal's worst group
    AUROC and the thresholds it fitted (with the standard errors of margin it held)."""
    from rag.calibrate.auto import GroupFit, worst_auroc

    worst = {s: worst_auroc([GroupFit(**g) for g in gs]) for s, gs in report["groups"].items()}
    held = {g["key"]: g.get("standard_errors_held") for g in report["groups"].get(report["signal"], [])}
    return {"chunks": report["chunks"], "answerable_found": report["answerable_found"],
            "answerable_not_found": report["answerable_not_found"],
            "unanswerable": sum(1 for p in report["probes"] if not p["answerable"]), "signal": report["signal"],
            "worst_group_auroc": {s: (None if v is None else round(v, 4)) for s, v in sorted(worst.items())},
            "fitted": {k: {"threshold": v, "standard_errors_held": held.get(k)}
                       for k, v in sorted(report["config_updates"].items())
                       if k.startswith("gate.") and isinstance(v, float)}}


def configured_fit(report: Mapping[str, Any], configured: str) -> list[str]:
    """``--set`` overrides with the thresholds ``--auto`` fitted for the config's own signal, when it chose
    another (so the choice and the fit are scored apart); none when it kept the signal."""
    if report["signal"] == configured:
        return []
    return [f"--set={g['key']}={g['threshold']}" for g in report["groups"].get(configured, [])
            if g["threshold"] is not None]
