"""Python functions bound to tests/fixtures/tools/cloud.yaml: a fake private cloud's live data."""
from __future__ import annotations

import asyncio
import time
from pathlib import Path

from rag.tools import load_tools

REGISTRY_FILE = Path(__file__).resolve().parents[2] / "fixtures" / "tools" / "cloud.yaml"


def list_redis_clusters(project: str) -> dict:
    return {"clusters": [{"name": "prod-redis", "flavor_ref": "m5.large", "status": "active", "memory_used_mb": 5120},
                         {"name": "batch-redis", "flavor_ref": "m5.xlarge", "status": "error"}]}


async def get_redis_metrics(cluster: str) -> dict:
    await asyncio.sleep(0)
    return {"cluster": cluster, "ops_per_sec": 48210, "hit_rate": 0.973, "connections": 812}


def list_buckets(project: str) -> list:
    return [{"name": "web-assets", "visibility": "cdn"}, {"name": "hr-archive", "visibility": "private"}]


def get_vm(vm_id: str) -> dict:
    raise ConnectionError("compute API unreachable")


def get_cpu_metrics(vm_id: str) -> dict:
    time.sleep(5)  # hangs past the call timeout
    return {}


def list_alerts(project: str, since_hours: int = 24) -> dict:
    return {"alerts": [{"id": i, "message": f"disk usage {80 + i % 20}% on node-{i}", "severity": "warning",
                        "raised_at": f"2026-11-30T{i % 24:02d}:00:00Z"} for i in range(400)]}


def list_vms(project: str) -> object:
    return {"vms": {1, 2, 3}}  # a set: not JSON-serialisable


def registry():
    return load_tools(REGISTRY_FILE).bind(list_redis_clusters=list_redis_clusters, get_redis_metrics=get_redis_metrics,
                                          list_buckets=list_buckets, get_vm=get_vm, get_cpu_metrics=get_cpu_metrics,
                                          list_alerts=list_alerts, list_vms=list_vms)
