"""A faithful copy of the causal conv3d Wan's VAE uses (diffusers' WanCausalConv3d,
autoencoder_kl_wan.py; Wan 2.1's CausalConv3d), for the tests that build their own blocks
(test_convert, test_distributed); test_video_vaes runs diffusers' own classes."""
import torch
from torch import nn


class WanCausalConv3d(nn.Conv3d):
    """Time padding all before (2 * padding[0]), H/W padding symmetric, as F.pad's list in
    `_padding`; forward(x, cache_x) puts the cached frames in front of x in place of that much
    time padding."""

    def __init__(self, in_channels, out_channels, kernel_size, stride=1, padding=0):
        super().__init__(in_channels=in_channels, out_channels=out_channels,
                         kernel_size=kernel_size, stride=stride, padding=padding)
        self._padding = (self.padding[2], self.padding[2], self.padding[1], self.padding[1],
                         2 * self.padding[0], 0)
        self.padding = (0, 0, 0)

    def forward(self, x, cache_x=None):
        padding = list(self._padding)
        if cache_x is not None and self._padding[4] > 0:
            cache_x = cache_x.to(x.device)
            x = torch.cat([cache_x, x], dim=2)
            padding[4] -= cache_x.shape[2]
        x = torch.nn.functional.pad(x, padding)
        return super().forward(x)
