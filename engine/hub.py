"""``engine.hub``: list, document and build models from a local directory's ``hubconf.py``.

NOTE [ Hub directories and trust ]
1. A hub directory holds ``hubconf.py``. Its entry points are the public callables
   in it (names not starting with ``_``); ``dependencies`` (a list of module names)
   is checked before an entry point runs, naming every missing one.
2. Importing ``hubconf.py`` runs its Python code with your permissions. glassgrad
   therefore runs it only for a directory you said you trust: ``trust_repo=True``
   (remembered for the rest of the process). ``trust_repo=None`` or ``"check"``
   accepts a directory trusted earlier in this process and refuses any other;
   ``trust_repo=False`` always refuses (PyTorch would prompt).
   PyTorch asks for trust only before downloading from GitHub and runs a local
   ``hubconf.py`` unasked; glassgrad asks for local directories too.
3. glassgrad's hub is offline: only ``source="local"`` exists. It never downloads.
"""
from __future__ import annotations

import builtins
import contextlib
import importlib.util
import os
import sys

MODULE_HUBCONF = "hubconf.py"
VAR_DEPENDENCY = "dependencies"

_trusted: set = set()   # real paths of directories trusted in this process


def list(repo_dir, source="local", trust_repo=None, force_reload=False, skip_validation=False,  # noqa: A001
         verbose=True) -> builtins.list:
    """Names of the entry points in ``repo_dir/hubconf.py``."""
    m = _hubconf(repo_dir, source, trust_repo)
    return [f for f in dir(m) if callable(getattr(m, f)) and not f.startswith("_")]


def help(repo_dir, model, source="local", trust_repo=None, force_reload=False, skip_validation=False):  # noqa: A001
    """The docstring of entry point ``model``."""
    m = _hubconf(repo_dir, source, trust_repo)
    return _entry(m, model).__doc__


def load(repo_dir, model, *args, source="local", trust_repo=None, force_reload=False, verbose=True,
         skip_validation=False, **kwargs):
    """Call entry point ``model`` of ``repo_dir/hubconf.py`` with ``*args, **kwargs`` and return its result."""
    repo_dir = _check_source(repo_dir, source)
    with _on_sys_path(repo_dir):
        m = _hubconf(repo_dir, source, trust_repo)
        return _entry(m, model)(*args, **kwargs)


def _check_source(repo_dir, source) -> str:
    src = str(source).lower()
    if src == "github":
        raise RuntimeError(
            "glassgrad's hub is offline and local-only: source='github' would download code from the internet, "
            "which glassgrad never does. Clone the repository yourself and pass its directory with "
            "source='local'.")
    if src != "local":
        raise ValueError(f'Unknown source: "{source}". Allowed values: "local" (glassgrad\'s hub is '
                         "offline and local-only).")
    path = os.fspath(repo_dir)
    if not os.path.isdir(path):
        raise FileNotFoundError(f"hub directory {path!r} does not exist or is not a directory")
    if not os.path.isfile(os.path.join(path, MODULE_HUBCONF)):
        raise FileNotFoundError(f"{os.path.join(path, MODULE_HUBCONF)} not found: a hub directory needs a "
                                "hubconf.py that defines its entry points")
    return path


def _check_trust(path: str, trust_repo) -> None:
    real = os.path.realpath(path)
    if trust_repo is True:
        _trusted.add(real)
        return
    if trust_repo in (None, "check") and real in _trusted:
        return
    if trust_repo not in (None, "check", False):
        raise ValueError(f"trust_repo must be True, False, None or 'check', not {trust_repo!r}")
    raise RuntimeError(
        f"Untrusted repository: {path} has a hubconf.py, and using it runs that file's Python code with your "
        "permissions. If you trust this directory, pass trust_repo=True (glassgrad then trusts it for the rest "
        "of this process).")


@contextlib.contextmanager
def _on_sys_path(path: str):
    sys.path.insert(0, path)
    try:
        yield
    finally:
        with contextlib.suppress(ValueError):
            sys.path.remove(path)


def _hubconf(repo_dir, source, trust_repo):
    path = _check_source(repo_dir, source)
    _check_trust(path, trust_repo)                # NOTE [ Hub directories and trust ] rule 2
    with _on_sys_path(path):
        spec = importlib.util.spec_from_file_location("hubconf", os.path.join(path, MODULE_HUBCONF))
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
    return module


def _entry(m, model):
    if not isinstance(model, str):
        raise ValueError("Invalid input: model should be a string of function name")
    deps = getattr(m, VAR_DEPENDENCY, None)
    if deps is not None:
        missing = [d for d in deps if not _module_exists(d)]
        if missing:
            raise RuntimeError(f"Missing dependencies: {', '.join(missing)}")
    func = getattr(m, model, None)
    if func is None or not callable(func) or model.startswith("_"):
        available = [f for f in dir(m) if callable(getattr(m, f)) and not f.startswith("_")]
        raise RuntimeError(f"Cannot find callable {model} in hubconf. Available entry points: "
                           f"{', '.join(available) if available else '(none)'}")
    return func


def _module_exists(name: str) -> bool:
    try:
        return importlib.util.find_spec(name) is not None
    except (ImportError, ValueError):
        return False
