"""Whether a PDF line break that geometry leaves open hides a space: typography, then morphology.

A line that ends at the right margin was wrapped there, but the break may have been at a space
(the renderer drops it) or inside a word (Korean text is often wrapped mid-word: ``일산화탄`` |
``소``). :mod:`rag.documents.pdf_layout` settles what the page's geometry can; the breaks left
come here as ``(left, right)``: the paragraph so far and the next line.

1. Typography (:func:`char_rule`): closing punctuation attaches to what precedes it, opening
   punctuation to what follows, a comma is followed by a space, digits and Latin letters on both
   sides are one word (a word wrapped mid-word), a straight quote opens or closes by its parity.
2. The document's own spelling (:func:`usage`): the two words written elsewhere in the file,
   inside a line, only with a space (``소속 장관``) or only without (``정한다``).
3. Morphology for the rest, where Hangul meets Hangul (or a digit, or a closing bracket): with
   kiwipiepy (the ``korean`` extra), the joined reading wins when it scores clearly better than
   the spaced one (``일산화탄소`` vs ``일산화탄 소``); where kiwipiepy does not care, the morphemes
   on both sides of the break decide: a particle, ending or suffix attaches, a noun after a noun
   is a compound (legal text writes ``공무원수당``), a word after a particle or ending, an adverb
   or a determiner starts after a space. Without kiwipiepy a Hangul–Hangul break is read as
   mid-word (a character-wrapped document breaks inside words about twice as often as at spaces).
"""
from __future__ import annotations

import logging
import re
import threading
from functools import lru_cache
from typing import Sequence

from rag.lang.ko import documents as ko_documents

log = logging.getLogger(__name__)

OPENING = frozenset("([{「『<〈《【〔")
CLOSING = frozenset(")]}」』>〉》】〕")
_MIDDLE_DOTS = ko_documents.PDF_MIDDLE_DOT + "·"  # attach on both sides
ATTACH_LEFT = frozenset(".,:;!?%" + _MIDDLE_DOTS + "…’”")  # written right after the previous character
SPACE_AFTER = frozenset(",;:!?")
_HANGUL = re.compile(r"[\uac00-\ud7a3\u1100-\u11ff\u3130-\u318f]")
_LATIN = re.compile(r"[A-Za-z\u00c0-\u024f]")
_BRANCH = re.compile(ko_documents.PDF_BRANCH_LABEL)
_NOUNISH = frozenset({"NNG", "NNP", "XR", "NR", "SN", "SL", "SH"})
_MARGIN = 0.5  # kiwipiepy log-score by which the joined reading must win
_lock = threading.Lock()


def hangul(ch: str) -> bool:
    return bool(_HANGUL.match(ch))


def char_rule(left: str, right: str) -> bool | None:
    """True: a space between ``left`` and ``right``; False: none; None: ask morphology."""
    a, b = left[-1], right[0]
    if b in CLOSING or b in ATTACH_LEFT:
        return False
    if a in _MIDDLE_DOTS or a in OPENING:
        return False
    if a == '"':  # an odd count so far: the quote at the end opens
        return None if left.count('"') % 2 == 0 and hangul(b) else left.count('"') % 2 == 0
    if b == '"':  # inside a quotation the next quote closes it
        return left.count('"') % 2 == 0
    if b in OPENING:
        return b != "("
    if a in SPACE_AFTER:
        return True
    if a == ".":
        return not b.isdigit()
    if a.isdigit() and b.isdigit():
        return False
    if b.isdigit() and _BRANCH.search(left):  # 제18조의 | 6: a branch article number
        return False
    if _LATIN.match(a) and _LATIN.match(b):
        return False
    if hangul(a) or hangul(b) or a in CLOSING:
        return None
    return False


def _base(tag: str) -> str:
    return tag.split("-")[0]


def tag_rule(left_tag: str, right_tag: str) -> bool:
    """Space (True) or not between two morphemes that meet at a line break."""
    lt, rt = _base(left_tag), _base(right_tag)
    if rt.startswith(("XS", "J", "E")) or rt == "VCP" or lt.startswith("XP"):
        return False
    if lt.startswith(("J", "E")) or lt in ("MAG", "MAJ", "MM", "IC"):
        return True
    if rt == "XPN":  # a prefix starts a word, unless kiwipiepy split a noun (수당 as 수 + 당)
        return lt != "NNB"
    if rt in ("MAG", "MAJ", "MM", "IC"):
        return True
    if rt == "NNB":
        return lt not in ("NR", "SN")
    if rt == "SN":  # a number after a word (not after the prefix 제) starts a new one
        return True
    if lt in _NOUNISH and rt in _NOUNISH:
        return False
    return True


@lru_cache(maxsize=1)
def _kiwi():  # type: ignore[no-untyped-def]
    try:
        from kiwipiepy import Kiwi
    except ImportError:
        log.info("kiwipiepy not installed: Hangul line breaks read as mid-word")
        return None
    return Kiwi()


def _window(left: str, right: str) -> tuple[str, str]:
    return " ".join(left.split()[-2:]), " ".join(right.split()[:2])


def morph_space(pairs: Sequence[tuple[str, str]]) -> list[bool]:
    """For each ``(left, right)`` break: True when a space belongs there (kiwipiepy, else the
    no-morphology reading: Hangul–Hangul joined, after a closing bracket spaced)."""
    windows = [_window(left, right) for left, right in pairs]
    kiwi = _kiwi() if windows else None
    if kiwi is None:
        return [not (hangul(lw[-1]) and hangul(rw[0])) and lw[-1] in CLOSING for lw, rw in windows]
    with _lock:  # one call per text: the batch form's thread pool is slower for short texts
        joined = [kiwi.analyze(lw + rw) for lw, rw in windows]
        spaced = [kiwi.analyze(f"{lw} {rw}") for lw, rw in windows]
    out = []
    for (lw, _), rj, rs in zip(windows, joined, spaced):
        tokens, score = rj[0]
        if score > rs[0][1] + _MARGIN:
            out.append(False)
            continue
        n = len(lw)
        if any(t.start < n < t.start + t.len for t in tokens):
            out.append(False)  # the break falls inside one morpheme
            continue
        before = [t for t in tokens if t.start + t.len <= n]
        after = [t for t in tokens if t.start >= n]
        if not before or not after:
            out.append(True)
            continue
        out.append(tag_rule(before[-1].tag, after[0].tag))
    return out


def usage(left: str, right: str, context: str) -> bool | None:
    """How the document itself writes the two words where no line break is in the way: True when
    ``context`` (its lines, each whole) has them only with a space, False only without, None
    when it has neither or both."""
    a, b = left.split()[-1:], right.split()[:1]
    if not a or not b or len(a[0]) + len(b[0]) < 3:
        return None
    head, tail = a[0], b[0][:2]
    spaced, joined = context.count(f"{head} {tail}"), context.count(head + tail)
    if spaced and not joined:
        return True
    if joined and not spaced:
        return False
    return None


def decide_spaces(pairs: Sequence[tuple[str, str]], context: str = "") -> list[bool]:
    """True where the break between ``left`` and ``right`` was a space (both non-empty);
    ``context`` is the document's text line by line (see :func:`usage`)."""
    out: list[bool | None] = [char_rule(left, right) for left, right in pairs]
    if context:
        out = [usage(left, right, context) if v is None else v
               for v, (left, right) in zip(out, pairs)]
    ask = [i for i, v in enumerate(out) if v is None]
    for i, v in zip(ask, morph_space([pairs[i] for i in ask])):
        out[i] = v
    return [bool(v) for v in out]
