"""What a language is to this library: its typed code and its profile.

A :class:`Language` profile holds everything a stage needs to know about one language and may not
infer from text alone: its code and name, how its script is told apart, the BM25 analyzer its text
reads best with, and the messages the server says in it. :mod:`rag.lang.registry` keeps the profiles
(Korean and English are built in) and detects a text's language from them.
"""
from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType

__all__ = ["Language", "LanguageCode", "OTHER"]


class LanguageCode(str):
    """A language's code (``"ko"``, ``"en"``, or :data:`OTHER`): a ``str`` that compares, hashes and
    serializes as its code, typed so that a signature says it holds a language and not any text.
    Which code stands for what is the registry's business (:func:`rag.lang.registry.profile`)."""

    __slots__ = ()

    def __repr__(self) -> str:
        return f"LanguageCode({str.__repr__(self)})"


OTHER = LanguageCode("other")  # a text in no registered language (digits only, another script)


def _frozen(m: Mapping[str, str]) -> Mapping[str, str]:
    return MappingProxyType(dict(m))


@dataclass(frozen=True)
class Language:
    """One language's profile.

    ``letters`` is the regex character class of the language's own script ("" for a Latin-script
    language, told apart from text in another script by elimination: see ``latin``); a text is in
    this language when its script's letters make up at least ``min_share`` of the text's letters.
    ``latin`` marks the language that Latin-script text with no other script is taken to be (one
    profile at most: English here). ``analyzer`` names the BM25 analyzer its text reads best with
    (``rag.text.analyzers.make_analyzer``). ``abstention`` is what the server answers in it when no
    source answers; ``sources_note`` what it adds after an answer whose quoted sources are all in
    another language, keyed by that language's code; ``warmup_question`` the short question a
    warm-up asks in it."""

    code: LanguageCode
    name: str
    letters: str
    min_share: float
    analyzer: str
    abstention: str
    warmup_question: str
    sources_note: Mapping[str, str] = field(default_factory=dict, hash=False)
    latin: bool = False

    def __post_init__(self) -> None:
        if not isinstance(self.code, LanguageCode):
            object.__setattr__(self, "code", LanguageCode(self.code))
        if not self.code or self.code == OTHER:
            raise ValueError(f"a language profile needs a code other than {OTHER!r}, got {self.code!r}")
        if not 0 < self.min_share <= 1:
            raise ValueError(f"{self.code}: min_share must be in (0, 1], got {self.min_share}")
        if bool(self.letters) == self.latin:
            raise ValueError(f"{self.code}: give either its script's letters or latin=True, not both or neither")
        object.__setattr__(self, "sources_note", _frozen(self.sources_note))
