"""Measure real training on a GPU: activation bytes per example, step time, host-to-GPU copy.

Run on a machine with an NVIDIA GPU and PyTorch + torchvision (+ transformers for BERT/GPT):

    python benchmarks/gpu_calibration.py OUT_DIR

It writes OUT_DIR/gpu_calibration.json. The numbers feed `presets/calibration/*.yaml`;
the tests never need a GPU. Synthetic data lives on the GPU, so the step time is the
GPU's own rate (the `gpu` stage of the pipeline), free of any loader.
"""

from __future__ import annotations

import io
import json
import platform
import sys
import time
from typing import Any


def main(out_dir: str) -> None:
    import torch
    import torchvision

    dev = torch.device("cuda")
    props = torch.cuda.get_device_properties(dev)
    result: dict[str, Any] = {
        "gpu": props.name,
        "gpu_total_memory_bytes": props.total_memory,
        "multiprocessors": props.multi_processor_count,
        "torch": torch.__version__,
        "torchvision": torchvision.__version__,
        "cuda": torch.version.cuda,
        "cudnn": torch.backends.cudnn.version(),
        "python": platform.python_version(),
        "date": time.strftime("%Y-%m-%d"),
        "runs": [],
    }
    torch.backends.cudnn.benchmark = True

    def set_tf32(on: bool) -> None:
        torch.backends.cuda.matmul.allow_tf32 = on
        torch.backends.cudnn.allow_tf32 = on

    def train_step_fn(model: Any, make_batch: Any, precision: str, opt: Any) -> Any:
        dtype = {"bf16": torch.bfloat16, "fp16": torch.float16}.get(precision)

        def step(n: int) -> None:
            x, y = make_batch(n)
            if dtype is None:
                loss = model_loss(model, x, y)
            else:
                with torch.autocast("cuda", dtype=dtype):
                    loss = model_loss(model, x, y)
            loss.backward()
            opt.step()
            opt.zero_grad(set_to_none=True)

        return step

    def model_loss(model: Any, x: Any, y: Any) -> Any:
        out = model(x) if not isinstance(x, dict) else model(**x)
        if hasattr(out, "logits"):
            out = out.logits
        if out.dim() == 3:  # token models: next-token loss
            return torch.nn.functional.cross_entropy(out.flatten(0, 1).float(), y.flatten())
        return torch.nn.functional.cross_entropy(out.float(), y)

    def measure(
        name: str,
        build: Any,
        make_batch: Any,
        precision: str,
        n1: int,
        n2: int,
        n_time: int,
        optimizer: str = "sgd_momentum",
        iters: int = 15,
    ) -> None:
        set_tf32(precision == "tf32")
        torch.cuda.empty_cache()
        model = build().to(dev)
        if make_batch.__name__ == "image_batch":
            model = model.to(memory_format=torch.channels_last)
        params = sum(p.numel() for p in model.parameters())
        if optimizer == "adam":
            opt = torch.optim.AdamW(model.parameters(), lr=1e-4)
        else:
            opt = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
        step = train_step_fn(model, make_batch, precision, opt)
        peaks = {}
        for n in (n1, n1, n2):  # first n1 run creates optimizer state
            torch.cuda.synchronize()
            torch.cuda.reset_peak_memory_stats()
            step(n)
            torch.cuda.synchronize()
            peaks[n] = torch.cuda.max_memory_allocated()
        state = torch.cuda.memory_allocated()
        for _ in range(3):
            step(n_time)
        torch.cuda.synchronize()
        t0 = time.perf_counter()
        for _ in range(iters):
            step(n_time)
        torch.cuda.synchronize()
        dt = (time.perf_counter() - t0) / iters
        run = {
            "model": name,
            "precision": precision,
            "optimizer": optimizer,
            "params": params,
            "allocated_after_step_bytes": state,
            "peak_bytes": {str(k): v for k, v in peaks.items()},
            "activation_bytes_per_example": (peaks[n2] - peaks[n1]) / (n2 - n1),
            "batch_timed": n_time,
            "step_time_s": dt,
            "samples_per_s": n_time / dt,
            "peak_reserved_bytes": torch.cuda.max_memory_reserved(),
        }
        result["runs"].append(run)
        print(json.dumps(run), flush=True)
        del model, opt, step
        torch.cuda.empty_cache()

    def image_batch(n: int, size: int = 224) -> Any:
        x = torch.randn(n, 3, size, size, device=dev).to(memory_format=torch.channels_last)
        y = torch.randint(0, 1000, (n,), device=dev)
        return x, y

    tv = torchvision.models
    convs = [
        ("resnet18", tv.resnet18, 256),
        ("resnet50", tv.resnet50, 256),
        ("resnet101", tv.resnet101, 128),
        ("resnet152", tv.resnet152, 128),
        ("efficientnet_b0", tv.efficientnet_b0, 256),
        ("vit_b16", tv.vit_b_16, 128),
    ]
    for name, build, n_time in convs:
        for precision in ("fp32", "tf32", "bf16"):
            try:
                measure(name, build, image_batch, precision, 16, 48, n_time)
            except Exception as exc:  # record and go on: one failure must not cost the lease
                print("FAILED", name, precision, repr(exc), flush=True)
                result["runs"].append({"model": name, "precision": precision, "error": repr(exc)})

    try:
        import transformers

        result["transformers"] = transformers.__version__

        def bert() -> Any:
            cfg = transformers.BertConfig(max_position_embeddings=512)
            return transformers.BertForMaskedLM(cfg)

        def token_batch(n: int, seq: int = 512, vocab: int = 30522) -> Any:
            ids = torch.randint(0, vocab, (n, seq), device=dev)
            return {"input_ids": ids}, ids

        measure("bert_base_512", bert, token_batch, "bf16", 8, 24, 32, optimizer="adam", iters=10)

        def gpt_1b() -> Any:
            cfg = transformers.GPT2Config(n_layer=24, n_embd=2048, n_head=16, n_positions=2048)
            return transformers.GPT2LMHeadModel(cfg)

        def gpt_batch(n: int, seq: int = 2048, vocab: int = 50257) -> Any:
            ids = torch.randint(0, vocab, (n, seq), device=dev)
            return {"input_ids": ids}, ids

        measure("gpt_1b", gpt_1b, gpt_batch, "bf16", 1, 3, 4, optimizer="adam", iters=5)
    except Exception as exc:
        print("FAILED transformers", repr(exc), flush=True)

    # Host-to-GPU copy, pinned vs pageable, 256 MiB.
    nbytes = 256 * 2**20
    for pinned in (True, False):
        host = torch.empty(nbytes, dtype=torch.uint8, pin_memory=pinned)
        host.fill_(1)
        dst = torch.empty(nbytes, dtype=torch.uint8, device=dev)
        for _ in range(2):
            dst.copy_(host, non_blocking=pinned)
        torch.cuda.synchronize()
        t0 = time.perf_counter()
        for _ in range(10):
            dst.copy_(host, non_blocking=pinned)
        torch.cuda.synchronize()
        rate = 10 * nbytes / (time.perf_counter() - t0)
        result["h2d_pinned" if pinned else "h2d_pageable"] = {"bytes": nbytes, "bytes_per_s": rate}
        print("h2d", "pinned" if pinned else "pageable", rate / 1e9, "GB/s", flush=True)

    # CPU cost of a typical ImageNet training transform, one core.
    try:
        import numpy as np
        from PIL import Image
        from torchvision import transforms as T

        torch.set_num_threads(1)
        rng = np.random.default_rng(0)
        yy, xx = np.mgrid[0:375, 0:500]
        base = np.stack([(xx * 0.5) % 256, (yy * 0.7) % 256, ((xx + yy) * 0.3) % 256], -1)
        img = (base + rng.normal(0, 12, base.shape)).clip(0, 255).astype("uint8")
        buf = io.BytesIO()
        Image.fromarray(img).save(buf, format="JPEG", quality=90)
        data = buf.getvalue()
        tf = T.Compose(
            [
                T.RandomResizedCrop(224),
                T.RandomHorizontalFlip(),
                T.ToTensor(),
                T.Normalize([0.485, 0.456, 0.406], [0.229, 0.224, 0.225]),
            ]
        )
        for _ in range(20):
            tf(Image.open(io.BytesIO(data)).convert("RGB"))
        t0 = time.perf_counter()
        n = 300
        for _ in range(n):
            tf(Image.open(io.BytesIO(data)).convert("RGB"))
        per = (time.perf_counter() - t0) / n
        result["cpu_jpeg_decode_augment"] = {
            "jpeg_bytes": len(data),
            "image": "500x375 synthetic, quality 90",
            "transform": "PIL decode + RandomResizedCrop(224) + flip + ToTensor + Normalize",
            "cpu_seconds_per_example": per,
            "pillow": Image.__version__,
            "cpu": platform.processor() or platform.machine(),
        }
        print("cpu decode+augment", per * 1e3, "ms/img", flush=True)
    except Exception as exc:
        print("FAILED cpu", repr(exc), flush=True)

    try:
        with open("/proc/cpuinfo") as f:
            result["cpu_model"] = next(l.split(":", 1)[1].strip() for l in f if l.startswith("model name"))
    except Exception:
        pass
    with open(f"{out_dir}/gpu_calibration.json", "w") as f:
        json.dump(result, f, indent=1)


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else ".")
