"""Korean: its profile, and (in this package's modules) the words and patterns the stages read
Korean text with."""
from __future__ import annotations

from rag.lang.profile import Language, LanguageCode
from rag.lang.script import HANGUL_LETTERS

KOREAN = Language(
    code=LanguageCode("ko"),
    name="Korean",
    letters=HANGUL_LETTERS,
    min_share=0.3,  # a text is Korean when Hangul makes up at least this share of its letters
    analyzer="korean_bigram",  # measured best on KorQuAD (README, "Evaluation")
    abstention="이 질문에 명확하게 답변해 주는 자료를 찾지 못했습니다. 정확한 정보는 담당 부서에 문의하세요.",
    warmup_question="이 문서의 주요 내용은 무엇인가요?",
    sources_note={"en": "(인용한 자료는 영어로 되어 있습니다.)"},
)
