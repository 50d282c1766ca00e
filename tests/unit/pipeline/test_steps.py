"""The request path as one tuple: its order, the guarantees it keeps, and adding a step
(the worked example of docs/architecture.md)."""
from __future__ import annotations

import asyncio
import dataclasses

import pytest

from rag.pipeline import STEPS, Answered, Gated, Pipeline, Searched, State, Step
from rag.pipeline.components import Components
from tests.fakes import RecordingGenerator


def test_the_request_path_is_written_once():
    assert [s.name for s in STEPS] == ["resolve", "search", "versions", "quarantine", "rerank", "gate",
                                       "tools_select", "tools_call", "tools_screen", "prompt", "generate"]
    assert {s.name for s in STEPS if s.kind == "io"} == {"resolve", "tools_call", "generate"}
    assert STEPS[-1].name == "generate"  # nothing runs after the generator and its validator


def test_sync_and_async_run_the_same_steps(built):
    q = "연차 휴가는 며칠인가요?"
    a = built.answer(q)
    b = asyncio.run(built.aanswer(q))
    ran = [name for name, _ in a.trace.steps]
    assert ran == [name for name, _ in b.trace.steps] == ["start", *(s.name for s in STEPS), "result"]
    assert (a.status, a.answer, a.citations) == (b.status, b.answer, b.citations)
    assert a.trace.to_json()["steps"][1]["name"] == "resolve"


def test_every_millisecond_of_an_answer_is_named(built):
    """The steps (start, the request path, the result's assembly) and ``unnamed`` add up to the total."""
    for res in (built.answer("연차 휴가는 며칠인가요?"), asyncio.run(built.aanswer("How many days of annual leave?"))):
        t = res.trace.timings_ms
        named = sum(ms for _, ms in res.trace.steps)
        assert t["unnamed"] >= 0 and t["result"] == dict(res.trace.steps)["result"]
        assert named + t["unnamed"] == pytest.approx(t["total"], abs=0.01)
        assert named <= t["total"] + 0.01


def test_a_closed_gate_stops_before_the_generator_in_every_mode(built, derived):
    rec = RecordingGenerator(fail_if_called=True)
    closed = derived(built, rec, **{"gate.fallback_threshold": 1.5})
    res = closed.answer("연차 휴가는 며칠인가요?")
    assert res.status == "insufficient_evidence" and rec.requests == []
    assert [n for n, _ in res.trace.steps][-2:] == ["gate", "result"]

    async def events():
        return [e async for e in closed.astream("연차 휴가는 며칠인가요?")]

    got = asyncio.run(events())
    assert [type(e) for e in got] == [Searched, Gated, Answered] and rec.requests == []


def test_astream_yields_the_answer_only_after_validation(built, derived):
    """A reply that fails validation never travels: events before the end carry no answer text."""
    from tests.unit.pipeline.test_pipeline import _Scripted

    bad = derived(built, _Scripted("not json", '{"status": "answered", "answer": "x", "citations": []}'),
                  **{"generation.max_attempts": 2})

    async def events():
        return [e async for e in bad.astream("How many days of annual leave do I get?")]

    got = asyncio.run(events())
    assert [type(e) for e in got] == [Searched, Gated, Answered]
    assert got[-1].result.status == "insufficient_evidence" and got[-1].result.answer != "x"


# -- the worked example of docs/architecture.md: a stage added as one step and one tuple entry ------
def shortlist(s: State, c: Components) -> State:
    """Keep the three best fused candidates for the rest of the path."""
    return s.with_(search=dataclasses.replace(s.search, candidates=tuple(s.search.candidates[:3])))


AFTER_SEARCH = [s.name for s in STEPS].index("search") + 1


class ShortlistPipeline(Pipeline):
    steps = STEPS[:AFTER_SEARCH] + (Step("shortlist", "cpu", shortlist),) + STEPS[AFTER_SEARCH:]


def test_adding_a_stage_is_one_step_and_one_tuple_entry(built):
    p = ShortlistPipeline(built.config, embedder=built.components.embedder, index=built.index)
    res = p.answer("연차 휴가는 며칠인가요?")
    ran = [n for n, _ in res.trace.steps]
    assert ran[:4] == ["start", "resolve", "search", "shortlist"] and ran[-2:] == ["generate", "result"]
    assert res.status == "answered" and len(res.trace.candidates) <= 3  # less where a version is set aside
    assert len(built.answer("연차 휴가는 며칠인가요?").trace.candidates) > 3
    async_ran = [n for n, _ in asyncio.run(p.aanswer("연차 휴가는 며칠인가요?")).trace.steps]
    assert async_ran == ran
