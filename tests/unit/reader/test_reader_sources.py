"""Each source read from the tiny fixtures (tests/fixtures/reader/shared, the shared layout)."""
from __future__ import annotations

from pathlib import Path

import pytest

from rag.reader.errors import InputChecksumError, ReaderDataError
from rag.reader.inputs import KORQUAD_TRAIN, Locations, file_hashes
from rag.reader.sources import load_korquad, load_msmarco, load_nomiracl, load_scifact, load_squad2, locate

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "reader"


@pytest.fixture
def loc(tmp_path) -> Locations:
    return Locations(FIXTURES / "shared", tmp_path / "cache")


def _questions(loaded):
    return {q.qid: q for t in loaded.tasks for q in t.questions}


def test_locate_prefers_the_given_offset_then_the_nearest():
    text = "1774 and 1774 and 1774"
    assert locate(text, "1774", 9) == (9, 13)
    assert locate(text, "1774", 11) == (9, 13)   # off by two: the nearest occurrence
    assert locate(text, "1774", None) == (0, 4)
    assert locate(text, "1999", 0) is None


def test_korquad_without_its_train_file_reads_the_shared_dev_and_says_so(loc):
    got = load_korquad(loc)
    assert [f.name for f in got.missing] == ["korquad1/train", "korquad1/dev"]
    qs = _questions(got)
    t = got.tasks[0]
    assert len(qs) == 6 and t.lang == "ko" and t.filter_answers
    k2 = qs["k2"]
    (s, e), = k2.gold[0].spans
    assert t.passages["서울#0"].text[s:e] == "940만 명" and k2.split_key == "서울#0"


def test_a_korquad_train_file_that_is_not_the_official_one_is_refused(loc):
    p = loc.resolve(KORQUAD_TRAIN)
    p.parent.mkdir(parents=True)
    p.write_text('{"version": "KorQuAD_v1.0_train", "data": []}', encoding="utf-8")
    with pytest.raises(InputChecksumError, match="82e3c5939e5e61a1c4ae94e42676800e88ec52a6"):
        load_korquad(loc)


def test_file_hashes_match_git(tmp_path):
    p = tmp_path / "x.txt"
    p.write_bytes(b"hello\n")
    size, sha, blob = file_hashes(p)
    assert size == 6 and blob == "ce013625030ba8dba906f756967f9e9ca394464a"  # `git hash-object` of "hello\n"
    assert sha == "5891b5b522d5df086d0ff0b110fbd9d21bb4fc7163af34d08286a2e846f6be03"


def test_squad2_spans_unanswerable_and_a_shifted_offset(loc):
    got = load_squad2(loc)
    qs = _questions(got)
    t = got.tasks[0]
    assert not qs["s3"].answerable and qs["s3"].given_negative == ("Oxygen#0",) and not qs["s3"].gold
    (s, e), = qs["s4"].gold[0].spans           # answer_start was off by two
    assert t.passages["Oxygen#1"].text[s:e] == "pale blue"
    assert qs["s4"].split_key == "Oxygen#1"


def test_msmarco_gives_two_corpora_each_asked_in_both_languages(loc):
    got = load_msmarco(loc)
    en, ko = got.tasks
    assert (en.name, en.lang, ko.name, ko.lang) == ("msmarco-en", "en", "msmarco-ko", "ko")
    q_en = {q.qid: q for q in en.questions}["2"]
    q_ko = {q.qid: q for q in ko.questions}["2"]
    assert [lang for lang, _ in q_en.asks] == ["en", "ko"] and [lang for lang, _ in q_ko.asks] == ["ko", "en"]
    assert q_en.split_key == q_ko.split_key == "2"
    assert [g.pid for g in q_ko.gold] == ["p1", "p2"]          # the ko corpus's own positives (two chunks)
    assert q_en.mine_text == "longest river in africa" and q_ko.mine_text == "아프리카에서 가장 긴 강"


def test_nomiracl_labels(loc):
    qs = _questions(load_nomiracl(loc))
    assert qs["1#0"].answerable and qs["1#0"].unknown == ("a#0", "b#0", "c#0") and not qs["1#0"].given_negative
    assert not qs["3#0"].answerable and qs["3#0"].given_negative == ("e#0", "f#0", "b#0")


def test_scifact_rationales_claims_and_nei(loc):
    got = load_scifact(loc)
    qs = _questions(got)
    t = got.tasks[0]
    ten = qs["10"]                                # two rows of one claim: both rationale sentences
    spans = ten.gold[0].spans
    assert [t.passages["200"].text[s:e] for s, e in spans] == ["Aspirin reduces the risk of heart attack.",
                                                                "It thins the blood."]
    assert ten.stance == "support" and qs["11"].stance == "contradict"
    assert not qs["12"].answerable and qs["12"].given_negative == ("600",)
    assert qs["1"].gold[0].spans is None and qs["1"].source_split == "train"


def test_a_missing_shared_file_is_a_typed_error(tmp_path):
    with pytest.raises(ReaderDataError, match="input file not found"):
        load_squad2(Locations(tmp_path, tmp_path))
