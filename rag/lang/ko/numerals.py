"""Korean numerals: Sino-Korean digits and magnitudes, the numeral patterns, native numerals and day
counts; read by rag.text.numerals (NUMERAL, parse_korean_number) and rag.text.quantities."""
from __future__ import annotations

# Sino-Korean digits and magnitudes and their values: rag.text.numerals.parse_korean_number reads them;
# a small magnitude multiplies the digit before it, a big one closes the group before it (1억6천500만).
DIGITS = {"일": 1, "이": 2, "삼": 3, "사": 4, "오": 5, "육": 6, "칠": 7, "팔": 8, "구": 9}
SMALL_MAGNITUDES = {"십": 10, "백": 100, "천": 1000}
BIG_MAGNITUDES = {"만": 10 ** 4, "억": 10 ** 8, "조": 10 ** 12}
# One letter of a Sino-Korean numeral: parse_korean_number's tokens besides Arabic numbers.
NUMERAL_LETTER = "[일이삼사오육칠팔구십백천만억조]"

# 만 is a magnitude before a number, a unit or a comparison (2만원, 1만 명, 3만 이상), and the particle
# "only" otherwise (2분의 1만 지급한다)
_MAN = r"만(?=\s?(?:\d|[원명개건배회주호천억여톤]|달러|유로|엔|가구|세대|이상|이하|미만|초과|[A-Za-z$]))"
# A magnitude written after an Arabic number (2만, 1억6천500만, 1억 5천만): rag.text.numerals.NUMERAL
# repeats it between Arabic numbers.
MAGNITUDE = rf"(?:[십백천억]|{_MAN})"
# 조 (10^12) ending such a numeral, before a number or a smaller magnitude: rag.text.numerals.NUMERAL.
TRILLION = r"조(?=\s?\d|\s?[억만원])"
# A numeral in Sino-Korean letters (오십만, 삼천): rag.text.numerals.HANGUL_NUMERAL.
NUMERAL = r"[일이삼사오육칠팔구]?(?:[십백천][일이삼사오육칠팔구]?)+[만억]?|[일이삼사오육칠팔구십백천]+[만억]"

# Native Korean day counts (이틀 = 2 days) and numerals (두 명, 세 번), with their values: read by
# rag.text.quantities.
NATIVE_DAYS = {"일주일": 7, "하루": 1, "이틀": 2, "사흘": 3, "나흘": 4, "닷새": 5, "엿새": 6, "이레": 7, "여드레": 8, "아흐레": 9,
               "열흘": 10, "보름": 15}
NATIVE_NUMERALS = {"한": 1, "하나": 1, "두": 2, "둘": 2, "세": 3, "셋": 3, "석": 3, "네": 4, "넷": 4, "넉": 4, "다섯": 5,
                   "여섯": 6, "일곱": 7, "여덟": 8, "아홉": 9, "열": 10, "열한": 11, "열두": 12, "스무": 20, "스물": 20,
                   "서른": 30, "마흔": 40, "쉰": 50}
