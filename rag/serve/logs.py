"""Structured JSON logs with the request id (``rag serve``)."""
from __future__ import annotations

import contextvars
import json
import logging
import time

request_id: contextvars.ContextVar[str] = contextvars.ContextVar("rag_request_id", default="-")

# LogRecord's own attributes, and uvicorn's ANSI-coloured copy of the message
_STANDARD = set(vars(logging.LogRecord("x", 0, "x", 0, "x", None, None))) | {"message", "asctime", "color_message"}


class JsonFormatter(logging.Formatter):
    """One JSON object per line: ts, level, logger, message, request_id, and any ``extra`` fields."""

    def format(self, record: logging.LogRecord) -> str:
        out = {"ts": time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(record.created)) + f".{int(record.msecs):03d}Z",
               "level": record.levelname.lower(), "logger": record.name, "message": record.getMessage(),
               "request_id": getattr(record, "request_id", None) or request_id.get()}
        for k, v in vars(record).items():
            if k not in _STANDARD and k not in out:
                out[k] = v
        if record.exc_info:
            out["exception"] = self.formatException(record.exc_info)
        return json.dumps(out, ensure_ascii=False, default=str)


def configure(fmt: str, level: int = logging.INFO) -> None:
    """Route the root logger (the library's and uvicorn's loggers) through one handler."""
    handler = logging.StreamHandler()
    handler.setFormatter(JsonFormatter() if fmt == "json" else
                         logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s"))
    handler.setLevel(level)
    root = logging.getLogger()
    root.handlers[:] = [handler]
    root.setLevel(level)
    for name in ("uvicorn", "uvicorn.error", "uvicorn.access"):
        lg = logging.getLogger(name)
        lg.handlers[:] = []
        lg.propagate = True
    logging.getLogger("uvicorn.access").disabled = True  # the service logs one line per request itself
