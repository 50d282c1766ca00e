"""Korean quantities: the date, statute reference, ratio and percent forms, and the words around numbers that
tell what a number counts. Read by the text stage (rag.text.quantities)."""
from __future__ import annotations

# What a paragraph mark (①) is rewritten to before quantities are read (str.format with the paragraph's number).
PARAGRAPH_REFERENCE = " 제{}항 "
# A text that may hold a statute reference has this (a cheap test before the reference patterns run).
REFERENCE_PREFIX = "제"

# Dates (regex): 2024년 6월 28일; 2024년 6월; 6월 28일; a year (2024년, 2024년도, not 2024년간 or 2024년 이내).
DATE = r"(?<!\d)(\d{4})\s?년\s?(\d{1,2})\s?월\s?(\d{1,2})\s?일"
YEAR_MONTH = r"(?<!\d)(\d{4})\s?년\s?(\d{1,2})\s?월(?!\s?\d)"
MONTH_DAY = r"(?<![\d.])(\d{1,2})\s?월\s?(\d{1,2})\s?일"
YEAR = r"(?<![\d.])(1[89]\d\d|20\d\d)\s?년(?:도)?(?!\s?(?:간|동안|이상|이내|이하|미만|초과|의\s?범위|까지의\s?기간))"
# A month alone (6월) (regex): a month of the year, or a number of months in the contexts below.
MONTH = r"(?<![\d.])(\d{1,2})\s?월(?!\s?\d)(?![가-힣]*간)"
# What makes 6월 a number of months when it follows (6월간, 6월 이내) (regex, matched after it).
PERIOD_MONTH_CONTEXT = r"\s?(?:간|동안|이내|이하|이상|미만|초과|의\s?범위|마다)"
# What makes 6월 a number of months when it precedes (1년 6월) (regex, searched before it).
YEAR_COUNT_BEFORE = r"\d\s?년\s?$"
# The year unit (1년 6개월; 2024년 is a year when it is not 2024년간, a number of years).
YEAR_UNIT = "년"
YEARS_DURATION = "년간"

# Statute references (regex): 제N조 … and the ordinal labels 제N급 / 제N등급 / 제N종 / 제N차 (a grade or class
# name, not a count), 16조의2; 별표 N and 별지 N name an appended table or form; 제3자 / 제삼자 is a legal term
# (third party), not a number.
REFERENCE = (r"(?:(?<![가-힣])|(?<=[조항호목장절관편]))제\s?(\d+)\s?(조|항|호|목|장|절|관|편|등급|급|종|차)"
             r"(?:\s?의\s?(\d+))?|"
             r"(?<![가-힣\d.,])(\d+)(조|항|호)(?![가-힣])(?:의(\d+))?")
APPENDIX = r"(별표|별지|부표|서식)\s?(?:제\s?)?(\d+)(?:\s?의\s?(\d+))?"
THIRD_PARTY = r"제\s?(?:3|삼)\s?자(?![가-힣]*(?:명|인))"
# The article unit, and what follows it when 16조 is money (16조원, 16조 5천억), not an article (regex).
ARTICLE_UNIT = "조"
MONEY_AFTER_ARTICLE = r"\s?(?:\d|원|억|만)"
# The item unit a list enumerator (1.) is read as.
ITEM_UNIT = "호"
# Between a reference's number and its sub-number (제8조의2), in the unit a reference is given.
SUB_NUMBER = "의"

# Ratios (10분의 3) (regex pieces): the denominator's Korean numeral words, the "분의" between, and the
# numerator's; the text holds one of RATIO_MARKERS when it may hold a ratio.
RATIO_DENOMINATOR_WORDS = r"[일이삼사오육칠팔구십백천]+"
RATIO_OF = r"\s?분\s?의\s?"
RATIO_NUMERATOR_WORDS = r"[일이삼사오육칠팔구십]+"
RATIO_MARKERS = ("분의", "분 의")
# Half (절반) (regex), and the word a text holds when it may hold one.
HALF = r"(?<![가-힣])절반"
HALF_WORD = "절반"
# Percent in 할/푼/리 (1할 = 10%, 3푼 = 3%) (regex), and the words a text holds when it may hold one.
HALL = r"(?<![\d.])(\d+)\s?할(?:\s?(\d)\s?푼)?(?:\s?(\d)\s?리)?(?![가-힣])|(?<![\d.])(\d)\s?푼(?![가-힣])"
HALL_MARKERS = ("할", "푼")

# The Korean magnitudes after a currency-prefixed amount ($5만) (regex, follows the English ones), and their values.
MONEY_SCALE = r"[만억]"
MONEY_SCALES = {"만": 10 ** 4, "억": 10 ** 8}
# A Korean magnitude anywhere (a cheap test before Korean numerals are looked for) (regex).
MAGNITUDE = r"[십백천만억]"
# The units a Korean numeral (오십만원, 삼십 명) is read before (regex).
NUMBER_UNITS = r"(?:원|명|일|년|개월|배|회|퍼센트|시간|분|초|세|살|층|주일)"
# The words between two numbers of a range or list (10 내지 20일, 3에서 5일) (regex alternatives; symbols and the
# comma are around them in rag.text.quantities).
RANGE_WORDS = r"내지|에서|부터|또는|이나"

# The particles a native day count (하루, 이틀) may be followed by (regex character class).
PARTICLE_AFTER_DAY = r"[에간동도만은을이의부까씩로]"
# The particles a native numeral with its counter (두 번, 세 사람) may be followed by (regex character class).
PARTICLE_AFTER_COUNTER = r"[에간동도만은을이의부까씩로과와]"
# A native numeral and counter that is a verb after an object particle (위반을 한 사람), not "one person":
# (numeral, counter), and the particle before it (regex, searched in the two characters before).
VERB_NOT_COUNT = ("한", "사람")
OBJECT_PARTICLE_BEFORE = r"[을를]\s$"
# Native numerals and day counts that may stand with a rate prefix (하루 두 번): rate prefixes are then looked
# for in the whole text, not only around digits.
NATIVE_RATE_HINTS = ("한 ", "두 ", "세 ", "하루", "이틀", "사흘")
