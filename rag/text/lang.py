"""Script and language facts shared by every stage: Hangul ranges, the query-language rule,
and the zero-width characters that text comparison and sanitizing ignore."""
from __future__ import annotations

import re

# Precomposed Hangul syllables (가..힣), and those plus the conjoining and compatibility jamo.
HANGUL_SYLLABLES = "\uac00-\ud7a3"
HANGUL_LETTERS = HANGUL_SYLLABLES + "\u1100-\u11ff\u3130-\u318f"

HANGUL_SYLLABLE = re.compile(f"[{HANGUL_SYLLABLES}]")
HANGUL_SYLLABLE_RUN = re.compile(f"([{HANGUL_SYLLABLES}]+)")  # capturing: re.split keeps the runs
HANGUL_RUN = re.compile(f"([{HANGUL_LETTERS}]+)")
_HANGUL_LETTER = re.compile(f"[{HANGUL_LETTERS}]")

# Characters that render as nothing: removed before comparing or scanning text.
ZERO_WIDTH = dict.fromkeys(map(ord, "\u200b\u200c\u200d\u2060\ufeff\u00ad\u180e"), None)

KOREAN_SHARE = 0.3  # a text is Korean when Hangul makes up at least this share of its letters


def has_hangul(text: str) -> bool:
    """Whether ``text`` contains at least one Hangul syllable."""
    return HANGUL_SYLLABLE.search(text) is not None


def detect_language(text: str) -> str:
    """``ko`` when Hangul makes up at least :data:`KOREAN_SHARE` of the letters, ``en`` for Latin
    text, else ``other``."""
    hangul = latin = 0
    for ch in text:
        if _HANGUL_LETTER.match(ch):
            hangul += 1
        elif ch.isascii() and ch.isalpha():
            latin += 1
    if hangul and hangul >= KOREAN_SHARE * (hangul + latin):
        return "ko"
    return "en" if latin else "other"
