"""Small models for the torch.* tests (file specs: tests/torch/example_models.py:FUNCTION)."""
import torch
from torch import nn


class TiedAndShared(nn.Module):
    """A tied weight (dec.weight is enc.weight: named_parameters() lists it once,
    as enc.weight) and a module used twice in one forward (shared)."""

    def __init__(self, width: int = 16):
        super().__init__()
        self.enc = nn.Linear(width, width)
        self.shared = nn.Linear(width, width)
        self.norm = nn.LayerNorm(width)
        self.dec = nn.Linear(width, width, bias=False)
        self.dec.weight = self.enc.weight
        self.scale = nn.Parameter(torch.ones(width))

    def forward(self, x):
        h = torch.relu(self.enc(x))
        h = self.norm(self.shared(h))
        h = self.shared(torch.tanh(h))
        return self.dec(h) * self.scale


def make_tied(width: int = 16) -> nn.Module:
    return TiedAndShared(width)


def make_mlp() -> nn.Module:
    """mlp-tiny: 784-256-128-10 with biases and (not in-place) ReLUs."""
    return nn.Sequential(nn.Linear(784, 256), nn.ReLU(), nn.Linear(256, 128), nn.ReLU(), nn.Linear(128, 10))


def not_a_model():
    return 42
