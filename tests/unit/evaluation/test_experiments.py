"""rag.evaluation.experiments / report: grid expansion, run folders, metrics, report, compare."""
from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from rag.batch import BatchRecord
from rag.config import load_config
from rag.errors import ConfigError, RagError
from rag.evaluation import (
    ExperimentError,
    ExperimentRunner,
    GridError,
    RunDirError,
    UnknownMetricError,
    compare_runs,
    expand_grid,
    load_experiment,
    markdown_table,
    metric_direction,
    question_metrics,
    write_report,
)
from tests.conftest import DEMO_QUESTIONS, FIXTURES, write_config
from tests.fakes import FakeAnswerer, FakeBehaviour

TINY_BEIR = FIXTURES / "tiny_beir"
TINY_ABST = FIXTURES / "tiny_abstention.jsonl"


def experiment_file(tmp_path: Path, **spec) -> Path:
    cfg = write_config(tmp_path / "cfg")
    body = {"name": "exp", "base_config": str(cfg),
            "dataset": {"kind": "beir", "path": str(TINY_BEIR), "split": "test"}}
    body.update(spec)
    p = tmp_path / "exp.yaml"
    p.write_text(yaml.safe_dump(body, allow_unicode=True, sort_keys=False), encoding="utf-8")
    return p


# --------------------------------------------------------------------------- grid and spec
def test_grid_is_the_cartesian_product_in_written_order_and_lists_are_unions():
    g = {"retrieval.fusion.method": ["rrf", "weighted"], "retrieval.candidates": [10, 20, 30]}
    pts = expand_grid(g)
    assert len(pts) == 6
    assert pts[0] == {"retrieval.fusion.method": "rrf", "retrieval.candidates": 10}
    assert pts[1] == {"retrieval.fusion.method": "rrf", "retrieval.candidates": 20}  # last key fastest
    assert pts[5] == {"retrieval.fusion.method": "weighted", "retrieval.candidates": 30}
    union = expand_grid([{"retrieval.fusion.method": ["rrf"], "retrieval.fusion.k": [10, 60]},
                         {"retrieval.fusion.method": ["weighted"]}])
    assert union == [{"retrieval.fusion.method": "rrf", "retrieval.fusion.k": 10},
                     {"retrieval.fusion.method": "rrf", "retrieval.fusion.k": 60},
                     {"retrieval.fusion.method": "weighted"}]
    assert expand_grid(None) == [{}]


@pytest.mark.parametrize("grid, match", [
    ([], "expands to no run"),
    ({"retrieval.candidates": []}, "grid.retrieval.candidates: no values"),
    ({"retrieval.candidates": 10}, "expected a list of values"),
    ([{"retrieval.candidates": [1]}, "x"], r"grid\[1\]: expected a mapping"),
])
def test_grids_that_expand_to_nothing_or_are_malformed_are_typed_errors(grid, match):
    with pytest.raises(GridError, match=match):
        expand_grid(grid)


def test_experiment_file_errors_say_what_and_where(tmp_path):
    with pytest.raises(ExperimentError, match="experiment file not found"):
        load_experiment(tmp_path / "missing.yaml")
    p = experiment_file(tmp_path, metrics=["retrieval.final.ndcg@11"])
    with pytest.raises(UnknownMetricError, match=r"exp.yaml: metrics: unknown metric 'retrieval.final.ndcg@11'"):
        load_experiment(p)
    p = experiment_file(tmp_path, grid={"retrieval.fusion.metod": ["rrf"]})
    with pytest.raises(GridError, match="grid point .*metod"):
        load_experiment(p)
    p = experiment_file(tmp_path, grid={"retrieval.candidates": [-1]})
    with pytest.raises(GridError, match="retrieval.candidates: must be > 0"):
        load_experiment(p)
    p = experiment_file(tmp_path, dataset={"kind": "beir", "path": "nowhere"})
    with pytest.raises(ExperimentError, match="dataset.path 'nowhere' does not exist"):
        load_experiment(p)
    p = experiment_file(tmp_path, gird={"a": [1]})
    with pytest.raises(ExperimentError, match="gird: unknown key"):
        load_experiment(p)
    p = experiment_file(tmp_path, dataset={"kind": "trec", "path": str(TINY_BEIR)})
    with pytest.raises(ExperimentError, match="dataset.kind"):
        load_experiment(p)
    assert issubclass(ExperimentError, ConfigError) and issubclass(ExperimentError, RagError)


def test_grid_points_giving_the_same_config_run_once(tmp_path):
    p = experiment_file(tmp_path, grid={"retrieval.candidates": [10, 10, 20]})
    exp = load_experiment(p)
    assert [r.overrides["retrieval.candidates"] for r in exp.runs] == [10, 20]
    assert [r.label for r in exp.runs] == ["candidates=10", "candidates=20"]
    assert exp.runs[0].config_hash == load_config(tmp_path / "cfg" / "config.yaml").with_overrides(
        {"retrieval.candidates": 10}).hash


def test_metric_names_have_directions():
    assert metric_direction("retrieval.hybrid.ndcg@10") == "max"
    assert metric_direction("latency.rerank.p95_ms") == "min"
    assert metric_direction("citations.violations.quote_not_found") == "min"
    assert metric_direction("answers.abstained_rate") == "none"
    with pytest.raises(UnknownMetricError):
        metric_direction("accuracy")


# --------------------------------------------------------------------------- beir runs
def test_beir_runs_match_evaluate_retrieval_and_are_not_recomputed(tmp_path):
    from rag.evaluation import evaluate_retrieval
    from rag.pipeline import Pipeline

    p = experiment_file(tmp_path, grid={"retrieval.fusion.method": ["rrf", "weighted"]})
    exp = load_experiment(p)
    runs_dir = tmp_path / "runs"
    res = ExperimentRunner(exp, runs_dir).run()
    assert [o.status for o in res.outcomes] == ["computed", "computed"]
    for o in res.outcomes:
        ref = evaluate_retrieval(Pipeline(o.plan.config), TINY_BEIR, "test", rerank=False)
        for retr in ("bm25", "dense", "hybrid"):
            for m, v in ref.metrics[retr].items():
                assert o.metrics[f"retrieval.{retr}.{m}"] == pytest.approx(v, abs=1e-9), (retr, m)
        assert o.metrics["retrieval.final.ndcg@10"] == o.metrics["retrieval.hybrid.ndcg@10"]
        assert o.metrics["n_queries"] == ref.n_queries
        d = o.run_dir
        assert d == runs_dir / "exp" / o.plan.config_hash
        for f in ("config.yaml", "run.json", "metrics.json", "results.jsonl", "environment.json"):
            assert (d / f).is_file(), f
        rows = [json.loads(x) for x in (d / "results.jsonl").read_text(encoding="utf-8").splitlines()]
        assert len(rows) == ref.n_queries and {"id", "ranked", "metrics", "timings_ms"} <= set(rows[0])
        env = json.loads((d / "environment.json").read_text(encoding="utf-8"))
        assert env["models"]["embedding"].startswith("hashing:") and "numpy" in env["packages"]
        assert o.metrics["latency.search.p50_ms"] > 0
        resolved = yaml.safe_load((d / "config.yaml").read_text(encoding="utf-8"))
        assert resolved["retrieval"]["fusion"]["method"] == o.plan.overrides["retrieval.fusion.method"]
    stamp = (res.outcomes[0].run_dir / "metrics.json").stat().st_mtime_ns

    # same experiment with a grown grid: the two complete runs are reused, one new run computed
    p = experiment_file(tmp_path, grid=[{"retrieval.fusion.method": ["rrf", "weighted"]},
                                        {"retrieval.fusion.method": ["weighted"], "retrieval.fusion.bm25_weight": [0.9]}])
    res2 = ExperimentRunner(load_experiment(p), runs_dir).run()
    assert [o.status for o in res2.outcomes] == ["reused", "reused", "computed"]
    assert (res.outcomes[0].run_dir / "metrics.json").stat().st_mtime_ns == stamp
    assert not list((runs_dir / "exp").glob(".partial-*"))
    # the grid shrinks: --prune removes the run folders no longer in it, nothing else
    p = experiment_file(tmp_path, grid={"retrieval.fusion.method": ["weighted"]})
    runner = ExperimentRunner(load_experiment(p), runs_dir)
    removed = runner.prune()
    assert len(removed) == 2 and all(not d.exists() for d in removed)
    assert [done for _, done in runner.status()] == [True]
    assert (runs_dir / "exp" / "experiment.json").is_file()


def test_a_folder_of_another_experiment_is_refused_without_force(tmp_path):
    runs_dir = tmp_path / "runs"
    ExperimentRunner(load_experiment(experiment_file(tmp_path)), runs_dir).run()
    other = experiment_file(tmp_path, dataset={"kind": "beir", "path": str(TINY_BEIR), "split": "test",
                                               "max_queries": 2})
    with pytest.raises(RunDirError, match="holds runs of another experiment"):
        ExperimentRunner(load_experiment(other), runs_dir).run()
    res = ExperimentRunner(load_experiment(other), runs_dir, force=True).run()
    assert res.outcomes[0].status == "computed" and res.outcomes[0].metrics["n_queries"] == 2
    (tmp_path / "runs2" / "exp").mkdir(parents=True)
    (tmp_path / "runs2" / "exp" / "notes.txt").write_text("mine", encoding="utf-8")
    with pytest.raises(RunDirError, match="not a run folder of this tool"):
        ExperimentRunner(load_experiment(other), tmp_path / "runs2").run()
    assert (tmp_path / "runs2" / "exp" / "notes.txt").read_text(encoding="utf-8") == "mine"


# --------------------------------------------------------------------------- abstention runs
def test_threshold_sweep_scores_once_and_coverage_falls_as_the_threshold_rises(tmp_path):
    p = experiment_file(tmp_path, dataset={"kind": "abstention", "path": str(TINY_ABST)},
                        overrides={"gate.fallback_signal": "bm25", "gate.read_question": False},  # the score alone
                        grid={"gate.fallback_threshold": [-1.0, 0.5, 2.0, 1000.0]})
    runner = ExperimentRunner(load_experiment(p), tmp_path / "runs")
    res = runner.run()
    assert len(runner.shared.scored.items) == 1  # one scoring shared by the four thresholds
    cov = [o.metrics["abstention.coverage"] for o in res.outcomes]
    assert cov[0] == 1.0 and cov[-1] == 0.0
    assert cov == sorted(cov, reverse=True)
    for o in res.outcomes:
        rows = [json.loads(x) for x in (o.run_dir / "results.jsonl").read_text(encoding="utf-8").splitlines()]
        assert len(rows) == 8
        answered = [r["decision"]["answer"] for r in rows]
        labels = [r["answerable"] for r in rows]
        assert o.metrics["abstention.coverage"] == pytest.approx(sum(answered) / 8)
        assert o.metrics["abstention.accuracy"] == pytest.approx(sum(a == y for a, y in zip(answered, labels)) / 8)
        curves = json.loads((o.run_dir / "curves.json").read_text(encoding="utf-8"))
        assert curves["signal"] == "bm25" and len(curves["tops"]) == 8
    assert res.outcomes[0].metrics["abstention.answered_when_answerable"] == 1.0
    assert res.outcomes[-1].metrics["abstention.abstained_when_unanswerable"] == 1.0
    files = write_report(res)
    names = {f.name for f in files.plots}
    assert {"metrics.png", "risk_coverage.png", "scores.png"} <= names
    for f in files.plots:
        assert f.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


# --------------------------------------------------------------------------- question sets
def _rec(i: int, status: str, gold: dict, result: dict | None, timings=None, pt=0, ct=0, attempts=1,
         latency=10.0, reason="") -> BatchRecord:
    return BatchRecord(id=f"q{i}", index=i, question="?", status=status, reason=reason, config_hash="c",
                       results_hash="c", models={}, git_commit=None, latency_ms=latency, timings_ms=timings or {},
                       prompt_tokens=pt, completion_tokens=ct, attempts=attempts, result=result, gold=gold)


def test_question_metrics_hand_computed():
    man = lambda et, eb, blocks, dropped: {"evidence_tokens": et, "evidence_budget": eb,  # noqa: E731
                                           "blocks": [{"truncated": t} for t in blocks],
                                           "dropped": [{"reason": r} for r in dropped]}
    recs = [
        # answered, right document cited, first attempt valid, support 0.9 and 0.5
        _rec(0, "answered", {"expected_doc_id": "hr"},
             {"citations": [{"document_id": "hr"}, {"document_id": "it"}],
              "trace": {"manifest": man(300, 1000, [False, True], ["budget", "duplicate"]),
                        "attempts": [{"violations": []}],
                        "validation": {"citations": [{"support": 0.9}, {"support": 0.5}]},
                        "candidates": [{"document_id": "hr"}, {"document_id": "it"}]}},
             timings={"retrieval": 10.0, "generation": 100.0}, pt=500, ct=50, latency=120.0),
        # answered after one rejected attempt (quote_not_found), wrong document
        _rec(1, "answered", {"expected_doc_id": "fin"},
             {"citations": [{"document_id": "hr"}],
              "trace": {"manifest": man(500, 1000, [False], []),
                        "attempts": [{"violations": [{"code": "quote_not_found"}, {"code": "quote_not_found"}]},
                                     {"violations": []}],
                        "validation": {"citations": [{"support": 0.7}]},
                        "candidates": [{"evidence_id": "hr:1:0"}, {"evidence_id": "x:2:3"},
                                       {"evidence_id": "fin:1:0"}]}},  # the real trace: evidence ids only
             timings={"retrieval": 20.0, "generation": 300.0}, pt=700, ct=70, attempts=2, latency=330.0),
        # abstained on an unanswerable question (gate): no generation
        _rec(2, "insufficient_evidence", {"expected_doc_id": None}, {"citations": [], "trace": {}},
             timings={"retrieval": 30.0}, reason="below_threshold", attempts=0, latency=40.0),
        # failed
        _rec(3, "failed", {"expected_doc_id": "hr"}, None, attempts=0, latency=5.0),
    ]
    m, curves = question_metrics(recs)
    assert m["n_questions"] == 4
    assert (m["answers.answered_rate"], m["answers.abstained_rate"], m["answers.failed_rate"]) == (0.5, 0.25, 0.25)
    # labels (failed excluded): q0 answerable answered, q1 answerable answered, q2 unanswerable abstained
    assert m["abstention.accuracy"] == 1.0 and m["abstention.coverage"] == pytest.approx(2 / 3)
    assert m["abstention.precision_of_answered"] == 1.0 and m["abstention.abstained_when_unanswerable"] == 1.0
    assert m["retrieval.hit@1"] == 0.5 and m["retrieval.hit@3"] == 1.0
    assert m["context.evidence_tokens.mean"] == 400 and m["context.budget_use.mean"] == 0.4
    assert m["context.truncation_rate"] == pytest.approx(1 / 3)
    assert m["context.dropped.budget"] == 0.5 and m["context.dropped.duplicate"] == 0.5
    assert m["citations.failure_rate"] == pytest.approx(1 / 3)  # 1 rejected of 3 attempts
    assert m["citations.first_attempt_valid_rate"] == 0.5
    assert m["citations.violations.quote_not_found"] == pytest.approx(1 / 3)  # counted once per attempt
    assert m["citations.support.p50"] == 0.7 and m["citations.support.mean"] == pytest.approx(0.7)
    assert m["citations.correct_document_rate"] == 0.5 and m["citations.per_answer.mean"] == 1.5
    assert m["citations.validated_rate"] == pytest.approx(2 / 3)
    assert m["latency.retrieval.p50_ms"] == 20.0 and m["latency.generation.mean_ms"] == 200.0
    assert m["latency.wall.p50_ms"] == 80.0  # median of 5, 40, 120, 330 (time in flight, failures included)
    assert m["tokens.prompt.mean"] == 400.0 and m["attempts.mean"] == 1.0
    assert curves["status"] == {"answered": 2, "insufficient_evidence": 1, "failed": 1}
    for name in m:
        metric_direction(name)  # every produced name is a known metric


def test_answers_are_scored_by_their_facts_not_the_document_cited():
    recs = [
        # right: the fact is in the answer and the gold document is cited
        _rec(0, "answered", {"answerable": True, "gold": {"doc_id": "law", "answer_facts": ["15일"]}},
             {"answer": "연차휴가는 **15일**입니다.", "citations": [{"document_id": "law"}]}),
        # the right document, the wrong value: counted right by citation, wrong by reading
        _rec(1, "answered", {"answerable": True, "gold": {"doc_id": "law", "answer_facts": ["15일"]}},
             {"answer": "3일 전까지 신청합니다.", "citations": [{"document_id": "law"}]}),
        # top-level fields (a rag batch line): right value, another document: wrong
        _rec(2, "answered", {"expected_doc_id": "law", "answer_facts": ["2주일"]},
             {"answer": "2주일 이내", "citations": [{"document_id": "other"}]}),
        _rec(3, "insufficient_evidence", {"answerable": True, "gold": {"doc_id": "law", "answer_facts": ["1일"]}},
             {"answer": "", "citations": []}),
        # an answered unanswerable question is a wrong answer
        _rec(4, "answered", {"answerable": False}, {"answer": "아마도", "citations": [{"document_id": "law"}]}),
    ]
    m, _ = question_metrics(recs)
    assert m["answers.facts_right_rate"] == pytest.approx(1 / 4)
    assert m["answers.facts_precision_of_answered"] == pytest.approx(1 / 4)  # q0 right of q0, q1, q2, q4
    for name in m:
        metric_direction(name)
    m2, _ = question_metrics([_rec(0, "answered", {"expected_doc_id": "x"}, {"answer": "a", "citations": []})])
    assert not any(k.startswith("answers.facts_") for k in m2)  # no facts in the set: no fact metrics


def test_questions_experiment_answers_through_the_batch_runner(tmp_path):
    extra = {"manifest": {"evidence_tokens": 200, "evidence_budget": 800, "blocks": [{"truncated": False}],
                          "dropped": []}}
    p = experiment_file(tmp_path, dataset={"kind": "questions", "path": str(DEMO_QUESTIONS), "max_queries": 6},
                        grid={"context.ordering": ["rank", "edges"]})
    fakes: list[FakeAnswerer] = []

    def factory(pipeline):
        assert pipeline.index is not None and len(pipeline.index) > 0  # the config's corpus, indexed in memory
        fakes.append(FakeAnswerer(default=FakeBehaviour(extra=extra)))
        return fakes[-1]

    res = ExperimentRunner(load_experiment(p), tmp_path / "runs", answerer_factory=factory).run()
    assert len(fakes) == 2 and all(len(f.started) == 6 for f in fakes)
    for o in res.outcomes:
        lines = (o.run_dir / "results.jsonl").read_text(encoding="utf-8").splitlines()
        assert [json.loads(x)["id"] for x in lines] == ["q01", "q02", "q03", "q04", "q05", "q06"]
        assert o.metrics["answers.answered_rate"] == 1.0 and o.metrics["context.budget_use.mean"] == 0.25
        assert o.metrics["latency.retrieval.p50_ms"] == 1.0
    files = write_report(res)
    assert {"status.png", "budget_use.png"} <= {f.name for f in files.plots}


# --------------------------------------------------------------------------- report and compare
def test_markdown_table_marks_the_best_run_per_metric_by_direction():
    rows = [{"retrieval.final.ndcg@10": 0.70, "latency.search.p50_ms": 5.0, "answers.abstained_rate": 0.1},
            {"retrieval.final.ndcg@10": 0.75, "latency.search.p50_ms": 9.0, "answers.abstained_rate": 0.3},
            {"retrieval.final.ndcg@10": 0.75, "latency.search.p50_ms": 7.0}]
    md = markdown_table(["a", "b", "c"], ["h1", "h2", "h3"], rows,
                        ["retrieval.final.ndcg@10", "latency.search.p50_ms", "answers.abstained_rate"])
    lines = md.splitlines()
    assert "retrieval.final.ndcg@10 ↑" in lines[0] and "latency.search.p50_ms ↓" in lines[0]
    assert lines[2] == "| a | `h1` | 0.7000 | **5.00** ★ | 0.1000 |"
    assert lines[3] == "| b | `h2` | **0.7500** ★ | 9.00 | 0.3000 |"  # ties are all marked
    assert lines[4] == "| c | `h3` | **0.7500** ★ | 7.00 | – |"  # unranked metric: no star
    same = markdown_table(["a", "b"], ["h1", "h2"], [{"retrieval.bm25.ndcg@10": 0.7}, {"retrieval.bm25.ndcg@10": 0.7}],
                          ["retrieval.bm25.ndcg@10"])
    assert "★" not in same  # the same value in every run: nothing to mark


def test_compare_prints_deltas_with_direction_and_config_differences(tmp_path):
    p = experiment_file(tmp_path, grid={"retrieval.fusion.method": ["rrf", "weighted"]})
    res = ExperimentRunner(load_experiment(p), tmp_path / "runs").run()
    a, b = (o.run_dir for o in res.outcomes)
    cmp = compare_runs(a, b)
    assert [c.key for c in cmp.config] == ["retrieval.fusion.method"]
    ma = json.loads((a / "metrics.json").read_text(encoding="utf-8"))
    mb = json.loads((b / "metrics.json").read_text(encoding="utf-8"))
    row = {m.name: m for m in cmp.metrics}["retrieval.hybrid.ndcg@10"]
    assert row.delta == pytest.approx(mb["retrieval.hybrid.ndcg@10"] - ma["retrieval.hybrid.ndcg@10"], abs=1e-6)
    assert row.verdict == ("same" if row.delta == 0 else "better" if row.delta > 0 else "worse")
    lat = {m.name: m for m in cmp.metrics}["latency.search.p50_ms"]
    assert lat.verdict == ("better" if lat.delta < 0 else "worse" if lat.delta > 0 else "same")
    text = cmp.table()
    assert "retrieval.fusion.method: \"rrf\" -> \"weighted\"" in text
    assert compare_runs(a.parent / a.name[:6], b).a == str(a)  # a unique hash prefix is enough
    with pytest.raises(RunDirError, match="experiment folder"):
        compare_runs(a.parent, b)
    with pytest.raises(RunDirError, match="not a complete run folder"):
        compare_runs(tmp_path / "nope", b)


def test_experiment_and_compare_commands(tmp_path, capsys):
    from rag.cli.main import main

    p = experiment_file(tmp_path, grid={"retrieval.fusion.method": ["rrf", "weighted"]},
                        metrics=["retrieval.final.ndcg@10", "latency.search.p50_ms"])
    runs = tmp_path / "runs"
    assert main(["experiment", str(p), "--runs-dir", str(runs), "--dry-run"]) == 0
    assert capsys.readouterr().out.count("to run") == 2
    assert main(["experiment", str(p), "--runs-dir", str(runs)]) == 0
    out = capsys.readouterr().out
    assert "| method=rrf |" in out and "★" in out and "REPORT.md" in out
    report = (runs / "exp" / "REPORT.md").read_text(encoding="utf-8")
    assert "retrieval.final.ndcg@10 ↑" in report and "![metrics](metrics.png)" in report
    assert f"rag experiment {p}" in report
    assert main(["experiment", str(p), "--runs-dir", str(runs), "--dry-run"]) == 0
    assert capsys.readouterr().out.count("done") == 2
    a, b = sorted(d for d in (runs / "exp").iterdir() if d.is_dir() and not d.name.startswith("."))
    assert main(["compare", str(a), str(b)]) == 0
    assert "B - A" in capsys.readouterr().out
    assert main(["compare", str(a), str(b), "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["metrics"]
    assert main(["compare", str(a), str(runs / "exp")]) == 2
    assert "experiment folder" in capsys.readouterr().err
    bad = experiment_file(tmp_path, grid={"retrieval.candidates": []})
    assert main(["experiment", str(bad), "--runs-dir", str(runs)]) == 2
    assert "expands to no run" in capsys.readouterr().err


def test_support_is_recomputed_from_the_cited_span_when_the_trace_lacks_it(tmp_path):
    from rag.evaluation.answers import _span_support
    from rag.pipeline import Pipeline

    p = Pipeline(load_config(write_config(tmp_path)))
    index = p.new_index(p.load_corpus())
    ch = next(c for c in index.chunks if c.document_id == "expense-policy")
    fn = _span_support(index)
    words = ch.text.split()
    inside = {"evidence_id": ch.evidence_id, "claim": " ".join(words[:12]), "start_char": ch.start_char,
              "end_char": ch.end_char}
    assert fn(inside) == 1.0
    outside = dict(inside, claim="zebra quantum saxophone")
    assert fn(outside) == 0.0
    assert fn(dict(inside, evidence_id="nope:1:0")) is None
    recs = [_rec(0, "answered", {}, {"citations": [inside, outside], "trace": {}})]
    m, curves = question_metrics(recs, fn)
    assert m["citations.support.mean"] == 0.5 and curves["support"] == [1.0, 0.0]


def test_an_experiment_runs_on_the_milvus_backend(tmp_path):
    """The same experiment file with `index.backend: milvus` in its base config: the dataset is
    indexed into its own milvus-lite collection, and the metrics match the local backend's."""
    pytest.importorskip("milvus_lite", reason="milvus-lite is not installed (pip install 'rag[milvus]')")
    local = ExperimentRunner(load_experiment(experiment_file(tmp_path / "local")), tmp_path / "runs-local").run()
    cfg = write_config(tmp_path / "m" / "cfg", index={"backend": "milvus", "milvus": {"uri": str(tmp_path / "m.db")}})
    body = {"name": "exp", "base_config": str(cfg), "dataset": {"kind": "beir", "path": str(TINY_BEIR), "split": "test"}}
    p = tmp_path / "m" / "exp.yaml"
    p.write_text(yaml.safe_dump(body, allow_unicode=True, sort_keys=False), encoding="utf-8")
    on_milvus = ExperimentRunner(load_experiment(p), tmp_path / "runs-milvus").run()
    a, b = local.outcomes[0].metrics, on_milvus.outcomes[0].metrics
    assert b["n_queries"] == a["n_queries"]
    for m in ("ndcg@10", "recall@10"):
        assert b[f"retrieval.dense.{m}"] == pytest.approx(a[f"retrieval.dense.{m}"], abs=1e-9)
        assert b[f"retrieval.bm25.{m}"] == pytest.approx(a[f"retrieval.bm25.{m}"], abs=0.05)
        assert b[f"retrieval.hybrid.{m}"] == pytest.approx(a[f"retrieval.hybrid.{m}"], abs=0.05)
