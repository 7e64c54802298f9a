"""Training with an LR scheduler, saving a checkpoint with ``torch.save`` and resuming from it.

The first run trains 6 epochs and saves model, optimizer and scheduler; a fresh model then
loads the checkpoint and trains 6 more. Run it with
``glassgrad run examples/programs/lr_schedule_checkpoint.py``.
"""
import math
import os
import tempfile

import torch
from torch import nn
from torch.optim.lr_scheduler import StepLR

x = torch.linspace(-2.0, 2.0, 64).unsqueeze(1)
y = torch.sin(2.0 * x) + 0.3 * x


def make_model():
    return nn.Sequential(nn.Linear(1, 32), nn.Tanh(), nn.Linear(32, 1))


def init_weights(model):
    """Fixed starting weights instead of random ones, so every run prints the same losses."""
    with torch.no_grad():
        for k, p in enumerate(model.parameters(), start=1):
            wave = torch.sin(0.37 * torch.arange(p.numel(), dtype=torch.float32) + 0.1 * k)
            p.copy_(wave.reshape(p.shape) / math.sqrt(p.shape[-1]))


def train(model, optimizer, scheduler, epochs, first_epoch):
    loss_fn = nn.MSELoss()
    for epoch in range(first_epoch, first_epoch + epochs):
        optimizer.zero_grad()
        loss = loss_fn(model(x), y)
        loss.backward()
        optimizer.step()
        scheduler.step()
        print(f"epoch {epoch} loss {loss.item():.6f} lr {scheduler.get_last_lr()[0]:.4f}")


model = make_model()
init_weights(model)
optimizer = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
scheduler = StepLR(optimizer, step_size=3, gamma=0.5)
train(model, optimizer, scheduler, 6, 0)

path = os.path.join(tempfile.mkdtemp(), "checkpoint.pt")
torch.save({"epoch": 6, "model": model.state_dict(), "optimizer": optimizer.state_dict(),
            "scheduler": scheduler.state_dict()}, path)

checkpoint = torch.load(path)
resumed = make_model()
resumed.load_state_dict(checkpoint["model"])
optimizer = torch.optim.SGD(resumed.parameters(), lr=0.05, momentum=0.9)
optimizer.load_state_dict(checkpoint["optimizer"])
scheduler = StepLR(optimizer, step_size=3, gamma=0.5)
scheduler.load_state_dict(checkpoint["scheduler"])
print(f"resumed at epoch {checkpoint['epoch']}")
train(resumed, optimizer, scheduler, 6, checkpoint["epoch"])
