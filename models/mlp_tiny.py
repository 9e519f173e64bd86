"""mlp-tiny, the bundled test model: a 784-256-128-10 MLP with biases and
(not in-place) ReLUs, for a flattened 28x28 image. Exported by
models/export_zoo.py (`gradwire model export models/mlp_tiny.py:make_model`)."""
import torch
from torch import nn


class MlpTiny(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(784, 256)
        self.fc2 = nn.Linear(256, 128)
        self.fc3 = nn.Linear(128, 10)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.fc3(torch.relu(self.fc2(torch.relu(self.fc1(x)))))


def make_model() -> nn.Module:
    return MlpTiny()
