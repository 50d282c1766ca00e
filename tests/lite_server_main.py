"""``milvus-lite server ...`` for the test session, with gRPC server options that accept the
client's keepalive pings.

pymilvus pings every 10 s, also on idle connections (``grpc.keepalive_permit_without_calls``);
milvus-lite's server keeps gRPC's defaults, which answer that with GOAWAY ``too_many_pings``, and
the next client on the pooled channel then fails to connect. A Milvus server permits those pings;
so does this one. Run as ``python tests/lite_server_main.py server --data-dir D --host H --port P``.
"""
from __future__ import annotations

import sys

import grpc

PERMIT_CLIENT_PINGS = (
    ("grpc.keepalive_permit_without_calls", 1),
    ("grpc.http2.min_recv_ping_interval_without_data_ms", 5000),
    ("grpc.http2.max_ping_strikes", 0),
)
_server = grpc.server


def _permissive_server(*args, options=None, **kwargs):
    return _server(*args, options=[*(options or ()), *PERMIT_CLIENT_PINGS], **kwargs)


if __name__ == "__main__":
    grpc.server = _permissive_server
    from milvus_lite.cmdline import main

    sys.exit(main(sys.argv[1:]))
