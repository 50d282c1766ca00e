"""rag.lang: the profiles, the registry, detection, and a third language added as the docs show."""
from __future__ import annotations

import json
import re

import pytest

from rag.config import ABSTENTION_MESSAGES, RagConfig
from rag.errors import ConfigError
from rag.lang import OTHER, Language, LanguageCode, detect_language, profile, profiles, register, unregister
from rag.lang.en import ENGLISH
from rag.lang.ko import KOREAN
from rag.pipeline.trace import source_language_note
from rag.pipeline.warmup import questions

_HANGUL = re.compile("[\uac00-\ud7a3\u1100-\u11ff\u3130-\u318f]")


def _detect_before(text: str) -> str:
    """The rule rag.text.lang.detect_language had before the profiles (the behaviour to keep)."""
    hangul = latin = 0
    for ch in text:
        if _HANGUL.match(ch):
            hangul += 1
        elif ch.isascii() and ch.isalpha():
            latin += 1
    if hangul and hangul >= 0.3 * (hangul + latin):
        return "ko"
    return "en" if latin else "other"


TEXTS = ["연차 휴가는 며칠인가요?", "How many days of annual leave?", "", "12345 ...", "ㅋㅋㅋ", "ㄱ",
         "GDPR 제17조의 삭제권", "The Act (근로기준법) says", "abc 가", "abcdefg 가나", "abcdefg 가나다",
         "ÉCOLE été", "日本語のテキスト", "Ünïcödé 한", "가" + "a" * 7, "가" * 3 + "a" * 7, "\u200b가"]


@pytest.mark.parametrize("text", TEXTS)
def test_detection_is_what_it_was(text):
    assert detect_language(text) == _detect_before(text)


def test_a_language_code_is_a_str_that_says_so():
    code = detect_language("연차는요?")
    assert isinstance(code, LanguageCode) and code == "ko" and code == KOREAN.code
    assert json.dumps({"lang": code}) == '{"lang": "ko"}' and {code: 1}["ko"] == 1
    assert repr(code) == "LanguageCode('ko')" and detect_language("") is not None and detect_language("1") == OTHER


def test_the_builtin_profiles():
    assert [p.code for p in profiles()][:2] == ["ko", "en"]
    assert profile("ko") is KOREAN and profile("en") is ENGLISH and profile("other") is None
    assert KOREAN.analyzer == "korean_bigram" and ENGLISH.analyzer == "english"
    assert ABSTENTION_MESSAGES["ko"] == KOREAN.abstention and ABSTENTION_MESSAGES["default"] == ENGLISH.abstention
    assert source_language_note("연차는 며칠인가요?", ["Employees get 15 days."]) == KOREAN.sources_note["en"]
    assert source_language_note("How many days?", ["연차는 15일이다."]) == ENGLISH.sources_note["ko"]
    assert source_language_note("How many days?", ["Employees get 15 days."]) == ""
    with pytest.raises(TypeError):
        KOREAN.sources_note["fr"] = "x"  # frozen, to the mapping
    assert len({KOREAN, ENGLISH, profile("ko")}) == 2  # hashable: a profile can key a cache


@pytest.mark.parametrize("kwargs, message", [
    ({"code": "other"}, "a code other than"),
    ({"code": ""}, "a code other than"),
    ({"min_share": 0}, "min_share"),
    ({"letters": ""}, "either its script's letters or latin=True"),
    ({"latin": True}, "either its script's letters or latin=True"),
])
def test_a_bad_profile_is_refused(kwargs, message):
    base = {"code": "ja", "name": "Japanese", "letters": "\u3040-\u30ff", "min_share": 0.3, "analyzer": "whitespace",
            "abstention": "x", "warmup_question": "y"}
    with pytest.raises(ValueError, match=message):
        Language(**{**base, **kwargs})


def test_only_one_latin_script_language():
    french = Language(LanguageCode("fr"), "French", "", 1.0, "whitespace", "x", "y", latin=True)
    with pytest.raises(ValueError, match="already the Latin-script language"):
        register(french)
    assert profile("fr") is None
    with pytest.raises(ValueError, match="built in"):
        unregister("ko")


# -- a third language, as docs/architecture.md ("Adding a language") writes it -------------------------------
JAPANESE = Language(
    code=LanguageCode("ja"),
    name="Japanese",
    letters="\u3040-\u309f\u30a0-\u30ff\u4e00-\u9fff",  # kana and the common CJK ideographs
    min_share=0.3,
    analyzer="whitespace",
    abstention="この質問に答える資料が見つかりませんでした。",
    warmup_question="この文書の主な内容は何ですか?",
    sources_note={"en": "(引用した資料は英語です。)"},
)


@pytest.fixture
def japanese():
    register(JAPANESE)
    yield JAPANESE
    unregister("ja")


def test_a_third_language_is_one_profile(japanese):
    assert detect_language("この文書の主な内容は何ですか") == "ja"
    assert detect_language("連絡先は kim@example.com です") == "ja"
    assert detect_language("연차 휴가는 며칠인가요?") == "ko" and detect_language("How long?") == "en"
    assert questions()["ja"] == japanese.warmup_question
    assert source_language_note("この規則は何ですか", ["Employees get 15 days."]) == japanese.sources_note["en"]
    assert [p.code for p in profiles()] == ["ko", "en", "ja"]
    assert RagConfig().generation.abstention_messages["ja"] == japanese.abstention  # a config built after it


def test_removing_it_restores_detection(japanese):
    unregister("ja")
    assert detect_language("この文書の主な内容は何ですか") == OTHER and "ja" not in questions()
    register(japanese)  # for the fixture's teardown


def test_a_third_language_can_have_gate_thresholds(japanese):
    gate = RagConfig().with_overrides({"gate.language_thresholds": {"ja": 0.3, "ja-ko": 0.4, "ko": 0.5}}).gate
    assert dict(gate.language_thresholds) == {"ja": 0.3, "ja-ko": 0.4, "ko": 0.5}


def test_a_threshold_for_a_language_nobody_registered_is_refused_with_its_path():
    with pytest.raises(ConfigError, match=r"gate\.language_thresholds.*'ja'.*registered language") as err:
        RagConfig().with_overrides({"gate.language_thresholds": {"ja": 0.3}})
    assert "ko-en" in str(err.value)  # the keys it would take
    assert RagConfig().with_overrides({"gate.language_thresholds": {"other-en": 0.2}}).gate.language_thresholds
