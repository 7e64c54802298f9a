"""A two-layer graph convolutional network (Kipf & Welling) with a sparse adjacency matrix.

Nodes sit on a ring with a few chords; each node's class is which quarter of the ring it is in.
Run it with ``glassgrad run examples/programs/gcn.py``.
"""
import math

import torch
import torch.nn.functional as F
from torch import nn

num_nodes, num_features, num_classes = 16, 8, 4

# the edges: a ring, plus a chord from every fourth node across the ring
edges = [(i, (i + 1) % num_nodes) for i in range(num_nodes)]
edges += [(i, (i + num_nodes // 2) % num_nodes) for i in range(0, num_nodes, 4)]
edges += [(j, i) for i, j in edges]
edges += [(i, i) for i in range(num_nodes)]                 # self-loops: A + I

# symmetric normalisation D^-1/2 (A + I) D^-1/2, kept sparse
rows = torch.tensor([i for i, _ in edges])
cols = torch.tensor([j for _, j in edges])
degree = torch.zeros(num_nodes).index_add_(0, rows, torch.ones(len(edges)))
values = degree[rows].rsqrt() * degree[cols].rsqrt()
adj = torch.sparse_coo_tensor(torch.stack([rows, cols]), values, (num_nodes, num_nodes)).coalesce()

node = torch.arange(num_nodes, dtype=torch.float32)
features = torch.stack([torch.sin(0.4 * (f + 1) * node + f) for f in range(num_features)], dim=1)
labels = torch.arange(num_nodes) * num_classes // num_nodes


class GraphConvolution(nn.Module):
    def __init__(self, in_features, out_features):
        super().__init__()
        self.weight = nn.Parameter(torch.empty(in_features, out_features))
        self.bias = nn.Parameter(torch.zeros(out_features))

    def forward(self, x, adj):
        support = x @ self.weight
        return torch.sparse.mm(adj, support) + self.bias


class GCN(nn.Module):
    def __init__(self, nfeat, nhid, nclass):
        super().__init__()
        self.gc1 = GraphConvolution(nfeat, nhid)
        self.gc2 = GraphConvolution(nhid, nclass)

    def forward(self, x, adj):
        x = F.relu(self.gc1(x, adj))
        return F.log_softmax(self.gc2(x, adj), dim=1)


def init_weights(model):
    """Fixed starting weights instead of random ones, so every run prints the same losses."""
    with torch.no_grad():
        for k, p in enumerate(model.parameters(), start=1):
            wave = torch.sin(0.37 * torch.arange(p.numel(), dtype=torch.float32) + 0.1 * k)
            p.copy_(wave.reshape(p.shape) / math.sqrt(p.shape[0]))


model = GCN(num_features, 16, num_classes)
init_weights(model)
optimizer = torch.optim.Adam(model.parameters(), lr=0.05, weight_decay=5e-4)

for epoch in range(10):
    optimizer.zero_grad()
    output = model(features, adj)
    loss = F.nll_loss(output, labels)
    loss.backward()
    optimizer.step()
    accuracy = (output.argmax(dim=1) == labels).float().mean().item()
    print(f"epoch {epoch} loss {loss.item():.6f} accuracy {accuracy:.4f}")
