"""English words and patterns for probe questions: the question templates, the everyday topics of
near misses, and how a sentence's terms are read (read by :mod:`rag.calibrate.probes`)."""
from __future__ import annotations

# Everyday topics that unanswerable probe questions ask about: nearby topics a user really asks that
# documents rarely mention (work, housing, public services, school, health, shopping, travel); a probe
# uses only the ones absent from the corpus. Read by rag.calibrate.probes.
EVERYDAY_TOPICS: tuple[str, ...] = (
    "parking", "commuter shuttle", "pet", "cafeteria", "daycare", "gym membership", "company loan", "corporate card",
    "business cards", "dress code", "smoking area", "parcel delivery", "wifi password", "laptop", "monitor", "mileage",
    "fuel allowance", "mobile phone", "team dinner", "wedding gift", "sports club", "flu vaccination", "language course",
    "company housing", "dormitory", "bicycle storage", "charging station", "security badge", "visitor pass",
    "printer", "meeting room", "software licence", "cloud storage", "video call", "uniform", "safety shoes",
    "coffee machine", "snacks", "taxi fare", "flight ticket", "hotel voucher", "gift card", "coupon", "refund",
    "exchange", "shipping fee", "lost property", "library", "swimming pool", "campsite", "playground", "pharmacy",
    "emergency room", "dentist", "glasses", "hearing aid", "wheelchair", "stroller", "car seat", "electric scooter",
    "drone", "fishing", "hiking trail", "golf course", "ski resort", "yoga", "school lunch", "school uniform",
    "tuition", "graduation", "student loan", "rent", "maintenance fee", "recycling", "food waste", "elevator",
    "internet bill", "electricity bill", "gas bill", "water bill", "subscription", "water purifier",
    "air conditioning", "heating", "street light", "bus stop", "subway", "toll road", "speed camera",
    "towing", "car wash", "tyres", "dashcam", "vehicle inspection", "driving licence renewal", "passport", "visa",
    "duty free", "currency exchange", "overseas transfer",
)

# Question templates by (fact kind, grain): {t} the terms. Read by rag.calibrate.probes.phrase.
QUESTION_TEMPLATES: dict[tuple[str, str], tuple[str, ...]] = {
    ("period", "days"): ("How many days is the {t}?", "How long does the {t} last?"),
    ("period", "years"): ("How many years is the {t}?", "For how many years does the {t} apply?"),
    ("period", "hours"): ("How many hours is the {t}?", "How many hours a day for the {t}?"),
    ("amount", ""): ("How much is the {t}?", "What is the amount of the {t}?"),
    ("ratio", ""): ("What percentage is the {t}?", "What rate applies to the {t}?"),
    ("count", ""): ("How many people for the {t}?", "How many are allowed for the {t}?"),
    ("other", ""): ("What are the rules on the {t}?", "What does it say about the {t}?", "How does the {t} work?"),
}

# Words that are no sentence term (nor half of a two-word term); rag.calibrate.probes.
STOPWORDS: frozenset[str] = frozenset("""
a an the and or of to in on at by for with from as is are was were be been being this that these those
it its their there which who whom whose what when where why how than then such any all each every other no not nor may must
shall should can could will would if unless within without under over into onto upon about after before during per also
only more most less least same own further including include includes included following section article chapter
paragraph shall herein thereof always never first second new old through use uses used using has have had having
happens happen explains explain covers cover designed supports support passed submit submitted contact get gets got make
makes made take takes taken give gives given provide provides provided require requires required apply applies applied
allow allows allowed need needs needed must keep keeps kept see sees within beyond based does done""".split())

# A word a term is made of, and that term counts are taken over (rag.calibrate.probes).
WORD = r"[A-Za-z][A-Za-z\-]{2,}"
