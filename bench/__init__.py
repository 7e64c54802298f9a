"""glassgrad's benchmarks (DESIGN.md section 7): ``python -m bench [section ...]``.

Each section is a module in this package that registers itself with
``@registry.section(...)``; ``python -m bench`` imports them all and prints one table.
Benchmarks are never part of the test suite's pass/fail.
"""
