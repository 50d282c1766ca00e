"""`rag calibrate --auto` on the demo documents (hashing embedder): probes, the fit, the written config."""
from __future__ import annotations

import ast
import json

import yaml

from rag.cli.main import main
from rag.config import load_config
from rag.calibrate.probes import ProbeSource, TermCounts, compact, make_probes
from rag.index import corpus_fingerprint
from rag.pipeline import Pipeline
from rag.text.question_analysis import holds_fact
from tests.conftest import DEMO_DOCS, write_config

SOURCES = [ProbeSource(f"d{i}:1:0", f"d{i}", t) for i, t in enumerate([
    "연차 유급휴가는 1년간 80퍼센트 이상 출근한 근로자에게 15일을 준다.",
    "출장 숙박비는 1박에 10만원을 한도로 실비로 지급한다.",
    "육아휴직 기간은 자녀 1명당 1년 이내로 한다.",
    "Annual leave requests must be approved by the team lead at least five days ahead.",
    "The travel allowance covers hotel costs up to 150 dollars per night.",
])]


def test_probes_are_questions_not_copied_sentences_and_absent_facts_are_absent():
    probes = make_probes(SOURCES, per_language=5)
    answerable = [p for p in probes if p.answerable]
    assert {p.language for p in answerable} == {"ko", "en"}
    for p in answerable:
        assert p.question not in p.source and len(p.question) < len(p.source)
        assert p.question.endswith(("?", "."))
    counts = TermCounts(SOURCES)
    for p in probes:
        if p.kind == "absent_topic":  # nothing of it is in the corpus
            assert all(counts.count(w.strip("'")) == 0 for w in p.source.split(" and ")[0:1])
    assert make_probes(SOURCES, per_language=5) == probes  # deterministic
    assert make_probes(SOURCES, per_language=5, seed=1) != probes or len(SOURCES) < 3


def test_absent_fact_probe_asks_for_a_kind_no_chunk_with_its_terms_states():
    probes = make_probes(SOURCES, per_language=5)
    facts = [p for p in probes if p.kind == "absent_fact"]
    assert facts
    for p in facts:
        kind = p.source.split()[1]
        terms = ast.literal_eval(p.source.split(" with ")[1])
        texts = [s.text for s in SOURCES if all(compact(t) in compact(s.text) for t in terms)]
        assert texts and not any(holds_fact(kind, "days" if kind == "period" else "", t) for t in texts)


def test_calibrate_auto_writes_fitted_thresholds_and_the_corpus_fingerprint(tmp_path, capsys):
    cfg = write_config(tmp_path, corpus={"paths": [str(DEMO_DOCS)]}, gate={"signal": "dense"})
    assert main(["index", "--config", str(cfg)]) == 0
    out = tmp_path / "config.auto.yaml"
    report = tmp_path / "report"
    assert main(["calibrate", "--auto", "--config", str(cfg), "--out", str(out), "--report", str(report),
                 "--probes", "30"]) == 0
    written = yaml.safe_load(out.read_text())["gate"]
    p = Pipeline(load_config(out))
    assert written["fitted_on"] == corpus_fingerprint(p.index.documents)
    rep = json.loads((report / "auto_calibration.json").read_text())
    assert rep["signal"] == written["signal"]
    fitted = [g for g in rep["written"] if g["threshold"] is not None]
    assert fitted, rep["written"]
    raw = {g["key"]: g for g in rep["groups"][rep["signal"]]}
    for g in fitted:  # each fitted key is in the written config with the reported value
        node = {"gate": written}
        for part in g["key"].split("."):
            node = node[part]
        assert node == g["threshold"]
        # a written threshold differs from the fit only where the fit would close the gate, and says so
        assert (g["threshold"] == raw[g["key"]]["threshold"]) == (g["warning"] is None)
        assert (g["warning"] is None) or g["warning"] in rep["warnings"]
    assert rep["examples"]["answerable"] and rep["examples"]["absent_topic"]
    assert len(rep["probes"]) == rep["probes"].__len__() == rep["answerable_found"] + rep["answerable_not_found"] + sum(
        1 for x in rep["probes"] if not x["answerable"])


def test_calibrate_auto_rejects_a_dataset_and_a_missing_target(tmp_path, capsys):
    cfg = write_config(tmp_path)
    assert main(["calibrate", "--auto", "--dataset", "x.jsonl", "--config", str(cfg)]) != 0
    assert "--auto fits on the indexed corpus" in capsys.readouterr().err
    assert main(["calibrate", "--config", str(cfg)]) != 0
    assert "needs --dataset and --target-precision, or --auto" in capsys.readouterr().err


def test_a_switched_signal_never_keeps_the_old_signals_main_threshold():
    from rag.calibrate.auto import GroupFit, _updates

    en = GroupFit("gate.language_thresholds.en", 40, 40, 0.9, 5.59, 0.7, 0.9)
    ko = GroupFit("gate.language_thresholds.ko", 40, 40, 0.8, 7.25, 0.6, 0.9)
    unfit = GroupFit("gate.threshold", 2, 1, None, None, None, None)
    switched = _updates("bm25", [en, ko, unfit], configured="dense")
    assert switched["gate.threshold"] == 7.25  # not the configured cosine: the strictest bm25 fit
    assert switched["gate.language_thresholds"] == {} and switched["gate.language_thresholds.en"] == 5.59
    kept = _updates("dense", [GroupFit("gate.language_thresholds.en", 40, 40, 0.9, 0.86, 0.7, 0.9)], "dense")
    assert "gate.threshold" not in kept  # same signal: the configured threshold stays


def test_a_group_too_small_to_fit_says_nothing_of_the_signal():
    """The worst-group AUROC that chooses the signal and the one the report states read only the fitted groups:
    a handful of probes (2 answerable, 1 not) kept their threshold and their AUROC 0.0 is noise."""
    from rag.calibrate.auto import GroupFit, _why, worst_auroc

    fitted = GroupFit("gate.threshold", 79, 80, 0.844, 0.86, 0.5, 0.92)
    tiny = GroupFit("gate.language_thresholds.en", 2, 1, 0.0, None, None, None)
    assert worst_auroc([fitted, tiny]) == 0.844
    assert worst_auroc([tiny]) is None
    why = _why("dense", {"dense": [fitted, tiny], "bm25": [tiny]}, "probes")
    assert why == "dense: the best worst-group AUROC on the probes dense 0.844, bm25 no group fitted"


def _scored(n: int, dense_gap: float, bm25_gap: float, prob_gap: float | None = None):
    """Probes whose signals separate the answerable ones by the given gaps (noise: a fixed pattern)."""
    from rag.calibrate.auto import ScoredProbe
    from rag.calibrate.probes import Probe

    out = []
    for i in range(2 * n):
        answerable = i < n
        noise = ((i * 7919) % 100) / 100
        tops = [("dense", 0.8 + noise * 0.1 + (dense_gap if answerable else 0)),
                ("bm25", 2 + noise * 5 + (bm25_gap if answerable else 0))]
        if prob_gap is not None:
            tops.append(("probability", noise * 0.5 + (prob_gap if answerable else 0)))
        out.append(ScoredProbe(Probe(f"p{i}", "q", answerable, "answerable" if answerable else "absent_term", "ko",
                                     "d" if answerable else ""), True, False, tuple(tops),
                               tuple((s, "gate.threshold") for s, _ in tops)))
    return out


def test_probes_never_switch_the_gate_to_bm25_or_the_rerankers_probability_which_they_favour():
    from rag.calibrate.auto import choose

    bm25_best = _scored(20, dense_gap=0.02, bm25_gap=10)  # BM25 separates the probes perfectly, the cosine barely
    signal, fits = choose(bm25_best, 0.9, configured="dense")
    assert signal == "dense"
    assert fits["bm25"][0].auroc > fits["dense"][0].auroc + 0.2  # measured and reported all the same
    assert choose(bm25_best, 0.9, configured="bm25")[0] == "bm25"  # a configured BM25 gate stays
    prob_best = _scored(20, dense_gap=0.02, bm25_gap=0, prob_gap=1.0)
    assert choose(prob_best, 0.9, configured="dense")[0] == "dense"
    assert choose(prob_best, 0.9, configured="probability")[0] == "probability"  # a configured one stays
    # from a configured probe-favoured signal the gate does switch, to the cosine, when it separates clearly better
    assert choose(_scored(20, dense_gap=1.0, bm25_gap=0, prob_gap=0.0), 0.9, configured="probability")[0] == "dense"


# -- the fit's margin: Wilson's lower bound ----------------------------------------------------------------
def test_with_no_margin_the_fit_is_the_labelled_calibration_on_the_same_values():
    import math

    import numpy as np

    from rag.calibrate.labelled import calibrate_threshold
    from rag.calibrate.auto import confident_threshold

    rng = np.random.default_rng(7)
    for _ in range(20):
        labels = list(rng.random(120) < 0.5)
        values = [float(round(v, 2)) for v in rng.normal(0.85, 0.03, 120) + 0.03 * np.array(labels)]
        ref, point = calibrate_threshold(values, labels, 0.8)
        got = confident_threshold(values, labels, [1] * len(values), 0.8, 0.0)
        assert (point is None and math.isinf(got)) or np.isclose(got, ref), (got, ref)


def test_a_margin_of_standard_errors_raises_the_threshold_and_reads_each_question_once():
    from rag.calibrate.auto import confident_threshold, wilson_lower

    assert abs(wilson_lower(49 / 54, 54, 1.0) - 0.860) < 0.001 and wilson_lower(0.9, 54, 0.0) == 0.9
    # 20 right at 0.95..0.76, then one wrong at 0.755, then right and wrong alternating
    values = [0.95 - 0.01 * i for i in range(20)] + [0.755] + [0.74 - 0.01 * i for i in range(10)]
    labels = [True] * 20 + [False] + [i % 2 == 0 for i in range(10)]
    plain = confident_threshold(values, labels, [1] * len(values), 0.9, 0.0)
    held = confident_threshold(values, labels, [1] * len(values), 0.9, 1.0)
    assert plain == 0.74 - 0.01 * 2 and held > plain  # 22 of 24 answered right is 0.917; a standard error below is not 0.9
    assert confident_threshold(values, labels, [1] * len(values), 0.9, 5.0) == float("inf")  # none holds it: abstain
    # a question weighing 5 moves the precision, not the number of questions the standard error counts
    w = [5 if not y else 1 for y in labels]
    assert confident_threshold(values, labels, w, 0.9, 0.0) > plain
    # a question the reading stops (-inf) is never answered
    assert confident_threshold([0.9, float("-inf")], [True, False], [1, 1], 0.9, 0.0) == 0.9


def test_with_too_few_probes_for_the_full_margin_the_fit_holds_the_largest_it_can():
    from rag.calibrate.auto import confident_threshold, held_threshold

    values = [0.95 - 0.01 * i for i in range(6)] + [0.83, 0.82, 0.81]  # 6 of 6 right: 0.857 one error below
    labels = [True] * 6 + [False, True, False]
    ones = [1] * len(values)
    tau, held = held_threshold(values, labels, ones, 0.9, 1.0)
    assert 0 <= held < 1.0 and tau == confident_threshold(values, labels, ones, 0.9, held)
    assert held == 0 or confident_threshold(values, labels, ones, 0.9, held + 0.1) == float("inf")
    assert held_threshold([0.9, 0.8], [False, True], [1, 1], 0.9, 1.0) == (float("inf"), 0.0)


def test_a_bad_margin_is_a_usage_error_before_any_work(tmp_path, capsys):
    cfg = write_config(tmp_path, gate={"signal": "dense", "threshold": 0.0})
    assert main(["calibrate", "--auto", "--config", str(cfg), "--standard-errors", "9"]) == 2
    assert "--standard-errors must be in [0, 5]" in capsys.readouterr().err
    assert main(["calibrate", "--dataset", "x.jsonl", "--target-precision", "0.9", "--config", str(cfg),
                 "--standard-errors", "1"]) == 2
    assert "add --auto" in capsys.readouterr().err
    assert not (tmp_path / "config.calibrated.yaml").exists()


def test_auto_calibration_never_closes_the_gate():
    from rag.calibrate.auto import answering_threshold, fit_signal

    vals = [0.95, 0.94, 0.93, 0.92, 0.91, 0.90, 0.89, 0.88, 0.87, 0.86]
    labels = [True, False, True, False, True, False, True, False, True, False]
    # precision 0.9 is held only above every value: a closed gate; kept: the threshold answering half
    tau, warning = answering_threshold(float("inf"), vals, labels, "gate.threshold", 0.9)
    answered = [v >= tau for v, y in zip(vals, labels) if y]
    assert sum(answered) / len(answered) >= 0.5 and tau == 0.91
    assert warning and "answers only 0%" in warning and "gate.threshold" in warning
    # a threshold that answers enough stays, with no warning
    assert answering_threshold(0.87, vals, labels, "gate.threshold", 0.9) == (0.87, None)

    class _SP:  # a scored probe, as fit_signal reads it
        def __init__(self, v, y):
            self.probe = type("P", (), {"answerable": y, "kind": "answerable" if y else "absent_fact"})()
            self.found, self.weight, self._v = True, 1, v

        def key(self, signal):
            return "gate.threshold"

        def read_score(self, signal):
            return self._v

    probes = [_SP(v, y) for v, y in zip(vals, labels)]
    fit = fit_signal(probes, "dense", 0.95, floor=True)[0]
    assert fit.warning is not None and fit.coverage_of_answerable >= 0.5 and fit.threshold == 0.91
    raw = fit_signal(probes, "dense", 0.95)[0]  # what the report compares labels against: the fit itself
    assert raw.warning is None and raw.threshold != 0.91
