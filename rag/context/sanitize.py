"""Retrieved text is data: defuse anything in it that could open or close a source block or
forge a citation marker, seeing through case, full-width, look-alike and zero-width characters."""
from __future__ import annotations

import re
import unicodedata

from rag.text.lang import ZERO_WIDTH
from rag.text.sentences import MARKER_PATTERN

# Characters that NFKC leaves alone but that read as brackets to a model.
_LOOKALIKE_MAP = {
    "‹": "<", "›": ">", "〈": "<", "〉": ">", "⟨": "<", "⟩": ">", "《": "<", "》": ">", "˂": "<", "˃": ">",
    "【": "[", "】": "]", "〔": "[", "〕": "]", "⟦": "[", "⟧": "]", "［": "[", "］": "]", "〖": "[", "〗": "]",
    "⁄": "/", "∕": "/", "⧸": "/", "ᐸ": "<", "ᐳ": ">", "❮": "<", "❯": ">", "❬": "<", "❭": ">", "⟪": "<", "⟫": ">",
    "〘": "[", "〙": "]", "⁅": "[", "⁆": "]",
}
_LOOKALIKES = str.maketrans(_LOOKALIKE_MAP)
# A block or marker needs an opening "<" or "[" (or something that folds to one): text
# without any of these is returned unchanged without the per-character fold.
_OPENERS = "<[\ufe64\uff1c\ufe47\uff3b" + "".join(k for k, v in _LOOKALIKE_MAP.items() if v in "<[")
_MAYBE_HOSTILE = re.compile("[" + re.escape(_OPENERS) + "]")
_TAG = re.compile(r"<\s*/?\s*source\b[^<>\n]{0,200}>?", re.IGNORECASE)
_MARKER = re.compile(MARKER_PATTERN, re.IGNORECASE)


def _fold(text: str) -> tuple[str, list[int]]:
    """A lowercase ASCII-ish view of ``text`` for detection, with an index map back."""
    out: list[str] = []
    idx: list[int] = []
    for i, ch in enumerate(text):
        if ord(ch) in ZERO_WIDTH:
            continue
        f = unicodedata.normalize("NFKC", ch).translate(_LOOKALIKES).lower()
        for c in f:
            out.append(c)
            idx.append(i)
    return "".join(out), idx


def neutralize(text: str) -> tuple[str, int]:
    """Defuse text that could open/close a source block or forge a citation marker.

    Returns the safe text and the number of replacements. Detection sees through case,
    full-width and look-alike characters and zero-width characters."""
    if not _MAYBE_HOSTILE.search(text):
        return text, 0
    folded, idx = _fold(text)
    spans: list[tuple[int, int, str]] = []
    for m in _TAG.finditer(folded):
        spans.append((idx[m.start()], idx[m.end() - 1] + 1, "[source tag removed]"))
    for m in _MARKER.finditer(folded):
        inner = re.sub(r"[\[\]\s]", "", m.group(0)).upper()
        spans.append((idx[m.start()], idx[m.end() - 1] + 1, f"(ref {inner})"))
    if not spans:
        return text, 0
    spans.sort()
    out, pos, n = [], 0, 0
    for s, e, rep in spans:
        if s < pos:  # overlapping detections: the first one wins
            continue
        out.append(text[pos:s])
        out.append(rep)
        pos = e
        n += 1
    out.append(text[pos:])
    return "".join(out), n
