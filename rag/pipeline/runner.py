"""The generic step runner: it knows no stage, only an ordered tuple of :class:`Step`.

A step is a function ``(state, components) -> state`` over the frozen request state. ``run``
calls the steps in order; ``arun`` runs the same tuple for ``aanswer`` / ``astream``: a CPU-bound
step in a worker thread (timed inside it, so waiting for the executor is not counted), an I/O
step through its awaitable form. Both stop at the first step that sets ``state.stopped`` (an
abstention) and record one :class:`StepRecord` per step that ran.
"""
from __future__ import annotations

import asyncio
import time
from dataclasses import dataclass
from typing import TYPE_CHECKING, AsyncIterator, Awaitable, Callable, Literal, Sequence

if TYPE_CHECKING:
    from rag.pipeline.components import Components
    from rag.pipeline.state import State

StepKind = Literal["cpu", "io"]


@dataclass(frozen=True)
class Step:
    """One named step of the request path.

    ``kind`` says how the async runner schedules it: ``cpu`` in a worker thread, ``io`` awaited
    through ``arun`` (an I/O step must have one)."""

    name: str
    kind: StepKind
    run: Callable[["State", "Components"], "State"]
    arun: Callable[["State", "Components"], Awaitable["State"]] | None = None

    def __post_init__(self) -> None:
        if self.kind not in ("cpu", "io"):
            raise ValueError(f"step {self.name!r}: kind must be 'cpu' or 'io', got {self.kind!r}")
        if self.kind == "io" and self.arun is None:
            raise ValueError(f"step {self.name!r}: an I/O step needs its awaitable form (arun)")


def _timed(step: Step, state: "State", components: "Components") -> "State":
    t = time.perf_counter()
    out = step.run(state, components)
    return out.recorded(step.name, (time.perf_counter() - t) * 1e3)


def run(steps: Sequence[Step], state: "State", components: "Components") -> "State":
    """Run ``steps`` in order until one stops the request; the final state."""
    for step in steps:
        if state.stopped:
            break
        state = _timed(step, state, components)
    return state


async def arun(steps: Sequence[Step], state: "State", components: "Components") -> AsyncIterator[tuple[str, "State"]]:
    """The same as :func:`run`, yielding ``(step name, state)`` after each step that ran."""
    for step in steps:
        if state.stopped:
            break
        if step.kind == "cpu":
            state = await asyncio.to_thread(_timed, step, state, components)
        else:
            t = time.perf_counter()
            out = await step.arun(state, components)
            state = out.recorded(step.name, (time.perf_counter() - t) * 1e3)
        yield step.name, state


def select(steps: Sequence[Step], *names: str) -> tuple[Step, ...]:
    """The steps of ``steps`` named ``names``, in the tuple's own order (unknown names are an error)."""
    known = {s.name for s in steps}
    unknown = sorted(set(names) - known)
    if unknown:
        raise KeyError(f"no such step: {', '.join(unknown)} (known: {', '.join(s.name for s in steps)})")
    return tuple(s for s in steps if s.name in names)
