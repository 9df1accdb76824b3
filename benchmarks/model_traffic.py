"""Training FLOPs and memory traffic per example and per step of every preset model.

    python3 benchmarks/model_traffic.py OUT_DIR [--models a,b] [--smoke]

Runs ``calc.measure.model`` (FlopCounterMode + an aten-op byte counter over one full training
step: forward, backward, optimizer step) on each model of presets/models.yaml, in fp32 and
bf16 autocast ("mixed"), at two batch sizes, and writes OUT_DIR/model_traffic.json. Use a CUDA
device (the default when there is one): the aten ops, and so the bytes, depend on the
backend (on a CPU, scaled_dot_product_attention runs its math path and materialises the
attention matrix; on an H100 it runs flash attention).

Models: torchvision resnet18/50/101/152, vit_b_16, efficientnet_b0; transformers
BertForMaskedLM (seq 512); the MLPerf KiTS19 3D U-Net (written out here, as in
benchmarks/unet3d_figures.py); YOLOv5s (written out here from ultralytics' yolov5s.yaml,
v6 layout - there is no ultralytics package on the machine; the loss is a stand-in, the sum
of the three head outputs); the GPTs as transformers GPT2LMHeadModel (gpt_1b) and
LlamaForCausalLM (gpt_7b). A GPT's layers are identical, so every count is linear in the
number of layers: the GPTs are measured at 1 and 2 layers (and gpt_1b at 3, as a check) and
extrapolated to 24 / 32 layers, which keeps gpt_7b's AdamW state off the GPU.
Optimizers: SGD momentum for the convnets and ViT (as presets/calibration.yaml's H100 run),
AdamW for BERT and the GPTs (ViT is also measured with AdamW, as ``vit_b16_adamw``).
"""

from __future__ import annotations

import argparse
import gc
import json
import platform
import sys
import time
from pathlib import Path
from typing import Any

import torch
from torch import nn
from torch.nn import functional as F  # noqa: N812

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from calc import measure

# ------------------------------------------------------------------ models written out here


class WithLoss(nn.Module):
    """Classifier + cross-entropy: the module returns the loss the probe backpropagates."""

    def __init__(self, net: nn.Module) -> None:
        super().__init__()
        self.net = net

    def forward(self, x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
        out = self.net(x)
        return F.cross_entropy(out.float(), y)


UNET_F = [32, 64, 128, 256, 320, 320]


def _ublock(i: int, o: int, s: int = 1) -> nn.Module:
    return nn.Sequential(nn.Conv3d(i, o, 3, s, 1, bias=False), nn.InstanceNorm3d(o, affine=True), nn.ReLU(inplace=True))


class UNet3D(nn.Module):
    """MLPerf Training 3D U-Net (KiTS19): filters 32-64-128-256-320-320, 1 input channel, 3 classes."""

    def __init__(self) -> None:
        super().__init__()
        f = UNET_F
        self.inp = nn.Sequential(_ublock(1, f[0]), _ublock(f[0], f[0]))
        self.down = nn.ModuleList(
            [nn.Sequential(_ublock(f[i], f[i + 1], 2), _ublock(f[i + 1], f[i + 1])) for i in range(5)]
        )
        self.up = nn.ModuleList([nn.ConvTranspose3d(f[i + 1], f[i], 2, 2) for i in reversed(range(5))])
        self.dec = nn.ModuleList(
            [nn.Sequential(_ublock(2 * f[i], f[i]), _ublock(f[i], f[i])) for i in reversed(range(5))]
        )
        self.out = nn.Conv3d(f[0], 3, 1)

    def forward(self, x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
        skips = [self.inp(x)]
        for d in self.down:
            skips.append(d(skips[-1]))
        x = skips.pop()
        for u, d in zip(self.up, self.dec, strict=True):
            x = d(torch.cat([u(x), skips.pop()], 1))
        return F.cross_entropy(self.out(x).float(), y)  # the reference adds a Dice term (element-wise, small)


class Conv(nn.Module):
    """YOLOv5 Conv: conv (no bias) + BatchNorm + SiLU."""

    def __init__(self, c1: int, c2: int, k: int = 1, s: int = 1, p: int | None = None) -> None:
        super().__init__()
        self.conv = nn.Conv2d(c1, c2, k, s, k // 2 if p is None else p, bias=False)
        self.bn = nn.BatchNorm2d(c2, eps=0.001, momentum=0.03)
        self.act = nn.SiLU(inplace=True)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.act(self.bn(self.conv(x)))


class Bottleneck(nn.Module):
    def __init__(self, c1: int, c2: int, shortcut: bool = True) -> None:
        super().__init__()
        self.cv1 = Conv(c1, c2, 1)
        self.cv2 = Conv(c2, c2, 3)
        self.add = shortcut and c1 == c2

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y = self.cv2(self.cv1(x))
        return x + y if self.add else y


class C3(nn.Module):
    def __init__(self, c1: int, c2: int, n: int = 1, shortcut: bool = True) -> None:
        super().__init__()
        c_ = c2 // 2
        self.cv1, self.cv2, self.cv3 = Conv(c1, c_), Conv(c1, c_), Conv(2 * c_, c2)
        self.m = nn.Sequential(*(Bottleneck(c_, c_, shortcut) for _ in range(n)))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.cv3(torch.cat((self.m(self.cv1(x)), self.cv2(x)), 1))


class SPPF(nn.Module):
    def __init__(self, c1: int, c2: int, k: int = 5) -> None:
        super().__init__()
        c_ = c1 // 2
        self.cv1, self.cv2 = Conv(c1, c_), Conv(c_ * 4, c2)
        self.m = nn.MaxPool2d(k, 1, k // 2)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = self.cv1(x)
        y1 = self.m(x)
        y2 = self.m(y1)
        return self.cv2(torch.cat((x, y1, y2, self.m(y2)), 1))


class YOLOv5s(nn.Module):
    """ultralytics yolov5s.yaml (v6.0+: 6x6 stem conv, SPPF), depth 0.33, width 0.50, 80 classes."""

    def __init__(self, nc: int = 80) -> None:
        super().__init__()
        self.b = nn.ModuleList(
            [
                Conv(3, 32, 6, 2, 2),  # 0 P1/2
                Conv(32, 64, 3, 2),  # 1 P2/4
                C3(64, 64, 1),
                Conv(64, 128, 3, 2),  # 3 P3/8
                C3(128, 128, 2),  # 4
                Conv(128, 256, 3, 2),  # 5 P4/16
                C3(256, 256, 3),  # 6
                Conv(256, 512, 3, 2),  # 7 P5/32
                C3(512, 512, 1),
                SPPF(512, 512, 5),  # 9
            ]
        )
        self.h10 = Conv(512, 256, 1, 1)
        self.h13 = C3(512, 256, 1, False)
        self.h14 = Conv(256, 128, 1, 1)
        self.h17 = C3(256, 128, 1, False)
        self.h18 = Conv(128, 128, 3, 2)
        self.h20 = C3(256, 256, 1, False)
        self.h21 = Conv(256, 256, 3, 2)
        self.h23 = C3(512, 512, 1, False)
        self.detect = nn.ModuleList(nn.Conv2d(c, 3 * (nc + 5), 1) for c in (128, 256, 512))
        self.up = nn.Upsample(None, 2, "nearest")

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        feats = []
        for m in self.b:
            x = m(x)
            feats.append(x)
        p4, p3 = feats[6], feats[4]
        x10 = self.h10(x)
        x13 = self.h13(torch.cat((self.up(x10), p4), 1))
        x14 = self.h14(x13)
        x17 = self.h17(torch.cat((self.up(x14), p3), 1))
        x20 = self.h20(torch.cat((self.h18(x17), x14), 1))
        x23 = self.h23(torch.cat((self.h21(x20), x10), 1))
        outs = [d(f) for d, f in zip(self.detect, (x17, x20, x23), strict=True)]
        # Stand-in loss (the real one matches anchors to targets; element-wise, small next to the convs).
        return sum(o.float().square().mean() for o in outs)  # type: ignore[return-value]


# ----------------------------------------------- workload models written out here (meta device)
#
# For the "Checkpoints and today's workloads" presets (presets/models.yaml llama3_8b,
# clip_vitl14, vivit_b16x2). Written out so they run on the meta device with no transformers,
# timm or torchvision: FLOPs and bytes need only shapes and dtypes. autocast has no meta
# backend, so "mixed" is emulated by hand the way bf16 autocast runs these ops: matmuls and
# convolutions cast their inputs (weights included) to bf16 and return bf16; LayerNorm,
# RMSNorm (upcast, as transformers' LlamaRMSNorm), softmax and the loss run in fp32;
# element-wise ops run in their inputs' dtype; fp32 master weights, AdamW. Attention is the
# fused kernel an H100 runs (no s x s matrix): aten._scaled_dot_product_efficient_attention
# for fp32, aten._scaled_dot_product_flash_attention for bf16.


class Emu:
    """Precision of the hand-written modules: None = fp32, torch.bfloat16 = emulated autocast."""

    dtype: Any = None


def _lin(x: torch.Tensor, m: nn.Linear) -> torch.Tensor:
    if Emu.dtype is None:
        return F.linear(x, m.weight, m.bias)
    d = Emu.dtype
    return F.linear(x.to(d), m.weight.to(d), None if m.bias is None else m.bias.to(d))


def _attn(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, causal: bool) -> torch.Tensor:
    """(B, H, S, D) fused attention, no s x s matrix (the kernel an H100 runs)."""
    if Emu.dtype is None:
        return torch.ops.aten._scaled_dot_product_efficient_attention(q, k, v, None, True, is_causal=causal)[0]
    d = Emu.dtype
    return torch.ops.aten._scaled_dot_product_flash_attention(q.to(d), k.to(d), v.to(d), is_causal=causal)[0]


def _ln(x: torch.Tensor, m: nn.LayerNorm) -> torch.Tensor:
    return F.layer_norm(x.float(), m.normalized_shape, m.weight, m.bias, m.eps)


class RMSNorm(nn.Module):
    def __init__(self, d: int, eps: float = 1e-5) -> None:
        super().__init__()
        self.weight = nn.Parameter(torch.ones(d))
        self.eps = eps

    def forward(self, x: torch.Tensor) -> torch.Tensor:  # transformers LlamaRMSNorm
        dt = x.dtype
        h = x.float()
        h = h * torch.rsqrt(h.pow(2).mean(-1, keepdim=True) + self.eps)
        return self.weight * h.to(dt)


def _rope(x: torch.Tensor, cos: torch.Tensor, sin: torch.Tensor) -> torch.Tensor:
    x1, x2 = x[..., : x.shape[-1] // 2], x[..., x.shape[-1] // 2 :]
    return x * cos + torch.cat((-x2, x1), -1) * sin


class LlamaLayer(nn.Module):
    """transformers LlamaDecoderLayer: RMSNorm, GQA attention with RoPE, RMSNorm, SwiGLU MLP."""

    def __init__(self, d: int, ff: int, heads: int, kv: int) -> None:
        super().__init__()
        self.h, self.kv, self.hd = heads, kv, d // heads
        self.n1, self.n2 = RMSNorm(d), RMSNorm(d)
        self.q = nn.Linear(d, d, bias=False)
        self.k = nn.Linear(d, kv * self.hd, bias=False)
        self.v = nn.Linear(d, kv * self.hd, bias=False)
        self.o = nn.Linear(d, d, bias=False)
        self.gate = nn.Linear(d, ff, bias=False)
        self.up = nn.Linear(d, ff, bias=False)
        self.down = nn.Linear(ff, d, bias=False)

    def forward(self, x: torch.Tensor, cos: torch.Tensor, sin: torch.Tensor) -> torch.Tensor:
        b, s, _ = x.shape
        h = self.n1(x)
        q = _lin(h, self.q).view(b, s, self.h, self.hd).transpose(1, 2)
        k = _lin(h, self.k).view(b, s, self.kv, self.hd).transpose(1, 2)
        v = _lin(h, self.v).view(b, s, self.kv, self.hd).transpose(1, 2)
        q, k = _rope(q, cos, sin), _rope(k, cos, sin)
        rep = self.h // self.kv  # transformers repeat_kv: expand + reshape (a copy)
        k = k[:, :, None].expand(b, self.kv, rep, s, self.hd).reshape(b, self.h, s, self.hd)
        v = v[:, :, None].expand(b, self.kv, rep, s, self.hd).reshape(b, self.h, s, self.hd)
        a = _attn(q, k, v, True).transpose(1, 2).reshape(b, s, -1)
        x = x + _lin(a, self.o)
        h = self.n2(x)
        return x + _lin(F.silu(_lin(h, self.gate)) * _lin(h, self.up), self.down)


class Llama(nn.Module):
    """Llama 3 decoder (untied embeddings) + next-token cross-entropy."""

    def __init__(self, layers: int, d: int, ff: int, heads: int, kv: int, vocab: int, theta: float) -> None:
        super().__init__()
        self.embed = nn.Embedding(vocab, d)
        self.layers = nn.ModuleList(LlamaLayer(d, ff, heads, kv) for _ in range(layers))
        self.norm = RMSNorm(d)
        self.head = nn.Linear(d, vocab, bias=False)
        self.hd, self.theta = d // heads, theta

    def forward(self, input_ids: torch.Tensor, labels: torch.Tensor) -> torch.Tensor:
        s = input_ids.shape[1]
        inv = 1.0 / (self.theta ** (torch.arange(0, self.hd, 2, device=input_ids.device).float() / self.hd))
        f = torch.outer(torch.arange(s, device=input_ids.device).float(), inv)
        emb = torch.cat((f, f), -1)
        dt = Emu.dtype or torch.float32
        cos, sin = emb.cos().to(dt), emb.sin().to(dt)
        x = self.embed(input_ids)
        for layer in self.layers:
            x = layer(x, cos, sin)
        logits = _lin(self.norm(x), self.head)
        return F.cross_entropy(logits.float().flatten(0, 1), labels.flatten())


class ViTBlock(nn.Module):
    """Pre-LN transformer block (CLIP / ViT / ViViT): LN, MHA with biases, LN, GELU MLP."""

    def __init__(self, d: int, heads: int, mlp: int) -> None:
        super().__init__()
        self.h = heads
        self.n1, self.n2 = nn.LayerNorm(d), nn.LayerNorm(d)
        self.qkv = nn.Linear(d, 3 * d)
        self.o = nn.Linear(d, d)
        self.fc1, self.fc2 = nn.Linear(d, mlp), nn.Linear(mlp, d)

    def forward(self, x: torch.Tensor, causal: bool = False) -> torch.Tensor:
        b, s, d = x.shape
        q, k, v = _lin(_ln(x, self.n1), self.qkv).view(b, s, 3, self.h, d // self.h).permute(2, 0, 3, 1, 4)
        a = _attn(q, k, v, causal).transpose(1, 2).reshape(b, s, d)
        x = x + _lin(a, self.o)
        return x + _lin(F.gelu(_lin(_ln(x, self.n2), self.fc1)), self.fc2)


def _conv(x: torch.Tensor, m: nn.Module) -> torch.Tensor:
    d = Emu.dtype
    if d is None:
        return m(x)
    fn = F.conv2d if isinstance(m, nn.Conv2d) else F.conv3d
    return fn(x.to(d), m.weight.to(d), None if m.bias is None else m.bias.to(d), m.stride)


class CLIP(nn.Module):
    """OpenCLIP ViT-L-14 (224 px, patch 14, width 1024, 24 layers, 16 heads; text 12 layers,
    width 768, 12 heads, context 77, vocab 49408; embed 768) + the symmetric contrastive loss."""

    def __init__(
        self,
        vl: int = 24,
        vd: int = 1024,
        vh: int = 16,
        tl: int = 12,
        td: int = 768,
        th: int = 12,
        embed: int = 768,
        img: int = 224,
        patch: int = 14,
        ctx: int = 77,
        vocab: int = 49408,
    ) -> None:
        super().__init__()
        n = (img // patch) ** 2 + 1
        self.conv = nn.Conv2d(3, vd, patch, patch, bias=False)
        self.cls = nn.Parameter(torch.zeros(vd))
        self.vpos = nn.Parameter(torch.zeros(n, vd))
        self.ln_pre, self.ln_post = nn.LayerNorm(vd), nn.LayerNorm(vd)
        self.vblocks = nn.ModuleList(ViTBlock(vd, vh, 4 * vd) for _ in range(vl))
        self.vproj = nn.Linear(vd, embed, bias=False)
        self.tok = nn.Embedding(vocab, td)
        self.tpos = nn.Parameter(torch.zeros(ctx, td))
        self.tblocks = nn.ModuleList(ViTBlock(td, th, 4 * td) for _ in range(tl))
        self.ln_final = nn.LayerNorm(td)
        self.tproj = nn.Linear(td, embed, bias=False)
        self.logit_scale = nn.Parameter(torch.ones([]))

    def forward(self, image: torch.Tensor, text: torch.Tensor) -> torch.Tensor:
        x = _conv(image, self.conv).flatten(2).transpose(1, 2)
        x = torch.cat([self.cls.to(x.dtype).expand(x.shape[0], 1, -1), x], 1) + self.vpos
        x = _ln(x, self.ln_pre)
        for blk in self.vblocks:
            x = blk(x)
        img = _lin(_ln(x[:, 0], self.ln_post), self.vproj)
        t = self.tok(text) + self.tpos
        for blk in self.tblocks:
            t = blk(t, causal=True)
        t = _ln(t, self.ln_final)
        txt = _lin(t[torch.arange(t.shape[0], device=t.device), text.argmax(-1)], self.tproj)
        img, txt = F.normalize(img.float(), dim=-1), F.normalize(txt.float(), dim=-1)
        logits = self.logit_scale.exp() * img @ txt.t()
        lab = torch.arange(logits.shape[0], device=logits.device)
        return (F.cross_entropy(logits, lab) + F.cross_entropy(logits.t(), lab)) / 2


class ViViT(nn.Module):
    """ViViT-B/16x2, model 1 (spatio-temporal attention), as transformers VivitConfig's defaults:
    32 frames of 224 px, tubelets 2x16x16 (3136 tokens + CLS), width 768, 12 layers, 12 heads,
    MLP 3072, 400 classes (Kinetics-400)."""

    def __init__(
        self,
        frames: int = 32,
        img: int = 224,
        tub: tuple[int, int, int] = (2, 16, 16),
        d: int = 768,
        layers: int = 12,
        heads: int = 12,
        mlp: int = 3072,
        classes: int = 400,
    ) -> None:
        super().__init__()
        n = (frames // tub[0]) * (img // tub[1]) * (img // tub[2]) + 1
        self.conv = nn.Conv3d(3, d, tub, tub)
        self.cls = nn.Parameter(torch.zeros(d))
        self.pos = nn.Parameter(torch.zeros(n, d))
        self.blocks = nn.ModuleList(ViTBlock(d, heads, mlp) for _ in range(layers))
        self.norm = nn.LayerNorm(d)
        self.head = nn.Linear(d, classes)

    def forward(self, video: torch.Tensor, label: torch.Tensor) -> torch.Tensor:
        x = _conv(video.permute(0, 2, 1, 3, 4), self.conv).flatten(2).transpose(1, 2)  # (B, T, C, H, W) in
        x = torch.cat([self.cls.to(x.dtype).expand(x.shape[0], 1, -1), x], 1) + self.pos
        for blk in self.blocks:
            x = blk(x)
        return F.cross_entropy(_lin(_ln(x[:, 0], self.norm), self.head).float(), label)


def build_workload_specs(smoke: bool) -> dict[str, dict[str, Any]]:
    """The workload models (meta device), as build_specs."""
    seq = 256 if smoke else 8192

    def llama(layers: int) -> Any:
        d, ff, h, kv, vocab = (256, 896, 4, 1, 1024) if smoke else (4096, 14336, 32, 8, 128256)
        return Llama(layers, d, ff, h, kv, vocab, 500000.0)

    def tokens() -> Any:
        vocab = 1024 if smoke else 128256
        ids = torch.randint(0, vocab, (1, seq))
        return (ids, ids.clone())

    frames, img = (4, 32) if smoke else (32, 224)
    return {
        "llama3_8b": {
            "layered": llama,
            "layers": 32,
            "probe_layers": (1, 2),
            "input": tokens,
            "optimizer": "adamw",
            "batch_sizes": (1, 2),
            "definition": "Llama 3 8B written out in benchmarks/model_traffic.py "
            "(32 layers, d 4096, ff 14336, 32 heads, "
            "8 KV heads, vocab 128256, untied, RoPE theta 5e5), sequence 8192, measured at 1 and 2 layers",
        },
        "clip_vitl14": {
            "build": (lambda: CLIP(vl=2, vd=64, vh=2, tl=2, td=64, th=2, embed=32, img=28, patch=14, vocab=512))
            if smoke
            else CLIP,
            "input": lambda: (
                torch.randn(1, 3, 28 if smoke else 224, 28 if smoke else 224),
                torch.randint(1, 512, (1, 77)),
            ),
            "optimizer": "adamw",
            "batch_sizes": (2, 4),
            "definition": "OpenCLIP ViT-L-14 written out in benchmarks/model_traffic.py"
            ", contrastive loss over the batch",
        },
        "vivit_b16x2": {
            "build": (lambda: ViViT(frames=frames, img=img, layers=2)) if smoke else ViViT,
            "input": lambda: (torch.randn(1, frames, 3, img, img), torch.randint(0, 400, (1,))),
            "optimizer": "adamw",
            "batch_sizes": (1, 2),
            "definition": "ViViT-B/16x2 (model 1, VivitConfig defaults) written out in benchmarks/model_traffic.py",
        },
    }


# ------------------------------------------------------------------------------ the runs


def build_specs(smoke: bool) -> dict[str, dict[str, Any]]:
    """name -> how to build it, its one-example input, optimizer and batch sizes."""
    img = 64 if smoke else 224

    def image(n_cls: int = 1000, size: int = img) -> Any:
        return lambda: (torch.randn(1, 3, size, size), torch.randint(0, n_cls, (1,)))

    specs: dict[str, dict[str, Any]] = {}
    try:
        import torchvision

        tv = torchvision.models
        for name, ctor in (
            ("resnet18", tv.resnet18),
            ("resnet50", tv.resnet50),
            ("resnet101", tv.resnet101),
            ("resnet152", tv.resnet152),
            ("vit_b16", tv.vit_b_16),
            ("efficientnet_b0", tv.efficientnet_b0),
        ):
            specs[name] = {
                "build": (lambda c=ctor: WithLoss(c())),
                "input": image(size=224 if name == "vit_b16" else img),
                "optimizer": "sgd_momentum",
                "batch_sizes": (2, 4),
                "definition": f"torchvision.models.{ctor.__name__} + cross_entropy",
            }
        specs["vit_b16_adamw"] = dict(specs["vit_b16"], optimizer="adamw")
    except ImportError as exc:
        specs["torchvision"] = {"error": repr(exc)}
    patch = 32 if smoke else 128
    specs["unet3d_kits19"] = {
        "build": UNet3D,
        "input": lambda: (torch.randn(1, 1, patch, patch, patch), torch.randint(0, 3, (1, patch, patch, patch))),
        "optimizer": "sgd_momentum",
        "batch_sizes": (1, 2),
        "definition": "MLPerf KiTS19 3D U-Net written out in benchmarks/model_traffic.py + voxel cross_entropy",
    }
    specs["yolov5s"] = {
        "build": YOLOv5s,
        "input": lambda: (torch.randn(1, 3, 640 if not smoke else 128, 640 if not smoke else 128),),
        "optimizer": "sgd_momentum",
        "batch_sizes": (2, 4),
        "definition": "yolov5s.yaml (v6.0+) written out in benchmarks/model_traffic.py; stand-in loss",
    }
    seq = 64 if smoke else 512

    def bert() -> Any:
        from transformers.models.bert.configuration_bert import BertConfig
        from transformers.models.bert.modeling_bert import BertForMaskedLM

        return BertForMaskedLM(BertConfig(max_position_embeddings=512))

    def tokens(seq: int, vocab: int) -> Any:
        def make() -> Any:
            ids = torch.randint(0, vocab, (1, seq))
            return {"input_ids": ids, "labels": ids.clone()}

        return make

    specs["bert_base_512"] = {
        "build": bert,
        "input": tokens(seq, 30522),
        "optimizer": "adamw",
        "batch_sizes": (1, 2),
        "definition": "transformers BertForMaskedLM(BertConfig()), labels on every token",
    }

    def gpt2(layers: int) -> Any:
        from transformers.models.gpt2.configuration_gpt2 import GPT2Config
        from transformers.models.gpt2.modeling_gpt2 import GPT2LMHeadModel

        n_embd = 128 if smoke else 2048
        return GPT2LMHeadModel(GPT2Config(n_layer=layers, n_embd=n_embd, n_head=16, n_positions=2048))

    def llama(layers: int) -> Any:
        from transformers.models.llama.configuration_llama import LlamaConfig
        from transformers.models.llama.modeling_llama import LlamaForCausalLM

        d, ff, heads = (128, 344, 4) if smoke else (4096, 11008, 32)
        cfg = LlamaConfig(
            hidden_size=d,
            intermediate_size=ff,
            num_hidden_layers=layers,
            num_attention_heads=heads,
            num_key_value_heads=heads,
            vocab_size=32000,
            max_position_embeddings=2048,
        )
        return LlamaForCausalLM(cfg)

    gseq = 128 if smoke else 2048
    specs["gpt_1b"] = {
        "layered": gpt2,
        "layers": 24,
        "probe_layers": (1, 2, 3),
        "input": tokens(gseq, 50257),
        "optimizer": "adamw",
        "batch_sizes": (1, 2),
        "definition": "transformers GPT2LMHeadModel, 24 layers, d_model 2048, 16 heads, ctx 2048 "
        "(measured at 1, 2, 3 layers)",
    }
    specs["gpt_7b"] = {
        "layered": llama,
        "layers": 32,
        "probe_layers": (1, 2),
        "input": tokens(gseq, 32000),
        "optimizer": "adamw",
        "batch_sizes": (1, 2),
        "definition": "transformers LlamaForCausalLM, LLaMA-7B shape (32 layers, d 4096, ff 11008, 32 heads, "
        "vocab 32000), "
        "measured at 1 and 2 layers",
    }
    return specs


FIELDS = (
    "params",
    "forward_flops_per_example",
    "train_flops_per_example",
    "step_flops",
    "activation_bytes_per_example",
    "memory_bytes_per_example",
    "step_memory_bytes",
)


def probe(module: Any, x: Any, precision: str, spec: dict[str, Any], dev: str) -> dict[str, Any]:
    if spec.get("emulate"):  # hand-written workload models: the module casts, measure runs "fp32"
        Emu.dtype = torch.bfloat16 if precision == "bf16" else None
        precision = "fp32" if dev == "meta" else precision
    if dev == "cuda":
        torch.backends.cuda.matmul.allow_tf32 = False
        torch.backends.cudnn.allow_tf32 = False
    m = measure.model(
        module,
        x,
        precision=precision,
        batch_sizes=spec["batch_sizes"],
        device=dev,
        optimizer=spec["optimizer"],
        iters=2,
    )
    row = {k: getattr(m, k) for k in FIELDS}
    row["peak_memory_bytes"] = m.peak_memory_bytes
    row["notes"] = m.notes
    top = sorted(m.traffic_by_op.items(), key=lambda kv: -kv[1][0])[:12]
    row["top_ops_bytes_per_example"] = {k: v[0] for k, v in top}
    top = sorted(m.traffic_by_op.items(), key=lambda kv: -kv[1][1])[:8]
    row["top_ops_step_bytes"] = {k: v[1] for k, v in top}
    return row


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("out_dir")
    ap.add_argument("--models", default="", help="comma-separated subset")
    ap.add_argument("--device", default="cuda" if torch.cuda.is_available() else "cpu")
    ap.add_argument("--smoke", action="store_true", help="tiny shapes: checks the script runs")
    ap.add_argument(
        "--workloads",
        action="store_true",
        help="the hand-written workload models (llama3_8b, clip_vitl14, vivit_b16x2) instead, on the meta device "
        "by default, mixed = emulated bf16 autocast; writes model_traffic_workloads.json",
    )
    args = ap.parse_args()
    dev = "meta" if args.workloads and "--device" not in sys.argv else args.device
    res: dict[str, Any] = {
        "command": " ".join(["python3", *sys.argv]),
        "date": time.strftime("%Y-%m-%d %H:%M:%S %Z"),
        "torch": torch.__version__,
        "python": platform.python_version(),
        "device": torch.cuda.get_device_name() if dev == "cuda" else dev,
        "smoke": args.smoke,
        "method": "calc.measure.model: one uncounted step (optimizer state), then one counted training step "
        "(forward + backward + optimizer step) at each of two batch sizes; bytes = sum over aten ops of "
        "tensor input + output nbytes (views, metadata and allocations free); per example = slope, per step = "
        "intercept. fp32 with TF32 off; mixed = bf16 autocast.",
        "models": {},
    }
    for mod in ("torchvision", "transformers"):
        try:
            res[mod] = __import__(mod).__version__
        except ImportError:
            res[mod] = None
    out_path = Path(args.out_dir) / ("model_traffic_workloads.json" if args.workloads else "model_traffic.json")
    specs = build_workload_specs(args.smoke) if args.workloads else build_specs(args.smoke)
    if args.workloads:
        res["method"] += (
            " Workload models: hand-written modules; on the meta device mixed is emulated bf16 autocast "
            "(matmul/conv inputs cast to bf16, norms/softmax/loss fp32, fp32 master weights), attention is the "
            "fused kernel (efficient attention fp32, flash attention bf16); no peak memory or step time."
        )
    wanted = [s for s in args.models.split(",") if s] or list(specs)
    for name in wanted:
        spec = specs[name]
        if args.workloads:
            spec["emulate"] = True
        entry: dict[str, Any] = {k: v for k, v in spec.items() if isinstance(v, str | int | tuple)}
        res["models"][name] = entry
        if "error" in spec:
            continue
        t0 = time.perf_counter()
        for precision, cls in (("fp32", "fp32"), ("bf16", "mixed")):
            try:
                torch.manual_seed(0)
                if "layered" in spec:
                    per_l = {}
                    for layers in spec["probe_layers"]:
                        with torch.device(dev):
                            module = spec["layered"](layers)
                        entry["attn_implementation"] = getattr(
                            getattr(module, "config", None), "_attn_implementation", "fused (hand-written)"
                        )
                        per_l[layers] = probe(module, spec["input"](), precision, spec, dev)
                        del module
                        gc.collect()
                        if dev == "cuda":
                            torch.cuda.empty_cache()
                    l1, l2, full = 1, 2, spec["layers"]
                    row = {
                        k: per_l[l1][k] + (full - l1) * (per_l[l2][k] - per_l[l1][k])
                        for k in FIELDS
                        if per_l[l1][k] is not None
                    }
                    row["extrapolated_from_layers"] = {str(k): {f: v[f] for f in FIELDS} for k, v in per_l.items()}
                    if 3 in per_l:
                        row["check_3_layers_predicted_vs_measured"] = {
                            k: [per_l[l1][k] + 2 * (per_l[l2][k] - per_l[l1][k]), per_l[3][k]] for k in FIELDS
                        }
                else:
                    with torch.device(dev):
                        module = spec["build"]()
                    row = probe(module, spec["input"](), precision, spec, dev)
                    entry["attn_implementation"] = getattr(
                        getattr(module, "config", None), "_attn_implementation", None
                    )
                    del module
                entry[cls] = row
                print(name, cls, json.dumps({k: row.get(k) for k in FIELDS}), flush=True)
            except Exception as exc:
                entry[cls] = {"error": repr(exc)[:400]}
                print(name, cls, "FAILED", repr(exc)[:400], flush=True)
            gc.collect()
            if dev == "cuda":
                torch.cuda.empty_cache()
        entry["seconds"] = time.perf_counter() - t0
        out_path.write_text(json.dumps(res, indent=1, default=str))
    out_path.write_text(json.dumps(res, indent=1, default=str))


if __name__ == "__main__":
    main()
