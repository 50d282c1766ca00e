"""Languages in one place: each language's profile, the registry of profiles, language detection,
and the words and patterns the stages read a language's text with (``rag.lang.ko``, ``rag.lang.en``).

Below every stage: this package imports nothing else from ``rag``, so ``text`` and ``documents``
(which may not import each other) share it. Outside it, code names no language by a literal: no
Hangul string and no comparison with a language code (tests/unit/test_architecture.py). Adding a
language: docs/architecture.md, "Adding a language".
"""
from rag.lang.profile import OTHER, Language, LanguageCode
from rag.lang.registry import detect_language, profile, profiles, register, unregister
from rag.lang.script import (
    HANGUL_LETTERS,
    HANGUL_RUN,
    HANGUL_SYLLABLE,
    HANGUL_SYLLABLE_RUN,
    HANGUL_SYLLABLES,
    ZERO_WIDTH,
    has_hangul,
)

__all__ = ["HANGUL_LETTERS", "HANGUL_RUN", "HANGUL_SYLLABLE", "HANGUL_SYLLABLES", "HANGUL_SYLLABLE_RUN", "Language",
           "LanguageCode", "OTHER", "ZERO_WIDTH", "detect_language", "has_hangul", "profile", "profiles", "register",
           "unregister"]
