"""The shape of the code, kept by tests: layers, no cycles, a closed core, small files.

docs/architecture.md ("Reading the engine") has the layer table these tests enforce.
"""
from __future__ import annotations

import ast
import os
import sys

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PACKAGES = ("engine", "replay", "viz", "tui", "lessons")

# the layer of a module: the longest prefix listed here wins; a module may import only its own
# layer (inside the rules below) or a lower one
LAYERS = [
    ("engine.backend", 0), ("engine.events", 0),
    ("engine.memory", 1),
    ("engine.core", 2),
    ("engine.ops", 3),
    ("engine", 5),                 # functions/, autograd, nn, optim, utils, ... (the library)
    ("engine.__init__", 6),
    ("replay", 7), ("viz", 8), ("lessons", 9), ("tui", 10),
]


def _modules():
    mods = {}
    for pkg in PACKAGES:
        for d, _, files in os.walk(os.path.join(ROOT, pkg)):
            for f in files:
                if f.endswith(".py"):
                    path = os.path.join(d, f)
                    rel = os.path.relpath(path, ROOT)[:-3].replace(os.sep, ".")
                    mods[rel.removesuffix(".__init__")] = path
    return mods


MODS = _modules()


def _imports(mod):
    """(target module, line, inside a function) for every import in ``mod``."""
    path = MODS[mod]
    is_pkg = path.endswith("__init__.py")
    out = []

    def resolve(node):
        if isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        else:
            base = mod.split(".") if is_pkg else mod.split(".")[:-1]
            if node.level > 1:
                base = base[:len(base) - (node.level - 1)]
            stem = (".".join(base) + ("." + node.module if node.module else "")) if node.level else node.module
            # ``from pkg import mod`` imports the module; ``from mod import name`` the module itself
            names = [stem + "." + a.name if stem + "." + a.name in MODS else stem for a in node.names]
        found = []
        for name in names:
            parts = name.split(".")
            for i in range(len(parts), 0, -1):
                if ".".join(parts[:i]) in MODS:
                    found.append(".".join(parts[:i]))
                    break
        return found

    def walk(node, in_fn):
        for ch in ast.iter_child_nodes(node):
            if isinstance(ch, (ast.Import, ast.ImportFrom)):
                for t in resolve(ch):
                    if t != mod:
                        out.append((t, ch.lineno, in_fn))
            walk(ch, in_fn or isinstance(ch, (ast.FunctionDef, ast.AsyncFunctionDef)))

    walk(ast.parse(open(path).read()), False)
    return out


IMPORTS = {m: _imports(m) for m in MODS}


def _layer(mod):
    if mod == "engine":
        return 6
    best = None
    for prefix, level in LAYERS:
        if mod == prefix or mod.startswith(prefix + "."):
            if best is None or len(prefix) > len(best[0]):
                best = (prefix, level)
    return best[1]


def _cycles(with_functions):
    """Strongly connected components (over modules, packages' __init__ left out as nodes)."""
    pkgs = {m for m, p in MODS.items() if p.endswith("__init__.py")}
    nodes = set(MODS) - pkgs
    edges = {m: {t for t, _, in_fn in IMPORTS[m] if t in nodes and (with_functions or not in_fn)} for m in nodes}
    sys.setrecursionlimit(20000)
    index, low, stack, on, comps, counter = {}, {}, [], set(), [], [0]

    def visit(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in edges[v]:
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                comps.append(sorted(comp))

    for v in sorted(nodes):
        if v not in index:
            visit(v)
    return comps


def test_the_core_imports_only_backend_memory_and_events():
    bad = [(m, t, line) for m in MODS if m.startswith("engine.core")
           for t, line, _ in IMPORTS[m]
           if not (t.startswith(("engine.core", "engine.backend", "engine.memory")) or t == "engine.events")]
    assert bad == []


def test_no_import_inside_a_function_in_the_core():
    bad = [(m, t, line) for m in MODS if m.startswith("engine.core") for t, line, in_fn in IMPORTS[m] if in_fn]
    assert bad == []


def test_the_core_is_small_enough_to_read():
    files = [p for m, p in MODS.items() if m.startswith("engine.core")]
    lines = {p: sum(1 for _ in open(p)) for p in files}
    assert sum(lines.values()) <= 3400, sum(lines.values())
    assert max(lines.values()) <= 500, max(lines.items(), key=lambda kv: kv[1])
    long_fns = []
    for p in files:
        for node in ast.walk(ast.parse(open(p).read())):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.end_lineno - node.lineno + 1 > 90:
                long_fns.append((os.path.relpath(p, ROOT), node.name, node.end_lineno - node.lineno + 1))
    assert long_fns == []


def test_the_reading_path_is_eight_core_files_in_order():
    import engine.core
    doc = engine.core.__doc__
    steps = [line.split()[1] for line in doc.splitlines() if line[:2].strip().rstrip(".").isdigit()
             and line.split()[1].endswith(".py``")]
    assert len(steps) <= 8
    for s in steps:
        assert os.path.exists(os.path.join(ROOT, "engine", "core", s.strip("`")))


def test_engine_never_imports_the_readers():
    bad = [(m, t) for m in MODS if m.split(".")[0] == "engine" for t, _, _ in IMPORTS[m]
           if t.split(".")[0] in ("replay", "viz", "tui", "lessons")]
    assert bad == []










BINDINGS = """
import collections, importlib.abc, importlib.machinery, sys
sites = collections.defaultdict(list)

class Logged(type):
    def __setattr__(cls, name, value):
        f = sys._getframe(1)
        sites[name].append(f"{f.f_code.co_filename}:{f.f_lineno}")
        super().__setattr__(name, value)

class Finder(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path, target=None):
        if name != "engine.core.tensor":
            return None
        spec = importlib.machinery.PathFinder.find_spec(name, path)
        run = spec.loader.exec_module
        def exec_module(module):
            run(module)
            T = module.Tensor
            slots = set(T.__dict__.get("__slots__", ()))
            body = {k: v for k, v in T.__dict__.items() if k not in slots and k not in ("__dict__", "__weakref__")}
            module.Tensor = Logged("Tensor", T.__bases__, body)
        spec.loader.exec_module = exec_module
        return spec

sys.meta_path.insert(0, Finder())
import engine
print(len(sites))
for name, where in sorted(sites.items()):
    if len(where) > 1:
        print(name, *where)
"""


def test_no_tensor_method_is_bound_twice():
    """Import the engine with a Tensor class that logs every attribute bound on it after its body:
    each name is bound in exactly one place (a second binding would silently replace the first)."""
    import subprocess
    out = subprocess.run([sys.executable, "-c", BINDINGS], cwd=ROOT, capture_output=True, text=True, check=True)
    lines = out.stdout.splitlines()
    assert int(lines[0]) > 400          # the log saw the bindings (the methods of torch.Tensor)
    assert lines[1:] == []


def test_imports_follow_the_layers():
    bad = []
    for m in MODS:
        for t, line, _ in IMPORTS[m]:
            if _layer(t) > _layer(m):
                bad.append(f"{MODS[m]}:{line} imports {t}")
    assert bad == []


@pytest.mark.parametrize("with_functions", [False, True], ids=["module-level", "with-function-level"])
def test_no_import_cycles(with_functions):
    assert _cycles(with_functions) == []


def test_no_source_file_over_600_lines():
    big = {os.path.relpath(p, ROOT): n for p in MODS.values() if (n := sum(1 for _ in open(p))) > 600}
    assert big == {}


def test_every_op_row_lives_in_the_core_or_in_engine_ops():
    from engine.core.table import OPS
    homes = {row.fwd.__module__ for row in OPS.values()}
    assert {h for h in homes if not (h == "engine.core.primitives" or h.startswith("engine.ops."))} == set()
