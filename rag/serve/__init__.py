"""``rag serve``: the pipeline behind HTTP for chatbot backends (FastAPI + uvicorn).

Install with ``pip install 'rag[serve]'``; see docs/service.md. Importing this package does not
import FastAPI: :func:`create_app` does."""
from rag.serve.auth import ApiKeys, KeyHolder
from rag.serve.errors import CODES, ServiceError
from rag.serve.service import DocumentsChange, Served, Service


def create_app(config, service=None, tools=None):
    """The FastAPI app serving ``config`` (see :func:`rag.serve.app.create_app`)."""
    from rag.serve.app import create_app as _create

    return _create(config, service, tools)


__all__ = ["ApiKeys", "CODES", "DocumentsChange", "KeyHolder", "Served", "Service", "ServiceError", "create_app"]
