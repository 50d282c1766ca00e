"""The access model: strict parsing of documents' access metadata and principals, and the one rule."""
from __future__ import annotations

import pytest

from rag.access import NOBODY, Access, Principal, ReaderScope, can_read, document_access, stored_access
from rag.access.scope import check_principal, reader_scope
from rag.config import SecurityConfig
from rag.errors import AccessMetadataError, InputError, PrincipalRequiredError
from rag.types import SearchFilter


def test_access_parses_the_mapping_sorted_and_unique():
    a = Access.parse({"groups": ["hr", "admin", "hr"], "users": ["kim"], "tenant": "acme"}, "doc 'x'")
    assert a == Access(("admin", "hr"), ("kim",), "acme")
    assert a.to_json() == {"groups": ["admin", "hr"], "users": ["kim"], "tenant": "acme"}
    assert Access.parse(a.to_json()) == a
    assert Access.parse({"tenant": "acme"}) == Access((), (), "acme")


@pytest.mark.parametrize("value, named", [
    ({"group": ["hr"]}, "group"),                  # unknown key
    ({"groups": "hr"}, "access.groups"),           # a bare string for a list
    ({"users": [""]}, "access.users"),             # an empty name
    ({"users": [3]}, "access.users"),              # not a string
    ({"tenant": ""}, "access.tenant"),
    ({"tenant": ["acme"]}, "access.tenant"),
    ({}, "names no group"),                        # naming nobody is refused, not read as public
    ({"groups": [], "users": []}, "names no group"),
    ("hr", "must be a mapping"),
])
def test_bad_access_is_a_typed_error_naming_the_document_and_the_key(value, named):
    with pytest.raises(AccessMetadataError) as e:
        Access.parse(value, "document 'hr-rules'")
    assert "hr-rules" in str(e.value) and named in str(e.value)
    assert isinstance(e.value, InputError)


def test_document_access_reads_the_metadata_entry():
    assert document_access("d", {}) is None
    assert document_access("d", {"access": None}) is None
    assert document_access("d", {"access": {"users": ["lee"]}}) == Access((), ("lee",))
    with pytest.raises(AccessMetadataError, match="'d'"):
        document_access("d", {"access": {"roles": ["x"]}})


def test_stored_access_fails_closed():
    assert stored_access(None) is None  # an older index: public
    assert stored_access({"groups": ["hr"]}) == Access(("hr",))
    assert stored_access({"bogus": 1}) is NOBODY
    assert not can_read(Principal("root", ("hr",), "acme"), NOBODY)


def test_principal_parse_and_checks():
    assert Principal.parse(None) is None
    p = Principal.parse({"user": "kim", "groups": ["b", "a"], "tenant": "acme"})
    assert p == Principal("kim", ("a", "b"), "acme") and p.to_json()["groups"] == ["a", "b"]
    assert Principal().anonymous and not p.anonymous
    for bad in ({"name": "kim"}, {"groups": "hr"}, {"user": ""}, {"user": 3}, "kim"):
        with pytest.raises(InputError):
            Principal.parse(bad)
    with pytest.raises(InputError):
        Principal(groups="hr")  # type: ignore[arg-type]


HR = Access(("hr",))
KIM = Access((), ("kim",))
ACME = Access((), (), "acme")
ACME_HR = Access(("hr",), (), "acme")
ACME_HR_OR_LEE = Access(("hr",), ("lee",), "acme")


@pytest.mark.parametrize("principal, access, default, expected", [
    (None, None, "public", True),                       # public document, anonymous
    (None, None, "private", False),                     # default_access: private closes it
    (Principal("kim"), None, "private", False),
    (None, HR, "public", False),                        # access metadata: never anonymous
    (Principal(), HR, "public", False),                 # an empty principal is anonymous
    (Principal("kim", ("hr",)), HR, "public", True),    # a listed group
    (Principal("kim", ("ops",)), HR, "public", False),
    (Principal("kim"), KIM, "public", True),            # a listed user
    (Principal("lee"), KIM, "public", False),
    (Principal(None, ("kim",)), KIM, "public", False),  # a group named like the user is not the user
    (Principal("x", (), "acme"), ACME, "public", True),  # tenant only
    (Principal("x", (), "other"), ACME, "public", False),
    (Principal("x", ("hr",), None), ACME_HR, "public", False),  # the tenant must match ...
    (Principal("x", ("hr",), "other"), ACME_HR, "public", False),
    (Principal("x", ("hr",), "acme"), ACME_HR, "public", True),  # ... and the group
    (Principal("x", ("ops",), "acme"), ACME_HR, "public", False),
    (Principal("lee", (), "acme"), ACME_HR_OR_LEE, "public", True),  # user or group
    (Principal("lee", (), "beta"), ACME_HR_OR_LEE, "public", False),
    (Principal("kim", ("hr",), "acme"), ACME_HR, "private", True),   # the default is only for no metadata
])
def test_the_rule(principal, access, default, expected):
    assert can_read(principal, access, default) is expected
    assert ReaderScope(principal, default).allows(access) is expected


def test_require_principal_refuses_anonymous():
    strict = SecurityConfig(require_principal=True)
    with pytest.raises(PrincipalRequiredError):
        check_principal(None, strict)
    with pytest.raises(PrincipalRequiredError):
        check_principal(Principal(), strict)
    check_principal(Principal("kim"), strict)
    check_principal(None, SecurityConfig())
    assert reader_scope(Principal(), SecurityConfig()) == ReaderScope(None, "public")
    with pytest.raises(TypeError):
        reader_scope({"user": "kim"}, SecurityConfig())  # type: ignore[arg-type]


def test_a_request_filter_is_intersected_never_replaced():
    scope = ReaderScope(Principal("kim", ("hr",)), "public")
    where = SearchFilter(document_ids=("a", "b"))
    both = SearchFilter.within(where, scope)
    assert both.document_ids == ("a", "b") and both.readers == (scope,)
    assert both.allows("a", "1", HR) and not both.allows("c", "1", HR)  # the request's restriction kept
    assert not both.allows("a", "1", Access((), ("lee",)))  # and the principal's
    other = ReaderScope(Principal("lee"), "public")
    twice = both.restricted_to(other)  # a filter that already has readers: every one must allow
    assert not twice.allows("a", "1", HR) and not twice.allows("a", "1", KIM) and twice.allows("a", "1", None)
    assert twice.restricted_to(other).readers == twice.readers  # the same scope twice is one
    assert SearchFilter.within(None, scope)  # a scope alone is a filter
    with pytest.raises(TypeError):
        SearchFilter(readers=("kim",))  # type: ignore[arg-type]
