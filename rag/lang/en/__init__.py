"""English: its profile, and (in this package's modules) the words and patterns the stages read
English text with."""
from __future__ import annotations

from rag.lang.profile import Language, LanguageCode

ENGLISH = Language(
    code=LanguageCode("en"),
    name="English",
    letters="",
    latin=True,  # Latin-script text with no other script is English
    min_share=1.0,
    analyzer="english",
    abstention="I could not find a source that clearly answers this question. Please check with the responsible team.",
    warmup_question="What is this document about?",
    sources_note={"ko": "(The quoted sources are in Korean.)"},
)
