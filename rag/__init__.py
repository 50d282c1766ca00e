"""rag: grounded answers with citations the server can prove."""
from __future__ import annotations

__version__ = "0.1.0"

__all__ = ["Pipeline", "__version__"]


def __getattr__(name: str):  # lazy: importing rag stays cheap
    if name == "Pipeline":
        from rag.pipeline import Pipeline

        return Pipeline
    raise AttributeError(name)
