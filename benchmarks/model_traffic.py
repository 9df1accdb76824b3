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
    args = ap.parse_args()
    dev = args.device
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
    out_path = Path(args.out_dir) / "model_traffic.json"
    specs = build_specs(args.smoke)
    wanted = [s for s in args.models.split(",") if s] or list(specs)
    for name in wanted:
        spec = specs[name]
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
                        entry["attn_implementation"] = getattr(module.config, "_attn_implementation", None)
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
