"""Korean example questions shown in the command line's help and hint texts (rag.cli)."""
from __future__ import annotations

# The question `rag demo` suggests asking in full after its run (rag.cli.answer).
DEMO_QUESTION = "연차 휴가는 며칠인가요?"
