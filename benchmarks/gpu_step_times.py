"""Training step times on one GPU, plus its measured copy bandwidth and matmul rates.

    python3 benchmarks/gpu_step_times.py OUT_DIR [--budget SECONDS] [--smoke]

Writes OUT_DIR/gpu_step_times.json (rewritten after every run, so a run cut short keeps what
it measured). Needs torch + torchvision (+ transformers for BERT) on a CUDA machine; the
results for the step-time model live in benchmarks/results/gpu_step_times_<gpu>.json.

What it records:
* the GPU (name, memory, SM count, driver, clocks) and the software (torch, CUDA, cuDNN);
* device-to-device copy bandwidth (1 GiB ``copy_``; read + write bytes per second) and an
  elementwise add (two reads, one write);
* dense matmul rates, 8192^3: bf16, tf32 and fp32 (TF32 off);
* training step times: synthetic data already on the GPU, forward + backward + optimizer
  step (SGD momentum for the convnets and ViT - as presets/calibration.yaml's H100 run -
  AdamW for BERT), 3 warm-up steps then the median of 10 steps timed with CUDA events, at
  several batch sizes, in fp32 (TF32 off), tf32 and bf16 autocast. Convnets run
  channels_last; ResNet-50 also NCHW (the memory-format "stack" factor). cuDNN autotuning
  off unless --cudnn-benchmark (autotuning costs tens of seconds per new fp32 shape). No
  torch.compile.
"""

from __future__ import annotations

import argparse
import json
import platform
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

IMAGE_BATCHES = [8, 32, 64, 128, 256]
BERT_BATCHES = [8, 16, 32, 64]
PRECISIONS = ["fp32", "tf32", "bf16"]


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("out_dir")
    ap.add_argument("--budget", type=float, default=420.0, help="seconds for the step-time part")
    ap.add_argument("--smoke", action="store_true", help="tiny shapes, any device: checks the script runs")
    ap.add_argument("--models", default="", help="comma-separated subset of the step-time models")
    ap.add_argument("--skip-micro", action="store_true", help="copy test on 16 MiB instead of 1 GiB")
    ap.add_argument(
        "--cudnn-benchmark", action="store_true", help="cuDNN autotuning on (tens of seconds per new fp32 shape)"
    )
    args = ap.parse_args()
    import torch
    import torchvision

    smoke = args.smoke
    dev = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    out_path = Path(args.out_dir) / "gpu_step_times.json"
    started = time.perf_counter()
    res: dict[str, Any] = {
        "command": " ".join([sys.executable.split("/")[-1], *sys.argv]),
        "date": time.strftime("%Y-%m-%d %H:%M:%S %Z"),
        "python": platform.python_version(),
        "torch": torch.__version__,
        "torchvision": torchvision.__version__,
        "cuda": torch.version.cuda,
        "cudnn": torch.backends.cudnn.version(),
        "device": str(dev),
        "runs": [],
    }
    try:
        import transformers

        res["transformers"] = transformers.__version__
    except ImportError:
        transformers = None
    if dev.type == "cuda":
        p = torch.cuda.get_device_properties(dev)
        res.update(gpu=p.name, gpu_total_memory_bytes=p.total_memory, multiprocessors=p.multi_processor_count)
        try:
            q = "name,driver_version,memory.total,clocks.max.sm,clocks.max.memory,power.limit"
            res["nvidia_smi"] = subprocess.run(
                ["nvidia-smi", f"--query-gpu={q}", "--format=csv"],
                check=False,
                capture_output=True,
                text=True,
                timeout=30,
            ).stdout.strip()
        except Exception as exc:
            res["nvidia_smi"] = repr(exc)

    def save() -> None:
        out_path.write_text(json.dumps(res, indent=1))

    def sync() -> None:
        if dev.type == "cuda":
            torch.cuda.synchronize()

    def timed(fn: Any, iters: int) -> list[float]:
        """Seconds per call of fn, each timed with CUDA events (perf_counter on a CPU)."""
        out = []
        for _ in range(iters):
            if dev.type == "cuda":
                s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
                s.record()
                fn()
                e.record()
                e.synchronize()
                out.append(s.elapsed_time(e) / 1e3)
            else:
                t0 = time.perf_counter()
                fn()
                out.append(time.perf_counter() - t0)
        return out

    def set_tf32(on: bool) -> None:
        torch.backends.cuda.matmul.allow_tf32 = on
        torch.backends.cudnn.allow_tf32 = on

    res["cudnn_benchmark"] = args.cudnn_benchmark
    # ---- bandwidth
    nbytes = (2**24 if smoke or args.skip_micro else 2**30) // 4 * 4
    a = torch.empty(nbytes // 4, dtype=torch.float32, device=dev).fill_(1.0)
    b = torch.empty_like(a)
    c = torch.empty_like(a)
    for _ in range(3):
        b.copy_(a)
    sync()
    t = statistics.median(timed(lambda a=a, b=b: b.copy_(a), 20))
    res["d2d_copy"] = {
        "bytes": nbytes,
        "seconds_median": t,
        "copy_bytes_per_s": nbytes / t,
        "read_plus_write_bytes_per_s": 2 * nbytes / t,
    }
    t = statistics.median(timed(lambda a=a, b=b, c=c: torch.add(a, b, out=c), 20))
    res["elementwise_add"] = {"bytes_each": nbytes, "seconds_median": t, "read2_write1_bytes_per_s": 3 * nbytes / t}
    del a, b, c
    print("copy", res["d2d_copy"], res["elementwise_add"], flush=True)

    # ---- matmul
    res["matmul"] = []
    size = 1024 if smoke else 8192
    for name, dtype, tf32 in (
        ("bf16", torch.bfloat16, False),
        ("tf32", torch.float32, True),
        ("fp32", torch.float32, False),
    ):
        set_tf32(tf32)
        x = torch.randn(size, size, device=dev, dtype=dtype)
        y = torch.randn(size, size, device=dev, dtype=dtype)
        for _ in range(3):
            x @ y
        sync()
        ts = timed(lambda x=x, y=y: x @ y, 20)
        t = statistics.median(ts)
        row = {"precision": name, "m=n=k": size, "seconds_median": t, "flops_per_s": 2 * size**3 / t}
        res["matmul"].append(row)
        print("matmul", row, flush=True)
        del x, y
    set_tf32(False)
    save()

    # ---- training steps
    torch.backends.cudnn.benchmark = args.cudnn_benchmark
    tv = torchvision.models
    img = 64 if smoke else 224
    seq = 64 if smoke else 512

    def image_batch(n: int, channels_last: bool) -> Any:
        x = torch.randn(n, 3, img, img, device=dev)
        if channels_last:
            x = x.to(memory_format=torch.channels_last)
        return (x,), torch.randint(0, 1000, (n,), device=dev)

    def token_batch(n: int, channels_last: bool) -> Any:
        ids = torch.randint(0, 30522, (n, seq), device=dev)
        return (ids,), ids

    def bert() -> Any:
        from transformers.models.bert.configuration_bert import BertConfig
        from transformers.models.bert.modeling_bert import BertForMaskedLM

        return BertForMaskedLM(BertConfig(max_position_embeddings=512))

    specs: list[tuple[str, Any, Any, str, bool, list[int]]] = [
        ("resnet50", tv.resnet50, image_batch, "sgd_momentum", True, IMAGE_BATCHES),
        ("resnet50_nchw", tv.resnet50, image_batch, "sgd_momentum", False, IMAGE_BATCHES),
        ("resnet18", tv.resnet18, image_batch, "sgd_momentum", True, IMAGE_BATCHES),
        ("resnet101", tv.resnet101, image_batch, "sgd_momentum", True, IMAGE_BATCHES),
        ("resnet152", tv.resnet152, image_batch, "sgd_momentum", True, IMAGE_BATCHES),
        ("vit_b16", tv.vit_b_16, image_batch, "sgd_momentum", False, IMAGE_BATCHES),
        ("efficientnet_b0", tv.efficientnet_b0, image_batch, "sgd_momentum", True, IMAGE_BATCHES),
        ("bert_base_512", bert, token_batch, "adamw", False, BERT_BATCHES),
    ]
    if smoke:
        specs = [(s[0], s[1], s[2], s[3], s[4], [2]) for s in specs if s[0] in ("resnet18", "bert_base_512")]
    if args.models:
        specs = [s for s in specs if s[0] in args.models.split(",")]
    budget_end = time.perf_counter() + args.budget

    for name, build, make_batch, optimizer, channels_last, batches in specs:
        if transformers is None and build is bert:
            res["runs"].append({"model": name, "error": "transformers not installed"})
            continue
        for precision in PRECISIONS:
            set_tf32(precision == "tf32")
            torch.manual_seed(0)
            try:
                model = build().to(dev)
            except Exception as exc:
                res["runs"].append({"model": name, "precision": precision, "error": "build: " + repr(exc)[:300]})
                continue
            if channels_last:
                model = model.to(memory_format=torch.channels_last)
            model.train()
            if optimizer == "adamw":
                opt = torch.optim.AdamW(model.parameters(), lr=1e-4)
            else:
                opt = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
            autocast = torch.autocast(dev.type, dtype=torch.bfloat16, enabled=precision == "bf16")

            def step(x: Any, y: Any, model: Any = model, opt: Any = opt, autocast: Any = autocast) -> None:
                with autocast:
                    out = model(*x)
                    logits = out.logits if hasattr(out, "logits") else out
                    loss = torch.nn.functional.cross_entropy(logits.flatten(0, -2).float(), y.flatten())
                loss.backward()
                opt.step()
                opt.zero_grad(set_to_none=True)

            for n in batches:
                row: dict[str, Any] = {
                    "model": name,
                    "precision": precision,
                    "batch_size": n,
                    "optimizer": optimizer,
                    "memory_format": "channels_last" if channels_last else "contiguous",
                }
                if time.perf_counter() > budget_end:
                    row["error"] = "skipped: time budget spent"
                    res["runs"].append(row)
                    continue
                try:
                    x, y = make_batch(n, channels_last)
                    t0 = time.perf_counter()
                    for _ in range(2 if smoke else 3):
                        step(x, y)
                    sync()
                    warm = time.perf_counter() - t0
                    if dev.type == "cuda":
                        torch.cuda.reset_peak_memory_stats()
                    iters = 2 if smoke else 10
                    t0 = time.perf_counter()
                    ts = timed(lambda x=x, y=y, step=step: step(x, y), iters)
                    sync()
                    wall = time.perf_counter() - t0
                    t = statistics.median(ts)
                    row.update(
                        step_time_s_median=t,
                        step_time_s_min=min(ts),
                        step_time_s_max=max(ts),
                        samples_per_s=n / t,
                        samples_per_s_wall=n * iters / wall,
                        steps_timed=iters,
                        warmup_s=warm,
                        peak_memory_bytes=torch.cuda.max_memory_allocated() if dev.type == "cuda" else None,
                    )
                    del x, y
                except torch.cuda.OutOfMemoryError as exc:
                    row["error"] = "out of memory: " + str(exc).split("\n")[0][:200]
                    opt.zero_grad(set_to_none=True)
                except Exception as exc:  # one failure must not cost the lease
                    row["error"] = repr(exc)[:300]
                    opt.zero_grad(set_to_none=True)
                res["runs"].append(row)
                print(json.dumps(row), flush=True)
                if "error" in row and "out of memory" in row["error"]:
                    if dev.type == "cuda":
                        torch.cuda.empty_cache()
                    break  # larger batches will not fit either
            del model, opt, step
            if dev.type == "cuda":
                torch.cuda.empty_cache()
            save()
    res["elapsed_s"] = time.perf_counter() - started
    save()
    print("done in", res["elapsed_s"], "s", flush=True)


if __name__ == "__main__":
    main()
