"""Load Hugging Face models without their progress bars.

``transformers`` draws a "Loading weights" tqdm bar on stderr whenever ``from_pretrained`` reads a
checkpoint (``SentenceTransformer(...)``, ``CrossEncoder(...)``); in a CLI command it lands in the
middle of the command's output. :func:`quiet_model_loading` turns transformers' bars off for the
duration of a load and restores the caller's setting afterwards, whatever it was:

- with transformers >= 5 it installs a tqdm hook (``transformers.utils.logging.set_tqdm_hook``)
  that makes every bar disabled, and puts the previous hook back on exit; nothing else changes;
- with older transformers it calls ``disable_progress_bar()`` and, only when bars were on before,
  ``enable_progress_bar()`` on exit.

Warnings (a checkpoint with missing weights, say) still go through logging: only bars are hidden.
Nested and concurrent loads share one silence: the first to enter saves the setting, the last to
leave restores it.
"""
from __future__ import annotations

import logging
import threading
from contextlib import contextmanager
from typing import Any, Callable, Iterator

logger = logging.getLogger(__name__)

_lock = threading.Lock()
_depth = 0
_restore: Callable[[], Any] | None = None


def _silent_bar(factory: Callable[..., Any], args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
    """A transformers tqdm hook: the bar it would have drawn, disabled."""
    return factory(*args, **{**kwargs, "disable": True})


def _silence() -> Callable[[], Any] | None:
    """Turn transformers' progress bars off; returns what puts the previous setting back."""
    try:
        from transformers.utils import logging as hf_logging
    except ImportError:  # no transformers: nothing draws a loading bar
        return None
    set_hook = getattr(hf_logging, "set_tqdm_hook", None)
    if set_hook is not None:
        previous = set_hook(_silent_bar)
        return lambda: set_hook(previous)
    if hf_logging.is_progress_bar_enabled():
        hf_logging.disable_progress_bar()
        return hf_logging.enable_progress_bar
    return None


@contextmanager
def quiet_model_loading() -> Iterator[None]:
    """Inside the block, transformers draws no progress bar (see the module's docstring)."""
    global _depth, _restore
    with _lock:
        if _depth == 0:
            _restore = _silence()
        _depth += 1
    try:
        yield
    finally:
        with _lock:
            _depth -= 1
            if _depth == 0:
                restore, _restore = _restore, None
                if restore is not None:
                    restore()
