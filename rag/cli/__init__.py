from rag.cli.main import main

__all__ = ["main"]
