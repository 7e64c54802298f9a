"""Loading a big trace makes ~100k dicts at once; the cyclic GC would rescan them many times over.

NOTE [ GC while loading ]
1. ``paused_gc()`` turns the cyclic collector off while a trace is read and its
   model built (reference counting still frees everything as usual).
2. The real app then calls ``gc.freeze()`` (``freeze=True``) so the loaded
   events, which live as long as the app, are left out of later collections.
   `glassgrad view` makes an opened trace's model inside that block too (the model
   is kept on the trace, ``trace.model``), so a million-event model is never
   scanned by a collection. Tests never freeze: a frozen cycle would never be
   collected in their process.
3. A model that grows while the app runs is kept out the same way: a first open turns
   the collector off until the file is read (NOTE [ A first open ] rule 7), and
   `glassgrad run` freezes what it folded in after each batch it follows.
"""
from __future__ import annotations

import gc
from contextlib import contextmanager


@contextmanager
def paused_gc(freeze: bool = False):
    was = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if freeze:
            gc.freeze()
        if was:
            gc.enable()
