"""Run calc.measure.model on a GPU: ResNet-50 (fp32 and bf16) and check it against the presets.

    python benchmarks/model_probe_gpu.py OUT_DIR

Needs torch + torchvision on a CUDA machine (the device tool's H100). Writes
OUT_DIR/model_probe_gpu.json; the numbers are recorded in the closing note of issue 5.
"""

from __future__ import annotations

import json
import sys
from dataclasses import asdict

import torch
import torchvision

from calc import measure


def main(out: str) -> None:
    rows = []
    for precision in ("fp32", "bf16"):
        torch.backends.cudnn.benchmark = False
        torch.backends.cuda.matmul.allow_tf32 = False
        torch.backends.cudnn.allow_tf32 = False
        net = torchvision.models.resnet50().to(memory_format=torch.channels_last)
        x = torch.randn(1, 3, 224, 224).to(memory_format=torch.channels_last)
        m = measure.model(net, x, precision=precision, batch_sizes=(8, 16), time_batch=256, iters=10)
        row = {"model": "resnet50", **asdict(m), "gpu": torch.cuda.get_device_name(), "torch": torch.__version__}
        rows.append(row)
        print(json.dumps(row), flush=True)
    with open(f"{out}/model_probe_gpu.json", "w") as f:
        json.dump(rows, f, indent=1)


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else ".")
