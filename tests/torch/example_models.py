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


def make_grouped_convs(width: int = 8) -> nn.Module:
    """A 1x1 conv (its input needs no gradient), a depthwise 3x3 conv
    (groups = channels), a grouped 3x3 conv (groups 4) and a grouped
    transposed conv (groups 2): the closed forms of torch.conv_flops."""
    return nn.Sequential(nn.Conv2d(4, width, 1), nn.Conv2d(width, width, 3, padding=1, groups=width),
                         nn.Conv2d(width, 2 * width, 3, padding=1, groups=4),
                         nn.ConvTranspose2d(2 * width, width, 2, stride=2, groups=2))
