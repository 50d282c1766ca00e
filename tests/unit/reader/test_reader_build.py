"""The recipe end to end over the tiny fixtures: counts, positives, pairing, no eval passage in
training, resumability, determinism, the command line."""
from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest

from rag.reader.data import Recipe, build, iter_examples, read_manifest
from rag.reader.errors import RecipeMismatchError
from rag.reader.inputs import Locations
from rag.reader.shards import stats_path
from rag.reader.splits import split_of

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "reader"
RECIPE = Recipe(negatives=2, depth=10, shard_questions=3)


@pytest.fixture
def loc(tmp_path) -> Locations:
    return Locations(FIXTURES / "shared", tmp_path / "cache")


@pytest.fixture
def built(tmp_path, loc):
    out = tmp_path / "reader"
    report = build(RECIPE, loc, out, command=["test"])
    return out, report


def test_manifest_counts_are_the_shards_counts(built):
    out, report = built
    m = read_manifest(out)
    got: Counter = Counter()
    for ex in iter_examples(out):
        key = (ex.source, ex.split, ex.question_lang, ex.passage_lang)
        got[("passage", *key, ex.passage_label)] += 1
        for s in ex.sentence_examples():
            got[("sentence", *key, s.label)] += 1
    listed = Counter({(c["level"], c["source"], c["split"], c["question_lang"], c["passage_lang"], c["label"]): c["count"]
                      for c in m["counts"] if c["level"] in ("passage", "sentence")})
    assert listed == got
    assert sum(s["rows"] for s in m["shards"]) == sum(got[k] for k in got if k[0] == "passage")
    questions = {(c["source"], c["label"]): 0 for c in m["counts"] if c["level"] == "question"}
    for c in m["counts"]:
        if c["level"] == "question":
            questions[(c["source"], c["label"])] += c["count"]
    assert questions[("squad2", "unanswerable")] == 2 and questions[("squad2", "answerable")] == 5
    assert questions[("msmarco", "answerable")] == 6 * 4  # each query in 2 languages over 2 corpora
    assert m["command"] == ["test"] and m["missing_inputs"][0]["name"] == "korquad1/train"
    assert {i["name"] for i in m["inputs"]} >= {"squad2/dev-half", "nomiracl-ko/test", "msmarco/ko/corpus.jsonl"}
    assert all(len(i["sha256"]) == 64 for i in m["inputs"])


def test_every_positive_sentence_holds_the_answer_span(built):
    out, _ = built
    checked = 0
    for ex in iter_examples(out):
        if ex.answer_sentences:
            text = " ".join(ex.sentence_text(i) for i in ex.answer_sentences)
            if ex.source == "scifact":
                assert ex.stance in ("support", "contradict")
            else:
                assert any(a in text for a in ex.answers), (ex.example_id, ex.answers, text)
            checked += 1
    assert checked >= 10


def test_cross_lingual_pairs_keep_the_query_split(built):
    out, _ = built
    seen: dict[str, set] = {}
    pairs: dict[str, set] = {}
    for ex in iter_examples(out, sources=("msmarco",)):
        seen.setdefault(ex.question_id, set()).add(ex.split)
        pairs.setdefault(ex.question_id, set()).add((ex.question_lang, ex.passage_lang))
        assert ex.split == split_of("msmarco", ex.question_id)
    assert len(seen) == 6 and all(len(s) == 1 for s in seen.values())
    assert all(p == {("en", "en"), ("en", "ko"), ("ko", "en"), ("ko", "ko")} for p in pairs.values())
    assert {s for v in seen.values() for s in v} == {"train", "calib", "eval"}


def test_no_eval_passage_in_train_or_calib_and_mined_negatives_do_not_answer(built):
    out, _ = built
    rows = list(iter_examples(out))
    eval_pids = {(e.source, e.passage_lang, e.passage_id) for e in rows if e.split == "eval" and e.origin != "bm25"}
    shared = set()
    for e in rows:
        if e.split != "eval" and (e.source, e.passage_lang, e.passage_id) in eval_pids:
            # paragraph-keyed sources never share; a mined negative never comes from an eval passage;
            # NoMIRACL gives the same passage to two questions (counted in the manifest)
            assert e.source == "nomiracl-ko" and e.origin == "given", e.example_id
            shared.add(e.passage_id)
        if e.origin == "bm25":
            assert e.passage_label == "no_answer" and e.rank >= 1
            assert not any(a in e.passage for a in e.answers)
    assert any(e.origin == "bm25" for e in rows)
    counted = read_manifest(out)["passages_named_by_train_and_eval_questions"]
    assert counted["nomiracl-ko"]["given"] == len(shared) > 0
    assert counted["korquad1"] == counted["squad2"] == {"gold": 0, "given": 0}
    assert {e.split for e in rows if e.source == "korquad1"} == {"train", "calib", "eval"}


def test_resume_reuses_finished_shards_and_rebuilds_a_lost_one(built, loc):
    out, first = built
    assert first.built == len(read_manifest(out)["shards"]) and first.reused == 0
    again = build(RECIPE, loc, out)
    assert again.built == 0 and again.reused == first.built
    victim = out / read_manifest(out)["shards"][0]["path"]
    before = victim.read_bytes()
    stats_path(victim).unlink()                     # as if killed between the shard and its stats
    third = build(RECIPE, loc, out)
    assert third.built == 1 and victim.read_bytes() == before


def test_the_same_recipe_gives_the_same_bytes(built, tmp_path, loc):
    out, _ = built
    other = build(RECIPE, loc, tmp_path / "again").manifest
    assert [s["sha256"] for s in other["shards"]] == [s["sha256"] for s in read_manifest(out)["shards"]]


def test_another_recipe_in_the_same_folder_is_refused_unless_forced(built, loc):
    out, _ = built
    with pytest.raises(RecipeMismatchError, match="another recipe"):
        build(Recipe(negatives=1, depth=10, shard_questions=3), loc, out)
    forced = build(Recipe(negatives=1, depth=10, shard_questions=3), loc, out, force=True)
    assert forced.reused == 0 and read_manifest(out)["params"]["negatives"] == 1


def test_an_interrupted_forced_rebuild_never_reuses_the_old_recipes_shards(built, loc, monkeypatch):
    """--force rewrites recipe.json first; shards of the old recipe left behind by a crash are not
    taken for finished ones of the new recipe (their stats name the old recipe)."""
    import rag.reader.data as data

    out, first = built
    new = Recipe(negatives=1, depth=10, shard_questions=3)
    calls = {"n": 0}
    real = data.build_shard

    def dies_after_one(*a, **kw):
        if calls["n"] == 1:
            raise KeyboardInterrupt
        calls["n"] += 1
        return real(*a, **kw)

    monkeypatch.setattr(data, "build_shard", dies_after_one)
    with pytest.raises(KeyboardInterrupt):
        build(new, loc, out, force=True)
    monkeypatch.setattr(data, "build_shard", real)
    resumed = build(new, loc, out)
    assert resumed.reused == 1 and resumed.built == first.built - 1
    mined = Counter((e.source, e.question_id, e.question_lang, e.passage_lang) for e in iter_examples(out)
                    if e.origin == "bm25")
    assert mined and max(mined.values()) == 1  # every shard is the new recipe's (one negative a question)
    assert read_manifest(out)["params"]["negatives"] == 1


def test_limit_keeps_a_fixed_sample_per_source(tmp_path, loc):
    m = build(Recipe(sources=("squad2", "msmarco"), negatives=1, limit=3), loc, tmp_path / "lim").manifest
    qs = Counter()
    for c in m["counts"]:
        if c["level"] == "question" and (c["question_lang"], c["passage_lang"]) in (("en", "en"),):
            qs[c["source"]] += c["count"]
    assert qs == {"squad2": 3, "msmarco": 3}
    again = build(Recipe(sources=("squad2", "msmarco"), negatives=1, limit=3), loc, tmp_path / "lim2").manifest
    assert [s["sha256"] for s in again["shards"]] == [s["sha256"] for s in m["shards"]]


def test_the_command_line_builds_and_shows(tmp_path, capsys):
    from rag.cli.main import main

    out = tmp_path / "cli"
    argv = ["reader", "data", "build", "--out", str(out), "--shared", str(FIXTURES / "shared"),
            "--cache", str(tmp_path / "cache"), "--sources", "squad2,nomiracl-ko", "--negatives", "1"]
    assert main(argv) == 0
    printed = capsys.readouterr()
    assert "| squad2 | train | en→en |" in printed.out and "korquad" not in printed.err
    m = read_manifest(out)
    assert m["command"][:4] == ["rag", "reader", "data", "build"] and "--negatives" in m["command"]
    assert main(["reader", "data", "show", "--out", str(out)]) == 0
    assert "nomiracl-ko" in capsys.readouterr().out
    assert main(["reader", "data", "build", "--out", str(out), "--shared", str(FIXTURES / "shared"),
                 "--sources", "nosuch"]) == 2
