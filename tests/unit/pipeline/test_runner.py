"""The generic runner: order, early stop, per-step records, and the same tuple sync and async."""
from __future__ import annotations

import asyncio
import time

import pytest

from rag.pipeline.runner import Step, arun, run, select
from rag.pipeline.state import Request, State


def _note(name):
    def step(s: State, c) -> State:
        c.append(name)
        return s.with_(stopped="stop") if name == "stopper" else s
    return step


def _io(name):
    async def step(s: State, c) -> State:
        c.append(name)
        return s
    return step


def _state() -> State:
    return State(Request("q"), time.perf_counter())


def test_run_calls_the_steps_in_order_and_records_each():
    seen: list[str] = []
    steps = (Step("a", "cpu", _note("a")), Step("b", "io", _note("b"), _io("b")), Step("c", "cpu", _note("c")))
    out = run(steps, _state(), seen)
    assert seen == ["a", "b", "c"]
    assert [r.name for r in out.records] == ["a", "b", "c"] and all(r.ms >= 0 for r in out.records)
    assert out.step_ms("b") is not None and out.step_ms("nope") is None


def test_a_step_that_stops_ends_the_request():
    seen: list[str] = []
    steps = (Step("a", "cpu", _note("a")), Step("stopper", "cpu", _note("stopper")), Step("after", "cpu", _note("x")))
    out = run(steps, _state(), seen)
    assert seen == ["a", "stopper"] and out.stopped == "stop"
    assert [r.name for r in out.records] == ["a", "stopper"]


def test_arun_runs_the_same_tuple_cpu_steps_in_a_thread_io_steps_awaited():
    import threading

    threads: dict[str, str] = {}

    def where(name):
        def step(s, c):
            threads[name] = threading.current_thread().name
            return s
        return step

    async def io(s, c):
        threads["io"] = threading.current_thread().name
        return s

    steps = (Step("cpu", "cpu", where("cpu")), Step("io", "io", where("sync-io"), io))

    async def go():
        return [name async for name, _ in arun(steps, _state(), None)]

    assert asyncio.run(go()) == ["cpu", "io"]
    main = threading.main_thread().name
    assert threads["cpu"] != main and threads["io"] == main and "sync-io" not in threads


def test_an_io_step_needs_its_awaitable_form_and_kinds_are_checked():
    with pytest.raises(ValueError, match="awaitable"):
        Step("gen", "io", _note("gen"))
    with pytest.raises(ValueError, match="kind"):
        Step("gen", "gpu", _note("gen"))  # type: ignore[arg-type]


def test_select_keeps_the_tuple_order_and_refuses_unknown_names():
    steps = tuple(Step(n, "cpu", _note(n)) for n in "abc")
    assert [s.name for s in select(steps, "c", "a")] == ["a", "c"]
    with pytest.raises(KeyError, match="no such step: z"):
        select(steps, "a", "z")
