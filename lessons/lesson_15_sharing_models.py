"""Lesson 15: sharing models. A hub directory is code you choose to run; a checkpoint is tensors
with names, no graph and no code."""
import os
import pickle
import pickletools
import tempfile
import zipfile

import engine as torch

from lessons._format import Check, Focus, Lesson, Step

HUBCONF = '''\
"""A tiny hub: one entry point that builds an MLP and can load its weights."""
import os

import engine as torch

dependencies = ["numpy"]          # checked before any entry point runs


def tiny_mlp(pretrained=False):
    """A 4 -> 8 -> 2 MLP. pretrained=True loads weights.pt from this directory."""
    model = torch.nn.Sequential(torch.nn.Linear(4, 8), torch.nn.ReLU(), torch.nn.Linear(8, 2))
    if pretrained:
        path = os.path.join(os.path.dirname(__file__), "weights.pt")
        model.load_state_dict(torch.load(path, weights_only=True))
    return model
'''


def make_hub(s):
    s.hub = tempfile.mkdtemp(prefix="glassgrad-hub-")
    with open(os.path.join(s.hub, "hubconf.py"), "w") as f:
        f.write(HUBCONF)
    torch.manual_seed(7)
    s.trained = torch.nn.Sequential(torch.nn.Linear(4, 8), torch.nn.ReLU(), torch.nn.Linear(8, 2))
    torch.save(s.trained.state_dict(), os.path.join(s.hub, "weights.pt"))


def a_hub_is_code(s):
    make_hub(s)
    try:
        torch.hub.list(s.hub)                    # not trusted yet: refused before any code runs
        refused = "no error"
    except Exception as err:
        refused = f"{type(err).__name__}: {str(err).split('. ')[0]}".replace(s.hub, "<the hub directory>")
    entries = torch.hub.list(s.hub, trust_repo=True)     # now hubconf.py runs
    doc = torch.hub.help(s.hub, "tiny_mlp")
    return {"refused": refused, "entries": entries, "doc": doc.strip()}


def load_from_hub(s):
    model = torch.hub.load(s.hub, "tiny_mlp", pretrained=True)   # trusted above, in this process
    x = torch.randn(3, 4)
    same = torch.equal(model(x), s.trained(x))
    fresh = torch.hub.load(s.hub, "tiny_mlp")                     # random weights: the code alone
    differs = not torch.equal(fresh(x), s.trained(x))
    with open(os.path.join(s.hub, "hubconf.py"), "a") as f:
        f.write('\ndependencies = ["numpy", "a_package_nobody_installed"]\n')
    try:
        torch.hub.load(s.hub, "tiny_mlp")
        missing = "no error"
    except RuntimeError as err:
        missing = str(err)
    return {"same": same, "differs": differs, "missing": missing}


def globals_in(pickle_bytes):
    """The classes and functions a pickle names (what unpickling would import)."""
    names, strings = [], []
    for op, arg, _ in pickletools.genops(pickle_bytes):
        if op.name in ("SHORT_BINUNICODE", "BINUNICODE", "UNICODE"):
            strings.append(arg)
        elif op.name == "GLOBAL":
            names.append(arg.replace(" ", "."))
        elif op.name == "STACK_GLOBAL":
            names.append(".".join(strings[-2:]))
    return sorted(set(names))


def what_a_checkpoint_holds(s):
    path = os.path.join(s.hub, "weights.pt")
    torch.save(s.trained.state_dict(), path)     # the same save as in step 1, recorded here
    with zipfile.ZipFile(path) as z:
        records = [(i.filename.split("/", 1)[1], i.file_size) for i in z.infolist()]
        pkl = next(z.read(i) for i in z.infolist() if i.filename.endswith("data.pkl"))
    sd = s.trained.state_dict()
    return {"records": ", ".join(f"{n} ({b} B)" for n, b in records),
            "data_bytes": sum(b for n, b in records if n.startswith("data/")),
            "param_bytes": sum(t.numel() * t.element_size() for t in sd.values()),
            "keys": ", ".join(sd), "n_keys": len(sd),
            "globals": ", ".join(globals_in(pkl)), "has_py": any(n.endswith(".py") for n, _ in records)}


class Runs:
    """Unpickling this calls print(...): the classic way a pickle runs code."""

    def __reduce__(self):
        return (print, ("this line ran while loading",))


def checkpoint_without_its_code(s):
    path = os.path.join(s.hub, "weights.pt")
    sd = torch.load(path, weights_only=True)
    wider = torch.nn.Sequential(torch.nn.Linear(4, 16), torch.nn.ReLU(), torch.nn.Linear(16, 2))
    try:
        wider.load_state_dict(sd)                # the names match, the shapes do not
        mismatch = "no error"
    except RuntimeError as err:
        mismatch = str(err).splitlines()[1].strip()
    other = torch.nn.Sequential(torch.nn.Linear(4, 2))
    try:
        other.load_state_dict(sd)
        keys = "no error"
    except RuntimeError as err:
        keys = str(err).splitlines()[1].strip()

    crafted = os.path.join(s.hub, "crafted.pt")  # weights.pt with a data.pkl that calls print()
    with zipfile.ZipFile(path) as src, zipfile.ZipFile(crafted, "w") as dst:
        for info in src.infolist():
            data = src.read(info)
            if info.filename.endswith("data.pkl"):
                data = pickle.dumps(Runs(), protocol=2)
            dst.writestr(info, data)
    try:
        torch.load(crafted, weights_only=True)
        refused = "no error"
    except Exception as err:                     # the line that names what was refused
        lines = [ln for ln in str(err).splitlines() if "Unsupported global" in ln] or [str(err)]
        refused = f"{type(err).__name__}: ... {lines[0].strip()}"
    for name in os.listdir(s.hub):
        if os.path.isfile(os.path.join(s.hub, name)):
            os.remove(os.path.join(s.hub, name))
    for root, dirs, _ in os.walk(s.hub, topdown=False):
        for d in dirs:
            os.rmdir(os.path.join(root, d))
    os.rmdir(s.hub)
    return {"mismatch": mismatch, "keys": keys, "refused": refused, "gone": not os.path.exists(s.hub)}


LESSON = Lesson(
    number=15,
    slug="sharing_models",
    title="Sharing models",
    summary="A hub entry point is code you decide to trust; a checkpoint is named tensors, with no graph and no code.",
    steps=(
        Step(
            title="A hub directory is code",
            narrative="""\
`torch.hub` finds models through a file named `hubconf.py`: its public
functions are the entry points, its `dependencies` list names the packages
they need. Listing them means **importing that file, which runs its Python
code** with your permissions. So glassgrad refuses a directory you have not
trusted, before running anything:

> {refused}

With `trust_repo=True` the file runs: the entry points are {entries}, and
`hub.help` returns the docstring: "{doc}". (PyTorch asks this only before
downloading from GitHub; glassgrad asks for local directories too. NOTE [ Hub
directories and trust ] in engine/hub.py.)

Read the code: `engine/hub.py`, NOTE [ Hub directories and trust ].""",
            code=a_hub_is_code,
            focus=Focus("log", "end"),
            checks=(
                Check("the untrusted directory was refused",
                      lambda r: r.values["refused"].startswith("RuntimeError: Untrusted repository")),
                Check("hub.list found the one entry point", lambda r: r.values["entries"] == ["tiny_mlp"]),
                Check("hub.help gave its docstring", lambda r: r.values["doc"].startswith("A 4 -> 8 -> 2 MLP")),
            ),
        ),
        Step(
            title="Code plus weights",
            narrative="""\
`hub.load(dir, "tiny_mlp", pretrained=True)` called the entry point: its
**code** built the layers, and `load_state_dict` filled them from
`weights.pt`. The model computes exactly what the trained one does ({same});
without `pretrained` the same code gives random weights ({differs}: the
outputs differ). Before calling anything, `dependencies` is checked:

> {missing}

Read the code: `engine/hub.py`, NOTE [ Hub directories and trust ] rule 1; `engine/serialization/unpickler.py`, NOTE [ Loading without running code ].""",
            code=load_from_hub,
            focus=Focus("log", "first load"),
            checks=(
                Check("the hub model equals the trained one", lambda r: r.values["same"]),
                Check("the code alone gives other outputs", lambda r: r.values["differs"]),
                Check("a missing dependency is named", lambda r: r.values["missing"] == "Missing dependencies: a_package_nobody_installed"),
            ),
        ),
        Step(
            title="What a checkpoint holds",
            narrative="""\
`weights.pt` is a zip archive: {records}. `data.pkl` is the structure (a
dict of {n_keys} names: {keys}) and each `data/N` record is one storage's raw
bytes: {data_bytes} B in all, exactly the parameters' {param_bytes} B.

What it does **not** hold: no graph (a state_dict is values, and the graph
only exists while a forward runs), and no code: the only things `data.pkl`
names are {globals}, none of them your model's class. That is why you need
the class (here, the hub's code) to use the weights, and why model viewers
cannot draw a model from a state_dict. PyTorch's legacy format (before 1.6)
could pickle a whole module and stored its class's source text beside it, to
warn when the code changed; the zip format keeps none.

Read the code: `engine/serialization/pickler.py`, NOTE [ Writing data.pkl by hand ].""",
            code=what_a_checkpoint_holds,
            focus=Focus("log", "first save"),
            checks=(
                Check("the data records are exactly the parameters' bytes ({param_bytes} B)",
                      lambda r: r.values["data_bytes"] == r.values["param_bytes"]),
                Check("no source file is in the archive and no model class is named in data.pkl",
                      lambda r: not r.values["has_py"] and "Sequential" not in r.values["globals"]
                      and "Linear" not in r.values["globals"]),
            ),
        ),
        Step(
            title="Names, shapes, and nothing that runs",
            narrative="""\
Loading checks names and shapes, nothing else. Into wider layers:

> {mismatch}

Into a model with other layers:

> {keys}

A pickle can name any function to call while loading: `crafted.pt` is
`weights.pt` with a `data.pkl` that calls `print`. `weights_only=True` (the
default of `torch.load` since PyTorch 2.6, and the only way glassgrad loads)
allows a short list of names and refuses the rest before calling anything:

> {refused}

So a checkpoint from a stranger can give you wrong numbers, but cannot run
code, while a hub directory from a stranger can do anything you can.

Read the code: `engine/serialization/unpickler.py`, NOTE [ Loading without running code ]; `engine/serialization/modules.py`, NOTE [ Saving a whole module ].""",
            code=checkpoint_without_its_code,
            focus=Focus("log", "first load"),
            checks=(
                Check("a shape mismatch is named with both shapes",
                      lambda r: "size mismatch for 0.weight" in r.values["mismatch"]
                      and "[8, 4]" in r.values["mismatch"] and "[16, 4]" in r.values["mismatch"]),
                Check("missing and unexpected keys are listed",
                      lambda r: "Missing key(s)" in r.values["keys"] or "Unexpected key(s)" in r.values["keys"]),
                Check("weights_only refused to call print", lambda r: "print" in r.values["refused"]),
                Check("the temporary hub directory is gone", lambda r: r.values["gone"]),
            ),
        ),
    ),
)

if __name__ == "__main__":
    from lessons._runner import main_for

    raise SystemExit(main_for(LESSON))
