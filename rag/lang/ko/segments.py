"""Korean patterns the text stage cuts text with: the segmenter's enumerators and locators
(rag.text.segment) and the clauses, list items and announcing words of evidence windows (rag.text.windows)."""
from __future__ import annotations

# A statute locator word a cut may not leave dangling (제3조, 제2항, 제4호의2), a regex; read by
# rag.text.segment.
LOCATOR_WORD = r"제\d+(?:조|항|호)(?:의\d+)?"

# Where a Korean sentence is cut into clauses, as regex alternatives: after a connective ending before a
# comma (하며, / 하고, / 하되, / 하나, / 하지만 / 하는데,), 며 before a word, 이고 after a syllable; read by
# rag.text.windows, which puts ';' and the English connectives after them.
CLAUSE_CUTS = (r"(?<=[며고되나])\s*,\s+|(?<=지만)\s*,?\s+|(?<=는데),\s+|(?<=[며])\s+(?=[^\s])"
               r"|(?<=[가-힣]이고)\s+(?=[^\s])")
# The letters of a lettered list item (가. 나. …), a regex character class; read by rag.text.windows.
ITEM_LETTER = "[가-하]"
# Words of a sentence that announces a list or table after it (다음과 같다, 아래와 같다), as regex
# alternatives; read by rag.text.windows before the English ones.
ANNOUNCING_WORDS = "다음|아래"
