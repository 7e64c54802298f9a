"""A variational autoencoder on 8x8 pictures of soft blobs.

The reparameterisation noise is a fixed table instead of ``torch.randn_like``, so every run
prints the same losses. Run it with ``glassgrad run examples/programs/vae.py``.
"""
import math

import torch
import torch.nn.functional as F
from torch import nn

n, side, latent = 24, 8, 2
grid = torch.arange(side, dtype=torch.float32)
cy = 2.0 + 4.0 * (0.5 + 0.5 * torch.sin(1.3 * torch.arange(n, dtype=torch.float32)))
cx = 2.0 + 4.0 * (0.5 + 0.5 * torch.cos(0.7 * torch.arange(n, dtype=torch.float32)))
blobs = torch.exp(-((grid.view(1, side, 1) - cy.view(n, 1, 1)) ** 2
                    + (grid.view(1, 1, side) - cx.view(n, 1, 1)) ** 2) / 3.0)
data = blobs.view(n, side * side)
noise = torch.sin(2.1 * torch.arange(n * latent, dtype=torch.float32)).view(n, latent)


class VAE(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(side * side, 32)
        self.fc21 = nn.Linear(32, latent)
        self.fc22 = nn.Linear(32, latent)
        self.fc3 = nn.Linear(latent, 32)
        self.fc4 = nn.Linear(32, side * side)

    def encode(self, x):
        h1 = F.relu(self.fc1(x))
        return self.fc21(h1), self.fc22(h1)

    def reparameterize(self, mu, logvar, eps):
        std = torch.exp(0.5 * logvar)
        return mu + eps * std

    def decode(self, z):
        h3 = F.relu(self.fc3(z))
        return torch.sigmoid(self.fc4(h3))

    def forward(self, x, eps):
        mu, logvar = self.encode(x)
        z = self.reparameterize(mu, logvar, eps)
        return self.decode(z), mu, logvar


def loss_function(recon_x, x, mu, logvar):
    bce = F.binary_cross_entropy(recon_x, x, reduction="sum")
    kld = -0.5 * torch.sum(1 + logvar - mu.pow(2) - logvar.exp())
    return bce + kld


def init_weights(model):
    """Fixed starting weights instead of random ones, so every run prints the same losses."""
    with torch.no_grad():
        for k, p in enumerate(model.parameters(), start=1):
            wave = torch.sin(0.37 * torch.arange(p.numel(), dtype=torch.float32) + 0.1 * k)
            p.copy_(wave.reshape(p.shape) / math.sqrt(p.shape[-1]))


model = VAE()
init_weights(model)
optimizer = torch.optim.Adam(model.parameters(), lr=1e-2)

model.train()
for epoch in range(8):
    optimizer.zero_grad()
    recon_batch, mu, logvar = model(data, noise)
    loss = loss_function(recon_batch, data, mu, logvar)
    loss.backward()
    optimizer.step()
    print(f"epoch {epoch} loss {loss.item() / n:.6f}")
