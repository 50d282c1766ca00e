"""The language profiles in use, and a text's language detected from them.

Korean and English are registered at import. :func:`register` adds another profile (see
docs/architecture.md, "Adding a language"); the order of registration is the order of preference
when two scripts tie. Detection counts, for every profile with a script of its own, the letters of
that script, and the Latin letters: the profile whose letters make up the largest share of all of
them wins when the share reaches its ``min_share``; else the Latin-script profile when there is a
Latin letter; else :data:`rag.lang.profile.OTHER`.
"""
from __future__ import annotations

import re
import threading

from rag.lang.en import ENGLISH
from rag.lang.ko import KOREAN
from rag.lang.profile import OTHER, Language, LanguageCode

__all__ = ["detect_language", "profile", "profiles", "register", "unregister"]

_LOCK = threading.Lock()
_PROFILES: dict[str, Language] = {}
_SCRIPTS: tuple[tuple[Language, re.Pattern[str]], ...] = ()
_LATIN: Language | None = None


def register(language: Language) -> None:
    """Add ``language`` (or replace the profile of the same code). Raises ValueError when a second
    Latin-script profile is registered: Latin text with no other script can be only one language."""
    with _LOCK:
        latin = [p for p in _PROFILES.values() if p.latin and p.code != language.code]
        if language.latin and latin:
            raise ValueError(f"{language.code}: {latin[0].code} is already the Latin-script language")
        _PROFILES[language.code] = language
        _index_scripts()


def unregister(code: str) -> None:
    """Remove a profile added with :func:`register` (the built-in ones stay)."""
    if code in (KOREAN.code, ENGLISH.code):
        raise ValueError(f"{code} is built in and cannot be removed")
    with _LOCK:
        _PROFILES.pop(code, None)
        _index_scripts()


def _index_scripts() -> None:
    """What detection reads, derived from the profiles (under the lock): each script's pattern, the Latin one."""
    global _SCRIPTS, _LATIN
    _SCRIPTS = tuple((p, re.compile(f"[{p.letters}]")) for p in _PROFILES.values() if p.letters)
    _LATIN = next((p for p in _PROFILES.values() if p.latin), None)


def profile(code: str) -> Language | None:
    """The profile of ``code``; None for :data:`OTHER` or a code nobody registered."""
    return _PROFILES.get(code)


def profiles() -> tuple[Language, ...]:
    """Every registered profile, in the order of registration."""
    return tuple(_PROFILES.values())


def detect_language(text: str) -> LanguageCode:
    """The language of ``text`` (see the module's docstring); Korean when Hangul makes up at least
    0.3 of the letters, English for other Latin text, else :data:`OTHER`."""
    scripts, latin_profile = _SCRIPTS, _LATIN
    counts = [0] * len(scripts)
    latin = 0
    for ch in text:
        if ch.isascii():
            latin += ch.isalpha()
            continue
        for i, (_, pattern) in enumerate(scripts):
            if pattern.match(ch):
                counts[i] += 1
                break
    total = latin + sum(counts)
    best = max(range(len(scripts)), key=lambda i: counts[i], default=None)
    if best is not None and counts[best] and counts[best] >= scripts[best][0].min_share * total:
        return scripts[best][0].code
    return latin_profile.code if latin and latin_profile is not None else OTHER


for _builtin in (KOREAN, ENGLISH):
    register(_builtin)
