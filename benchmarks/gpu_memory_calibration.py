"""Activation bytes per example and the real largest batch, measured on a GPU.

    python benchmarks/gpu_memory_calibration.py OUT_DIR

cuDNN autotuning is off: its workspaces differ between batch sizes and would pollute the
slope of peak memory against batch size (the first run, gpu_calibration.py, showed it:
ResNet-50 fp32 came out at 242 MB/example, ResNet-101 at 126). The slope is a least-squares
fit over three batch sizes. The largest batch is found by bisection on out-of-memory errors,
to check calc's n_max = floor((memory - reserved - state) / activations) against reality.
"""

from __future__ import annotations

import json
import sys
import time
from typing import Any


def main(out_dir: str) -> None:
    import torch
    import torchvision

    torch.backends.cudnn.benchmark = False
    dev = torch.device("cuda")
    props = torch.cuda.get_device_properties(dev)
    free, total = torch.cuda.mem_get_info()
    out: dict[str, Any] = {
        "gpu": props.name,
        "total_memory_bytes": total,
        "free_memory_bytes_at_start": free,
        "torch": torch.__version__,
        "torchvision": torchvision.__version__,
        "cudnn_benchmark": False,
        "date": time.strftime("%Y-%m-%d"),
        "slopes": [],
        "max_batch": [],
    }
    tv = torchvision.models

    def step(model: Any, opt: Any, n: int, precision: str) -> None:
        x = torch.randn(n, 3, 224, 224, device=dev).to(memory_format=torch.channels_last)
        y = torch.randint(0, 1000, (n,), device=dev)
        if precision == "bf16":
            with torch.autocast("cuda", dtype=torch.bfloat16):
                loss = torch.nn.functional.cross_entropy(model(x).float(), y)
        else:
            loss = torch.nn.functional.cross_entropy(model(x), y)
        loss.backward()
        opt.step()
        opt.zero_grad(set_to_none=True)

    def fresh(build: Any) -> tuple[Any, Any]:
        torch.cuda.empty_cache()
        m = build().to(dev).to(memory_format=torch.channels_last)
        return m, torch.optim.SGD(m.parameters(), lr=0.01, momentum=0.9)

    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    for name, build in [
        ("resnet18", tv.resnet18),
        ("resnet50", tv.resnet50),
        ("resnet101", tv.resnet101),
        ("resnet152", tv.resnet152),
        ("efficientnet_b0", tv.efficientnet_b0),
        ("vit_b16", tv.vit_b_16),
    ]:
        for precision in ("fp32", "bf16"):
            model, opt = fresh(build)
            step(model, opt, 8, precision)  # optimizer state now exists
            pts = []
            for n in (8, 16, 32):
                torch.cuda.synchronize()
                torch.cuda.reset_peak_memory_stats()
                step(model, opt, n, precision)
                torch.cuda.synchronize()
                pts.append((n, torch.cuda.max_memory_allocated()))
            mx = sum(p[0] for p in pts) / 3
            my = sum(p[1] for p in pts) / 3
            slope = sum((p[0] - mx) * (p[1] - my) for p in pts) / sum((p[0] - mx) ** 2 for p in pts)
            row = {
                "model": name,
                "precision": precision,
                "points": pts,
                "activation_bytes_per_example": slope,
                "intercept_bytes": my - slope * mx,
                "state_bytes": torch.cuda.memory_allocated(),
                "params": sum(p.numel() for p in model.parameters()),
            }
            out["slopes"].append(row)
            print(json.dumps(row), flush=True)
            del model, opt

    def fits(build: Any, n: int, precision: str) -> bool:
        model, opt = fresh(build)
        try:
            step(model, opt, n, precision)
            step(model, opt, n, precision)
            torch.cuda.synchronize()
            return True
        except torch.OutOfMemoryError:
            return False
        finally:
            del model, opt
            torch.cuda.empty_cache()

    for name, build, precision, lo, hi in [
        ("resnet50", tv.resnet50, "fp32", 256, 1024),
        ("resnet50", tv.resnet50, "bf16", 512, 2048),
        ("resnet152", tv.resnet152, "fp32", 128, 768),
    ]:
        t0 = time.time()
        a = lo if fits(build, lo, precision) else 1  # a batch that fits
        b = hi
        while fits(build, b, precision):  # grow until one does not
            a, b = b, b * 2
        while b - a > 4:  # bisect to within 4 examples
            mid = (a + b) // 2
            if fits(build, mid, precision):
                a = mid
            else:
                b = mid
        row = {
            "model": name,
            "precision": precision,
            "max_batch_fits": a,
            "first_batch_oom": b,
            "seconds": time.time() - t0,
        }
        out["max_batch"].append(row)
        print(json.dumps(row), flush=True)

    with open(f"{out_dir}/gpu_memory_calibration.json", "w") as f:
        json.dump(out, f, indent=1)


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else ".")
