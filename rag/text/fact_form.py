"""The normal form facts are read from (:func:`normalize_facts`): the one text the quantity reader, the
condition and polarity checks and the evidence windows all take their offsets into."""
from __future__ import annotations

import re
import unicodedata
from functools import lru_cache

from rag.lang import ZERO_WIDTH
from rag.lang.ko import quantities as ko_quantities

__all__ = ["normalize_facts"]

_CIRCLED = {**{chr(0x2460 + i): i + 1 for i in range(20)}, **{chr(0x3251 + i): 21 + i for i in range(15)},
            **{chr(0x32B1 + i): 36 + i for i in range(15)}}
_CIRCLED_RE = re.compile("[" + "".join(_CIRCLED) + "]")
_HTML_TAG = re.compile(r"</?[A-Za-z][^<>]*>")


@lru_cache(maxsize=20_000)
def normalize_facts(text: str) -> str:
    """The form quantities are read from: paragraph marks ``①`` become ``제1항``, NFKC, zero-width
    characters removed, markdown escapes of list enumerators (``1\\.``) dropped."""
    text = _CIRCLED_RE.sub(lambda m: ko_quantities.PARAGRAPH_REFERENCE.format(_CIRCLED[m.group(0)]), text)
    text = text.replace("m²", "m2").replace("m³", "m3").replace("㎡", "m2")
    text = unicodedata.normalize("NFKC", text).translate(ZERO_WIDTH)
    return _HTML_TAG.sub(" ", text).replace("\\.", ".").replace("\\", "")
