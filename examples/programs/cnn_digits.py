"""A small CNN on synthetic 28x28 "digits", fed by a DataLoader.

Each class is a bright bar at its own angle; the pictures are made from formulas, not downloaded.
Run it with ``glassgrad run examples/programs/cnn_digits.py``.
"""
import math

import torch
import torch.nn.functional as F
from torch import nn
from torch.utils.data import DataLoader, TensorDataset


def make_digits(n, num_classes=4):
    """``n`` 28x28 pictures: class c is a bar through the middle at angle c * pi / num_classes."""
    ys = torch.arange(28, dtype=torch.float32).view(28, 1) - 13.5
    xs = torch.arange(28, dtype=torch.float32).view(1, 28) - 13.5
    images, labels = [], []
    for i in range(n):
        c = i % num_classes
        angle = c * math.pi / num_classes + 0.05 * math.sin(i)
        dist = (xs * math.sin(angle) - ys * math.cos(angle)).abs()
        images.append(torch.exp(-dist * dist / 4.0).unsqueeze(0))
        labels.append(c)
    return torch.stack(images), torch.tensor(labels)


def init_weights(model):
    """Fixed starting weights instead of random ones, so every run prints the same losses."""
    with torch.no_grad():
        for k, p in enumerate(model.parameters(), start=1):
            wave = torch.sin(0.37 * torch.arange(p.numel(), dtype=torch.float32) + 0.1 * k)
            p.copy_(0.5 * wave.reshape(p.shape) / math.sqrt(p[0].numel() if p.dim() > 1 else p.numel()))


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(1, 4, 5)
        self.pool = nn.MaxPool2d(2, 2)
        self.conv2 = nn.Conv2d(4, 8, 5)
        self.fc1 = nn.Linear(8 * 4 * 4, 32)
        self.fc2 = nn.Linear(32, 4)

    def forward(self, x):
        x = self.pool(F.relu(self.conv1(x)))
        x = self.pool(F.relu(self.conv2(x)))
        x = torch.flatten(x, 1)
        x = F.relu(self.fc1(x))
        return self.fc2(x)


images, labels = make_digits(32)
loader = DataLoader(TensorDataset(images, labels), batch_size=8, shuffle=False)
net = Net()
init_weights(net)
criterion = nn.CrossEntropyLoss()
optimizer = torch.optim.SGD(net.parameters(), lr=0.1, momentum=0.9)

for epoch in range(4):
    running_loss = 0.0
    for inputs, targets in loader:
        optimizer.zero_grad()
        loss = criterion(net(inputs), targets)
        loss.backward()
        optimizer.step()
        running_loss += loss.item()
    print(f"epoch {epoch} loss {running_loss / len(loader):.6f}")

with torch.no_grad():
    correct = (net(images).argmax(dim=1) == labels).sum().item()
print(f"accuracy {correct}/{len(labels)}")
