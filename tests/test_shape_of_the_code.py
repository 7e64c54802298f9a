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










def test_no_tensor_method_is_bound_twice():
    """Every ``Tensor.<name> = ...`` assignment in the engine names a different attribute."""
    seen = {}
    twice = []
    for m, path in MODS.items():
        if not m.startswith("engine"):
            continue
        for node in ast.walk(ast.parse(open(path).read())):
            targets = node.targets if isinstance(node, ast.Assign) else []
            for tgt in targets:
                for t in (tgt.elts if isinstance(tgt, ast.Tuple) else [tgt]):
                    if isinstance(t, ast.Attribute) and isinstance(t.value, ast.Name) and t.value.id == "Tensor":
                        where = f"{os.path.relpath(path, ROOT)}:{node.lineno}"
                        if t.attr in seen:
                            twice.append((t.attr, seen[t.attr], where))
                        seen[t.attr] = where
    assert twice == []
