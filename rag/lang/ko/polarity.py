"""Korean predicate polarity: the endings, auxiliaries and negators of a clause's final predicate, limit words
and opposite word forms. Read by the text stage (rag.text.polarity)."""
from __future__ import annotations

# The end of a word that ends a clause with a predicate (regex, searched in the clause's last word).
PREDICATE_END = r"(?:다|며|고|되|나|함|음|됨|요|임|지|것|금지|불가|가능|니|라|야|면서)$"
# A word that continues the predicate chain before it (하지 [아니한다], 할 [수] [없다]) (regex, matched at the
# start of the chain's first word).
AUXILIARY = r"^(?:아니|않|못|없|있|되|된|됨|하|한|함|해|말|안$|수$|것|필요|니|금지|불가)"
# A word of the predicate chain that negates it (regex, searched in each word of the chain).
NEGATION_WORD = r"^(?:아니|않|못|없|말(?:아|고|라)|안$|금지|불가)|지(?:않|못|아니|말)|수없|서는안|서는아니"
# A negated condition or concession of the same clause (…하지 아니하면, …하지 아니한 경우에는, …하지 않더라도)
# (regex, searched before the predicate chain): it counts as one more negation.
NEGATED_CONDITION = (r"지\s?(?:아니하|않으|않)면|지\s?(?:아니한|않은|아니하는|않는|못한|못하는)\s?(?:경우|때)|"
                     r"지\s?(?:아니하|않|못하)(?:았|였)?(?:더라도|어도|아도|여도)")
# A predicate that states a bound (초과할 수 없다, 넘지 못한다) (regex, matched at the start of a chain's word;
# the English alternative follows it in rag.text.polarity).
BOUND_VERB = r"^(?:초과|넘|상회|초월)"

# The endings and particles stripped from the word that carries a predicate to find its stem (regex).
HEAD_ENDINGS = (
    r"(?:하여서는|해서는|어서는|아서는|하여야|해야|하여도|해도|하지|할|한다|하며|하고|하되|하여|함|된다|되지|될|되며|되고|되어|됨|"
    r"받지|받을|받는다|받아야|받으며|시키지|시킬|시킨다|이다|이며|이고|으로|로|에게|에|을|를|이|가|은|는|의|도|만)$")
# The last syllables of a bare verb form (뺀다 / 빼지 / 뺄) dropped when no ending above matched.
BARE_VERB_ENDINGS = "다지고며면게도"

# What follows a quantity that limits it (1명에게만, 2분의 1까지만, 에 한하여) (regex; rag.text.polarity puts the
# span of words that may stand between them in front).
EXCLUSIVE_LIMIT = r"(?:까지만|에게만|에만|만을|만이|만\s|만$|에\s?한하여|에\s?한한다|에\s?한정)"
# Any word of limit in a claim (regex, searched anywhere; the English alternative follows it).
EXCLUSIVE_ANY = r"(?:까지만|에게만|에만|만을|만이)|에\s?한하여|에\s?한한다|에\s?한정"
# A word that says "all" (모두, 전액) (regex; the English alternative follows it).
UNIVERSAL = r"(?<![가-힣])(?:모두|전액|전부|모든|누구나|언제나|언제든지)"

# The endings and particles stripped from a word to compare its stem (rag.text.polarity sorts them longest first).
STEM_SUFFIXES = frozenset({
    "으로", "에서", "에게", "이다", "이며", "이고", "한다", "된다", "하며", "하고", "하여", "해야", "은", "는", "이", "가", "을", "를",
    "의", "에", "도", "와", "과", "로", "만", "다"})
# Prefixes that turn a word into its opposite (공개 → 비공개, 불공개).
ANTONYM_PREFIXES = ("불", "비", "미", "무")
# Words that are each other's opposite.
ANTONYM_PAIRS = (("허용", "금지"), ("포함", "제외"), ("유리", "불리"), ("유급", "무급"), ("가능", "불가"),
                 ("의무", "임의"), ("가산", "감액"))
# A first syllable whose swap gives the opposite word (유급 → 무급): (the syllable, its replacement).
PRESENCE_SWAP = ("유", "무")
