"""The bounds a text puts on a value, and whether the numbers a question states meet them.

A statute answers most "how much" questions with brackets: "4시간 이상인 공무원에게는 2만원을,
4시간 미만인 공무원에게는 1만원을", "15일을 초과한 경우에는 10분의 1을, 30일을 초과한 경우에는
10분의 2를", "재직기간이 10년 이상 20년 미만인 공무원: 5일". A question that states the asker's
own number ("3시간 정도 외근", "40일째 체류", "근속 15년 차") is answered by the value of the
bracket that number falls in, and the bracket's bound itself ("4시간", "10년 이상") is a
condition, not the answer.

- :func:`given_values`: the numbers a question states (not what it asks: 몇 시간 has no number),
  each with the side the question puts it on (``50억원 넘게``: more than 50억원).
- :func:`bound_groups`: each quantity of a text followed by a comparator (이상, 이하, 미만, 초과, 넘는,
  이후, ``…째부터``, ``…까지:``), grouped when written next to each other ("10년 이상 20년 미만",
  "4개월째부터 6개월째까지": one range).
- :func:`governing`: for a position in a text, the nearest bound group before it that is on the
  dimension of a given value (the bracket a value belongs to).
- :func:`meets`: whether the given values meet a bound group (None when none is on its dimension).

Dimensions: money in won, periods in days (a month counts 30 days; hours and minutes apart), ratios and
percentages as fractions, counts and measures as written. Positions are those of
:func:`rag.text.quantities.normalize_facts` of the text, as :func:`extract_quantities` gives them.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from fractions import Fraction
from functools import lru_cache
from typing import Literal

from rag.lang.en import conditions as en_conditions
from rag.lang.ko import conditions as ko_conditions
from rag.text.quantities import Quantity, extract_quantities, normalize_facts

Op = Literal["ge", "gt", "le", "lt"]

# What follows a value and makes it a bound on the case (the comparator and its particle).
_COMPARATOR = re.compile(ko_conditions.COMPARATOR)
_OPS: dict[str, Op] = ko_conditions.COMPARATOR_OPS  # type: ignore[assignment]
_NOT_OVER = ko_conditions.NOT_OVER  # 넘지 않: an upper bound
# A question that asks for the bound itself ("보증금 얼마 이하예요", "며칠까지 가능해요"): there a
# bound is the answer.
_ASKS_BOUND = re.compile(ko_conditions.ASKS_BOUND)
# A question that asks for the value actually applied ("실제로 얼마", "exactly how much"): a bound
# ("1억원 이하의 과태료") is a limit, not that value.
_ASKS_ACTUAL = re.compile(f"{ko_conditions.ASKS_ACTUAL}|{en_conditions.ASKS_ACTUAL}", re.IGNORECASE)
# ... unless it names a limit ("실제 한도는 몇 시간", "the actual maximum"): then the bound is the answer.
_NAMES_LIMIT = re.compile(f"{ko_conditions.NAMES_LIMIT}|{en_conditions.NAMES_LIMIT}", re.IGNORECASE)
# A question that asks for a limit of one direction: a maximum ("최대 며칠까지", "상한액", "at most") is not
# answered by a lower bound ("30일 이상인 경우": a condition on the case), a minimum ("최소 몇 년") not by an
# upper one (:func:`asked_limit`, :func:`against_limit`).
_ASKS_MAX = re.compile(f"{ko_conditions.ASKS_MAX}|{en_conditions.ASKS_MAX}", re.IGNORECASE)
_ASKS_MIN = re.compile(f"{ko_conditions.ASKS_MIN}|{en_conditions.ASKS_MIN}", re.IGNORECASE)
_AGAINST: dict[str, frozenset[str]] = {"max": frozenset({"ge", "gt"}), "min": frozenset({"le", "lt"})}
# "초과할 수 없다", "초과하지 못한다", "넘을 수 없다", "초과해서는 안 된다": a ceiling, not a lower bound.
_NEGATED = re.compile(ko_conditions.NEGATED)
_KINDS = frozenset({"money", "period", "ratio", "percent", "count", "measure"})
_GAP = re.compile(f"[,.;:{ko_conditions.LIST_DOT}·]|{ko_conditions.CONJUNCTIONS}|{en_conditions.CONJUNCTIONS}")


@dataclass(frozen=True)
class Given:
    """A number the question states about the asker's case. ``side``: +1 when the question says
    more than it (``50억원 넘게``), -1 less than it (``4시간 미만``), 0 the number itself."""

    quantity: Quantity
    side: int = 0


@dataclass(frozen=True)
class Bound:
    """A quantity the text makes a bound: ``op`` compares the case's number with ``quantity``."""

    quantity: Quantity
    op: Op
    end: int  # where the comparator ends


@dataclass(frozen=True)
class BoundGroup:
    """Bounds written next to each other (a range); a case meets the group when it meets each."""

    bounds: tuple[Bound, ...]

    @property
    def start(self) -> int:
        return self.bounds[0].quantity.start

    @property
    def end(self) -> int:
        return self.bounds[-1].end


def dimension(q: Quantity) -> tuple[str, Fraction] | None:
    """(dimension, magnitude) of a quantity the bracket logic compares; None for dates, references
    and implied values."""
    if q.implied or q.kind not in _KINDS:
        return None
    if q.kind == "period":
        if q.unit == "second":  # hours and minutes: a scale of their own (a 4-hour trip is no tenure)
            return "hours", q.value / 3600
        per_day = {"day": Fraction(1), "month": Fraction(30)}.get(q.unit)
        return None if per_day is None else ("period", q.value * per_day)
    if q.kind in ("ratio", "percent"):
        return "ratio", q.value if q.kind == "ratio" else q.value / 100
    return f"{q.kind}:{q.unit}", q.value


@lru_cache(maxsize=4096)
def given_values(question: str) -> tuple[Given, ...]:
    """The numbers ``question`` states that the bracket logic can compare (money, periods, ratios,
    counts, measures), each with the side the question puts it on."""
    text = normalize_facts(question)
    out = []
    for q in extract_quantities(question):
        if dimension(q) is None:
            continue
        m = _COMPARATOR.match(text[q.end:])
        op = _OPS.get(_op_word(m)) if m else None
        out.append(Given(q, +1 if op in ("gt", "ge") else -1 if op in ("lt", "le") else 0))
    return tuple(out)


def asks_bound(question: str) -> bool:
    """Whether the question asks for a bound itself (``얼마 이하``, ``며칠까지``)."""
    return _ASKS_BOUND.search(normalize_facts(question)) is not None


def asks_actual(question: str) -> bool:
    """Whether the question asks for the value actually applied (``실제로 얼마``, ``exactly how
    much``), not for a bound (:func:`asks_bound`) nor a limit it names (``실제 한도``, ``maximum``)."""
    return _ASKS_ACTUAL.search(question) is not None and not asks_bound(question) \
        and _NAMES_LIMIT.search(question) is None


@lru_cache(maxsize=4096)
def asked_limit(question: str) -> Literal["max", "min", ""]:
    """``max`` when the question asks for a maximum (최대, 최장, 상한, 한도, ``며칠까지``, at most, up to),
    ``min`` for a minimum (최소, 최저, 하한, at least), "" otherwise or when it names both."""
    text = normalize_facts(question)
    hi, lo = _ASKS_MAX.search(text) is not None, _ASKS_MIN.search(text) is not None
    return "max" if hi and not lo else "min" if lo and not hi else ""


def against_limit(text: str, q: Quantity, limit: str) -> bool:
    """Whether quantity ``q`` of ``text`` is a bound pointing away from the ``limit`` asked: a lower bound
    (이상, 초과, 넘는, 부터, 이후) for a maximum ("30일 이상인 경우" says when a rule applies, not how far it
    goes), an upper one (이하, 미만) for a minimum. False for no limit or a value that is no bound."""
    ops = _AGAINST.get(limit)
    b = next((b for g in bound_groups(text) for b in g.bounds if (b.quantity.start, b.quantity.end) == (q.start, q.end)),
             None) if ops else None
    if b is None or not ops:
        return False
    if b.op == "gt" and _NEGATED.match(normalize_facts(text)[b.end:]):
        return "le" in ops  # 초과할 수 없다: at most
    return b.op in ops


def bounded(text: str, q: Quantity) -> bool:
    """Whether quantity ``q`` of ``text`` is a bound (``1억원 이하``, ``3년 이상``: :func:`bound_groups`)."""
    return any((b.quantity.start, b.quantity.end) == (q.start, q.end) for g in bound_groups(text) for b in g.bounds)


@lru_cache(maxsize=8192)
def bound_groups(text: str) -> tuple[BoundGroup, ...]:
    """The bounds of ``text`` in order, those written next to each other grouped."""
    norm = normalize_facts(text)
    found: list[Bound] = []
    for q in extract_quantities(text):
        if dimension(q) is None:
            continue
        m = _COMPARATOR.match(norm[q.end:])
        if m is None:
            continue
        word = _op_word(m)
        op: Op = "le" if word.startswith(_NOT_OVER) else _OPS[word]
        found.append(Bound(q, op, q.end + m.end()))
    groups: list[list[Bound]] = []
    for b in found:
        if groups and adjacent(norm[groups[-1][-1].end:b.quantity.start]) \
                and dimension(groups[-1][-1].quantity)[0] == dimension(b.quantity)[0]:  # type: ignore[index]
            groups[-1].append(b)
        else:
            groups.append([b])
    return tuple(BoundGroup(tuple(g)) for g in groups)


def _op_word(m: re.Match[str]) -> str:
    w = m.group("op")
    return _NOT_OVER if w.startswith(_NOT_OVER) else w


def adjacent(gap: str) -> bool:
    """The text between two values joins them into one (a range, a time of day): short, no comma,
    stop or conjunction. The answer line reads values written together the same way."""
    return len(gap) <= 8 and not _GAP.search(gap)


def meets(group: BoundGroup, given: tuple[Given, ...]) -> bool | None:
    """Whether the case the given values describe meets every bound of ``group``; None when no
    given value is on the group's dimension."""
    dim = dimension(group.bounds[0].quantity)
    values = [g for g in given if (d := dimension(g.quantity)) is not None and d[0] == dim[0]]  # type: ignore[index]
    if not values:
        return None
    return any(all(_holds(b, g) for b in group.bounds) for g in values)


def _holds(b: Bound, g: Given) -> bool:
    x, c = dimension(g.quantity)[1], dimension(b.quantity)[1]  # type: ignore[index]
    if x == c and g.side:  # "50억원 넘게" against "50억원 이상": more than the bound
        return b.op in ("ge", "gt") if g.side > 0 else b.op in ("le", "lt")
    return {"ge": x >= c, "gt": x > c, "le": x <= c, "lt": x < c}[b.op]


def distance(group: BoundGroup, given: tuple[Given, ...]) -> float:
    """How far the group's nearest bound lies from a given value on its dimension, relative to that
    value (0 = the bound is the asker's number): the tighter of two met brackets is the case's."""
    dim = dimension(group.bounds[0].quantity)[0]  # type: ignore[index]
    best = float("inf")
    for g in given:
        d = dimension(g.quantity)
        if d is None or d[0] != dim:
            continue
        for b in group.bounds:
            c = dimension(b.quantity)[1]  # type: ignore[index]
            best = min(best, abs(float(d[1] - c)) / max(abs(float(d[1])), 1e-9))
    return best


@dataclass(frozen=True)
class Bracket:
    """How a text's brackets read for one question's given values."""

    applies: bool | None  # some bracket on a given dimension is met (True), none is (False), none exists (None)
    closeness: float  # distance of the nearest met bracket (inf when none)


def bracket(text: str, given: tuple[Given, ...]) -> Bracket:
    """Whether ``text`` speaks of the asker's case: its bound groups on a given value's dimension,
    met or not (see :class:`Bracket`)."""
    if not given:
        return Bracket(None, float("inf"))
    verdicts = [(g, meets(g, given)) for g in bound_groups(text)]
    judged = [(g, v) for g, v in verdicts if v is not None]
    if not judged:
        return Bracket(None, float("inf"))
    met = [distance(g, given) for g, v in judged if v]
    return Bracket(bool(met), min(met, default=float("inf")))


def governing(text: str, position: int, given: tuple[Given, ...]) -> BoundGroup | None:
    """The bound group on a given value's dimension that a value at ``position`` of the normalized
    text belongs to: the nearest one that ends before it (none: None)."""
    best = None
    for g in bound_groups(text):
        if g.end <= position and meets(g, given) is not None:
            best = g
    return best


def within_bound(text: str, start: int, end: int, given: tuple[Given, ...]) -> bool:
    """Whether the span ``start:end`` of the normalized text is itself a bound on a given value's
    dimension (a condition of the case, not its answer)."""
    return any(b.quantity.start < end and start < b.quantity.end
               for g in bound_groups(text) if meets(g, given) is not None for b in g.bounds)


def echoes(q: Quantity, given: tuple[Given, ...]) -> bool:
    """The quantity repeats a number the question states (same dimension and magnitude)."""
    d = dimension(q)
    return d is not None and any(dimension(g.quantity) == d for g in given)
