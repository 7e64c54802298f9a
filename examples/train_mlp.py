"""Train a small classifier on two interleaved spirals, PyTorch style.

This is ordinary PyTorch code: with ``import torch`` in place of the import line below
it runs on PyTorch; with ``import engine as torch`` glassgrad runs it (and
``glassgrad run examples/train_mlp.py`` records every step for the app).
"""
import engine as torch  # `import torch` works the same

nn = torch.nn
DataLoader, TensorDataset = torch.utils.data.DataLoader, torch.utils.data.TensorDataset


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


def main(epochs=60, print_every=10, batch_size=40):
    torch.manual_seed(0)
    x, y = two_spirals()
    loader = DataLoader(TensorDataset(x, y), batch_size=batch_size, shuffle=True)  # 10 batches an epoch
    model = nn.Sequential(
        nn.Linear(2, 64),
        nn.ReLU(),
        nn.Linear(64, 64),
        nn.ReLU(),
        nn.Linear(64, 2),
    )
    loss_fn = nn.CrossEntropyLoss()
    optimizer = torch.optim.Adam(model.parameters(), lr=0.01)

    for epoch in range(epochs + 1):
        if epoch > 0:                      # epoch 0 only reports the untrained model
            for xb, yb in loader:
                optimizer.zero_grad()
                loss = loss_fn(model(xb), yb)
                loss.backward()
                optimizer.step()
        if epoch % print_every == 0:
            with torch.no_grad():
                logits = model(x)
                loss = loss_fn(logits, y).item()
                accuracy = (logits.argmax(dim=1) == y).float().mean().item()
            print(f"epoch {epoch:3d}  loss {loss:.4f}  accuracy {accuracy:.2f}")


if __name__ == "__main__":
    main()
