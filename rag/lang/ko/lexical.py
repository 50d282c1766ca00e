"""Korean content terms: the endings and particles stripped from a Hangul word before it is cut into bigrams.
Read by the text stage (rag.text.lexical, the lexical support score)."""
from __future__ import annotations

# Endings and particles stripped from the end of a Hangul word before it is cut into bigrams, so "연차는" and
# "연차의" both give "연차" and "정지합니다" gives "정지" (rag.text.lexical tries them longest first).
SUFFIXES = frozenset({
    "입니다", "합니다", "됩니다", "습니다", "있습니다", "없습니다", "했습니다", "였습니다", "었습니다", "이었다", "였다", "었다", "했다", "한다", "된다",
    "이다", "하다", "되며", "하며", "이며", "으며", "하고", "이고", "되고", "하여", "되어", "해야", "에서는", "에게는", "으로는", "에서", "에게",
    "으로", "까지", "부터", "처럼", "보다", "이나", "에는", "에도", "과는", "와는", "이라", "라는", "이라는", "은", "는", "이", "가", "을",
    "를", "의", "에", "도", "와", "과", "로", "만",
})
