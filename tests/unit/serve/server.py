"""A real uvicorn server on 127.0.0.1 (an ephemeral port) in a background thread, for the service tests."""
from __future__ import annotations

import threading
import time

import httpx


class LiveServer:
    """``with LiveServer(app) as srv: httpx.get(srv.url + "/healthz")``; waits until ready."""

    def __init__(self, app, ready_timeout: float = 120.0, wait_ready: bool = True) -> None:
        """``wait_ready=False``: return once uvicorn listens, before ``/readyz`` says ready."""
        import uvicorn

        self.config = uvicorn.Config(app, host="127.0.0.1", port=0, log_config=None, access_log=False,
                                     timeout_graceful_shutdown=10, lifespan="on")
        self.server = uvicorn.Server(self.config)
        self.thread = threading.Thread(target=self.server.run, daemon=True)
        self.ready_timeout = ready_timeout
        self.wait_ready = wait_ready

    @property
    def url(self) -> str:
        host, port = self.server.servers[0].sockets[0].getsockname()[:2]
        return f"http://{host}:{port}"

    def __enter__(self) -> "LiveServer":
        self.thread.start()
        deadline = time.monotonic() + self.ready_timeout
        while not self.server.started:
            if time.monotonic() > deadline or not self.thread.is_alive():
                raise RuntimeError("uvicorn did not start")
            time.sleep(0.02)
        while self.wait_ready and httpx.get(self.url + "/readyz").status_code != 200:
            if time.monotonic() > deadline:
                raise RuntimeError("the service did not become ready: " + httpx.get(self.url + "/readyz").text)
            time.sleep(0.05)
        return self

    def __exit__(self, *exc) -> None:
        self.server.should_exit = True
        self.thread.join(timeout=30)
