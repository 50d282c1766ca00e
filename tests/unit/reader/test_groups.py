"""The neural reader's training groups, batches and loss; the reader-split filters of the evaluations."""
from __future__ import annotations

import random

import pytest

from rag.reader.examples import ReaderExample
from rag.reader.groups import WINDOW_CHARS, question_groups, window
from rag.reader.splits import beir_query_filter, split_of
from rag.text.sentences import split_sentences


def _ex(pid: str, text: str, label: str, answer: tuple[int, ...] | None = None, *, answerable=True,
        qid="q1", lang="ko") -> ReaderExample:
    spans = tuple((s.start, s.end) for s in split_sentences(text))
    return ReaderExample(f"korquad1:{lang}-{lang}:{qid}:{pid}", "korquad1", "dev", "train", pid, qid, lang, lang,
                         "서울의 인구는 몇 명인가?", ("940만 명",) if answerable else (), answerable, pid, pid, text,
                         "gold" if label == "answers" else "bm25", label, spans,
                         answer if label == "answers" else None)


GOLD = "서울은 대한민국의 수도이며 가장 큰 도시이다. 서울의 인구는 약 940만 명으로 집계되었다. 한강이 도시의 가운데를 흐른다. 조선의 수도는 한양이었다."
NEGS = [f"부산은 항구 도시이며 인구는 {n}만 명이라는 기록이 있다. 해운대는 유명한 해변으로 알려져 있다. 부산항은 큰 항구이다." for n in range(300, 309)]


def rows(answerable=True, gold=True, maybe=False):
    out = [_ex("서울#0", GOLD, "answers", (1,))] if gold else []
    if maybe:
        out.append(_ex("서울#0", GOLD, "unknown", answerable=answerable))
    out += [_ex(f"부산#{i}", t, "no_answer", answerable=answerable) for i, t in enumerate(NEGS)]
    return out


def test_positive_first_and_every_kind():
    groups = {g.kind: g for g in question_groups(rows(), negatives=7, seed=13)}
    assert set(groups) == {"passage", "sentence"}
    p, s = groups["passage"], groups["sentence"]
    assert p.has_positive and "940만 명" in p.texts[0] and len(p.texts) == 8
    assert all("940만" not in t for t in p.texts[1:])
    assert s.texts[0].startswith("서울의 인구는 약 940만 명") and len(s.texts) == 8
    # half of the sentence negatives may come from the answering passage itself (its other clauses)
    assert any(t in GOLD for t in s.texts[1:])
    assert p.quota_key == "korquad1/passage/ko-ko"


def test_unanswerable_and_maybe_groups_have_no_positive():
    none = [g for g in question_groups(rows(answerable=False, gold=False), 7, 13)]
    assert [g.kind for g in none] == ["none"] and not none[0].has_positive and len(none[0].texts) == 8
    maybe = [g for g in question_groups(rows(gold=False, maybe=True), 7, 13)]
    assert [g.kind for g in maybe] == ["maybe"] and not maybe[0].has_positive


def test_groups_are_deterministic_per_seed():
    a = list(question_groups(rows(), 7, 13))
    assert a == list(question_groups(rows(), 7, 13))
    assert a != list(question_groups(rows(), 7, 14))


def test_window_holds_the_answer_sentence_within_the_limit():
    long = " ".join(f"문장 {i} 은 여러 낱말로 된 제법 긴 설명을 담고 있는 문장이다." for i in range(40))
    ex = _ex("x#0", long, "answers", (20,))
    for seed in range(20):
        w = window(ex, 20, random.Random(seed))
        assert "문장 20 " in w and len(w) <= WINDOW_CHARS["ko"]


def test_plan_batches_and_loss():
    torch = pytest.importorskip("torch")
    from rag.reader.neural import plan_batches, step_loss

    groups = list(question_groups(rows(), 7, 13)) * 3 + list(question_groups(rows(False, False), 7, 13)) * 2
    batches = plan_batches(groups, 2, seed=1)
    assert sorted(i for b in batches for i in b) == list(range(len(groups)))
    assert all(len({groups[i].kind for i in b}) == 1 for b in batches)
    assert batches == plan_batches(groups, 2, seed=1)
    pos = [g for g in groups if g.has_positive][:2]
    good = torch.tensor([5.0] + [-5.0] * 7 + [5.0] + [-5.0] * 7)
    bad = torch.tensor([-5.0] + [5.0] * 7 + [-5.0] + [5.0] * 7)
    assert step_loss(good, pos, 8, 0.5) < 0.05 < 5 < step_loss(bad, pos, 8, 0.5)
    none = [g for g in groups if not g.has_positive][:1]
    low, high = step_loss(torch.full((8,), -6.0), none, 8, 0.5), step_loss(torch.full((8,), 6.0), none, 8, 0.5)
    assert float(low) < 0.01 and float(high) > 2.5  # an unanswerable question is taught to score low everywhere


def test_beir_filter_follows_the_reader_split(tmp_path):
    kq = tmp_path / "korquad1"
    kq.mkdir()
    qrels = {f"q{i}": {f"문서{i}#0": 1} for i in range(200)}
    keep = beir_query_filter(str(kq), qrels, "eval")
    assert [q for q in qrels if keep(q)] == [q for q in qrels if split_of("korquad1", next(iter(qrels[q]))) == "eval"]
    assert 30 < sum(map(keep, qrels)) < 90
    ms = tmp_path / "msmarco-en-ko"
    ms.mkdir()
    keep_ms = beir_query_filter(str(ms), {}, "train")
    assert all(keep_ms(str(i)) == (split_of("msmarco", str(i)) == "train") for i in range(100))
    from rag.errors import ConfigError

    with pytest.raises(ConfigError, match="known for"):
        beir_query_filter(str(tmp_path), {}, "eval")


def test_abstention_sets_split_as_the_reader_data(tmp_path):
    import json

    from rag.evaluation.datasets import load_labelled

    paras = [{"context": f"Paragraph {i} text.", "qas": [{"id": f"q{i}", "question": "What?", "is_impossible": i % 2 == 0,
                                                          "answers": []}]} for i in range(60)]
    p = tmp_path / "dev-v2.0.json"
    p.write_text(json.dumps({"data": [{"title": "T", "paragraphs": paras}]}))
    for split in ("train", "calib", "eval"):
        got = {q.qid for q in load_labelled(p, f"reader-{split}")}
        assert got == {f"q{i}" for i in range(60) if split_of("squad2", f"T#{i}") == split}
    assert sum(len(load_labelled(p, f"reader-{s}")) for s in ("train", "calib", "eval")) == 60
