"""Train the XOR MLP of hubconf.py and write its state_dict to xor_mlp.pt with engine.save.

Run from the repository root:  python examples/hub/make_weights.py
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import engine as torch  # noqa: E402
import hubconf  # noqa: E402


def train(steps=300):
    torch.manual_seed(0)
    x = torch.tensor([[0.0, 0.0], [0.0, 1.0], [1.0, 0.0], [1.0, 1.0]])
    y = torch.tensor([0, 1, 1, 0])
    model = hubconf.xor_mlp(pretrained=False)
    opt = torch.optim.Adam(model.parameters(), lr=0.05)
    loss_fn = torch.nn.CrossEntropyLoss()
    for _ in range(steps):
        opt.zero_grad()
        loss = loss_fn(model(x), y)
        loss.backward()
        opt.step()
    return model, loss.item()


if __name__ == "__main__":
    model, loss = train()
    torch.save(model.state_dict(), hubconf.WEIGHTS)
    print(f"final loss {loss:.5f}; wrote {hubconf.WEIGHTS} ({os.path.getsize(hubconf.WEIGHTS)} bytes)")
