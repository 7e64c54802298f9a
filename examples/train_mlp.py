"""Train a small classifier on two interleaved spirals, PyTorch style.

This is ordinary PyTorch code: with ``import torch`` in place of the import line below
it runs on PyTorch; with ``import engine as torch`` glassgrad runs it (and
``glassgrad run examples/train_mlp.py`` records every step for the app).
"""
import engine as torch  # `import torch` works the same

nn = torch.nn


def two_spirals(n_per_class=200, noise=0.15):
    """Points on two spirals (classes 0 and 1), with Gaussian noise."""
    t = torch.linspace(0.25, 3.0, n_per_class) * 3.14159
    xs, ys = [], []
    for label in (0, 1):
        sign = 1.0 if label == 0 else -1.0
        pts = torch.stack([sign * t * torch.cos(t), sign * t * torch.sin(t)], dim=1) / 5.0
        xs.append(pts + noise * torch.randn(n_per_class, 2))
        ys.append(torch.full((n_per_class,), label, dtype=torch.long))
    return torch.cat(xs), torch.cat(ys)


def main(steps=600, print_every=100):
    torch.manual_seed(0)
    x, y = two_spirals()
    model = nn.Sequential(
        nn.Linear(2, 64),
        nn.ReLU(),
        nn.Linear(64, 64),
        nn.ReLU(),
        nn.Linear(64, 2),
    )
    loss_fn = nn.CrossEntropyLoss()
    optimizer = torch.optim.Adam(model.parameters(), lr=0.01)

    for step in range(steps + 1):
        optimizer.zero_grad()
        logits = model(x)
        loss = loss_fn(logits, y)
        loss.backward()
        optimizer.step()
        if step % print_every == 0:
            with torch.no_grad():
                accuracy = (logits.argmax(dim=1) == y).float().mean().item()
            print(f"step {step:4d}  loss {loss.item():.4f}  accuracy {accuracy:.2f}")


if __name__ == "__main__":
    main()
