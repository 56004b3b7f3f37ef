"""The 3-block model the big-stack fixture scripts train (make_zero_checkpoints.py, make_dcp_checkpoints.py).

Parameter names `embed.*`, `layers.{0,1,2}.{weight,bias}`, `head.*`: `layers.N` are the blocks.
"""
from __future__ import annotations

import torch


class Tiny(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.embed = torch.nn.Linear(6, 8)
        self.layers = torch.nn.ModuleList(torch.nn.Linear(8, 8) for _ in range(3))
        self.head = torch.nn.Linear(8, 4)

    def forward(self, x):
        x = self.embed(x)
        for layer in self.layers:
            x = torch.tanh(layer(x))
        return self.head(x)
