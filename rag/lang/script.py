"""Script facts every stage shares: the Hangul ranges and the characters that render as nothing.

Hangul is Korean's script; its ranges live here (not in :mod:`rag.lang.ko`) because stages that
know no language still tell a Hangul syllable from a Latin letter: where a word may be cut, how a
bigram analyzer splits a run, what a PDF's line join may glue.
"""
from __future__ import annotations

import re

__all__ = ["HANGUL_LETTERS", "HANGUL_RUN", "HANGUL_SYLLABLE", "HANGUL_SYLLABLES", "HANGUL_SYLLABLE_RUN",
           "ZERO_WIDTH", "has_hangul"]

# Precomposed Hangul syllables (가..힣), and those plus the conjoining and compatibility jamo.
HANGUL_SYLLABLES = "\uac00-\ud7a3"
HANGUL_LETTERS = HANGUL_SYLLABLES + "\u1100-\u11ff\u3130-\u318f"

HANGUL_SYLLABLE = re.compile(f"[{HANGUL_SYLLABLES}]")
HANGUL_SYLLABLE_RUN = re.compile(f"([{HANGUL_SYLLABLES}]+)")  # capturing: re.split keeps the runs
HANGUL_RUN = re.compile(f"([{HANGUL_LETTERS}]+)")

# Characters that render as nothing: removed before comparing or scanning text.
ZERO_WIDTH = dict.fromkeys(map(ord, "\u200b\u200c\u200d\u2060\ufeff\u00ad\u180e"), None)


def has_hangul(text: str) -> bool:
    """Whether ``text`` contains at least one Hangul syllable."""
    return HANGUL_SYLLABLE.search(text) is not None
