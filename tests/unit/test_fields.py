"""Metadata filter conditions (rag.fields): parsing against declared types, and evaluation."""
from __future__ import annotations

import pytest

from rag.fields import FieldCondition, FieldFilterError, parse_fields

DECLARED = {"department": "keyword", "year": "number", "effective": "date", "archived": "bool", "tags": "keyword"}


def holds(spec, meta) -> bool:
    return all(c.holds(meta) for c in parse_fields(spec, DECLARED))


def test_the_request_forms():
    assert parse_fields({"department": "hr"}, DECLARED) == (FieldCondition("department", "keyword", "eq", "hr"),)
    assert parse_fields({"department": ["hr", "ops"]}, DECLARED)[0].op == "in"
    rng = parse_fields({"year": {"lt": 2025, "gte": 2020}}, DECLARED)
    assert [(c.op, c.value) for c in rng] == [("gte", 2020), ("lt", 2025)]  # one canonical order
    assert parse_fields(None, DECLARED) == () == parse_fields({}, DECLARED)


@pytest.mark.parametrize("spec, meta, expected", [
    ({"department": "hr"}, {"department": "hr"}, True),
    ({"department": "hr"}, {"department": "ops"}, False),
    ({"department": "hr"}, {}, False),  # a document without the field does not pass
    ({"tags": "leave"}, {"tags": ["pay", "leave"]}, True),  # a list-valued field: any element
    ({"tags": ["x", "pay"]}, {"tags": ["pay", "leave"]}, True),
    ({"year": {"gte": 2020, "lt": 2025}}, {"year": 2024}, True),
    ({"year": {"gte": 2020, "lt": 2025}}, {"year": 2025}, False),
    ({"year": {"gte": 2020}}, {"year": "2024"}, False),  # a string is not a number
    ({"year": 2024}, {"year": 2024.0}, True),
    ({"effective": {"lte": "2025-06-30"}}, {"effective": "2025-06-30"}, True),
    ({"effective": {"lte": "2025-06-30"}}, {"effective": "2025-07-01T00:00:00"}, False),
    ({"effective": {"gt": "2025-01-01"}}, {"effective": "not a date"}, False),
    ({"archived": False}, {"archived": False}, True),
    ({"archived": False}, {"archived": 0}, False),  # 0 is not false
    ({"department": "hr", "year": {"gte": 2020}}, {"department": "hr", "year": 2019}, False),  # every condition
])
def test_conditions_hold(spec, meta, expected):
    assert holds(spec, meta) is expected


@pytest.mark.parametrize("spec, message", [
    ({"salary": 1}, r"'salary' is not a declared filter field \(declared: archived, department"),
    ({"department": {"gte": "a"}}, r"'department' \(keyword\): no operator 'gte' \(use eq, in\)"),
    ({"year": "2024"}, r"'year' \(number\): '2024' is not a finite number"),
    ({"year": {"gte": True}}, r"True is not a finite number"),
    ({"effective": {"lte": "30/06/2025"}}, r"is not an ISO date"),
    ({"archived": "no"}, r"'no' is not true or false"),
    ({"department": []}, r"'in' needs a non-empty list"),
    ({"department": {}}, r"an empty condition"),
    ({"year": {"in": 2024}}, r"'in' needs a list"),
])
def test_bad_filters_name_the_field_and_the_problem(spec, message):
    with pytest.raises(FieldFilterError, match=message):
        parse_fields(spec, DECLARED)


def test_no_declared_fields_says_where_to_declare_them():
    with pytest.raises(FieldFilterError, match="declare them in retrieval.filter_fields"):
        parse_fields({"department": "hr"}, {})
