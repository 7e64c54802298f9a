"""A differential fuzzer: small random programs run on PyTorch and on ``engine``, compared.

    python -m tools.fuzz --cases 30000 --seed 0 [--family F] [--shrink] [--out report.json]

Modules, in reading order:

- ``core``     the choice sequence every random decision is drawn from, and ``Builder``, which turns
               those decisions into a ``Program`` (a few lines of PyTorch-style Python);
- ``families`` / ``families_nn`` / ``families_shape``  the program generators, one per family;
- ``runner``   runs a program's text with ``torch`` bound to PyTorch or to ``engine`` and records a
               backend-neutral ``Result`` (values as NumPy arrays, grad_fn names, errors);
- ``compare``  classifies the disagreements between two results (no PyTorch needed);
- ``shrink``   shortens the choice sequence of a failing case while it keeps failing the same way;
- ``cli``      the command line, the summary table and the JSON report.

PyTorch is imported only by ``runner`` when a case is run, so generation and comparison work (and
are tested, tests/test_fuzz_tool.py) without it. docs/fuzzing.md has the findings.
"""
