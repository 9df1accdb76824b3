"""Parameters, forward FLOPs and saved-activation bytes of the MLPerf 3D U-Net, on CPU.

Run: python benchmarks/unet3d_figures.py  (needs torch). Printed on 2026-11-22 with torch
2.13.0+cpu: params 31,190,243; fwd flops 954,597,376,000; saved bytes fp32 5,134,050,048.
The figures feed presets/models.yaml (unet3d_kits19).
"""

# MLPerf Training 3D U-Net (KiTS19): filters 32,64,128,256,320,320; input 1x128^3; 3 classes.
import torch
from torch import nn
from torch.utils.flop_counter import FlopCounterMode

F = [32, 64, 128, 256, 320, 320]


def block(i, o, s=1):
    return nn.Sequential(nn.Conv3d(i, o, 3, s, 1, bias=False), nn.InstanceNorm3d(o, affine=True), nn.ReLU(inplace=True))


class U(nn.Module):
    def __init__(s):
        super().__init__()
        s.inp = nn.Sequential(block(1, F[0]), block(F[0], F[0]))
        s.down = nn.ModuleList([nn.Sequential(block(F[i], F[i + 1], 2), block(F[i + 1], F[i + 1])) for i in range(5)])
        s.up = nn.ModuleList([nn.ConvTranspose3d(F[i + 1], F[i], 2, 2) for i in reversed(range(5))])
        s.dec = nn.ModuleList([nn.Sequential(block(2 * F[i], F[i]), block(F[i], F[i])) for i in reversed(range(5))])
        s.out = nn.Conv3d(F[0], 3, 1)

    def forward(s, x):
        skips = [s.inp(x)]
        for d in s.down:
            skips.append(d(skips[-1]))
        x = skips.pop()
        for u, d in zip(s.up, s.dec):
            x = d(torch.cat([u(x), skips.pop()], 1))
        return s.out(x)


m = U()
print("params", sum(p.numel() for p in m.parameters()))
x = torch.randn(1, 1, 128, 128, 128)
with FlopCounterMode(display=False) as fc:
    y = m(x)
print("fwd flops", fc.get_total_flops())
saved = [0]


def pack(t):
    saved[0] += t.numel() * t.element_size()
    return t


with torch.autograd.graph.saved_tensors_hooks(pack, lambda t: t):
    y = m(x)
print("saved bytes fp32", saved[0])
