"""The reader's learned combination: feature vectors (shape, order, ranks), the feature cache, the JSON
artifact (round trip without pickle), determinism of the fit, calibration, and the evaluation measures."""
from __future__ import annotations

import json

import numpy as np
import pytest

from rag.reader.combine import Combiner, Head, expand, fit_platt, log_loss
from rag.reader.evaluate import _mrr_ndcg, auroc, reliability
from rag.reader.examples import ReaderExample
from rag.reader.featstore import Group, chunk_paths, concat, featurize, load_chunk, save_chunk
from rag.reader.features import PASSAGE_FEATURES, SENTENCE_FEATURES, passage_vectors, ranked_block, sentence_vectors
from tests.fakes import FakeSignals

Q = "서울의 인구는 몇 명인가요?"
PASSAGES = ["서울은 대한민국의 수도이다. 서울의 인구는 약 940만 명이다.", "부산은 항구 도시이다.",
            "The population of Seoul is about 9.4 million."]


def test_feature_names_are_frozen():
    # the stored artifact names its features: a reordering here must be a new artifact
    assert PASSAGE_FEATURES[:4] == ("ce", "ce_rrank", "ce_margin", "ce_z")
    assert PASSAGE_FEATURES[4:12] == ("dense", "dense_rrank", "dense_margin", "dense_z",
                                      "bm25", "bm25_rrank", "bm25_margin", "bm25_z")
    assert len(PASSAGE_FEATURES) == 23 and len(set(PASSAGE_FEATURES)) == 23
    assert len(SENTENCE_FEATURES) == 17 and len(set(SENTENCE_FEATURES)) == 17


def test_ranked_block_ranks_margins_and_ties():
    b = ranked_block(np.array([1.0, 3.0, 2.0, 3.0]))
    assert b[:, 1].tolist() == [1 / 4, 1.0, 1 / 3, 1 / 2]  # the tie goes to the earlier position
    assert b[:, 2].tolist() == [-2.0, 0.0, -1.0, 0.0]  # a tied best has no positive margin
    assert abs(b[:, 3].mean()) < 1e-12
    assert ranked_block(np.array([5.0]))[0].tolist() == [5.0, 1.0, 0.0, 0.0]
    assert ranked_block(np.zeros(0)).shape == (0, 4)


def test_passage_vectors_shape_order_and_signals():
    ce, dense, bm25 = np.array([2.0, -1.0, 0.5]), np.array([0.9, 0.7, 0.8]), np.array([12.0, 3.0, 0.0])
    x = passage_vectors(Q, PASSAGES, ce, dense, bm25)
    col = {n: i for i, n in enumerate(PASSAGE_FEATURES)}
    assert x.shape == (3, len(PASSAGE_FEATURES))
    assert x[:, col["ce"]].tolist() == ce.tolist() and x[0, col["ce_rrank"]] == 1.0
    assert x[:, col["question_ko"]].tolist() == [1, 1, 1]
    assert x[:, col["passage_ko"]].tolist() == [1, 1, 0] and x[:, col["same_language"]].tolist() == [1, 1, 0]
    assert x[:, col["numeric_question"]].tolist() == [1, 1, 1]  # 몇 명: a count
    assert x[0, col["asked_fact"]] == 1 and x[1, col["asked_fact_missing"]] == 1
    assert x[0, col["coverage"]] > x[1, col["coverage"]]
    # the same input gives the same vector; permuting candidates permutes rows
    perm = [2, 0, 1]
    y = passage_vectors(Q, [PASSAGES[i] for i in perm], ce[perm], dense[perm], bm25[perm])
    assert np.array_equal(y, x[perm])
    with pytest.raises(ValueError):
        passage_vectors(Q, PASSAGES, ce[:2], dense, bm25)


def test_sentence_vectors_shape_and_passage_columns():
    px = passage_vectors(Q, PASSAGES, np.array([2.0, -1.0, 0.5]), np.zeros(3), np.zeros(3))
    sents = ["서울은 대한민국의 수도이다.", "서울의 인구는 약 940만 명이다."]
    x = sentence_vectors(Q, sents, np.array([-1.0, 3.0]), np.array([0.5, 0.6]), px[0])
    col = {n: i for i, n in enumerate(SENTENCE_FEATURES)}
    assert x.shape == (2, len(SENTENCE_FEATURES))
    assert x[1, col["s_ce_rrank"]] == 1.0 and x[1, col["s_asked_fact"]] == 1 and x[0, col["s_asked_fact"]] == 0
    assert x[:, col["s_position"]].tolist() == [0.0, 1.0] and x[:, col["s_first"]].tolist() == [1.0, 0.0]
    assert (x[:, col["p_ce_z"]] == px[0, PASSAGE_FEATURES.index("ce_z")]).all()


def _example(pid: str, passage: str, label: str, held=None, **kw) -> ReaderExample:
    from rag.text.sentences import split_sentences

    return ReaderExample(example_id=f"korquad1:ko-ko:q1:{pid}", source="korquad1", source_split="dev", split="train",
                         split_key="k", question_id="q1", question_lang="ko", passage_lang="ko", question=Q,
                         answers=("940만 명",), answerable=True, passage_id=pid, passage_title="", passage=passage,
                         origin="gold" if label == "answers" else "bm25", passage_label=label,
                         sentences=tuple((s.start, s.end) for s in split_sentences(passage)), answer_sentences=held, **kw)


def _group() -> Group:
    exs = (_example("p0", PASSAGES[0], "answers", (1,)), _example("p1", PASSAGES[1], "no_answer"))
    return Group("korquad1|q1|ko-ko", "korquad1", "ko-ko", True, exs)


def test_featurize_cache_round_trip_and_concat(tmp_path):
    c = featurize([_group(), _group()], FakeSignals())
    assert c.p_x.shape == (4, len(PASSAGE_FEATURES)) and c.p_group.tolist() == [0, 0, 1, 1]
    assert c.p_label.tolist() == [1, 0, 1, 0]
    assert c.s_label.tolist() == [0, 1, 0, 1] and c.s_row.tolist() == [0, 0, 2, 2]  # answering passages only
    save_chunk(c, tmp_path / "train" / "korquad1-0000-2.npz")
    back = load_chunk(tmp_path / "train" / "korquad1-0000-2.npz")
    assert np.array_equal(back.p_x, c.p_x) and back.g_key.tolist() == c.g_key.tolist()
    both = concat([c, back])
    assert both.p_group.tolist() == [0, 0, 1, 1, 2, 2, 3, 3] and both.s_row.tolist()[4:] == [4, 4, 6, 6]
    save_chunk(c, tmp_path / "train" / "korquad1-0000-1.npz")  # a smaller sample's last chunk
    assert [p.name for p in chunk_paths(tmp_path, "train", "korquad1")] == ["korquad1-0000-2.npz"]
    assert not list((tmp_path / "train").glob("*.tmp"))


def _synthetic(n: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    x = rng.normal(size=(n, len(PASSAGE_FEATURES)))
    y = (x[:, 0] + 0.5 * x[:, 4] + rng.normal(scale=1.0, size=n) > 0.8).astype(int)
    return x, y


def _fit() -> Head:
    from rag.reader.combine import INTERACTIONS, fit_head

    xt, yt = _synthetic(400, 1)
    xc, yc = _synthetic(200, 2)
    return fit_head(xt, yt, xc, yc, PASSAGE_FEATURES, INTERACTIONS["passage"], compare_gbm=False)


def test_fit_is_deterministic_and_learns():
    pytest.importorskip("sklearn")
    a, b = _fit(), _fit()
    assert a == b  # coefficients, standardisation and calibration identical
    xe, ye = _synthetic(300, 3)
    assert auroc(ye, a.probability(xe)) > 0.75
    assert a.platt_a > 0 and a.info["C"] in (0.01, 0.1, 1.0, 10.0)


def test_artifact_round_trip_without_pickle(tmp_path):
    head = Head(tuple(PASSAGE_FEATURES), (("ce", "same_language"),), tuple([0.5] * 24), tuple([2.0] * 24),
                tuple(np.linspace(-1, 1, 24)), -0.3, 1.7, -0.2, {"C": 1.0})
    shead = Head(tuple(SENTENCE_FEATURES), (), tuple([0.0] * 17), tuple([1.0] * 17), tuple([0.1] * 17), 0.0)
    comb = Combiner(head, shead, {"trained": "2026-12-06"})
    path = comb.save(tmp_path)
    raw = path.read_bytes()
    assert json.loads(raw)["format"] == "rag-reader-combiner/2"  # plain JSON, no pickle stream
    back = Combiner.load(tmp_path)
    assert back == comb and back.meta["trained"] == "2026-12-06"
    x = np.random.default_rng(0).normal(size=(5, len(PASSAGE_FEATURES)))
    assert np.array_equal(back.passage.probability(x), comb.passage.probability(x))
    with pytest.raises(ValueError):
        back.passage.logit(x[:, :5])


def test_load_refuses_another_format(tmp_path):
    from rag.errors import ModelLoadError

    (tmp_path / "combiner.json").write_text(json.dumps({"format": "other"}), encoding="utf-8")
    with pytest.raises(ModelLoadError):
        Combiner.load(tmp_path)


def test_platt_is_monotone_and_improves_log_loss():
    rng = np.random.default_rng(5)
    z = rng.normal(size=2000) * 3
    y = (rng.random(2000) < 1 / (1 + np.exp(-(0.5 * z - 1)))).astype(int)
    a, b = fit_platt(z, y)
    assert abs(a - 0.5) < 0.1 and abs(b + 1) < 0.2
    head = Head(("x",), (), (0.0,), (1.0,), (1.0,), 0.0, a, b)
    grid = np.linspace(-10, 10, 101).reshape(-1, 1)
    p = head.probability(grid)
    assert np.all(np.diff(p) > 0)
    assert log_loss(y, head.probability(z.reshape(-1, 1))) < log_loss(y, head.uncalibrated(z.reshape(-1, 1)))


def test_expand_appends_products():
    x = np.array([[2.0, 3.0, 5.0]])
    assert expand(x, ("a", "b", "c"), (("a", "c"),)).tolist() == [[2.0, 3.0, 5.0, 10.0]]


def test_measures():
    assert _mrr_ndcg(np.array([0, 1, 0])) == (0.5, pytest.approx(1 / np.log2(3)))
    assert _mrr_ndcg(np.array([0, 0])) == (0.0, 0.0)
    assert auroc(np.array([1, 1, 0, 0]), np.array([0.9, 0.8, 0.1, 0.8])) == pytest.approx(0.875)
    assert np.isnan(auroc(np.array([1, 1]), np.array([0.1, 0.2])))
    rows, ece = reliability(np.array([0.05, 0.05, 0.95, 0.95]), np.array([0, 0, 1, 1]))
    assert [r["n"] for r in rows] == [2, 0, 0, 0, 0, 0, 0, 0, 0, 2] and ece == pytest.approx(0.05)


def test_parse_limits():
    from rag.cli.reader import parse_limits

    lim = parse_limits("train=5,eval:squad2=7")
    assert lim["train"]["msmarco"] == 5 and lim["eval"] == {"squad2": 7}
    with pytest.raises(SystemExit):
        parse_limits("test=5")


def test_committed_artifact_loads_with_the_frozen_features():
    comb = Combiner.load()  # rag/_models/reader-combiner/combiner.json
    assert comb.passage.features == PASSAGE_FEATURES and comb.sentence.features == SENTENCE_FEATURES
    assert comb.passage.platt_a > 0 and comb.sentence.platt_a > 0
    x = np.zeros((2, len(PASSAGE_FEATURES)))
    p = comb.passage.probability(x)
    assert p.shape == (2,) and np.all((p > 0) & (p < 1))
