"""Answer-level metrics of a question set, from the batch records and each answer's trace.

A ``questions`` experiment (:func:`evaluate_questions`) answers the set end to end through
:class:`rag.batch.runner.BatchRunner`; :func:`question_metrics` reads answer, abstention,
retrieval-hit, context, citation, token and latency metrics from the records.
"""
from __future__ import annotations

import re
import typing
from pathlib import Path
from typing import Any, Callable, Mapping, Sequence

from rag.answer.contract import ViolationCode
from rag.batch.output import scan_output
from rag.batch.questions import read_questions
from rag.batch.records import model_ids, run_info
from rag.batch.runner import BatchRunner
from rag.batch.summary import percentiles, summarize
from rag.config import RagConfig, digest
from rag.context.builder import DropReason
from rag.evaluation.errors import ExperimentError
from rag.evaluation.metrics import latency_metrics
from rag.evaluation.runs import DatasetSpec, Progress, RunCache, RunResult
from rag.text.lexical import lexical_support


def _dig(obj: Any, *path: str) -> Any:
    for key in path:
        if not isinstance(obj, Mapping):
            return None
        obj = obj.get(key)
    return obj


def _first(obj: Any, *paths: tuple[str, ...]) -> Any:
    for path in paths:
        v = _dig(obj, *path)
        if v is not None:
            return v
    return None


def _known_values(literal: Any) -> tuple[str, ...]:
    """The values of a ``Literal`` type alias (drop reasons, violation codes)."""
    return tuple(str(v) for v in typing.get_args(literal))


def question_metrics(records: Sequence[Any],
                     support_fn: Callable[[Mapping[str, Any]], float | None] | None = None
                     ) -> tuple[dict[str, float | None], dict]:
    """Metrics of a question set from its batch records (see the module docstring).

    Reads each answer's JSON: ``trace.manifest`` (or ``trace.context``) for the context,
    ``trace.attempts`` for rejected attempts by violation code, ``trace.validation.citations[].support``
    for support scores (else ``support_fn(citation)`` when given), ``citations`` for documents;
    a field the answer does not carry leaves its metrics out. The steps: statuses, abstention against
    the labels, retrieval, context, citations, facts, then latency, tokens and attempts."""
    n = len(records)
    m: dict[str, float | None] = {"n_questions": float(n)}
    if not n:
        return m, {}
    st = [r.status for r in records]
    m["answers.answered_rate"] = round(st.count("answered") / n, 6)
    m["answers.abstained_rate"] = round(st.count("insufficient_evidence") / n, 6)
    m["answers.failed_rate"] = round(st.count("failed") / n, 6)
    m.update(_abstention_metrics(records))
    results = [(r, r.result or {}) for r in records]
    m.update(_retrieval_metrics(results))
    context, use = _context_metrics(results)
    m.update(context)
    citations, support = _citation_metrics(results, support_fn)
    m.update(citations)
    m.update(fact_metrics(results, _label))
    m.update(_cost_metrics(records))
    curves = {"support": [round(x, 4) for x in support], "budget_use": [round(u, 4) for u in use],
              "status": {x: st.count(x) for x in ("answered", "insufficient_evidence", "failed")}}
    return m, curves


def _label(r) -> bool | None:
    """Whether a record's question is answerable: its ``answerable``, else whether it names an
    ``expected_doc_id`` (null: unanswerable); None when the line says neither."""
    g = r.gold
    if isinstance(g.get("answerable"), bool):
        return g["answerable"]
    if "expected_doc_id" in g:
        return g["expected_doc_id"] is not None
    return None


def _abstention_metrics(records: Sequence[Any]) -> dict[str, float | None]:
    """Answered or abstained against the labels (failed lines left out)."""
    import numpy as np

    m: dict[str, float | None] = {}
    lab = [(r.status == "answered", y) for r in records if r.status != "failed" and (y := _label(r)) is not None]
    if lab:
        a = np.array([x for x, _ in lab])
        y = np.array([y for _, y in lab])
        m["abstention.coverage"] = round(float(a.mean()), 6)
        m["abstention.accuracy"] = round(float((a == y).mean()), 6)
        if y.any():
            m["abstention.answered_when_answerable"] = round(float(a[y].mean()), 6)
        if (~y).any():
            m["abstention.abstained_when_unanswerable"] = round(float((~a[~y]).mean()), 6)
        if a.any():
            m["abstention.precision_of_answered"] = round(float(y[a].mean()), 6)
    return m


def _retrieval_metrics(results: Sequence[tuple[Any, Any]]) -> dict[str, float | None]:
    """The expected document among the first 1 / 3 / 10 candidates the trace lists."""
    hits: dict[int, list[bool]] = {1: [], 3: [], 10: []}
    for r, res in results:
        exp_doc = r.gold.get("expected_doc_id")
        cands = _first(res, ("trace", "candidates"), ("trace", "retrieval", "candidates"))
        if not exp_doc or not isinstance(cands, list):
            continue
        docs = [c.get("document_id") or str(c.get("evidence_id", "")).rsplit(":", 2)[0]  # doc:version:n
                for c in cands if isinstance(c, Mapping)]
        for k in hits:
            hits[k].append(exp_doc in docs[:k])
    return {f"retrieval.hit@{k}": round(sum(v) / len(v), 6) for k, v in hits.items() if v}


def _context_metrics(results: Sequence[tuple[Any, Any]]) -> tuple[dict[str, float | None], list[float]]:
    """The prompt manifests: evidence tokens, budget and its use, blocks, truncation, drops by reason;
    and the budget use per answer (a curve)."""
    import numpy as np

    m: dict[str, float | None] = {}
    ev_tok, budget, use, blocks, trunc = [], [], [], [], []
    dropped: dict[str, int] = {}
    n_manifest = 0
    for _, res in results:
        man = _first(res, ("trace", "manifest"), ("trace", "context"), ("manifest",))
        if not isinstance(man, Mapping) or "evidence_tokens" not in man:
            continue
        n_manifest += 1
        et, eb = man.get("evidence_tokens") or 0, man.get("evidence_budget") or 0
        ev_tok.append(et)
        budget.append(eb)
        if eb:
            use.append(et / eb)
        bl = man.get("blocks") or []
        blocks.append(len(bl))
        trunc.extend(bool(b.get("truncated")) for b in bl if isinstance(b, Mapping))
        for dr in man.get("dropped") or []:
            reason = dr.get("reason", "?") if isinstance(dr, Mapping) else "?"
            dropped[reason] = dropped.get(reason, 0) + 1
    if n_manifest:
        for name, vals in (("evidence_tokens", ev_tok), ("evidence_budget", budget), ("budget_use", use),
                           ("blocks", blocks)):
            if vals:
                p50, p95 = percentiles(vals, (50, 95))
                m[f"context.{name}.mean"] = round(float(np.mean(vals)), 4)
                m[f"context.{name}.p50"] = round(p50, 4)
                m[f"context.{name}.p95"] = round(p95, 4)
        m["context.truncation_rate"] = round(sum(trunc) / len(trunc), 6) if trunc else 0.0
        for reason in _known_values(DropReason):  # 0 for reasons that did not occur
            dropped.setdefault(reason, 0)
        for reason, c in sorted(dropped.items()):
            m[f"context.dropped.{re.sub(r'[^a-z0-9_]', '_', reason.lower())}"] = round(c / n_manifest, 4)
    return m, use


def _citation_metrics(results: Sequence[tuple[Any, Any]],
                      support_fn: Callable[[Mapping[str, Any]], float | None] | None
                      ) -> tuple[dict[str, float | None], list[float]]:
    """Validation of every attempt (rejections by violation code), support scores, citations per
    answer and the expected document cited; and the support scores (a curve)."""
    import numpy as np

    m: dict[str, float | None] = {}
    attempts_total, rejected, first_ok, n_gen, codes = _attempt_counts(results)
    support: list[float] = []
    per_answer: list[int] = []
    correct_doc: list[bool] = []
    for r, res in results:
        checks = _first(res, ("trace", "validation", "citations"), ("trace", "citation_checks"))
        cites = res.get("citations") if isinstance(res, Mapping) else None
        if isinstance(checks, list):
            support.extend(float(c["support"]) for c in checks if isinstance(c, Mapping)
                           and isinstance(c.get("support"), (int, float)))
        elif support_fn is not None and r.status == "answered" and isinstance(cites, list):
            support.extend(v for c in cites if isinstance(c, Mapping) and (v := support_fn(c)) is not None)
        if r.status == "answered" and isinstance(cites, list):
            per_answer.append(len(cites))
            exp_doc = r.gold.get("expected_doc_id")
            if exp_doc:
                correct_doc.append(any(isinstance(c, Mapping) and c.get("document_id") == exp_doc for c in cites))
    generated = [r for r, res in results if r.status != "failed"]
    if generated:
        validated = [r for r in generated if r.status == "answered" or r.reason in ("model_abstained",)]
        m["citations.validated_rate"] = round(len(validated) / len(generated), 6)
    if attempts_total:
        m["citations.failure_rate"] = round(rejected / attempts_total, 6)
        m["citations.first_attempt_valid_rate"] = round(first_ok / n_gen, 6)
        for code in _known_values(ViolationCode):  # 0 for codes that did not occur
            codes.setdefault(code, 0)
        for c, k in sorted(codes.items()):
            m[f"citations.violations.{re.sub(r'[^a-z0-9_]', '_', str(c).lower())}"] = round(k / attempts_total, 6)
    if support:
        p10, p50 = percentiles(support, (10, 50))
        m["citations.support.p10"] = round(p10, 4)
        m["citations.support.p50"] = round(p50, 4)
        m["citations.support.mean"] = round(float(np.mean(support)), 4)
    if per_answer:
        m["citations.per_answer.mean"] = round(float(np.mean(per_answer)), 4)
    if correct_doc:
        m["citations.correct_document_rate"] = round(sum(correct_doc) / len(correct_doc), 6)
    return m, support


def _attempt_counts(results: Sequence[tuple[Any, Any]]) -> tuple[int, int, int, int, dict[str, int]]:
    """(attempts, attempts rejected, answers valid at the first attempt, answers with attempts,
    rejections by violation code) over the traces' ``attempts``."""
    attempts_total = rejected = first_ok = n_gen = 0
    codes: dict[str, int] = {}
    for _, res in results:
        att = _dig(res, "trace", "attempts")
        if not isinstance(att, list) or not att:
            continue
        n_gen += 1
        for j, a_ in enumerate(att):
            if not isinstance(a_, Mapping):
                continue
            attempts_total += 1
            viol = a_.get("violations") or []
            vcodes = sorted({(v.get("code") if isinstance(v, Mapping) else str(v)) for v in viol})
            if vcodes:
                rejected += 1
                for c in vcodes:
                    codes[c] = codes.get(c, 0) + 1
            elif j == 0:
                first_ok += 1
    return attempts_total, rejected, first_ok, n_gen, codes


def _cost_metrics(records: Sequence[Any]) -> dict[str, float | None]:
    """Latency per stage and in flight ("wall"), as the batch summary has it; tokens and attempts."""
    import numpy as np

    m: dict[str, float | None] = {}
    for stage, stats in summarize(records).latency_ms.items():
        m.update(latency_metrics(stats, f"latency.{re.sub(r'[^a-z0-9_]', '_', stage.lower())}"))
    ok = [r for r in records if r.status != "failed"]
    if ok:
        m["tokens.prompt.mean"] = round(float(np.mean([r.prompt_tokens for r in ok])), 3)
        m["tokens.completion.mean"] = round(float(np.mean([r.completion_tokens for r in ok])), 3)
        m["attempts.mean"] = round(float(np.mean([r.attempts for r in ok])), 4)
    return m


def gold_facts(gold: Mapping[str, Any]) -> tuple[tuple[str, ...], str | None]:
    """The facts an answer must state and the document it must cite, from a question line: top-level
    ``answer_facts`` / ``expected_doc_id``, or a ``gold`` object (``answer_facts``, ``doc_id``) as in the
    ``rag eval-answers`` sets."""
    inner = gold.get("gold") if isinstance(gold.get("gold"), Mapping) else {}
    facts = gold.get("answer_facts") or inner.get("answer_facts") or ()
    if isinstance(facts, str):
        facts = (facts,)
    doc = gold.get("expected_doc_id") or inner.get("doc_id")
    return tuple(str(f) for f in facts if str(f).strip()), (str(doc) if doc else None)


def fact_metrics(results: Sequence[tuple[Any, Any]], label: Callable[[Any], bool | None]) -> dict[str, float]:
    """Answers scored by reading them (``rag.evaluation.answer_scoring.fact_found``), not by the document they
    cite: an answerable question with gold facts is right when answered, every fact is in the answer and (when
    the line names one) a citation is of the expected document. ``answers.facts_right_rate``: right / such
    questions; ``answers.facts_precision_of_answered``: right / the answered questions that are labelled (gold
    facts, or unanswerable: an answer there is wrong). Absent when no line carries facts."""
    from rag.evaluation.answer_scoring import fact_found

    n_facts = right = answered_labelled = 0
    for r, res in results:
        facts, doc = gold_facts(r.gold)
        answered = r.status == "answered"
        if not facts:
            answered_labelled += int(answered and label(r) is False)
            continue
        n_facts += 1
        if not answered:
            continue
        answered_labelled += 1
        text = str(res.get("answer") or "") if isinstance(res, Mapping) else ""
        cites = res.get("citations") if isinstance(res, Mapping) else None
        cited = doc is None or (isinstance(cites, list) and any(
            isinstance(c, Mapping) and c.get("document_id") == doc for c in cites))
        right += int(cited and all(fact_found(f, text) for f in facts))
    if not n_facts:
        return {}
    out = {"answers.facts_right_rate": round(right / n_facts, 6)}
    if answered_labelled:
        out["answers.facts_precision_of_answered"] = round(right / answered_labelled, 6)
    return out


AnswererFactory = Callable[[Any], Any]  # pipeline -> an object with answer()/aanswer()


def evaluate_questions(dataset: DatasetSpec, path: Path, cfg: RagConfig, cache: RunCache, run_dir: Path,
                       answerer_factory: AnswererFactory | None = None,
                       progress: Progress | None = None) -> RunResult:
    """A ``questions`` experiment's run: the question set answered end to end (rag.batch) over the
    config's corpus, indexed in memory; the batch writes ``run_dir/results.jsonl``."""
    qs = cache.data.get("questions")
    if qs is None:
        qs = read_questions(path).questions
        if dataset.max_queries:
            qs = qs[:dataset.max_queries]
        cache.data["questions"] = qs
    probe = cache.pipeline(cfg)
    key = digest({"index": cfg.index_hash, "corpus": [str(cfg.resolve(x)) for x in cfg.corpus.paths]})
    index = cache.indexes.get(key, lambda: probe.new_index(probe.load_corpus()))
    p = cache.pipeline(cfg, index)
    answerer = answerer_factory(p) if answerer_factory else p
    if answerer_factory is None and not callable(getattr(p, "answer", None)):
        raise ExperimentError("this version of rag.pipeline.Pipeline has no answer(); a 'questions' experiment needs it")
    done = [0]

    def tick(_rec) -> None:
        done[0] += 1
        if progress:
            progress("questions", done[0], len(qs))

    out = run_dir / "results.jsonl"
    BatchRunner(answerer, run_info(p), cfg.batch).run(qs, out, tick)
    records = list(scan_output(out, repair=False).records.values())
    metrics, curves = question_metrics(records, _span_support(index))
    return RunResult(metrics, (), curves, model_ids(p))


def _span_support(index) -> Callable[[Mapping[str, Any]], float | None]:
    """Lexical support of a resolved citation's claim against the exact span it cites (the
    validator's default ``lexical`` score), for answers whose trace does not carry the scores."""
    chunks = {c.evidence_id: c for c in index.chunks}

    def fn(c: Mapping[str, Any]) -> float | None:
        ch = chunks.get(str(c.get("evidence_id")))
        claim = c.get("claim")
        if ch is None or not isinstance(claim, str):
            return None
        a, b = int(c.get("start_char", ch.start_char)), int(c.get("end_char", ch.end_char))
        text = ch.text[max(0, a - ch.start_char):max(0, b - ch.start_char)] or ch.text
        return float(lexical_support(claim, text))

    return fn
