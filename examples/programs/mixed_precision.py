"""A mixed-precision training loop: ``torch.autocast`` (bfloat16 on the CPU) and a ``GradScaler``.

Under autocast the linear layers run in bfloat16 while the loss stays in float32; the scaler
multiplies the loss before backward and divides the gradients before the step. Run it with
``glassgrad run examples/programs/mixed_precision.py``.
"""
import math

import torch
from torch import nn

i = torch.arange(64, dtype=torch.float32)
inputs = torch.stack([torch.sin(0.7 * i), torch.cos(1.3 * i)], dim=1)
targets = (inputs[:, 0] + 0.5 * inputs[:, 1] > 0).long()          # which side of a line each point is

model = nn.Sequential(nn.Linear(2, 32), nn.ReLU(), nn.Linear(32, 32), nn.ReLU(), nn.Linear(32, 2))
with torch.no_grad():                      # fixed starting weights, so every run prints the same losses
    for k, p in enumerate(model.parameters(), start=1):
        wave = torch.sin(0.37 * torch.arange(p.numel(), dtype=torch.float32) + 0.1 * k)
        p.copy_(wave.reshape(p.shape) / math.sqrt(p.shape[-1]))

loss_fn = nn.CrossEntropyLoss()
optimizer = torch.optim.SGD(model.parameters(), lr=0.5)
scaler = torch.amp.GradScaler("cpu")

for step in range(10):
    optimizer.zero_grad()
    with torch.autocast("cpu", dtype=torch.bfloat16):
        output = model(inputs)
        loss = loss_fn(output, targets)
    scaler.scale(loss).backward()
    scaler.step(optimizer)
    scaler.update()
    print(f"step {step} loss {loss.item():.6f} ({output.dtype}, {loss.dtype})")
