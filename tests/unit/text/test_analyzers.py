"""Analyzers: Korean bigrams, Kiwi morphemes, the English path, NFKC."""
from __future__ import annotations

import unicodedata

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from rag.text import STOPWORDS_EN, make_analyzer

BIGRAM = make_analyzer("korean_bigram")
ENGLISH = make_analyzer("english")

_syllables = st.characters(min_codepoint=0xAC00, max_codepoint=0xD7A3)
_hangul_word = st.text(alphabet=_syllables, min_size=1, max_size=8)


# -- korean_bigram ------------------------------------------------------------
def test_bigram_overlapping_pairs_within_a_hangul_run():
    assert BIGRAM("연차 휴가는") == ["연차", "휴가", "가는"]
    assert BIGRAM("대한민국") == ["대한", "한민", "민국"]


def test_bigram_single_syllable_is_kept_as_unigram():
    assert BIGRAM("가") == ["가"]
    assert BIGRAM("나 는 간다") == ["나", "는", "간다"]


@settings(max_examples=80, deadline=None)
@given(st.lists(_hangul_word, min_size=1, max_size=6))
def test_bigram_property_on_hangul_words(words):
    out = BIGRAM(" ".join(words))
    expected = []
    for w in words:
        expected.extend([w] if len(w) == 1 else [w[i:i + 2] for i in range(len(w) - 1)])
    assert out == expected
    # runs never bridge the space between words
    assert all(" " not in t for t in out)


def test_bigram_sends_latin_through_english_path():
    # stemming and stopwords apply to the non-Hangul parts
    assert BIGRAM("The running dogs are jumping") == ["run", "dog", "jump"]
    assert BIGRAM("The running dogs are jumping") == ENGLISH("The running dogs are jumping")


def test_bigram_mixed_korean_english_text():
    out = BIGRAM("AI기반 검색 시스템은 retrieval을 사용한다")
    assert out == ["ai", "기반", "검색", "시스", "스템", "템은", "retriev", "을", "사용", "용한", "한다"]


def test_bigram_digits_split_from_hangul():
    assert BIGRAM("2024년 3월") == ["2024", "년", "3", "월"]


def test_bigram_options_turn_off_stemming_and_stopwords():
    raw = make_analyzer("korean_bigram", stem=False, stopwords=False)
    assert raw("The Running 휴가") == ["the", "running", "휴가"]


# -- English path ------------------------------------------------------------
def test_english_stems_lowercases_and_drops_stopwords():
    out = ENGLISH("The Employees were RUNNING to their offices, and the offices were closed!")
    assert out == ["employe", "run", "offic", "offic", "close"]
    assert not set(out) & STOPWORDS_EN


def test_english_splits_on_punctuation_and_underscore():
    assert make_analyzer("english", stem=False, stopwords=False)("foo_bar-baz,qux") == ["foo", "bar", "baz", "qux"]


def test_english_without_stemming_keeps_words():
    a = make_analyzer("english", stem=False, stopwords=True)
    assert a("the running dogs") == ["running", "dogs"]


# -- NFKC --------------------------------------------------------------------
@pytest.mark.parametrize("name", ["english", "korean_bigram", "whitespace"])
def test_full_width_latin_is_normalized(name):
    a = make_analyzer(name)
    assert a("ＲＡＧ ｓｙｓｔｅｍｓ") == a("RAG systems")
    assert a("ＲＡＧ") == ["rag"]


def test_full_width_digits_are_normalized():
    assert BIGRAM("２０２４년") == ["2024", "년"]


def test_decomposed_hangul_is_composed_before_bigrams():
    decomposed = unicodedata.normalize("NFD", "한국어")
    assert decomposed != "한국어"
    assert BIGRAM(decomposed) == ["한국", "국어"]


# -- korean_kiwi ---------------------------------------------------------------
@pytest.fixture(scope="module")
def kiwi():
    pytest.importorskip("kiwipiepy")
    return make_analyzer("korean_kiwi")


def test_kiwi_keeps_content_morphemes_and_drops_particles(kiwi):
    out = kiwi("연차 휴가는")
    assert "연차" in out and "휴가" in out
    assert "는" not in out


def test_kiwi_sentence(kiwi):
    out = kiwi("연차 휴가는 매년 부여된다")
    assert out[:3] == ["연차", "휴가", "매년"]
    assert "는" not in out


def test_kiwi_mixed_text_runs_latin_through_english_path(kiwi):
    out = kiwi("RAG 시스템에서 retrieval을 사용하는 방법")
    assert {"rag", "시스템", "retriev", "방법"} <= set(out)
    assert "에서" not in out and "을" not in out


def test_kiwi_without_hangul_equals_english(kiwi):
    assert kiwi("The running dogs") == ENGLISH("The running dogs") == ["run", "dog"]


def test_kiwi_normalizes_full_width(kiwi):
    assert kiwi("ＲＡＧ 검색") == kiwi("RAG 검색")


# -- whitespace / factory ------------------------------------------------------
def test_whitespace_analyzer_lowercases_and_splits():
    assert make_analyzer("whitespace")("Hello  World\n휴가는") == ["hello", "world", "휴가는"]


@pytest.mark.parametrize("name", ["", "bigram", "Korean_Bigram", "kiwi", "bm25"])
def test_unknown_analyzer_raises_value_error(name):
    with pytest.raises(ValueError, match="unknown analyzer"):
        make_analyzer(name)


@pytest.mark.parametrize("name", ["english", "korean_bigram", "korean_kiwi", "whitespace"])
def test_factory_names(name):
    a = make_analyzer(name)
    assert isinstance(a.name, str) and a.name
    assert name.split("_")[0] in a.name
