"""Milvus servers on 127.0.0.1 for the index-backend tests.

Two kinds, both reached over gRPC at ``http://127.0.0.1:PORT``:

* ``lite-server``: ``milvus-lite server`` (milvus-lite 3.x, pure Python) as a subprocess in its own
  session. No authentication: any token is accepted, so ``token`` is "".
* ``milvus-2.3.5``: the real Milvus standalone binary from the ``milvus`` PyPI package (dev extra),
  with embedded etcd and rocksmq, every component's address pinned to 127.0.0.1 and authorization
  on (token ``root:Milvus``). Its gRPC servers still *listen* on all interfaces (Milvus 2.3 has no
  listen-address setting; etcd alone binds 127.0.0.1), but nothing here ever connects elsewhere.

Every started server is registered and killed at interpreter exit if a test forgot it.
No pytest import: the module can be driven from a script as well.
"""
from __future__ import annotations

import atexit
import contextlib
import functools
import json
import os
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
import types
import urllib.error
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

HOST = "127.0.0.1"
MILVUS_TOKEN = "root:Milvus"  # Milvus' built-in root user and default password
_COMPONENTS = ("rootCoord", "proxy", "queryCoord", "queryNode", "indexCoord", "indexNode", "dataCoord", "dataNode")

_live: set[Served] = set()
_live_lock = threading.Lock()


def free_port() -> int:
    """A TCP port on 127.0.0.1 that was free a moment ago (the OS's choice)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind((HOST, 0))
        return s.getsockname()[1]


def _bind_probe(port: int) -> socket.socket | None:
    """A socket bound to 127.0.0.1:port, or None while anything listens there.

    SO_REUSEADDR (as Go and grpc servers set it) so that TIME_WAIT leftovers of a stopped server do not
    count as taken; no SO_REUSEPORT, so a listening grpc server (which sets it) does: without this check
    a second grpc server could silently share a port with the first.
    """
    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        s.bind((HOST, port))
        s.listen()
    except OSError:
        s.close()
        return None
    return s


def _port_free(port: int) -> bool:
    s = _bind_probe(port)
    if s is None:
        return False
    s.close()
    return True


def _wait_port_free(port: int, timeout: float = 5.0) -> bool:
    deadline = time.monotonic() + timeout
    while not _port_free(port):
        if time.monotonic() > deadline:
            return False
        time.sleep(0.1)
    return True


def _tail(paths: list[Path], n: int = 40) -> str:
    out = []
    for p in paths:
        try:
            lines = p.read_text(encoding="utf-8", errors="replace").splitlines()
        except OSError:
            continue
        if lines:
            out.append(f"--- {p} (last {min(n, len(lines))} lines) ---")
            out.extend(lines[-n:])
    return "\n".join(out) or "(no log output)"


def _descendants(pid: int) -> list[int]:
    """All live descendants of pid (Linux /proc; empty elsewhere)."""
    found, todo = [], [pid]
    while todo:
        p = todo.pop()
        for task in Path(f"/proc/{p}/task").glob("*"):
            try:
                kids = [int(k) for k in (task / "children").read_text().split()]
            except (OSError, ValueError):
                continue
            found.extend(kids)
            todo.extend(kids)
    return found


def _die_with_parent() -> None:
    """preexec_fn: SIGKILL the server when the test process dies, even by SIGKILL or `timeout`'s SIGTERM
    (neither runs atexit). Linux only; a no-op elsewhere."""
    if sys.platform.startswith("linux"):
        import ctypes

        with contextlib.suppress(Exception):
            ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG


def _signal_all(pids: list[int], sig: int) -> None:
    for p in pids:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.kill(p, sig)


def _reap(proc: subprocess.Popen, grace: float, first_signal: int) -> None:
    """Send first_signal, wait up to grace seconds, then SIGKILL the process and its descendants."""
    if proc.poll() is None:
        kids = _descendants(proc.pid)
        with contextlib.suppress(ProcessLookupError):
            proc.send_signal(first_signal)
        try:
            proc.wait(timeout=grace)
        except subprocess.TimeoutExpired:
            kids += _descendants(proc.pid)
            _signal_all([proc.pid, *kids], signal.SIGKILL)
            proc.wait(timeout=10)
        _signal_all(kids, signal.SIGKILL)  # orphans re-parented away from proc
    else:
        proc.wait()


def _client_ready(uri: str, token: str) -> bool:
    from pymilvus import MilvusClient

    try:
        client = MilvusClient(uri, token=token, timeout=2, dedicated=True)
    except Exception:  # noqa: BLE001 - connection refused/unavailable while starting
        return False
    try:
        client.list_collections(timeout=2)
        return True
    except Exception:  # noqa: BLE001
        return False
    finally:
        with contextlib.suppress(Exception):
            client.close()


def _http_ok(url: str) -> bool:
    try:
        with urllib.request.urlopen(url, timeout=2) as resp:  # noqa: S310 - 127.0.0.1 only
            return b"OK" in resp.read()
    except (urllib.error.URLError, OSError):
        return False


@dataclass(eq=False)
class Served:
    """A running (or stopped) Milvus server on 127.0.0.1."""

    uri: str
    token: str
    kind: str  # "lite-server" | "milvus-2.3.5"
    proc: subprocess.Popen | None
    data_dir: Path
    port: int
    logs: list[Path]
    auth: bool = False
    startup_s: float = 0.0  # seconds the last (re)start took until a client could list collections
    _launch: Callable[[Served, float], None] = field(default=None, repr=False)  # (re)starts proc in place
    _server: Any = field(default=None, repr=False)  # milvus.MilvusServer (milvus-2.3.5 only)

    @property
    def pid(self) -> int | None:
        return self.proc.pid if self.proc is not None else None

    @property
    def running(self) -> bool:
        return self.proc is not None and self.proc.poll() is None

    def rss_bytes(self) -> int:
        """Resident memory of the server process and its descendants (Linux), 0 when not running."""
        if not self.running:
            return 0
        total = 0
        for p in [self.proc.pid, *_descendants(self.proc.pid)]:
            with contextlib.suppress(OSError, IndexError, ValueError):
                total += int(Path(f"/proc/{p}/statm").read_text().split()[1]) * os.sysconf("SC_PAGE_SIZE")
        return total

    def client(self, token: str | None = None, timeout: float = 10, **kwargs: Any):
        """A pymilvus MilvusClient for this server (dedicated connection: closing it affects no other)."""
        from pymilvus import MilvusClient

        return MilvusClient(self.uri, token=self.token if token is None else token, timeout=timeout,
                            dedicated=True, **kwargs)

    def stop(self, grace: float = 15.0) -> None:
        """Graceful stop (lite: SIGINT, it drains and closes the DB; milvus: SIGTERM), SIGKILL after grace."""
        if self.proc is not None:
            _reap(self.proc, grace, signal.SIGINT if self.kind == "lite-server" else signal.SIGTERM)
        self._closed()

    def kill(self) -> None:
        """SIGKILL the server (and its descendants) at once, as a crash would. restart() brings it back."""
        if self.proc is not None:
            _signal_all([self.proc.pid, *_descendants(self.proc.pid)], signal.SIGKILL)
            self.proc.wait(timeout=10)
        self._closed()

    def restart(self, timeout: float = 120) -> None:
        """Start again on the same port and data directory (stopping first if running); wait until ready."""
        if self.proc is not None:
            self.stop()  # also reaps a process that died on its own
        if not _wait_port_free(self.port, 10):
            raise RuntimeError(f"{self.kind}: port {self.port} is still taken; cannot restart on it")
        self._launch(self, timeout)

    def _closed(self) -> None:
        if self._server is not None:  # forget the process so MilvusServer.__del__/stop() never touch it
            self._server.server_proc = None
            for fh in self._server.proc_fds.values():
                with contextlib.suppress(Exception):
                    fh.close()
            self._server.proc_fds.clear()
        with _live_lock:
            _live.discard(self)

    def __enter__(self) -> Served:
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()


def _register(served: Served) -> None:
    with _live_lock:
        _live.add(served)


@atexit.register
def _kill_leftovers() -> None:
    with _live_lock:
        left = list(_live)
    for s in left:
        with contextlib.suppress(Exception):
            s.kill()


def _wait_ready(served: Served, timeout: float, health_url: str | None = None) -> None:
    """Poll until a client can list collections; on timeout or process exit: kill, raise with the log tail."""
    t0 = time.monotonic()
    deadline = t0 + timeout
    healthy = health_url is None
    while True:
        if served.proc.poll() is not None:
            rc = served.proc.returncode
            served.kill()
            raise RuntimeError(f"{served.kind} on {served.uri} exited with code {rc} while starting\n"
                               + _tail(served.logs))
        if not healthy:
            healthy = _http_ok(health_url)
        if healthy and _client_ready(served.uri, served.token):
            served.startup_s = time.monotonic() - t0
            return
        if time.monotonic() > deadline:
            served.kill()
            raise RuntimeError(f"{served.kind} on {served.uri} not ready after {timeout:.0f} s\n"
                               + _tail(served.logs))
        time.sleep(0.2)


# ------------------------------------------------------------------------------------------ lite


def _lite_command(data_dir: Path, port: int) -> list[str]:
    # `milvus-lite server ...`, with gRPC options that accept pymilvus's keepalive pings (an idle
    # client was answered with GOAWAY too_many_pings, and the next connect failed): lite_server_main.py.
    return [sys.executable, str(Path(__file__).with_name("lite_server_main.py")), "server", "--data-dir",
            str(data_dir), "--host", HOST, "--port", str(port)]


def _launch_lite(served: Served, timeout: float) -> None:
    log = served.logs[0]
    with open(log, "ab") as fh:
        fh.write(f"\n=== start {time.strftime('%H:%M:%S')} port {served.port}\n".encode())
        fh.flush()
        served.proc = subprocess.Popen(  # noqa: S603
            _lite_command(served.data_dir, served.port), stdin=subprocess.DEVNULL, stdout=fh,
            stderr=subprocess.STDOUT, start_new_session=True,  # its own group: Ctrl-C in pytest doesn't hit it
            preexec_fn=_die_with_parent,
            env={**os.environ, "PYTHONUNBUFFERED": "1"})
    _register(served)
    _wait_ready(served, timeout)


def start_lite_server(data_dir: Path, port: int | None = None, timeout: float = 60) -> Served:
    """`milvus-lite server` on 127.0.0.1:port (a free one by default) serving data_dir; log: data_dir/server.log."""
    data_dir = Path(data_dir).resolve()
    data_dir.mkdir(parents=True, exist_ok=True)
    if port is None:
        port = free_port()
    elif not _port_free(port):
        raise RuntimeError(f"lite-server: port {port} on {HOST} is taken")
    served = Served(uri=f"http://{HOST}:{port}", token="", kind="lite-server", proc=None, data_dir=data_dir,
                    port=port, logs=[data_dir / "server.log"], auth=False, _launch=_launch_lite)
    _launch_lite(served, timeout)
    return served


# -------------------------------------------------------------------------------------- milvus 2.3.5


def _milvus_bin_cache() -> Path:
    """The decompressed Milvus binaries, shared by every server of this user (saves ~2.5 s a start).

    `milvus` ships its binary lzma-compressed and unpacks it into each base dir's bin/ unless the
    .md5 files there match; data dirs get a symlink bin -> this cache instead.
    """
    import fcntl

    import milvus

    root = Path(os.environ.get("RAG_MILVUS_BIN_CACHE")
                or Path(tempfile.gettempdir()) / f"rag-milvus-{milvus.__version__}-{os.getuid()}")
    root.mkdir(parents=True, exist_ok=True)
    with open(root / ".lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # one unpacker at a time (parallel sessions)
        milvus._initialize_data_files(str(root))  # no-op when already unpacked
    return root / "bin"


def _own_etcd_ports(server: Any, data_dir: Path) -> None:
    """Give the embedded etcd its own client and peer ports on 127.0.0.1.

    Milvus 2.3.5 leaves etcd's peer URL at its default, 127.0.0.1:2380, so a second server on the same
    machine dies with "listen tcp 127.0.0.1:2380: bind: address already in use". An etcd config file
    (milvus.yaml etcd.config.path, absent from the package's template, so added to its text) fixes both.
    """
    held = []
    try:
        for port in range(2379, 2379 + 2000):
            sock = _bind_probe(port)
            if sock is not None:
                held.append((port, sock))
                if len(held) == 2:
                    break
        (client, _), (peer, _) = held
    finally:
        for _, sock in held:
            sock.close()
    etcd_yaml = data_dir / "configs" / "etcd.yaml"
    etcd_yaml.parent.mkdir(parents=True, exist_ok=True)
    etcd_yaml.write_text(f"""name: default
listen-client-urls: http://{HOST}:{client}
advertise-client-urls: http://{HOST}:{client}
listen-peer-urls: http://{HOST}:{peer}
initial-advertise-peer-urls: http://{HOST}:{peer}
initial-cluster: default=http://{HOST}:{peer}
""", encoding="utf-8")
    anchor = "  use:\n    embed: true"
    if anchor not in server.config.template_text:  # pragma: no cover - another milvus package version
        raise RuntimeError("milvus config template changed: cannot set etcd.config.path")
    server.config.template_text = server.config.template_text.replace(
        anchor, f"  config:\n    path: {json.dumps(str(etcd_yaml))}\n{anchor}", 1)
    server.config.update(etcd_port=client)


def _launch_milvus(served: Served, timeout: float) -> None:
    server = served._server
    cwd = os.getcwd()
    import milvus

    real = milvus.subprocess  # MilvusServer.start() has no Popen options: lend it one with _die_with_parent
    milvus.subprocess = types.SimpleNamespace(
        Popen=functools.partial(subprocess.Popen, preexec_fn=_die_with_parent), TimeoutExpired=subprocess.TimeoutExpired)
    try:
        server.start()  # resolves ports, writes configs/milvus.yaml, Popen; chdirs (undone below)
    except BaseException:
        if server.server_proc is not None:
            _reap(server.server_proc, 0, signal.SIGKILL)
        served._closed()
        raise
    finally:
        milvus.subprocess = real
        os.chdir(cwd)
    served.proc = server.server_proc
    served.port = server.listen_port
    served.uri = f"http://{HOST}:{served.port}"
    # Pin every port for restart(): MilvusServer only reuses a port it was given explicitly.
    server.config.update(**{k: v[1] for k, v in server.config.configurable_items.items() if k.endswith("_port")})
    server.webservice_port = int(server.webservice_port)
    _register(served)
    _wait_ready(served, timeout, health_url=f"http://{HOST}:{server.webservice_port}/healthz")


def start_milvus235(data_dir: Path, timeout: float = 120, auth: bool = True) -> Served:
    """Milvus 2.3.5 standalone (`milvus` package) with its data, configs and logs under data_dir."""
    try:
        from milvus import MilvusServer
    except ImportError as e:  # pragma: no cover - the dev extra installs it
        raise RuntimeError("the `milvus` package (Milvus 2.3.5 server) is not installed: pip install milvus==2.3.5") from e

    data_dir = Path(data_dir).resolve()
    data_dir.mkdir(parents=True, exist_ok=True)
    bin_dir = data_dir / "bin"
    if not bin_dir.exists():
        bin_dir.symlink_to(_milvus_bin_cache(), target_is_directory=True)

    server = MilvusServer(wait_for_started=False)  # its own wait never notices a crashed process
    # Its port probe binds without SO_REUSEADDR, so TIME_WAIT leftovers of the previous run would make
    # restart() on the same ports fail ("set etcd_port=2379, but bind failed").
    server.config.try_bind_port = _bind_probe
    server.set_base_dir(str(data_dir))
    for comp in _COMPONENTS:
        server.config.set(f"{comp}.ip", HOST)
    server.config.set("authorization_enabled", bool(auth))
    _own_etcd_ports(server, data_dir)
    logs = [data_dir / "logs" / "milvus-stderr.log", data_dir / "logs" / "milvus-stdout.log"]
    served = Served(uri="", token=MILVUS_TOKEN if auth else "", kind="milvus-2.3.5", proc=None,
                    data_dir=data_dir, port=0, logs=logs, auth=bool(auth), _launch=_launch_milvus,
                    _server=server)
    _launch_milvus(served, timeout)
    return served

