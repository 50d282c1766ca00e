"""Korean words and patterns of follow-up questions: read by the deterministic resolver
(rag.conversation.rules) to tell a follow-up from a question that stands alone and to complete it."""
from __future__ import annotations

# Words that point back to something said before, anywhere in the question (거기 / 그쪽 / 그것;
# 그렇게 / 그런 …; 그중 / 그 가운데: one of what was named before): rag.conversation.rules.dependence.
ANAPHOR = (r"(?:^|[\s,(])(?:그건|그것은|그것도|그것|그거|그게|그걸|이건|이거|이게|이것은|저건|"
           r"거기|거기서|거기에|거기는|그곳|그쪽|"
           r"그때|그럴\s*때|그렇게|그런|그러한|이런|이러한|같은\s*(?:경우|조건)|이\s*경우|"
           r"그\s*중(?:에서|에)?(?=[\s,]|$)|그\s*가운데|이\s*중에서?(?=[\s,]|$))")
# 그 + a noun (그 수당, 그 은행, 그 통지), the noun captured: points back unless the question named it before.
THAT_NOUN = r"(?:^|[\s,(])그\s+([가-힣]{2,})"

# Openers that continue the previous question: a strong one always does; a weak one (CONNECTIVE holds
# both) only when the question asks nothing itself or names at most one topic. The resolver strips
# CONNECTIVE from an ellipsis it completes.
STRONG_OPENER = r"^(?:그럼|그러면|그렇다면|그렇게|반대로|그\s*다음|만약에?|만일)(?=[\s,]|$)[\s,]*"
CONNECTIVE = (r"^(?:그럼|그러면|그렇다면|그렇게|반대로|그\s*다음|만약에?|만일|그런데|근데|그리고|그래서|또는|또|혹시|"
              r"아니면)(?=[\s,]|$)[\s,]*")

# A decree or rule named without its law: "시행령에서는 …", "이 법에서는 …".
UNNAMED_LAW = r"(?:^|\s)(?:시행령|시행규칙|이\s*법|그\s*법|법에서|법률에서|법에는|규정에서)"

# An ellipsis: a question that ends on a particle and 요 ("신입사원은요?", "30일이면요?").
ELLIPSIS = (r"(?:은|는|이|가|도|에는|에서는|으로는|로는|에게는|한테는|이면|면|라면|이라면|"
            r"일\s*때는?|의\s*경우는?|경우는?)"
            r"\s*요\s*[?？]?\s*$")
# A question that asks something itself: an interrogative, or a question ending.
ASKS = (r"무엇|뭐|뭔|어디|어떻|어떤|어느|왜|누구|누가|언제|몇|얼마|며칠|"
        r"(?:인가|은가|는가|나|까|니|죠|지)요?\s*[?？]?\s*$")

# The closing 요? the resolver strips from an ellipsis it completes ("신입사원은요?" → "신입사원은").
CLOSING_YO = r"\s*요\s*[?？]?\s*$"

# A decree or rule (the one a question asks about), and the same as a law name's suffix (stripped to get
# the law's own name).
DECREE = r"시행령|시행규칙"
DECREE_SUFFIX = r"\s*(?:시행령|시행규칙)$"

# A value with its unit (25년, 30일, 6개월, 10만원, 80퍼센트): a follow-up that gives one changes the
# condition (rag.conversation.rules.changed_values).
QUANTITY = r"(\d+(?:[.,]\d+)?)\s*(개월|년|달|주일|주|일|시간|분|억\s*원|만\s*원|원|살|세|명|퍼센트|%|배|회|번)"
# A law's name: in 「」 (group 1) or a word ending in 법, 시행령, 규칙 … (group 2).
LAW_NAME = r"「([^」]{2,40})」|([가-힣]{2,30}(?:법률|법|시행령|시행규칙|규정|규칙))(?=[\s,.·이의에은는을를과와상]|$)"
# An article named in an answer's text ("제17조제1항", "제11조의3제1항제2호", "제7조의2"): the article
# (group 1) and the paragraph and item after it; rag.conversation.earlier reads the law's name before it.
ARTICLE_REF = r"(제\s*\d+\s*조(?:\s*의\s*\d+)?)((?:\s*제\s*\d+\s*[항호])*)"
# A law named in 「」 (a rewrite may not bring one in unless the conversation holds it).
QUOTED_LAW = r"「[^」]{1,40}」"

# What a law's name may hold that its indexed title may not (spaces, brackets, middle dots): dropped before
# the two are compared.
NAME_NOISE = r"[\s「」『』\"'()\[\]·ㆍ_\-]+"

# Key terms the analyzer keeps that carry no topic (만약 and 만일 it drops itself): rag.conversation.rules.own_terms.
NOT_TOPIC = frozenset({"혹시", "그럼", "그러면", "그건", "그거", "경우"})

# The resolver's reasons (rag.conversation.rules.dependence) for a Korean follow-up, with Korean examples.
REFERS_BACK_REASON = "refers back (그건 / 그 수당 / 거기)"
ELLIPSIS_REASON = "an ellipsis (…은요?)"
