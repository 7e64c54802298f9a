"""Regenerate tests/tui/fixtures/mlp_trace.jsonl: a small MLP's forward, backward and second pass.

Run from the repository root: ``python tests/tui/make_fixture.py``. The file is
committed so the app's tests and snapshots do not change when the engine does.
"""
import os

import engine as torch
import engine.nn.functional as F
from engine import nn

HERE = os.path.dirname(os.path.abspath(__file__))


def main():
    torch.manual_seed(0)
    with torch.record(example="mlp") as tr:
        model = nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Linear(16, 4))
        x = torch.randn(5, 8)
        target = torch.randint(0, 4, (5,))
        loss = F.cross_entropy(model(x), target)
        loss.backward()
        del loss
    tr.meta = {"example": "mlp"}
    for e in tr.events:  # no absolute paths in a committed file
        if e.get("file"):
            e["file"] = os.path.basename(e["file"])
    tr.save(os.path.join(HERE, "fixtures", "mlp_trace.jsonl"))


if __name__ == "__main__":
    main()
