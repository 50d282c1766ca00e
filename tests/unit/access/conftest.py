"""The two index backends the access tests run on: the local folder and milvus-lite in a file."""
from __future__ import annotations

import pytest

from tests.unit.index.conftest import Target, make_target

BACKENDS = ["local", "lite-file"]


@pytest.fixture(params=BACKENDS)
def backend(request, tmp_path) -> Target:
    return make_target(request.param, request, tmp_path)
