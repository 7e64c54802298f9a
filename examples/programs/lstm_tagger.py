"""An LSTM part-of-speech tagger, the shape of PyTorch's sequence-models tutorial.

Run it with ``glassgrad run examples/programs/lstm_tagger.py``: inside the run ``import torch`` is glassgrad.
"""
import math

import torch
import torch.nn.functional as F
from torch import nn, optim

training_data = [
    (["The", "dog", "ate", "the", "apple"], ["DET", "NN", "V", "DET", "NN"]),
    (["Everybody", "read", "that", "book"], ["NN", "V", "DET", "NN"]),
]
word_to_ix = {}
for sent, tags in training_data:
    for word in sent:
        if word not in word_to_ix:
            word_to_ix[word] = len(word_to_ix)
tag_to_ix = {"DET": 0, "NN": 1, "V": 2}

EMBEDDING_DIM = 6
HIDDEN_DIM = 6


def prepare_sequence(seq, to_ix):
    idxs = [to_ix[w] for w in seq]
    return torch.tensor(idxs, dtype=torch.long)


def init_weights(model):
    """Fixed starting weights instead of random ones, so every run prints the same losses."""
    with torch.no_grad():
        for k, p in enumerate(model.parameters(), start=1):
            wave = torch.sin(0.37 * torch.arange(p.numel(), dtype=torch.float32) + 0.1 * k)
            p.copy_(0.5 * wave.reshape(p.shape) / math.sqrt(p.shape[-1]))


class LSTMTagger(nn.Module):
    def __init__(self, embedding_dim, hidden_dim, vocab_size, tagset_size):
        super().__init__()
        self.hidden_dim = hidden_dim
        self.word_embeddings = nn.Embedding(vocab_size, embedding_dim)
        self.lstm = nn.LSTM(embedding_dim, hidden_dim)
        self.hidden2tag = nn.Linear(hidden_dim, tagset_size)

    def forward(self, sentence):
        embeds = self.word_embeddings(sentence)
        lstm_out, _ = self.lstm(embeds.view(len(sentence), 1, -1))
        tag_space = self.hidden2tag(lstm_out.view(len(sentence), -1))
        tag_scores = F.log_softmax(tag_space, dim=1)
        return tag_scores


model = LSTMTagger(EMBEDDING_DIM, HIDDEN_DIM, len(word_to_ix), len(tag_to_ix))
init_weights(model)
loss_function = nn.NLLLoss()
optimizer = optim.SGD(model.parameters(), lr=2.0)

for epoch in range(20):
    total = 0.0
    for sentence, tags in training_data:
        model.zero_grad()
        sentence_in = prepare_sequence(sentence, word_to_ix)
        targets = prepare_sequence(tags, tag_to_ix)
        tag_scores = model(sentence_in)
        loss = loss_function(tag_scores, targets)
        loss.backward()
        optimizer.step()
        total += loss.item()
    print(f"epoch {epoch} loss {total / len(training_data):.6f}")

with torch.no_grad():
    inputs = prepare_sequence(training_data[0][0], word_to_ix)
    print("predicted tags:", model(inputs).argmax(dim=1).tolist())
