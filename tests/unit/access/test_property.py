"""Property: whatever the corpus, the access metadata, the principal and the query, nothing of a
document the principal may not read appears in any output (search candidates, the answer with its
citations, superseded list and whole trace, the context manifest), on both backends; and the
documents it may read are still found (the same top document as an index holding only them).

Each document has unique markers (id, title, uri, a canary word in its text), so a leak of any of
them into the serialized output is a plain substring match."""
from __future__ import annotations

import json

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from rag.access import Principal, can_read, document_access
from rag.config import load_config
from rag.pipeline import Pipeline
from rag.types import Document
from tests.conftest import write_config

WORDS = ["연차", "휴가", "출장", "급여", "보안", "교육", "주차", "재택", "규정", "신청"]
GROUPS, USERS, TENANTS = ["g1", "g2"], ["u1", "u2", "u3"], ["t1", "t2"]


# canary words far apart for the bigram analyzer and the hashing embedder (none holds another)
CANARIES = ["xylophone", "quagmire", "bluejay", "kumquat", "zeppelin", "fjord", "wombat", "jukebox", "vortex",
            "pixmap", "grizzly", "hyphen"]


def markers(i: int, version: str) -> dict[str, str]:
    """The unique strings of document ``i`` version ``version`` (none is a substring of another's)."""
    tag = f"{i:02d}v{version}q"
    return {"title": f"title{tag}", "uri": f"mem://uri{tag}", "canary": CANARIES[2 * i + (version == "2")]}


access_st = st.one_of(
    st.none(),
    st.builds(lambda g, u, t: {k: v for k, v in (("groups", g), ("users", u), ("tenant", t)) if v},
              st.lists(st.sampled_from(GROUPS), max_size=2, unique=True),
              st.lists(st.sampled_from(USERS), max_size=2, unique=True),
              st.one_of(st.none(), st.sampled_from(TENANTS))).filter(bool))

doc_st = st.tuples(st.lists(st.sampled_from(WORDS), min_size=3, max_size=8), access_st, st.booleans())

principal_st = st.one_of(st.none(), st.builds(Principal, st.one_of(st.none(), st.sampled_from(USERS)),
                                              st.lists(st.sampled_from(GROUPS), max_size=2, unique=True).map(tuple),
                                              st.one_of(st.none(), st.sampled_from(TENANTS))))


def build_corpus(specs) -> list[Document]:
    """One document per spec; a spec with ``second`` is version 2 of the document before it."""
    docs: list[Document] = []
    for i, (words, access, second) in enumerate(specs):
        if second and docs and docs[-1].version == "1":
            doc_id, version = docs[-1].id, "2"
        else:
            doc_id, version = f"id{i:02d}q", "1"
        m = markers(i, version)
        meta = {"access": access} if access else {}
        docs.append(Document(doc_id, f"{' '.join(words)} {m['canary']} {' '.join(reversed(words))}.", version,
                             m["title"], m["uri"], meta))
    return docs


def outputs(p: Pipeline, query: str, principal) -> tuple[str, object]:
    """Every output of the request paths as one JSON text (the echoed question removed), and the answer."""
    search = p.search(query, principal=principal)
    res = p.answer(query, principal=principal)
    _, prompt = p.build_prompt(query, principal=principal)
    blob = {"candidates": [c.to_json() for c in search.candidates], "answer": {**res.to_json(), "question": ""},
            "manifest": prompt.manifest.to_json()}
    return json.dumps(blob, ensure_ascii=False), res


def check(backend, tmp_path, specs, asks) -> None:
    docs = build_corpus(specs)
    base = Pipeline(load_config(write_config(tmp_path, index=backend.index)))
    full = Pipeline(base.config, embedder=base.components.embedder, index=base.new_index(docs))
    for principal, pick in asks:
        readable = [d for d in docs if can_read(principal, document_access(d.id, d.metadata))]
        forbidden = [d for d in docs if d not in readable]
        target = docs[pick % len(docs)]
        query = f"{target.text.split()[0]} {markers(docs.index(target), target.version)['canary']}"
        blob, res = outputs(full, query, principal)
        for d in forbidden:
            m = markers(docs.index(d), d.version)
            leaked = [s for s in (f"{d.id}:{d.version}:", m["title"], m["uri"]) if s in blob]
            if m["canary"] not in query:
                leaked += [m["canary"]] if m["canary"] in blob else []
            if not any(r.id == d.id for r in readable):
                leaked += [d.id] if d.id in blob else []
            assert not leaked, f"{principal} saw {leaked} of forbidden {d.key}"
        readable_keys = {d.key for d in readable}
        for v in res.superseded:  # a set-aside version and the one said to apply are both readable
            assert (v.document_id, v.version) in readable_keys
            assert v.current_version is None or (v.document_id, v.current_version) in readable_keys
        # the documents it may read are still found: the same top document as an index of only them
        if target in readable:
            mine = full.search(query, principal=principal).candidates
            alone = Pipeline(base.config, embedder=base.components.embedder, index=base.new_index(readable)) \
                .search(query, principal=principal).candidates
            assert mine and alone and mine[0].chunk.document_id == alone[0].chunk.document_id == target.id


@settings(max_examples=12, deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(specs=st.lists(doc_st, min_size=2, max_size=6),
       asks=st.lists(st.tuples(principal_st, st.integers(0, 5)), min_size=1, max_size=3))
def test_nothing_of_a_forbidden_document_leaks(backend, tmp_path, specs, asks):
    check(backend, tmp_path, specs, asks)


# --------------------------------------------------------------------------- with metadata filters
DEPTS = ["hr", "ops", "fin"]
FIELDS = {"dept": "keyword", "year": "number"}
filter_st = st.one_of(
    st.fixed_dictionaries({"dept": st.sampled_from(DEPTS)}),
    st.fixed_dictionaries({"year": st.fixed_dictionaries({"gte": st.integers(2019, 2025)})}),
    st.fixed_dictionaries({"dept": st.lists(st.sampled_from(DEPTS), min_size=1, max_size=2, unique=True),
                           "year": st.fixed_dictionaries({"lt": st.integers(2019, 2026)})}))


def with_fields(docs: list[Document], fields) -> list[Document]:
    """The documents with a department and a year each (drawn per document)."""
    return [Document(d.id, d.text, d.version, d.title, d.uri, {**d.metadata, "dept": dept, "year": year})
            for d, (dept, year) in zip(docs, fields)]


@settings(max_examples=8, deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(specs=st.lists(doc_st, min_size=2, max_size=6),
       fields=st.lists(st.tuples(st.sampled_from(DEPTS), st.integers(2018, 2026)), min_size=6, max_size=6),
       asks=st.lists(st.tuples(principal_st, filter_st, st.integers(0, 5)), min_size=1, max_size=3))
def test_a_metadata_filter_narrows_and_never_widens(backend, tmp_path, specs, fields, asks):
    """Whatever the filter: every candidate is readable and meets it, and the best of the readable
    documents that meet it is found, as in an index holding only them."""
    docs = with_fields(build_corpus(specs), fields)
    base = Pipeline(load_config(write_config(tmp_path, index=backend.index, retrieval={"filter_fields": FIELDS})))
    full = Pipeline(base.config, embedder=base.components.embedder, index=base.new_index(docs))
    for principal, spec, pick in asks:
        where = full.where(spec)
        keep = [d for d in docs if can_read(principal, document_access(d.id, d.metadata))
                and all(c.holds(d.metadata) for c in where.fields)]
        target = docs[pick % len(docs)]
        query = f"{target.text.split()[0]} {markers(docs.index(target), target.version)['canary']}"
        got = full.search(query, where=where, principal=principal).candidates
        keys = {d.key for d in keep}
        assert all((c.chunk.document_id, c.chunk.document_version) in keys for c in got), (spec, principal)
        if target in keep:
            alone = Pipeline(base.config, embedder=base.components.embedder, index=base.new_index(keep)) \
                .search(query, principal=principal).candidates
            assert got and alone and got[0].chunk.document_id == alone[0].chunk.document_id == target.id
