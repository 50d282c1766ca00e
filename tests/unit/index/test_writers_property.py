"""Many writer processes on one index, some killed with SIGKILL at random points.

Each round starts a random mix of real processes on one index — ``rag add`` (a pair of new
documents), ``rag delete`` (one seeded document), ``rag sync`` (a folder of a pair of new files) —
while a ``rag serve`` process takes pairs of documents over ``POST /v1/documents``, and kills some
of them (the service too, once, then starts it again). A reader thread opens the index the whole
time. Afterwards:

- every acknowledged write (exit status 0, or HTTP 200) is in the index, exactly once (each
  document's chunks once, no evidence id twice), and every acknowledged delete is gone;
- no version is torn: every saved version folder loads, its records and rows agree;
- the reader never saw half of an operation (one document of a pair without the other), a deleted
  document come back, or an acknowledged document go away;
- a fresh writer still gets the lock afterwards (a killed holder never wedges the index).

A write refused with a typed "the engine did not answer in time" error on a loaded machine is not
acknowledged and is not a finding (it is counted); any other failure of a process not killed is.

``RAG_WRITERS_SEED`` replays one run (the seed is in the failure message)."""
from __future__ import annotations

import json
import os
import random
import shutil
import signal
import socket
import subprocess
import sys
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

import httpx
import pytest

from rag.config import load_config
from rag.errors import IndexBackendError
from rag.index.layout import version_numbers
from rag.pipeline import Pipeline
from tests.conftest import write_config
from tests.unit.index.conftest import make_target

ROOT = Path(__file__).resolve().parents[3]
ROUNDS = 5
PER_ROUND = 4  # writer processes started together
SEEDS = 8  # seeded documents the deletes take away
KILL_SHARE = 0.35
# Errors that refuse a write cleanly when the engine is slow (nothing acknowledged, nothing lost).
_CLEAR_REFUSALS = ("within index.milvus.timeout_s", "holds the index; one writer at a time")


@dataclass
class Ledger:
    """What was acknowledged, and what a reader saw."""

    acked_pairs: set[str] = field(default_factory=set)  # "p3", "v2", "f1": both documents written
    acked_deletes: set[str] = field(default_factory=set)  # "s4"
    started: int = 0
    killed: int = 0
    service_acks: int = 0
    reads: int = 0
    problems: list[str] = field(default_factory=list)
    transient: list[str] = field(default_factory=list)  # a reader's open the engine timed out


def _cli(cfg: Path, *args: str) -> list[str]:
    return [sys.executable, "-m", "rag.cli", *args, "--config", str(cfg)]


def _pair_docs(name: str) -> list[dict]:
    return [{"id": f"{name}{s}", "version": "1", "title": f"{name}{s}",
             "text": f"{name}{s} 규정: 보고서는 {len(name) + i}일 안에 낸다. 이 문서는 {name} 짝의 {s}이다."}
            for i, s in enumerate("ab")]


def _logical(rec) -> str:
    """``p3a`` for a document added by id; a synced file's name without its extension."""
    return Path(str(rec.meta["file"])).stem if rec.meta.get("folder") and rec.meta.get("file") else rec.id


def _check_view(idx, ledger: Ledger, seen_gone: set[str], seen_acked: set[str], where: str) -> None:
    names = {_logical(r) for r in idx.documents.values()}
    for n in sorted(names):
        if n[0] in "pvf" and n[-1] in "ab" and (n[:-1] + ("b" if n[-1] == "a" else "a")) not in names:
            ledger.problems.append(f"{where}: half of pair {n[:-1]} visible ({n})")
    for s in seen_gone:
        if s in names:
            ledger.problems.append(f"{where}: deleted {s} came back")
    for n in seen_acked:
        if n not in names:
            ledger.problems.append(f"{where}: acknowledged {n} went away")
    seen_gone.update(f"s{j}" for j in range(SEEDS) if f"s{j}" not in names)
    seen_acked.update(n for n in names if n[0] in "pvf")
    if sum(r.n_chunks for r in idx.documents.values()) != len(idx):
        ledger.problems.append(f"{where}: records count {sum(r.n_chunks for r in idx.documents.values())} chunks, "
                               f"the index holds {len(idx)}")


def _reader(cfg: Path, ledger: Ledger, stop: threading.Event) -> None:
    gone: set[str] = set()
    acked: set[str] = set()
    while not stop.is_set():
        try:
            idx = Pipeline(load_config(cfg)).index.snapshot()
        except IndexBackendError as exc:  # the engine did not answer in time (a loaded machine): no finding
            ledger.transient.append(str(exc)[:200])
            time.sleep(0.2)
            continue
        except Exception as exc:  # noqa: BLE001 - any other failure to open a published version is a finding
            ledger.problems.append(f"reader could not open the index: {type(exc).__name__}: {exc}")
            time.sleep(0.2)
            continue
        ledger.reads += 1
        _check_view(idx, ledger, gone, acked, f"reader (version {idx.version_name})")
        time.sleep(0.05)


class Service:
    """``rag serve`` on 127.0.0.1 taking pairs of documents one request at a time."""

    def __init__(self, cfg: Path, ledger: Ledger, rng: random.Random) -> None:
        self.cfg, self.ledger, self.rng = cfg, ledger, rng
        self.proc: subprocess.Popen | None = None
        self.url = ""
        self.n = 0
        self.stop = threading.Event()
        self.lock = threading.Lock()
        self.thread = threading.Thread(target=self._feed, daemon=True)

    def start(self) -> None:
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            port = s.getsockname()[1]
        self.proc = subprocess.Popen(_cli(self.cfg, "serve") + ["--port", str(port)], cwd=ROOT,
                                     stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        self.url = f"http://127.0.0.1:{port}"
        deadline = time.monotonic() + 300
        while time.monotonic() < deadline:
            assert self.proc.poll() is None, "rag serve exited before it was ready"
            try:
                if httpx.get(self.url + "/readyz", timeout=2).status_code == 200:
                    return
            except httpx.TransportError:
                pass
            time.sleep(0.2)
        raise AssertionError("rag serve did not become ready")

    def kill(self) -> None:
        with self.lock:
            if self.proc is not None and self.proc.poll() is None:
                self.proc.send_signal(signal.SIGKILL)
                self.proc.wait()
                self.ledger.killed += 1

    def _feed(self) -> None:
        while not self.stop.is_set():
            name = f"v{self.n}"
            self.n += 1
            try:
                r = httpx.post(self.url + "/v1/documents", json={"documents": _pair_docs(name)}, timeout=60)
                if r.status_code == 200:
                    self.ledger.acked_pairs.add(name)
                    self.ledger.service_acks += 1
            except httpx.TransportError:  # killed meanwhile: not acknowledged
                time.sleep(0.3)
            time.sleep(self.rng.uniform(0.0, 0.3))


def _round(cfg: Path, work: Path, r: int, rng: random.Random, ledger: Ledger, deletable: list[int]) -> None:
    procs: list[tuple[subprocess.Popen, str, str]] = []
    for i in range(PER_ROUND):
        kind = rng.choice(["add", "add", "sync", "delete"] if deletable else ["add", "sync"])
        name = f"{'f' if kind == 'sync' else 'p'}{r}{i}"
        if kind == "add":
            cmd = _cli(cfg, "add", str(_write_pair(work, name)))
        elif kind == "sync":
            folder = work / f"folder-{name}"
            folder.mkdir()
            for d in _pair_docs(name):
                (folder / f"{d['id']}.txt").write_text(d["text"] + "\n", encoding="utf-8")
            cmd = _cli(cfg, "sync", str(folder), "--report", str(work / f"{name}.report.json"))
        else:
            j = deletable.pop(rng.randrange(len(deletable)))
            name = f"s{j}"
            cmd = _cli(cfg, "delete", name)
        procs.append((subprocess.Popen(cmd, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE),
                      kind, name))
        ledger.started += 1
    doomed = sorted((rng.uniform(0.2, 2.5), i) for i in range(len(procs)) if rng.random() < KILL_SHARE)
    t0 = time.monotonic()
    for delay, i in doomed:
        time.sleep(max(0.0, delay - (time.monotonic() - t0)))
        if procs[i][0].poll() is None:
            procs[i][0].send_signal(signal.SIGKILL)
            ledger.killed += 1
    for proc, kind, name in procs:
        err = proc.communicate(timeout=300)[1].decode("utf-8", "replace")
        if proc.returncode == 0:
            (ledger.acked_deletes if kind == "delete" else ledger.acked_pairs).add(name)
        elif proc.returncode != -signal.SIGKILL:
            if any(t in err for t in _CLEAR_REFUSALS):  # a typed "try again" on a loaded machine: not acknowledged
                ledger.transient.append(f"{kind} {name}: {err[-200:]}")
            else:
                ledger.problems.append(f"{kind} {name} failed (exit {proc.returncode}): {err[-600:]}")


def _check_final(cfg: Path, target, ledger: Ledger) -> None:
    idx = Pipeline(load_config(cfg)).index
    names = {_logical(r) for r in idx.documents.values()}
    for pair in sorted(ledger.acked_pairs):
        for s in "ab":
            if pair + s not in names:
                ledger.problems.append(f"acknowledged {pair + s} is missing")
    for s in sorted(ledger.acked_deletes):
        if s in names:
            ledger.problems.append(f"acknowledged delete of {s} did not hold")
    chunks = idx.chunks() if callable(idx.chunks) else idx.chunks
    ids = [c.evidence_id for c in chunks]
    if len(ids) != len(set(ids)):
        ledger.problems.append(f"{len(ids) - len(set(ids))} chunks are in the index twice")
    per_doc: dict[tuple[str, str], int] = {}
    for c in chunks:
        per_doc[(c.document_id, c.document_version)] = per_doc.get((c.document_id, c.document_version), 0) + 1
    for key, rec in idx.documents.items():
        if per_doc.get(key, 0) != rec.n_chunks:
            ledger.problems.append(f"{key}: {per_doc.get(key, 0)} chunks, its record says {rec.n_chunks}")
    if not target.milvus:
        _check_versions(cfg, ledger)


def _check_versions(cfg: Path, ledger: Ledger) -> None:
    """Every version folder left on disk loads on its own (none is torn)."""
    root = Path(load_config(cfg).resolve(load_config(cfg).index.path))
    for v in version_numbers(root):
        probe = root.parent / f"probe-{v}"
        shutil.copytree(root / f"v-{v:06d}", probe / f"v-{v:06d}")
        (probe / "CURRENT").write_text(f"v-{v:06d}\n", encoding="utf-8")
        try:
            cfg_v = load_config(cfg).with_overrides({"index.path": str(probe)})
            idx = Pipeline(cfg_v).index
            if sum(r.n_chunks for r in idx.documents.values()) != len(idx):
                ledger.problems.append(f"version v-{v:06d}: records and rows disagree")
        except Exception as exc:  # noqa: BLE001
            ledger.problems.append(f"version v-{v:06d} does not load: {type(exc).__name__}: {exc}")
        finally:
            shutil.rmtree(probe, ignore_errors=True)


@pytest.mark.parametrize("backend", ["local", "lite-server"])
def test_writer_processes_killed_at_random_lose_nothing(backend, request, tmp_path):
    seed = int(os.environ.get("RAG_WRITERS_SEED", random.SystemRandom().randrange(1 << 30)))
    rng = random.Random(seed)
    target = make_target(backend, request, tmp_path)
    index = target.index if not target.milvus else {**target.index,
                                                    "milvus": {**target.index["milvus"], "timeout_s": 60}}
    cfg = write_config(tmp_path, index=index, corpus={"report": str(tmp_path / "files-report.json")})
    seeds = [{"id": f"s{j}", "version": "1", "title": f"s{j}", "text": f"s{j} 규정: 휴가는 {j + 10}일이다."}
             for j in range(SEEDS)]
    from rag.types import Document
    Pipeline(load_config(cfg)).build_index([Document(d["id"], d["text"], d["version"], d["title"]) for d in seeds],
                                           force=True)
    ledger = Ledger()
    stop = threading.Event()
    reader = threading.Thread(target=_reader, args=(cfg, ledger, stop), daemon=True)
    service = Service(cfg, ledger, rng)
    t0 = time.monotonic()
    try:
        reader.start()
        service.start()
        service.thread.start()
        deletable = list(range(SEEDS))
        kill_service_in = rng.randrange(ROUNDS)
        for r in range(ROUNDS):
            if r == kill_service_in:
                threading.Timer(rng.uniform(0.1, 1.5), service.kill).start()
            _round(cfg, tmp_path, r, rng, ledger, deletable)
            if service.proc is not None and service.proc.poll() is not None:
                service.start()  # killed: a fresh one serves the newest version
        service.stop.set()
        service.thread.join(timeout=120)
        # A fresh writer gets the lock after all the kills, and its write lands on the newest version.
        done = subprocess.run(_cli(cfg, "add", str(_write_pair(tmp_path, "pz"))), cwd=ROOT, capture_output=True,
                              timeout=300)
        assert done.returncode == 0, done.stderr.decode()[-2000:]
        ledger.acked_pairs.add("pz")
    finally:
        stop.set()
        reader.join(timeout=60)
        service.kill()
    _check_final(cfg, target, ledger)
    summary = (f"{backend} seed={seed}: {ledger.started} writer processes + rag serve ({service.n} requests, "
               f"{ledger.service_acks} acknowledged), {ledger.killed} killed, {len(ledger.acked_pairs)} pairs and "
               f"{len(ledger.acked_deletes)} deletes acknowledged, {ledger.reads} reads "
               f"({len(ledger.transient)} timed out), "
               f"{time.monotonic() - t0:.0f} s")
    print(summary)
    assert not ledger.problems, summary + "\n" + "\n".join(ledger.problems[:30])
    assert ledger.reads >= 10 and ledger.acked_pairs and ledger.killed >= 1, summary  # the run exercised something


def _write_pair(work: Path, name: str) -> Path:
    path = work / f"{name}.jsonl"
    path.write_text("".join(json.dumps(d, ensure_ascii=False) + "\n" for d in _pair_docs(name)), encoding="utf-8")
    return path
