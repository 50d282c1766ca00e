"""Korean bounds and limits: the comparators that make a value a bound (30일 이상, 1억원 이하) and the
words of a question asking for a bound or a limit. Read by rag.text.conditions."""
from __future__ import annotations

# What follows a value and makes it a bound on the case (the comparator and its particle); group ``op``
# is the comparator word.
COMPARATOR = (r"^\s*(?:째\s*)?(?:(?:을|를|이|가)\s*)?"
              r"(?P<op>이상|이하|미만|초과|넘는|넘은|넘을|넘으면|넘게|넘어|넘지\s*않|이후|부터|까지(?=\s*[:：]))")

# Each comparator word of COMPARATOR and how it compares the case's number with the bound
# (ge, gt, le, lt); 넘지 않 is read apart (NOT_OVER).
COMPARATOR_OPS = {"이상": "ge", "이하": "le", "미만": "lt", "초과": "gt", "넘는": "gt", "넘은": "gt", "넘을": "gt",
                  "넘으면": "gt", "넘게": "gt", "넘어": "gt", "이후": "ge", "부터": "ge", "까지": "le"}

# How 넘지 않 ("not over": an upper bound) starts: the comparator word rag.text.conditions reads it as.
NOT_OVER = "넘지"

# A question that asks for the bound itself ("보증금 얼마 이하예요", "며칠까지 가능해요").
ASKS_BOUND = r"(?:몇|며칠|얼마)\s*[가-힣%]{0,4}?\s*(?:이하|이상|미만|초과|까지|부터)"

# A question that asks for the value actually applied ("실제로 얼마"): the Korean part, before the English.
ASKS_ACTUAL = r"실제(?:로)?\s|정확(?:히|한)"

# A question that names a limit ("실제 한도는 몇 시간"): the Korean part, before the English.
NAMES_LIMIT = r"한도|상한|하한|최대|최고|최소|최저"

# A question that asks for a maximum ("최대 며칠까지", "상한액") or a minimum ("최소 몇 년"): the Korean parts,
# before the English.
ASKS_MAX = r"최대|최장|상한|한도|최고\s*(?=얼마|몇|며칠|금액|액)|(?:몇|며칠|얼마)\s*[가-힣%]{0,4}?\s*까지"
ASKS_MIN = r"최소|최저|하한|최단"

# What follows 초과 / 넘 and makes it a ceiling: "초과할 수 없다", "초과하지 못한다", "넘을 수 없다",
# "초과해서는 안 된다".
NEGATED = r"^(?:할|하지|하여서는|해서는|하여서도|해서도)?\s*(?:수\s*없|못|아니|않|안\s*되)"

# What parts two values written near each other (rag.text.conditions.adjacent): the Korean middle dot (in
# the class of separators) and the conjunctions, before the English ones.
LIST_DOT = "ㆍ"
CONJUNCTIONS = "및|또는|그리고"
