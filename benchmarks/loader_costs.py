"""CPU cost of a training data loader's parts, per image, with the real libraries (issue 42).

What it times, each on one thread unless the section says otherwise:
  decode    JPEG decode with every decoder that imports in this interpreter (Pillow or
            Pillow-SIMD, OpenCV's imdecode, PyTurboJPEG and simplejpeg over libjpeg-turbo,
            torchvision.io.decode_jpeg, DALI's CPU decoder), at full size and DCT-scaled
            (1/2, 1/4, 1/8) where the decoder can; PNG decode; raw uint8 (np.frombuffer),
            .npy load and token slices (np.memmap of int32 / uint16 tokens).
  augment   torchvision's training chain (RandomResizedCrop + horizontal flip + ToTensor +
            Normalize) with PIL and its OpenCV/NumPy equivalent, at output sizes 128-288 px,
            with fixed crop boxes so the crop's input pixels are known; float32 and uint8 output;
            the eval chain (Resize + CenterCrop).
  collate   torch.utils.data.default_collate of a batch, and a plain tensor copy per byte (the
            pin-memory thread's work is a copy into page-locked memory; a CPU-only build cannot
            pin, so the copy is the stand-in and is labelled so).
  transfer  a real DataLoader with 1 and 2 worker processes handing over ready batches of a
            given size, against making the same batches in-process: main-process CPU per batch
            (receive), worker CPU per batch above the in-process cost (send), wall per batch.
  threads   oversubscription: 2 workers with 1 or 2 intra-op threads each (torch and OpenCV).
  e2e       an ImageFolder-style Dataset + DataLoader over generated 500x375 JPEGs, 0/1/2
            workers, batch 64/128/256, 224 and 160 px: images/s. These runs are VALIDATION only
            (presets/loader_validation.yaml); the fit never reads them.

Generated images (``gen``): a deterministic "photo-like" RGB field, not flat colour, so entropy
coding is realistic: three smooth gradients and 6 low-frequency cosine blobs per channel,
12 random filled rectangles and 40 random lines (hard edges), a texture band of
band-limited noise, and Gaussian pixel noise of sigma 6 (numpy default_rng(seed)); saved with
Pillow at quality 75 / 90 / 95, 4:2:0 chroma subsampling (Pillow's default), baseline. At
500x375 q90 this gives about 0.6-0.9 bytes per pixel, in the range of ImageNet's JPEGs
(mean about 110 kB for about 400x350 px).

CPU time: time.thread_time (decoders on the calling thread) or time.process_time / getrusage
(where a library runs its own threads, and for child processes), the median of repeats, because
other jobs share this machine's 2 cores; wall time is recorded beside it.

Run (each venv writes a part; ``merge`` joins them; ``fit`` fits presets/decoders.yaml):
  python benchmarks/loader_costs.py gen --dir /tmp/lc_imgs
  <venv>/bin/python benchmarks/loader_costs.py decode --dir /tmp/lc_imgs --out /tmp/lc_part_X.json
  <venv>/bin/python benchmarks/loader_costs.py augment|collate|transfer|threads|e2e ...
  python benchmarks/loader_costs.py merge --parts /tmp/lc_part_*.json
  python benchmarks/loader_costs.py fit
"""

from __future__ import annotations

import argparse
import contextlib
import datetime as dt
import io
import json
import os
import platform
import resource
import statistics
import subprocess
import sys
import time
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

import numpy as np

RESULTS = Path(__file__).resolve().parent / "results"
SIZES = [(250, 188), (500, 375), (800, 600), (1024, 768), (2000, 1500), (4000, 3000)]
QUALITIES = [75, 90, 95]
SCALES = [2, 4, 8]
OUT_RES = [128, 160, 176, 192, 224, 256, 288]
MEAN = (0.485, 0.456, 0.406)
STD = (0.229, 0.224, 0.225)


# ---------------------------------------------------------------- machine and versions


def cpu_info() -> dict[str, Any]:
    info: dict[str, Any] = {"machine": platform.machine(), "logical_cpus": os.cpu_count()}
    with contextlib.suppress(OSError):
        text = Path("/proc/cpuinfo").read_text()
        first = text.split("\n\n")[0]
        for line in first.splitlines():
            k, _, v = line.partition(":")
            k, v = k.strip(), v.strip()
            if k in {"vendor_id", "cpu family", "model", "model name", "stepping", "microcode", "cpu MHz",
                     "cache size", "siblings", "cpu cores"}:
                info[k.replace(" ", "_")] = v
        flags = next((ln.split(":", 1)[1].split() for ln in first.splitlines() if ln.startswith("flags")), [])
        info["simd_flags"] = sorted(f for f in flags if f.startswith(("avx", "sse", "ssse")))
        info["hypervisor"] = "hypervisor" in flags
    with contextlib.suppress(OSError, subprocess.SubprocessError):
        out = subprocess.run(["lscpu"], capture_output=True, text=True, check=True, timeout=10).stdout
        keep = ("Model name", "CPU family", "Model:", "Thread(s) per core", "Core(s) per socket", "Socket(s)",
                "Hypervisor vendor", "L1d cache", "L2 cache", "L3 cache", "BogoMIPS")
        info["lscpu"] = {ln.split(":", 1)[0].strip(): ln.split(":", 1)[1].strip()
                         for ln in out.splitlines() if ln.startswith(keep)}
    return info


def versions() -> dict[str, str]:
    v: dict[str, str] = {"python": platform.python_version(), "numpy": np.__version__}
    for name, mod in [("pillow", "PIL"), ("opencv", "cv2"), ("simplejpeg", "simplejpeg"),
                      ("pyturbojpeg", "turbojpeg"), ("torch", "torch"), ("torchvision", "torchvision"),
                      ("dali", "nvidia.dali"), ("ffcv", "ffcv")]:
        try:
            m = __import__(mod, fromlist=["_"])
        except Exception as e:
            v[name] = f"not importable: {type(e).__name__}: {str(e)[:120]}"
            continue
        v[name] = str(getattr(m, "__version__", "?"))
    with contextlib.suppress(Exception):
        from PIL import features

        v["pillow_libjpeg_turbo"] = str(features.check_feature("libjpeg_turbo"))
        v["pillow_jpeg_version"] = str(features.version("jpg"))
    with contextlib.suppress(Exception):
        import turbojpeg

        v["libturbojpeg_path"] = str(turbojpeg.TurboJPEG().__dict__.get("_TurboJPEG__lib", "?"))
    return v


# ---------------------------------------------------------------- timing


def timed(fn: Callable[[], object], *, min_chunk_s: float = 0.03, repeats: int = 7,
          clock: Callable[[], float] = time.thread_time) -> dict[str, float]:
    """Per-call CPU and wall seconds: median (and quartiles, min) of ``repeats`` chunks."""
    fn()
    t0 = clock()
    fn()
    one = max(clock() - t0, 1e-6)
    n = max(1, min(2000, int(min_chunk_s / one)))
    cpu, wall = [], []
    for _ in range(repeats):
        c0, w0 = clock(), time.perf_counter()
        for _ in range(n):
            fn()
        cpu.append((clock() - c0) / n)
        wall.append((time.perf_counter() - w0) / n)
    q = statistics.quantiles(cpu, n=4) if len(cpu) > 1 else [cpu[0]] * 3
    return {"cpu_s": statistics.median(cpu), "cpu_s_p25": q[0], "cpu_s_p75": q[2], "cpu_s_min": min(cpu),
            "wall_s": statistics.median(wall), "calls_per_repeat": n, "repeats": repeats}


def _rusage_self() -> float:
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime


def _rusage_children() -> float:
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


# ---------------------------------------------------------------- image generator


def photo_like(width: int, height: int, seed: int) -> np.ndarray:
    """A deterministic RGB field with gradients, blobs, edges, texture and noise (see module doc)."""
    rng = np.random.default_rng(seed)
    y, x = np.mgrid[0:height, 0:width].astype(np.float32)
    u, v = x / width, y / height
    img = np.empty((height, width, 3), np.float32)
    for c in range(3):
        a, b, d = rng.uniform(-120, 120, 3)
        ch = 128 + a * (u - 0.5) + b * (v - 0.5) + d * (u - 0.5) * (v - 0.5)
        for _ in range(6):
            fx, fy, ph = rng.uniform(0.5, 4), rng.uniform(0.5, 4), rng.uniform(0, 2 * np.pi)
            ch += rng.uniform(10, 40) * np.cos(2 * np.pi * (fx * u + fy * v) + ph)
        img[..., c] = ch
    for _ in range(12):  # hard edges: filled rectangles
        x0, y0 = rng.integers(0, width), rng.integers(0, height)
        w, h = rng.integers(width // 20 + 1, width // 3 + 2), rng.integers(height // 20 + 1, height // 3 + 2)
        img[y0:y0 + h, x0:x0 + w] = rng.uniform(0, 255, 3)
    for _ in range(40):  # thin lines
        t = max(1, int(rng.integers(1, 4) * width / 500))
        if rng.random() < 0.5:
            r0 = int(rng.integers(0, height))
            img[r0:r0 + t, :] = rng.uniform(0, 255, 3)
        else:
            c0 = int(rng.integers(0, width))
            img[:, c0:c0 + t] = rng.uniform(0, 255, 3)
    band = slice(height // 3, height // 3 + max(2, height // 5))  # texture: band-limited noise
    tex = rng.normal(0, 30, (height // 4 + 1, width // 4 + 1, 3)).astype(np.float32)
    tex = np.repeat(np.repeat(tex, 4, 0), 4, 1)[:height, :width]
    img[band] += tex[band]
    img += rng.normal(0, 6, img.shape).astype(np.float32)
    return np.clip(img, 0, 255).astype(np.uint8)


def cmd_gen(args: argparse.Namespace) -> None:
    from PIL import Image

    out = Path(args.dir)
    out.mkdir(parents=True, exist_ok=True)
    manifest = []
    for i, (w, h) in enumerate(SIZES):
        arr = photo_like(w, h, seed=1000 + i)
        im = Image.fromarray(arr)
        for q in QUALITIES:
            name = f"img_{w}x{h}_q{q}.jpg"
            im.save(out / name, quality=q)
            manifest.append({"file": name, "format": "jpeg", "width": w, "height": h, "quality": q,
                             "bytes": (out / name).stat().st_size})
        name = f"img_{w}x{h}.png"
        im.save(out / name, compress_level=6)
        manifest.append({"file": name, "format": "png", "width": w, "height": h, "quality": None,
                         "bytes": (out / name).stat().st_size})
        np.save(out / f"img_{w}x{h}.npy", arr)
        arr.tofile(out / f"img_{w}x{h}.raw")
    # an ImageNet-like folder for the end-to-end runs: 500x375 q90, distinct content per file
    folder = out / "folder" / "class0"
    folder.mkdir(parents=True, exist_ok=True)
    for k in range(args.folder_images):
        p = folder / f"{k:05d}.jpg"
        if not p.exists():
            Image.fromarray(photo_like(500, 375, seed=50_000 + k)).save(p, quality=90)
    (out / "manifest.json").write_text(json.dumps(manifest, indent=1))
    for m in manifest:
        print(f"{m['file']:28s} {m['bytes']:>10,d} B  {m['bytes'] / (m['width'] * m['height']):.3f} B/px")


# ---------------------------------------------------------------- decoders


def _decoders() -> dict[str, Callable[[bytes, int], Callable[[], object]]]:
    """Decoder key -> (jpeg bytes, scale denominator) -> a zero-argument decode call."""
    found: dict[str, Callable[[bytes, int], Callable[[], object]]] = {}
    with contextlib.suppress(ImportError):
        import PIL
        from PIL import Image

        key = "pillow-simd" if ".post" in PIL.__version__ else "pil"

        def pil(b: bytes, s: int) -> Callable[[], object]:
            def run() -> object:
                im = Image.open(io.BytesIO(b))
                if s > 1:  # draft mode: libjpeg's DCT scaling to at least the requested size
                    im.draft("RGB", (im.width // s, im.height // s))
                return im.convert("RGB")
            return run
        found[key] = pil
    with contextlib.suppress(ImportError):
        import cv2

        cv2.setNumThreads(1)
        flags = {1: cv2.IMREAD_COLOR, 2: cv2.IMREAD_REDUCED_COLOR_2, 4: cv2.IMREAD_REDUCED_COLOR_4,
                 8: cv2.IMREAD_REDUCED_COLOR_8}

        def ocv(b: bytes, s: int) -> Callable[[], object]:
            buf = np.frombuffer(b, np.uint8)
            return lambda: cv2.cvtColor(cv2.imdecode(buf, flags[s]), cv2.COLOR_BGR2RGB)
        found["opencv"] = ocv
    with contextlib.suppress(Exception):
        from turbojpeg import TJPF_RGB, TurboJPEG

        tj = TurboJPEG()

        def pytj(b: bytes, s: int) -> Callable[[], object]:
            return lambda: tj.decode(b, pixel_format=TJPF_RGB, scaling_factor=(1, s))
        found["turbojpeg"] = pytj
    with contextlib.suppress(ImportError):
        import simplejpeg

        def sj(b: bytes, s: int) -> Callable[[], object]:
            h, w, _, _ = simplejpeg.decode_jpeg_header(b)
            return lambda: simplejpeg.decode_jpeg(b, colorspace="RGB", min_height=h // s, min_width=w // s)
        found["simplejpeg"] = sj

        def sj_fast(b: bytes, s: int) -> Callable[[], object]:
            h, w, _, _ = simplejpeg.decode_jpeg_header(b)
            return lambda: simplejpeg.decode_jpeg(b, colorspace="RGB", fastdct=True, fastupsample=True,
                                                  min_height=h // s, min_width=w // s)
        found["simplejpeg-fast"] = sj_fast
    with contextlib.suppress(Exception):
        import torch
        import torchvision.io as tvio

        torch.set_num_threads(1)

        def tv(b: bytes, s: int) -> Callable[[], object]:
            t = torch.frombuffer(bytearray(b), dtype=torch.uint8)
            return lambda: tvio.decode_jpeg(t)
        found["torchvision"] = tv
    return found


SCALED_OK = {"pil", "pillow-simd", "opencv", "turbojpeg", "simplejpeg", "simplejpeg-fast"}


def _dali_rows(imgs: list[dict[str, Any]], root: Path) -> list[dict[str, Any]]:
    """DALI's CPU decoder, one thread, batches of one image repeated; per-image process CPU."""
    from nvidia.dali import fn, pipeline_def, types

    rows = []
    batch = 8
    for m in imgs:
        data = np.frombuffer((root / m["file"]).read_bytes(), np.uint8)

        @pipeline_def(batch_size=batch, num_threads=1, device_id=None, prefetch_queue_depth=1)
        def pipe(data: np.ndarray = data):  # type: ignore[no-untyped-def]
            enc = fn.external_source(source=lambda: [data] * batch, batch=True)
            return fn.decoders.image(enc, device="cpu", output_type=types.RGB)

        pl = pipe()
        pl.build()
        t = timed(pl.run, clock=time.process_time, repeats=5)
        rows.append({**m, "decoder": "dali-cpu", "scale": 1, "cpu_s": t["cpu_s"] / batch,
                     "cpu_s_p25": t["cpu_s_p25"] / batch, "cpu_s_p75": t["cpu_s_p75"] / batch,
                     "cpu_s_min": t["cpu_s_min"] / batch, "wall_s": t["wall_s"] / batch,
                     "clock": "process_time, batch of 8, num_threads=1"})
        del pl
    return rows


def cmd_decode(args: argparse.Namespace) -> None:
    root = Path(args.dir)
    manifest = json.loads((root / "manifest.json").read_text())
    decs = _decoders()
    only = set(args.only.split(",")) if args.only else None
    rows: list[dict[str, Any]] = []
    jpegs = [m for m in manifest if m["format"] == "jpeg"]
    for key, make in decs.items():
        if only and key not in only:
            continue
        for m in jpegs:
            b = (root / m["file"]).read_bytes()
            for s in [1, *SCALES] if key in SCALED_OK else [1]:
                if s > 1 and m["width"] < 500:
                    continue
                fn = make(b, s)
                shape = np.asarray(fn()).shape
                t = timed(fn)
                rows.append({**m, "decoder": key, "scale": s, "out_shape": list(shape), **t})
                print(f"{key:16s} {m['file']:24s} 1/{s}  {t['cpu_s'] * 1e3:8.3f} ms cpu  {shape}", flush=True)
    if (not only or "dali-cpu" in only):
        try:
            rows += _dali_rows(jpegs, root)
        except Exception as e:
            rows.append({"decoder": "dali-cpu", "error": f"{type(e).__name__}: {str(e)[:400]}"})
            print("dali-cpu:", rows[-1]["error"])
    rows += _other_formats(manifest, root) if not only or "raw" in only else []
    _write_part(args.out, "decode", rows)


def _other_formats(manifest: list[dict[str, Any]], root: Path) -> list[dict[str, Any]]:
    rows: list[dict[str, Any]] = []
    pngs = [m for m in manifest if m["format"] == "png"]
    with contextlib.suppress(ImportError):
        from PIL import Image

        for m in pngs:
            b = (root / m["file"]).read_bytes()
            t = timed(lambda b=b: Image.open(io.BytesIO(b)).convert("RGB"))
            rows.append({**m, "decoder": "pil", "scale": 1, **t})
    with contextlib.suppress(ImportError):
        import cv2

        for m in pngs:
            buf = np.frombuffer((root / m["file"]).read_bytes(), np.uint8)
            t = timed(lambda buf=buf: cv2.imdecode(buf, cv2.IMREAD_COLOR))
            rows.append({**m, "decoder": "opencv", "scale": 1, **t})
    for w, h in SIZES:
        raw = (root / f"img_{w}x{h}.raw").read_bytes()
        npy = (root / f"img_{w}x{h}.npy").read_bytes()
        base = {"width": w, "height": h, "quality": None, "scale": 1}
        # frombuffer alone is a view (no per-byte work); a loader that hands the array on copies it
        t = timed(lambda raw=raw, w=w, h=h: np.frombuffer(raw, np.uint8).reshape(h, w, 3).copy())
        rows.append({**base, "format": "raw", "decoder": "none", "bytes": len(raw), "op": "frombuffer+copy", **t})
        t = timed(lambda npy=npy: np.load(io.BytesIO(npy)))
        rows.append({**base, "format": "npy", "decoder": "none", "bytes": len(npy), "op": "np.load(BytesIO)", **t})
    rows += _token_rows()
    return rows


def _token_rows() -> list[dict[str, Any]]:
    path = Path("/tmp/lc_tokens.bin")
    n = 50_000_000
    if not path.exists() or path.stat().st_size != 4 * n:
        np.random.default_rng(0).integers(0, 60_000, n, dtype=np.int32).tofile(path)
    rows = []
    for dtype in (np.int32, np.uint16):
        mm = np.memmap(path, dtype=dtype, mode="r")
        for seq in (1024, 2048, 4096, 8192, 32768):
            rng = np.random.default_rng(seq)
            starts = iter(rng.integers(0, len(mm) - seq - 1, 10_000_000))
            _ = np.array(mm[:])  # page-cache warm, as a dataset re-read every epoch would be

            def one(mm: np.memmap = mm, seq: int = seq, starts: Any = starts) -> object:
                s = next(starts)
                return np.array(mm[s:s + seq + 1]).astype(np.int64)
            t = timed(one)
            rows.append({"format": "tokens", "decoder": "none", "dtype": np.dtype(dtype).name, "tokens": seq + 1,
                         "bytes": (seq + 1) * np.dtype(dtype).itemsize, "op": "memmap slice + astype(int64)", **t})
    return rows


# ---------------------------------------------------------------- augmentation


def _boxes(w: int, h: int) -> list[tuple[str, tuple[int, int, int, int]]]:
    """Crop boxes (top, left, height, width) of 8 %, 30 % and 100 % of the image's area, aspect 1."""
    out = []
    for frac in (0.08, 0.3, 1.0):
        side = round((frac * w * h) ** 0.5)
        side = min(side, w, h)
        out.append((f"{frac:.2f}", ((h - side) // 2, (w - side) // 2, side, side)))
    return out


def _pil_chain(img: Any, box: tuple[int, int, int, int], res: int, dtype: str) -> Any:
    """torchvision's RandomResizedCrop + RandomHorizontalFlip + ToTensor + Normalize, as its
    functional code does it (PIL crop + BILINEAR resize, FLIP_LEFT_RIGHT, from_numpy + permute +
    float/255, (x - mean) / std), so it runs without torchvision (Pillow-SIMD's venv)."""
    import torch
    from PIL import Image

    top, left, h, w = box
    im = img.crop((left, top, left + w, top + h)).resize((res, res), Image.BILINEAR)
    im = im.transpose(Image.FLIP_LEFT_RIGHT)
    t = torch.from_numpy(np.array(im, np.uint8, copy=True)).permute(2, 0, 1).contiguous()
    if dtype == "uint8":
        return t
    t = t.float().div(255)
    mean = torch.tensor(MEAN).view(3, 1, 1)
    std = torch.tensor(STD).view(3, 1, 1)
    return t.sub_(mean).div_(std)


def _cv_chain(arr: np.ndarray, box: tuple[int, int, int, int], res: int, dtype: str) -> Any:
    import cv2
    import torch

    top, left, h, w = box
    out = cv2.resize(arr[top:top + h, left:left + w], (res, res), interpolation=cv2.INTER_LINEAR)
    out = out[:, ::-1]
    if dtype == "uint8":
        return torch.from_numpy(np.ascontiguousarray(out.transpose(2, 0, 1)))
    f = (out.astype(np.float32) * (1 / 255.0) - np.array(MEAN, np.float32)) / np.array(STD, np.float32)
    return torch.from_numpy(np.ascontiguousarray(f.transpose(2, 0, 1)))


def _eval_chain(img: Any, res: int) -> Any:
    import torch
    from PIL import Image

    short = int(res * 256 / 224)
    w, h = img.size
    nw, nh = (short, int(short * h / w)) if w <= h else (int(short * w / h), short)
    im = img.resize((nw, nh), Image.BILINEAR)
    left, top = (nw - res) // 2, (nh - res) // 2
    im = im.crop((left, top, left + res, top + res))
    t = torch.from_numpy(np.array(im, np.uint8, copy=True)).permute(2, 0, 1).contiguous().float().div(255)
    return t.sub_(torch.tensor(MEAN).view(3, 1, 1)).div_(torch.tensor(STD).view(3, 1, 1))


def _tv_chain_rows(img: Any, w: int, h: int) -> list[dict[str, Any]]:
    """The same chain through torchvision.transforms (random crops): checks the functional copy."""
    rows: list[dict[str, Any]] = []
    with contextlib.suppress(ImportError):
        import torch
        from torchvision import transforms as T  # noqa: N812 - torchvision's own idiom

        for res in (160, 224):
            tr = T.Compose([T.RandomResizedCrop(res), T.RandomHorizontalFlip(), T.ToTensor(),
                            T.Normalize(MEAN, STD)])
            torch.manual_seed(0)
            t = timed(lambda tr=tr: tr(img), repeats=9)
            rows.append({"chain": "torchvision.transforms train (random crop)", "lib": "pil", "width": w,
                         "height": h, "res": res, "dtype": "float32", "crop_frac": "random 0.08-1 (mean ~0.54)",
                         "crop_in_px": None, **t})
    return rows


def cmd_augment(args: argparse.Namespace) -> None:
    import PIL
    import torch
    from PIL import Image

    torch.set_num_threads(1)
    root = Path(args.dir)
    lib_pil = "pillow-simd" if ".post" in PIL.__version__ else "pil"
    rows: list[dict[str, Any]] = []
    try:
        import cv2

        cv2.setNumThreads(1)
        have_cv = True
    except ImportError:
        have_cv = False
    for w, h in [(500, 375), (1024, 768), (2000, 1500)]:
        img = Image.open(root / f"img_{w}x{h}_q90.jpg").convert("RGB")
        arr = np.asarray(img)
        for frac, box in _boxes(w, h):
            for res in OUT_RES:
                for dtype in ("float32", "uint8"):
                    t = timed(lambda box=box, res=res, dtype=dtype: _pil_chain(img, box, res, dtype))  # noqa: B023 - called at once
                    rows.append({"chain": "train", "lib": lib_pil, "width": w, "height": h, "crop_frac": frac,
                                 "crop_in_px": box[2] * box[3], "res": res, "out_px": res * res, "dtype": dtype, **t})
                    if have_cv and lib_pil == "pil":
                        t = timed(lambda box=box, res=res, dtype=dtype: _cv_chain(arr, box, res, dtype))  # noqa: B023 - called at once
                        rows.append({"chain": "train", "lib": "opencv", "width": w, "height": h, "crop_frac": frac,
                                     "crop_in_px": box[2] * box[3], "res": res, "out_px": res * res,
                                     "dtype": dtype, **t})
            print(f"augment {w}x{h} crop {frac} done", flush=True)
        for res in OUT_RES:
            t = timed(lambda res=res: _eval_chain(img, res))  # noqa: B023 - called at once
            rows.append({"chain": "eval", "lib": lib_pil, "width": w, "height": h, "crop_in_px": w * h,
                         "res": res, "out_px": res * res, "dtype": "float32", **t})
        rows += _tv_chain_rows(img, w, h)
    _write_part(args.out, "augment", rows)


# ---------------------------------------------------------------- collate, copy, transfer


def cmd_collate(args: argparse.Namespace) -> None:
    import torch
    from torch.utils.data import default_collate

    torch.set_num_threads(1)
    rows: list[dict[str, Any]] = []
    for dtype in (torch.float32, torch.uint8):
        for res in (128, 224, 288):
            for bs in (16, 64, 256):
                items = [torch.full((3, res, res), 1, dtype=dtype) for _ in range(bs)]
                nbytes = bs * 3 * res * res * items[0].element_size()
                t = timed(lambda items=items: default_collate(items), repeats=7)
                rows.append({"op": "default_collate", "dtype": str(dtype).split(".")[1], "res": res, "batch": bs,
                             "batch_bytes": nbytes, **t})
                src = torch.cat(items).view(bs, 3, res, res)
                dst = torch.empty_like(src)
                t = timed(lambda src=src, dst=dst: dst.copy_(src), repeats=7)
                rows.append({"op": "copy_ (pin-memory stand-in: pageable to pageable)",
                             "dtype": str(dtype).split(".")[1], "res": res, "batch": bs, "batch_bytes": nbytes, **t})
        print("collate", dtype, "done", flush=True)
    try:
        torch.empty(8).pin_memory()
        rows.append({"op": "pin_memory", "note": "pinning works here"})
    except Exception as e:
        rows.append({"op": "pin_memory", "error": f"{type(e).__name__}: {str(e)[:200]}"})
    _write_part(args.out, "collate", rows)


class _Batches:
    """A map-style dataset whose items are whole batches (DataLoader batch_size=None)."""

    def __init__(self, n: int, shape: tuple[int, ...], dtype: Any) -> None:
        self.n, self.shape, self.dtype = n, shape, dtype

    def __len__(self) -> int:
        return self.n

    def __getitem__(self, i: int) -> Any:
        import torch

        return torch.full(self.shape, i % 7, dtype=self.dtype)  # writes every byte, as a collate does


def _run_loader(ds: Any, workers: int, threads_per_worker: int | None = None) -> dict[str, float]:
    import torch
    from torch.utils.data import DataLoader

    def init(_: int) -> None:
        if threads_per_worker is not None:
            torch.set_num_threads(threads_per_worker)

    c_self, c_kids, w0 = _rusage_self(), _rusage_children(), time.perf_counter()
    dl = DataLoader(ds, batch_size=None, num_workers=workers, worker_init_fn=init if workers else None,
                    prefetch_factor=2 if workers else None)
    n = 0
    for _ in dl:
        n += 1
    del dl
    wall = time.perf_counter() - w0
    return {"batches": n, "main_cpu_s_per_batch": (_rusage_self() - c_self) / n,
            "worker_cpu_s_per_batch": (_rusage_children() - c_kids) / n, "wall_s_per_batch": wall / n}


def cmd_transfer(args: argparse.Namespace) -> None:
    import torch

    torch.set_num_threads(1)
    rows: list[dict[str, Any]] = []
    for dtype in (torch.uint8, torch.float32):
        for res, bs in [(64, 16), (128, 64), (224, 64), (224, 128), (224, 256)]:
            shape = (bs, 3, res, res)
            nbytes = int(np.prod(shape)) * torch.empty(0, dtype=dtype).element_size()
            n = max(20, min(200, int(4e9 / nbytes)))
            ds = _Batches(n, shape, dtype)
            base = _run_loader(ds, 0)
            row = {"dtype": str(dtype).split(".")[1], "shape": list(shape), "batch_bytes": nbytes,
                   "inprocess_cpu_s_per_batch": base["main_cpu_s_per_batch"], "inprocess_wall_s_per_batch":
                   base["wall_s_per_batch"], "batches": n}
            for workers in (1, 2):
                r = _run_loader(ds, workers)
                row[f"w{workers}"] = r
            rows.append(row)
            print(f"transfer {nbytes / 1e6:8.2f} MB  inproc {base['main_cpu_s_per_batch'] * 1e3:.2f} ms  "
                  f"w1 main {row['w1']['main_cpu_s_per_batch'] * 1e3:.2f} ms worker "
                  f"{row['w1']['worker_cpu_s_per_batch'] * 1e3:.2f} ms  "
                  f"w2 wall {row['w2']['wall_s_per_batch'] * 1e3:.2f} ms",
                  flush=True)
    _write_part(args.out, "transfer", rows)


# ---------------------------------------------------------------- end-to-end (validation) and threads


class _Folder:
    """torchvision ImageFolder's work per item: open, PIL decode, convert RGB, the train chain."""

    def __init__(self, files: list[Path], res: int, chain: str = "pil", cv_threads: int | None = None) -> None:
        self.files, self.res, self.chain, self.cv_threads = files, res, chain, cv_threads

    def __len__(self) -> int:
        return len(self.files)

    def __getitem__(self, i: int) -> Any:
        import torch
        from PIL import Image

        rng = np.random.default_rng(i)
        if self.chain == "pil":
            with open(self.files[i], "rb") as f:
                img = Image.open(f).convert("RGB")
            w, h = img.size
        else:
            import cv2

            if self.cv_threads is not None:
                cv2.setNumThreads(self.cv_threads)
            arr = cv2.cvtColor(cv2.imread(str(self.files[i]), cv2.IMREAD_COLOR), cv2.COLOR_BGR2RGB)
            h, w = arr.shape[:2]
        frac = rng.uniform(0.08, 1.0)
        side = min(int((frac * w * h) ** 0.5), w, h)
        top, left = int(rng.integers(0, h - side + 1)), int(rng.integers(0, w - side + 1))
        box = (top, left, side, side)
        x = _pil_chain(img, box, self.res, "float32") if self.chain == "pil" else _cv_chain(arr, box, self.res,
                                                                                             "float32")
        return x, torch.tensor(0)


def _e2e_one(files: list[Path], res: int, workers: int, bs: int, epochs: int = 2, chain: str = "pil",
             threads_per_worker: int | None = None, cv_threads: int | None = None) -> dict[str, Any]:
    import torch
    from torch.utils.data import DataLoader

    def init(_: int) -> None:
        if threads_per_worker is not None:
            torch.set_num_threads(threads_per_worker)

    ds = _Folder(files, res, chain, cv_threads)
    dl = DataLoader(ds, batch_size=bs, shuffle=True, num_workers=workers, drop_last=False,
                    worker_init_fn=init if workers else None, persistent_workers=workers > 0)
    per_epoch = []
    c0, k0 = _rusage_self(), _rusage_children()
    load0 = os.getloadavg()[0]
    for _ in range(epochs):
        w0 = time.perf_counter()
        n = sum(int(x.shape[0]) for x, _ in dl)
        per_epoch.append(n / (time.perf_counter() - w0))
    main_cpu = _rusage_self() - c0
    del dl
    kids = _rusage_children() - k0
    total = len(files) * epochs
    return {"res": res, "workers": workers, "batch": bs, "chain": chain, "images": total,
            "threads_per_worker": threads_per_worker, "cv_threads": cv_threads,
            "images_per_s_by_epoch": per_epoch, "images_per_s": max(per_epoch),
            "main_cpu_s_per_image": main_cpu / total, "worker_cpu_s_per_image": kids / total,
            "loadavg_1min_at_start": load0}


def cmd_e2e(args: argparse.Namespace) -> None:
    import torch

    files = sorted((Path(args.dir) / "folder" / "class0").glob("*.jpg"))[: args.images]
    rows = []
    torch.set_num_threads(1)
    for res in (224, 160):
        for workers in (0, 1, 2):
            for bs in (64, 128, 256):
                r = _e2e_one(files, res, workers, bs)
                rows.append(r)
                print(f"e2e res {res} workers {workers} batch {bs}: {r['images_per_s']:.0f} img/s "
                      f"(main cpu {r['main_cpu_s_per_image'] * 1e3:.2f} ms/img, workers "
                      f"{r['worker_cpu_s_per_image'] * 1e3:.2f} ms/img)", flush=True)
    _write_part(args.out, "e2e", rows)


def cmd_threads(args: argparse.Namespace) -> None:
    import torch

    files = sorted((Path(args.dir) / "folder" / "class0").glob("*.jpg"))[: args.images]
    rows = []
    cases: Iterable[tuple[str, int, int | None, int | None, int]] = [
        ("pil", 2, 1, None, 1), ("pil", 2, 2, None, 1), ("pil", 2, 1, None, 2), ("pil", 2, 2, None, 2),
        ("opencv", 2, 1, 1, 1), ("opencv", 2, 1, 2, 1), ("opencv", 2, 1, 4, 1), ("pil", 1, 1, None, 1),
        ("pil", 1, 2, None, 1),
    ]
    for chain, workers, tpw, cvt, main_threads in cases:
        torch.set_num_threads(main_threads)
        r = _e2e_one(files, 224, workers, 64, chain=chain, threads_per_worker=tpw, cv_threads=cvt)
        r["main_torch_threads"] = main_threads
        rows.append(r)
        print(f"threads {chain} workers {workers} torch/worker {tpw} cv {cvt} main {main_threads}: "
              f"{r['images_per_s']:.0f} img/s", flush=True)
    _write_part(args.out, "threads", rows)


# ---------------------------------------------------------------- parts, merge


def _write_part(path: str, section: str, rows: list[dict[str, Any]]) -> None:
    part = {"section": section, "date": dt.datetime.now(dt.UTC).isoformat(timespec="seconds"),
            "interpreter": sys.executable, "versions": versions(), "cpu": cpu_info(),
            "loadavg_at_end": os.getloadavg(), "rows": rows}
    Path(path).write_text(json.dumps(part, indent=1, default=str))
    print("wrote", path, len(rows), "rows")


def cpu_key(info: dict[str, Any]) -> str:
    fam, model = info.get("cpu_family"), info.get("model")
    if info.get("vendor_id") == "AuthenticAMD" and fam == "26":
        return "epyc-zen5-kvm"
    return f"{info.get('vendor_id', 'cpu')}-f{fam}m{model}".lower()


def cmd_merge(args: argparse.Namespace) -> None:
    parts = [json.loads(Path(p).read_text()) for p in args.parts]
    key = cpu_key(parts[0]["cpu"])
    out = RESULTS / f"loader_costs_{key}.json"
    old = json.loads(out.read_text()) if out.exists() else {}
    merged: dict[str, Any] = {
        "what": __doc__.split("\n\n")[0] if __doc__ else "",
        "method": "CPU seconds per call: median of 7 repeats (quartiles and min beside it), thread_time for "
                  "decoders on the calling thread, process_time/getrusage where a library or a child process "
                  "does the work; wall time beside. The machine's 2 cores were shared with other jobs.",
        "cpu_key": key, "cpu": parts[0]["cpu"], "runs": old.get("runs", {}), "fit": old.get("fit", {}),
    }
    for p in parts:
        run_key = f"{p['section']}:{Path(p['interpreter']).parent.parent.name}{args.tag}"
        merged["runs"][run_key] = {k: p[k] for k in ("section", "date", "interpreter", "versions", "loadavg_at_end",
                                                     "rows")}
    out.write_text(json.dumps(merged, indent=1, default=str))
    print("wrote", out, "runs:", sorted(merged["runs"]))


# ---------------------------------------------------------------- fit (coefficients for presets/decoders.yaml)

HELD_OUT_SIZES = {(800, 600), (1024, 768)}
HELD_OUT_QUALITY = 90
HELD_OUT_RES = {176, 256}


def nnls_rel(x: np.ndarray, y: np.ndarray, names: list[str]) -> dict[str, float]:
    """Least squares on relative error (rows weighted by 1/y), every coefficient >= 0: the best
    all-non-negative solution over subsets of the terms (3-4 terms, so the search is exhaustive)."""
    from itertools import combinations

    w = 1.0 / y
    best: tuple[float, dict[str, float]] | None = None
    k = x.shape[1]
    for r in range(1, k + 1):
        for cols in combinations(range(k), r):
            coef, *_ = np.linalg.lstsq(x[:, cols] * w[:, None], y * w, rcond=None)
            if (coef < 0).any():
                continue
            sse = float(np.sum(((x[:, cols] @ coef - y) * w) ** 2))
            if best is None or sse < best[0] - 1e-12:
                best = (sse, {names[c]: float(v) for c, v in zip(cols, coef, strict=True)})
    assert best is not None
    return {n: best[1].get(n, 0.0) for n in names}


def _errors(pred: np.ndarray, y: np.ndarray) -> dict[str, float]:
    e = np.abs(pred / y - 1)
    return {"n": len(y), "median_abs_pct": float(np.median(e) * 100), "max_abs_pct": float(e.max() * 100),
            "geomean_abs_pct": float((np.exp(np.mean(np.abs(np.log(pred / y)))) - 1) * 100)}


def _fit_split(rows: list[dict[str, Any]], feats: Callable[[dict[str, Any]], list[float]], names: list[str],
               held: Callable[[dict[str, Any]], bool]) -> dict[str, Any]:
    train = [r for r in rows if not held(r)]
    test = [r for r in rows if held(r)]
    x = np.array([feats(r) for r in train])
    y = np.array([r["cpu_s"] for r in train])
    coef = nnls_rel(x, y, names)
    c = np.array([coef[n] for n in names])
    out: dict[str, Any] = {"coef": coef, "train": _errors(x @ c, y)}
    if test:
        xt = np.array([feats(r) for r in test])
        yt = np.array([r["cpu_s"] for r in test])
        out["held_out"] = _errors(xt @ c, yt)
        out["held_out_worst"] = max(({"file": r.get("file"), "scale": r.get("scale"), "res": r.get("res"),
                                      "pred_over_measured": float(p / m)} for r, p, m in
                                     zip(test, xt @ c, yt, strict=True)),
                                    key=lambda d: abs(np.log(d["pred_over_measured"])))
    return out


KNEE_MP = 0.25  # decoded megapixels whose 4-byte/pixel buffer fills the reference core's 1 MB L2 cache
BEYOND_L3_MP = 8.0  # 4000x3000 (12 MP, 36 MB RGB) outgrows the 32 MB L3: outside the fitted range


def _decode_held(r: dict[str, Any]) -> bool:
    return (r["width"], r["height"]) in HELD_OUT_SIZES or r.get("quality") == HELD_OUT_QUALITY


def _decode_feats(r: dict[str, Any]) -> list[float]:
    s = r.get("scale", 1)
    mp_in = r["width"] * r["height"] / 1e6
    mp_out = mp_in / (s * s)
    # A step, not a hinge: once the decoded buffer outgrows L2 every pixel's writes and the copy miss
    # it (a hinge fitted worse on the held-out 800x600 and 1024x768 images: PIL 21 % vs 15 % median).
    return [1.0, mp_out, mp_out if mp_out > KNEE_MP else 0.0, r["bytes"] / 1e6, mp_in]


DECODE_TERMS = ["fixed_s", "s_per_decoded_mp", "s_per_decoded_mp_if_above_knee", "s_per_compressed_mb",
                "s_per_stored_mp"]


def _beyond(rows: list[dict[str, Any]], coef: dict[str, float]) -> dict[str, Any]:
    big = [r for r in rows if r["width"] * r["height"] / 1e6 > BEYOND_L3_MP and r.get("scale", 1) == 1]
    if not big:
        return {}
    c = np.array([coef[n] for n in DECODE_TERMS])
    pred = np.array([_decode_feats(r) for r in big]) @ c
    return {"beyond_l3_full_size": _errors(pred, np.array([r["cpu_s"] for r in big]))}


def fit_decode(rows: list[dict[str, Any]]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    jpeg = [r for r in rows if r.get("format") == "jpeg" and "cpu_s" in r]
    inside = [r for r in jpeg if r["width"] * r["height"] / 1e6 <= BEYOND_L3_MP]
    for dec in sorted({r["decoder"] for r in jpeg}):
        sel = [r for r in inside if r["decoder"] == dec]
        has_scaling = any(r.get("scale", 1) > 1 for r in sel)
        names = DECODE_TERMS if has_scaling else DECODE_TERMS[:4]
        k = len(names)
        res = _fit_split(sel, lambda r, k=k: _decode_feats(r)[:k], names, _decode_held)
        res["coef"] = {n: res["coef"].get(n, 0.0) for n in DECODE_TERMS}
        full = [r for r in sel if r.get("scale", 1) == 1]
        c = np.array([res["coef"][n] for n in DECODE_TERMS])
        held_full = [r for r in full if _decode_held(r)]
        if held_full:
            res["held_out_full_size"] = _errors(np.array([_decode_feats(r) for r in held_full]) @ c,
                                                np.array([r["cpu_s"] for r in held_full]))
        res.update(_beyond([r for r in jpeg if r["decoder"] == dec], res["coef"]))
        out[dec] = {"fit": res}
    for fmt in ("png",):
        for dec in sorted({r["decoder"] for r in rows if r.get("format") == fmt}):
            sel = [r for r in rows if r.get("format") == fmt and r["decoder"] == dec]
            out[f"{fmt}:{dec}"] = {"fit": _fit_split(
                sel, lambda r: [1.0, r["width"] * r["height"] / 1e6], ["fixed_s", "s_per_decoded_mp"],
                lambda r: (r["width"], r["height"]) in HELD_OUT_SIZES)}
    for fmt in ("raw", "npy", "tokens"):
        sel = [r for r in rows if r.get("format") == fmt]
        if sel:
            out[fmt] = _fit_split(sel, lambda r: [1.0, r["bytes"] / 1e6], ["fixed_s", "s_per_mb"],
                                  lambda r: r.get("tokens") in (4097,) or (r.get("width"), r.get("height"))
                                  in HELD_OUT_SIZES)
    return out


def fit_augment(rows: list[dict[str, Any]]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    names = ["fixed_s", "s_per_crop_input_mp", "s_per_output_mp"]

    def held(r: dict[str, Any]) -> bool:
        return r["res"] in HELD_OUT_RES or (r["width"], r["height"]) == (1024, 768)

    for chain in ("train", "eval"):
        for lib in sorted({r["lib"] for r in rows if r.get("chain") == chain}):
            for dtype in ("float32", "uint8"):
                sel = [r for r in rows if r.get("chain") == chain and r["lib"] == lib and r["dtype"] == dtype]
                if sel:
                    out[f"{chain}:{lib}:{dtype}"] = _fit_split(
                        sel, lambda r: [1.0, r["crop_in_px"] / 1e6, r["out_px"] / 1e6], names, held)
    return out


MMAP_MB = 33.554432  # glibc's largest mmap threshold (32 MiB): bigger blocks are fresh, page-faulting maps


def fit_bytes(rows: list[dict[str, Any]], op: str, key: str = "cpu_s") -> dict[str, Any]:
    sel = [{**r, "cpu_s": r[key]} for r in rows if r.get("op", "").startswith(op) and key in r]
    return _fit_split(sel, lambda r: [1.0, r["batch_bytes"] / 1e6,
                                      r["batch_bytes"] / 1e6 if r["batch_bytes"] / 1e6 > MMAP_MB else 0.0],
                      ["fixed_s", "s_per_mb", "s_per_mb_if_above_mmap_threshold"], lambda r: r.get("batch") == 64)


def fit_transfer(rows: list[dict[str, Any]]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for w in ("w1", "w2"):
        recv = [{"batch_bytes": r["batch_bytes"], "cpu_s": r[w]["main_cpu_s_per_batch"], "shape": r["shape"]}
                for r in rows]
        send = [{"batch_bytes": r["batch_bytes"], "shape": r["shape"],
                 "cpu_s": max(r[w]["worker_cpu_s_per_batch"] - r["inprocess_cpu_s_per_batch"], 1e-6)} for r in rows]

        def held(r: dict[str, Any]) -> bool:
            return r["shape"][0] == 128

        names = ["fixed_s", "s_per_mb"]
        out[f"{w}:main_receive"] = _fit_split(recv, lambda r: [1.0, r["batch_bytes"] / 1e6], names, held)
        out[f"{w}:worker_send_extra"] = _fit_split(send, lambda r: [1.0, r["batch_bytes"] / 1e6], names, held)
    return out


def cmd_fit(args: argparse.Namespace) -> None:
    path = Path(args.results) if args.results else next(RESULTS.glob("loader_costs_*.json"))
    data = json.loads(path.read_text())
    runs = data["runs"]
    rows = {sec: [r for k, v in runs.items() if k.startswith(sec + ":") for r in v["rows"]]
            for sec in ("decode", "augment", "collate", "transfer")}
    fit: dict[str, Any] = {"split": {
        "decode": f"held out: every quality-{HELD_OUT_QUALITY} image and every image of "
                  f"{sorted(HELD_OUT_SIZES)} px; fitted on the rest (250x188, 500x375, 2000x1500, 4000x3000 "
                  "at q75 and q95)",
        "augment": f"held out: output sizes {sorted(HELD_OUT_RES)} px and the 1024x768 input; fitted on the rest",
        "collate": "held out: batch 64; fitted on batch 16 and 256",
        "transfer": "held out: batch 128 (224 px); fitted on the rest",
        "weighting": "least squares on relative error, coefficients >= 0"}}
    if rows["decode"]:
        fit["decode"] = fit_decode(rows["decode"])
    if rows["augment"]:
        fit["augment"] = fit_augment(rows["augment"])
    if rows["collate"]:
        fit["collate"] = {"default_collate": fit_bytes(rows["collate"], "default_collate"),
                          "copy": fit_bytes(rows["collate"], "copy_")}
    if rows["transfer"]:
        fit["transfer"] = fit_transfer(rows["transfer"])
    data["fit"] = fit
    path.write_text(json.dumps(data, indent=1, default=str))
    print(json.dumps(fit, indent=1, default=str)[:20000])


# ---------------------------------------------------------------- presets/decoders.yaml body

PRESET_KEYS = {"pil": "pil", "pillow-simd": "pillow-simd", "opencv": "opencv", "turbojpeg": "turbojpeg",
               "simplejpeg": "simplejpeg", "torchvision": "torchvision", "dali-cpu": "dali-cpu"}
CALLS = {"pil": "Image.open(BytesIO).convert('RGB') (what torchvision's pil_loader does); draft() for DCT scaling",
         "pillow-simd": "same calls as pil, Pillow-SIMD built here with -mavx2 against Debian's libjpeg62-turbo",
         "opencv": "cv2.imdecode(IMREAD_COLOR or IMREAD_REDUCED_COLOR_2/4/8) + cvtColor(BGR2RGB), setNumThreads(1)",
         "turbojpeg": "PyTurboJPEG TurboJPEG().decode(pixel_format=TJPF_RGB, scaling_factor=(1, s)) over Debian's "
                      "libturbojpeg",
         "simplejpeg": "simplejpeg.decode_jpeg(colorspace='RGB', min_height/min_width for DCT scaling), default "
                       "(accurate) DCT",
         "torchvision": "torchvision.io.decode_jpeg(uint8 tensor) -> CHW uint8, torch.set_num_threads(1)",
         "dali-cpu": "DALI fn.decoders.image(device='cpu') in a pipeline with num_threads=1, device_id=None, batch 8"}


def _ms(x: float) -> str:
    return f"{x * 1e3:.4g} ms"


def _err(r: dict[str, Any]) -> str:
    h = r.get("held_out")
    t = r["train"]
    out = f"in-sample median {t['median_abs_pct']:.0f} %, max {t['max_abs_pct']:.0f} % (n={t['n']})"
    if h:
        out = (f"held-out median {h['median_abs_pct']:.0f} %, max {h['max_abs_pct']:.0f} % (n={h['n']}); " + out)
    return out


def decoder_entries(fit: dict[str, Any], versions_by_key: dict[str, str], results_name: str) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, preset in PRESET_KEYS.items():
        f = fit["decode"].get(key)
        if not f:
            continue
        r = f["fit"]
        c = r["coef"]
        scaled = c["s_per_stored_mp"] > 0 or key in SCALED_OK
        src = f"{results_name} fit.decode.{key}.fit"
        e: dict[str, Any] = {
            "label": f"{versions_by_key.get(key, key)}", "measured": True, "calls": CALLS[key],
            "formats": ["jpeg", "png"] if f"png:{key}" in fit["decode"] else ["jpeg"],
            "dct_scaling": scaled,
            "decode_s_fixed": _ms(c["fixed_s"]),
            "decode_s_per_megapixel": _ms(c["s_per_decoded_mp"]),
            "decode_s_per_megapixel_if_above_knee": _ms(c["s_per_decoded_mp_if_above_knee"]),
            "knee_megapixels": KNEE_MP,
            "decode_s_per_stored_megapixel": _ms(c["s_per_stored_mp"]),
            "decode_s_per_megabyte": _ms(c["s_per_compressed_mb"]),
            "fit_error": _err(r),
        }
        if "held_out_full_size" in r:
            h = r["held_out_full_size"]
            e["fit_error_full_size"] = f"held-out full-size decodes: median {h['median_abs_pct']:.0f} %, " \
                                       f"max {h['max_abs_pct']:.0f} % (n={h['n']})"
        if "beyond_l3_full_size" in r:
            b = r["beyond_l3_full_size"]
            e["beyond_range"] = f"4000x3000 (12 MP, outside the fit): model off by median {b['median_abs_pct']:.0f} " \
                                f"%, max {b['max_abs_pct']:.0f} % (n={b['n']})"
        png = fit["decode"].get(f"png:{key}")
        if png:
            pc = png["fit"]["coef"]
            e["png_s_fixed"] = _ms(pc["fixed_s"])
            e["png_s_per_megapixel"] = _ms(pc["s_per_decoded_mp"])
            e["png_fit_error"] = _err(png["fit"])
        fields = ("decode_s_fixed", "decode_s_per_megapixel", "decode_s_per_megapixel_if_above_knee",
                  "decode_s_per_stored_megapixel", "decode_s_per_megabyte", "fit_error")
        e["sources"] = dict.fromkeys(fields, src)
        e["sources"]["knee_megapixels"] = "I: 1 MB L2 per core on the reference CPU (lscpu: L2 2 MiB, 2 instances) " \
                                          "/ 4 bytes per pixel (Pillow keeps RGB as RGBX) = 0.25 MP"
        e["sources"]["label"] = f"{results_name} runs.decode:*.versions"
        if png:
            e["sources"].update(dict.fromkeys(("png_s_fixed", "png_s_per_megapixel", "png_fit_error"),
                                              f"{results_name} fit.decode.png:{key}.fit"))
        out[preset] = e
    return out


def augment_entries(fit: dict[str, Any], results_name: str) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, r in fit.get("augment", {}).items():
        chain, lib, dtype = key.split(":")
        c = r["coef"]
        name = f"{chain}_{dtype}"
        src = f"{results_name} fit.augment.{key}"
        out.setdefault(lib, {})[name] = {
            "s_fixed": _ms(c["fixed_s"]), "s_per_crop_input_megapixel": _ms(c["s_per_crop_input_mp"]),
            "s_per_output_megapixel": _ms(c["s_per_output_mp"]), "fit_error": _err(r),
            "sources": dict.fromkeys(("s_fixed", "s_per_crop_input_megapixel", "s_per_output_megapixel",
                                      "fit_error"), src)}
    return out


def bytes_entry(r: dict[str, Any], src: str, what: str) -> dict[str, Any]:
    c = r["coef"]
    e = {"what": what, "s_fixed": _ms(c["fixed_s"]), "s_per_megabyte": _ms(c.get("s_per_mb", 0.0))}
    if "s_per_mb_if_above_mmap_threshold" in c:
        e["s_per_megabyte_if_above_mmap_threshold"] = _ms(c["s_per_mb_if_above_mmap_threshold"])
        e["mmap_threshold_megabytes"] = MMAP_MB
    e["fit_error"] = _err(r)
    e["sources"] = dict.fromkeys([k for k in e if k != "what"], src)
    if "mmap_threshold_megabytes" in e:
        e["sources"]["mmap_threshold_megabytes"] = "glibc malloc: M_MMAP_THRESHOLD's dynamic maximum is 32 MiB " \
                                                   "on 64-bit (DEFAULT_MMAP_THRESHOLD_MAX, mallopt(3)) (R)"
    return e


def other_entries(fit: dict[str, Any], results_name: str) -> dict[str, Any]:
    out: dict[str, Any] = {}
    col = fit.get("collate")
    if col:
        out["collate"] = {
            "default_collate": bytes_entry(col["default_collate"], f"{results_name} fit.collate.default_collate",
                                           "torch.utils.data.default_collate of B CHW tensors, main process, "
                                           "1 torch thread; per batch, bytes = the batch tensor's bytes. Above "
                                           "32 MiB the new batch is a fresh mmap and its cost is bimodal here: "
                                           "~0.45 ms/MB when its pages fault in (11 of the 14 such rows: all 10 "
                                           "float32, 1 of 4 uint8) and "
                                           "~0.07 ms/MB otherwise; the fitted step is the relative-LS compromise "
                                           "(see fit_error); plan with 0.45 ms/MB for large float batches"),
            "pin_memory_copy": bytes_entry(col["copy"], f"{results_name} fit.collate.copy",
                                           "Tensor.copy_ of the batch into another pageable tensor: the stand-in "
                                           "for the pin-memory thread's copy (this CPU-only build cannot pin)")}
    tr = fit.get("transfer")
    if tr:
        out["transfer"] = {
            f"{k.replace(':', '_')}": bytes_entry(
                v, f"{results_name} fit.transfer.{k}",
                ("main process CPU per batch received from DataLoader workers (unpickle, shared-memory map)"
                 if "receive" in k else "worker CPU per batch above making it in-process (move to shared "
                 "memory, pickle, queue)") + f", {k[1]} worker(s)")
            for k, v in tr.items()}
    raw = {k: fit["decode"][k] for k in ("raw", "npy", "tokens") if k in fit.get("decode", {})}
    if raw:
        what = {"raw": "np.frombuffer(bytes).reshape(h, w, 3).copy()", "npy": "np.load(BytesIO(npy bytes))",
                "tokens": "np.memmap slice of int32/uint16 tokens + astype(int64), page cache warm"}
        out["raw"] = {k: bytes_entry(v, f"{results_name} fit.decode.{k}", what[k]) for k, v in raw.items()}
    return out


HAND_ENTRIES: dict[str, Any] = {
    "dali-gpu": {
        "label": "DALI fn.decoders.image(device='mixed'): nvJPEG on the GPU",
        "measured": False,
        "formats": ["jpeg"],
        "dct_scaling": False,
        "cpu_share_rule": "the CPU still does the Huffman (entropy) decoding of every image below "
                          "hybrid_huffman_threshold = 1,000,000 pixels (the 'host-side Huffman decoder'); above it "
                          "the 'hybrid' decoder 'still largely uses the CPU'. On GPUs with the hardware JPEG decoder "
                          "(A100 and later) hw_decoder_load = 0.65 of the images go to the hardware decoder and use "
                          "no CPU for decoding. So CPU s per image = (1 - hw_share) x decode_s_per_megabyte x MB, "
                          "hw_share = 0.65 with the hardware decoder, 0 without; the IDCT and colour conversion "
                          "(decode_s_per_megapixel) run on the GPU",
        "decode_s_fixed": "0 ms",
        "decode_s_per_megapixel": "0 ms",
        "decode_s_per_stored_megapixel": "0 ms",
        "hw_decoder_share": 0.65,
        "note": "decode_s_per_megabyte is not given here: use turbojpeg's measured per-MB (Huffman) and "
                "per-stored-megapixel terms as the host-side Huffman cost (nvJPEG's host Huffman decoder is "
                "libjpeg-style entropy decoding; not measured here, no GPU in this session)",
        "sources": {
            "cpu_share_rule": "DALI 2.4.0 fn.decoders.image docstring (installed nvidia-dali-cuda120 2.4.0, read "
                              "2026-11-28), same text as docs.nvidia.com/deeplearning/dali/user-guide/docs/operations/"
                              "nvidia.dali.fn.decoders.image.html: 'hybrid_huffman_threshold ... default = 1000000 "
                              "... Images that have fewer pixels will use the nvJPEG host-side Huffman decoder. "
                              "Hybrid Huffman decoder still largely uses the CPU'; 'hw_decoder_load ... default = "
                              "0.65 ... The percentage of the image data to be processed by the HW JPEG decoder. "
                              "Applies only to the mixed backend type in NVIDIA Ampere GPU architecture'",
            "hw_decoder_share": "same docstring, hw_decoder_load default 0.65",
            "decode_s_fixed": "not measured (no GPU); the host-side work is entropy decoding, counted per MB",
            "decode_s_per_megapixel": "same docstring: the mixed backend decodes with nvJPEG on the GPU",
            "decode_s_per_stored_megapixel": "see note",
        },
    },
    "ffcv": {
        "label": "FFCV (its own JPEG decode through libjpeg-turbo, threads inside one process)",
        "measured": False,
        "formats": ["jpeg", "raw"],
        "note": "FFCV_NOTE",
        "sources": {"note": "this session's build attempt (benchmarks/results/loader_costs_*.txt); FFCV's own "
                            "benchmark tables are reserved for validation and are not used here"},
    },
    "none": {
        "label": "no decode: raw uint8 pixels, .npy arrays or token slices (see raw: below)",
        "measured": True,
        "formats": ["raw", "npy", "tokens"],
        "dct_scaling": False,
        "decode_s_fixed": "0 ms",
        "decode_s_per_megapixel": "0 ms",
        "decode_s_per_stored_megapixel": "0 ms",
        "decode_s_per_megabyte": "see raw:",
        "sources": {"decode_s_fixed": "by definition: nothing is decoded; the copy cost per byte is raw:",
                    "decode_s_per_megapixel": "by definition", "decode_s_per_stored_megapixel": "by definition",
                    "decode_s_per_megabyte": "raw: below"},
    },
}


def ffcv_entry(rows: list[dict[str, Any]], runs: dict[str, Any], name: str) -> dict[str, Any]:
    """FFCV measured as a whole (decode + RandomResizedCrop + flip + ToTensor in its numba pipeline) on the
    one stored size the .beton holds, so it gets per-image figures, not per-pixel coefficients."""
    # the runs before versions() learnt ffcv: 1.0.2 is what pip installed in this session
    version = next((run["versions"].get("ffcv", "1.0.2") for k, run in runs.items() if k.startswith("ffcv:")), "?")
    e: dict[str, Any] = {"label": f"FFCV {version} (Loader, os_cache, numba pipeline threads in one process)",
                         "measured": True, "formats": ["jpeg", "raw"], "dct_scaling": False,
                         "note": "whole pipeline per image on 500x375 quality-90 JPEGs stored in a .beton "
                                 "(~76 kB each): RandomResizedCropRGBImageDecoder + RandomHorizontalFlip + "
                                 "ToTensor (uint8, no normalise); one stored size, so not split into per-pixel "
                                 "terms. pip install ffcv needs Debian's libopencv-dev and pkg-config "
                                 "(it first failed: 'Could not find required package: opencv4'); a second Loader "
                                 "in one process crashes in numba's dispatcher, so each run is its own process",
                         "sources": {}}
    for r in sorted(rows, key=lambda r: (-r["res"], r["workers"])):
        field = f"pipeline_s_per_image_{r['res']}px_{r['workers']}_workers"
        e[field] = _ms(r["cpu_s_per_image"])
        e["sources"][field] = f"{name} runs.ffcv:* (process CPU time over 2 epochs of 512 images, batch 64)"
    return e


def cmd_yaml(args: argparse.Namespace) -> None:
    """Write presets/decoders.yaml from the results file: HEADER, then every measured block, then the
    entries that are not measured here (HAND_ENTRIES), so the preset never drifts from the results."""
    import yaml

    path = Path(args.results) if args.results else next(RESULTS.glob("loader_costs_*.json"))
    data = json.loads(path.read_text())
    vers: dict[str, str] = {}
    for k, run in data["runs"].items():
        v = run["versions"]
        if not k.startswith("decode:"):
            continue
        if ".post" in v.get("pillow", ""):
            vers["pillow-simd"] = f"Pillow-SIMD {v['pillow']}"
        elif "not importable" not in v.get("pillow", "not importable"):
            vers.update({"pil": f"Pillow {v['pillow']}", "opencv": f"opencv-python-headless {v.get('opencv')}",
                         "turbojpeg": f"PyTurboJPEG {v.get('pyturbojpeg')} + Debian libturbojpeg 2.1.5",
                         "simplejpeg": f"simplejpeg {v.get('simplejpeg')} (bundles libjpeg-turbo)",
                         "torchvision": f"torchvision {v.get('torchvision')} (torch {v.get('torch')})"})
        if "not importable" not in v.get("dali", "not importable"):
            vers["dali-cpu"] = f"nvidia-dali-cuda120 {v['dali']} (CPU backend, libjpeg-turbo)"
    name = f"benchmarks/results/{path.name}"
    hand = json.loads(json.dumps(HAND_ENTRIES).replace("FFCV_NOTE", args.ffcv_note))
    ffcv = [r for k, run in data["runs"].items() if k.startswith("ffcv:") for r in run["rows"]]
    if ffcv:
        hand["ffcv"] = ffcv_entry(ffcv, data["runs"], name)
    body = {"reference_cpu": data["cpu_key"], "results": name,
            "decoders": {**decoder_entries(data["fit"], vers, name), **hand},
            "augment": augment_entries(data["fit"], name), **other_entries(data["fit"], name)}
    text = HEADER + yaml.safe_dump(body, sort_keys=False, width=110, allow_unicode=True)
    if args.write:
        Path(args.write).write_text(text)
        print("wrote", args.write)
    else:
        print(text)


HEADER = """\
# Per-example CPU cost of a data loader's parts, MEASURED on the reference CPU (reference_cpu, a key
# of presets/cpus.yaml) by benchmarks/loader_costs.py; every number is read from the results file named
# in `results:` by `python benchmarks/loader_costs.py yaml --write presets/decoders.yaml`. Do not edit
# the numbers by hand: re-run the benchmark and regenerate.
#
# Units: every time is a string calc.units parses ("2.66 ms"); the field name says per what:
#   decode_s_fixed                        seconds per image
#   decode_s_per_megapixel                seconds per DECODED megapixel (the output: stored pixels / s^2
#                                         when the decoder scales the DCT by 1/s, s = 2, 4, 8)
#   decode_s_per_megapixel_if_above_knee  seconds added per decoded megapixel, for the WHOLE image, when
#                                         the decoded image is larger than knee_megapixels (its buffer
#                                         no longer fits the core's L2 cache: 1 MB here, 4 B per pixel)
#   decode_s_per_stored_megapixel         seconds per STORED megapixel (entropy/coefficient work per 8x8
#                                         block that DCT scaling does not remove)
#   decode_s_per_megabyte                 seconds per compressed MB (10^6 bytes; Huffman decoding)
# One JPEG on one reference core: fixed + per_megapixel x decoded_MP + (decoded_MP > knee ? extra x
# decoded_MP : 0) + per_stored_megapixel x stored_MP + per_megabyte x MB; divide by a CPU's
# per_core_speed (presets/cpus.yaml) for another CPU.
#
# Why this form: the brief's 3-term form (fixed, per decoded MP, per MB) fits libjpeg-turbo decoders
# but not DCT-scaled decodes (1/8 still walks every stored block: hence per stored MP) nor Pillow,
# whose per-pixel cost doubles between 500x375 and 800x600 (7.4 vs 4.1 ms/MP: the RGBX buffer and the
# copy in convert("RGB") outgrow L2). A step at the knee fitted the held-out 800x600 and 1024x768
# images better than a hinge (PIL full-size held-out median 15 % vs 21 %). The fixed term is 0 for most
# decoders: below ~0.02 ms it is not resolved next to the per-pixel terms.
#
# Fit and check: least squares on relative error, coefficients >= 0, fitted on 250x188, 500x375 and
# 2000x1500 JPEGs at quality 75 and 95 (full size and 1/2, 1/4, 1/8) and CHECKED on held-out rows:
# every quality-90 image and every 800x600 and 1024x768 image (fit_error: held-out then in-sample;
# fit_error_full_size: held-out full-size decodes only). 4000x3000 (12 MP, a 36 MB RGB buffer beyond the
# 32 MB L3 and glibc's 32 MB mmap threshold: fresh pages fault in this KVM guest) is outside the fit:
# beyond_range gives how far off the model is there (OpenCV and torchvision run 1.5x the line).
#
# augment: the training chain of torchvision's RandomResizedCrop + RandomHorizontalFlip + ToTensor +
# Normalize (PIL / Pillow-SIMD) and its OpenCV/NumPy equivalent (cv2.resize INTER_LINEAR, slice flip,
# float32 normalise, HWC->CHW): s = fixed + per_crop_input_megapixel x crop area read + per_output_
# megapixel x output pixels; *_uint8 stops before the float conversion (PILToTensor-style), so float32
# minus uint8 is the price of float tensors; eval_* is Resize(res x 256/224) + CenterCrop(res). Held out:
# output sizes 176 and 256 px and the 1024x768 input.
# collate / transfer / raw: s = s_fixed + s_per_megabyte x MB per batch (collate, transfer) or per
# example (raw). Batches above 32 MB are fresh mmaps whose pages fault in (see the results .txt).
#
# Machine: 2 vCPUs of an AMD EPYC (family 26 = Zen 5) under KVM, shared with other jobs while measuring:
# CPU time (thread_time / getrusage) and medians of 7 repeats, wall time in the results file.

"""


# ---------------------------------------------------------------- FFCV (its own venv; optional)


def cmd_ffcv(args: argparse.Namespace) -> None:
    """FFCV: write the ImageNet-like folder to a .beton (JPEG, as stored) and time its loader's
    RandomResizedCrop decode + flip + ToTensor per image, num_workers = 1 and 2 (FFCV uses threads in
    one process, so process CPU time counts them all)."""
    from ffcv.fields import IntField, RGBImageField
    from ffcv.fields.decoders import IntDecoder, RandomResizedCropRGBImageDecoder
    from ffcv.loader import Loader, OrderOption
    from ffcv.transforms import RandomHorizontalFlip, ToTensor
    from ffcv.writer import DatasetWriter
    from PIL import Image

    files = sorted((Path(args.dir) / "folder" / "class0").glob("*.jpg"))[: args.images]

    class Ds:
        def __len__(self) -> int:
            return len(files)

        def __getitem__(self, i: int) -> tuple[Any, int]:
            return Image.open(files[i]).convert("RGB"), 0

    beton = Path("/tmp/lc_ffcv.beton")
    if not beton.exists():
        DatasetWriter(str(beton), {"image": RGBImageField(write_mode="jpg", jpeg_quality=90),
                                   "label": IntField()}, num_workers=1).from_indexed_dataset(Ds())
    rows = []
    configs = [(int(a), int(b)) for a, b in (c.split(":") for c in args.only.split(","))] if args.only else \
        [(224, 1), (224, 2), (160, 1), (160, 2)]  # one per process: numba's dispatcher breaks on a 2nd Loader
    for res, workers in configs:
        loader = Loader(str(beton), batch_size=64, num_workers=workers, order=OrderOption.RANDOM,
                        os_cache=True, pipelines={"image": [RandomResizedCropRGBImageDecoder((res, res)),
                                                            RandomHorizontalFlip(), ToTensor()],
                                                  "label": [IntDecoder()]})
        for _ in loader:  # warm-up epoch (compiles the numba pipeline)
            pass
        c0, w0 = time.process_time(), time.perf_counter()
        n = 0
        for _ in range(2):
            for x, _y in loader:
                n += int(x.shape[0])
        cpu, wall = time.process_time() - c0, time.perf_counter() - w0
        rows.append({"res": res, "workers": workers, "batch": 64, "images": n, "cpu_s_per_image": cpu / n,
                     "images_per_s": n / wall, "chain": "RandomResizedCropRGBImageDecoder + flip + ToTensor "
                     "(uint8 HWC, no normalise)", "beton_bytes": beton.stat().st_size,
                     "loadavg_1min": os.getloadavg()[0]})
        print(f"ffcv res {res} workers {workers}: {cpu / n * 1e3:.2f} ms CPU/img, {n / wall:.0f} img/s", flush=True)
    _write_part(args.out, "ffcv", rows)


# ---------------------------------------------------------------- own runs for presets/loader_validation.yaml


def cmd_validation(args: argparse.Namespace) -> None:
    """Print this machine's end-to-end runs (e2e, threads, ffcv sections) as loader_validation.yaml rows.
    They are validation only: nothing in fit() reads these sections."""
    import yaml

    path = Path(args.results) if args.results else next(RESULTS.glob("loader_costs_*.json"))
    data = json.loads(path.read_text())
    name = f"benchmarks/results/{path.name}"
    out = []
    for key, run in sorted(data["runs"].items()):
        sec = run["section"]
        if sec not in ("e2e", "threads"):  # ffcv runs ARE decoders.yaml's ffcv figures: not held out
            continue
        for i, r in enumerate(run["rows"]):
            cpu_ms = (r.get("main_cpu_s_per_image", 0) + r.get("worker_cpu_s_per_image", 0)) * 1e3 \
                if sec != "ffcv" else r["cpu_s_per_image"] * 1e3
            decoder = "ffcv" if sec == "ffcv" else ("opencv" if r.get("chain") == "opencv" else "pil")
            out.append({
                "id": f"own-{key.replace(':', '-')}-{i:02d}",
                "source": {"title": "this machine, benchmarks/loader_costs.py " + sec, "url": f"{name} runs.{key}",
                           "date": run["date"][:10]},
                "measured": "dataloader", "cpu": data["cpu_key"], "cores": 2,
                "num_workers": r["workers"], "threads_per_worker": r.get("threads_per_worker") or 1,
                "main_torch_threads": r.get("main_torch_threads", 1), "opencv_threads": r.get("cv_threads"),
                "decoder": decoder,
                "image": {"pixels": "500x375", "bytes": "about 76,000 (generated, quality 90; see the results file)"},
                "output_resolution": r["res"],
                "augmentation": r.get("chain") if sec == "ffcv" else
                ("RandomResizedCrop (area 0.08-1, aspect 1) + flip + ToTensor + Normalize, float32 "
                 f"({'OpenCV/NumPy' if decoder == 'opencv' else 'PIL'})"),
                "batch_size": r["batch"],
                "figure": {"value": round(r["images_per_s"], 1), "unit": "images/s",
                           "cpu_ms_per_image": round(cpu_ms, 3),
                           "note": f"wall rate, best of {len(r.get('images_per_s_by_epoch', [1]))} epochs; the 2 "
                                   f"cores were shared (1-min load average "
                                   f"{r.get('loadavg_1min_at_start', r.get('loadavg_1min', 0)):.1f}), so "
                                   "cpu_ms_per_image (process CPU time, main + workers) is the figure to predict"},
                "bottleneck": "CPU (2 shared cores)",
                "expressible": "yes",
                "why": "decoder, image, chain, workers, threads and CPU all known",
            })
    print(yaml.safe_dump({"own_runs": out}, sort_keys=False, width=110))


# ---------------------------------------------------------------- human-readable report


NOT_INSTALLED = """\
What ran and what did not (this session):
  - Pillow 13.0.0 (the project's own, from PyPI; bundles libjpeg-turbo), opencv-python-headless 5.0.0,
    simplejpeg 1.9.0, PyTurboJPEG 1.8.3 over Debian's libturbojpeg 2.1.5 (PyTurboJPEG 2.x refuses
    libjpeg-turbo < 3.0: "PyTurboJPEG 2.0 requires libjpeg-turbo 3.0 or later"), torch 2.14.1 +
    torchvision 0.29.1 (a separate venv), all in one venv.
  - Pillow-SIMD 12.1.1.post0: built from source in its own venv (CC="cc -mavx2", Debian's
    libjpeg62-turbo-dev headers) with torch 2.13.0+cpu; decode and the PIL chain only.
  - DALI: nvidia-dali-cuda120 2.4.0 installs and its CPU pipeline runs with device_id=None and no GPU
    (fn.decoders.image(device='cpu')); measured. dali-gpu ('mixed') needs a GPU: not measured.
  - FFCV 1.0.2: `pip install ffcv` first failed ("Could not find required package: opencv4" from
    pkg-config); after `apt-get install libopencv-dev pkg-config` it builds; see the ffcv run below.
"""


def _row(rows: list[dict[str, Any]], **kw: Any) -> dict[str, Any] | None:
    return next((r for r in rows if all(r.get(k) == v for k, v in kw.items())), None)


def cmd_report(args: argparse.Namespace) -> None:
    path = Path(args.results) if args.results else next(RESULTS.glob("loader_costs_*.json"))
    data = json.loads(path.read_text())
    runs, fit = data["runs"], data.get("fit", {})
    lines = [f"Loader costs on {data['cpu_key']}: {path.name}", ""]
    cpu = data["cpu"]
    lines += [f"CPU: vendor {cpu.get('vendor_id')}, family {cpu.get('cpu_family')} model {cpu.get('model')} "
              f"stepping {cpu.get('stepping')} (Zen 5), model name '{cpu.get('model_name')}' (the hypervisor hides "
              f"the SKU), {cpu.get('logical_cpus')} vCPUs, {cpu.get('lscpu', {}).get('Thread(s) per core')} thread "
              f"per core, L2 {cpu.get('lscpu', {}).get('L2 cache')}, L3 {cpu.get('lscpu', {}).get('L3 cache')}, "
              f"KVM guest, TSC {cpu.get('cpu_MHz')} MHz",
              "Timing: CPU time (thread_time / process_time / getrusage), median of 7 repeats; the 2 vCPUs were "
              "shared with other jobs (1-min load average 4 to 34 over the session), so wall rates are disturbed "
              "and CPU times are the figures.",
              ""]
    for k, run in sorted(runs.items()):
        v = run["versions"]
        lines.append(f"versions [{k}] " + ", ".join(f"{n} {x}" for n, x in v.items() if "not importable" not in x))
    lines += ["", NOT_INSTALLED]
    dec = [r for k, run in runs.items() if k.startswith("decode:") for r in run["rows"] if "cpu_s" in r]
    lines.append("JPEG decode, CPU ms per image (full size), generated photo-like images:")
    keys = ["pil", "pillow-simd", "opencv", "turbojpeg", "simplejpeg", "simplejpeg-fast", "torchvision", "dali-cpu"]
    lines.append(f"  {'image':22s}" + "".join(f"{k:>15s}" for k in keys))
    for w, h in SIZES:
        for q in QUALITIES:
            cells = []
            for k in keys:
                r = _row(dec, decoder=k, width=w, height=h, quality=q, scale=1, format="jpeg")
                cells.append(f"{r['cpu_s'] * 1e3:15.3f}" if r else f"{'-':>15s}")
            b = _row(dec, width=w, height=h, quality=q, format="jpeg")
            lines.append(f"  {w}x{h} q{q} {b['bytes'] / 1e3 if b else 0:6.0f} kB" + "".join(cells))
    lines.append("DCT-scaled decode of 2000x1500 q90, CPU ms at 1/1, 1/2, 1/4, 1/8:")
    for k in ("pil", "pillow-simd", "opencv", "turbojpeg", "simplejpeg"):
        vals = [_row(dec, decoder=k, width=2000, height=1500, quality=90, scale=s) for s in (1, 2, 4, 8)]
        lines.append(f"  {k:14s}" + " ".join(f"{v['cpu_s'] * 1e3:8.2f}" if v else "      -" for v in vals))
    lines.append("")
    lines += _report_fit(fit)
    lines += _report_check(data)
    lines += _report_sections(runs)
    out = path.with_suffix(".txt")
    out.write_text("\n".join(lines) + "\n")
    print("wrote", out)


def _report_fit(fit: dict[str, Any]) -> list[str]:
    lines = ["Decode fit (fixed + per decoded MP [+ extra per decoded MP when above 0.25 MP] + per stored MP + per "
             "compressed MB), ms; held out = every q90 image and every 800x600 and 1024x768 image:"]
    for k, v in sorted(fit.get("decode", {}).items()):
        if "fit" not in v:
            continue
        r = v["fit"]
        c = r["coef"]
        h, hf, b = r.get("held_out", {}), r.get("held_out_full_size", {}), r.get("beyond_l3_full_size", {})
        lines.append(f"  {k:16s} " + " ".join(f"{n}={x * 1e3:.3f}" for n, x in c.items())
                     + f" | held-out median {h.get('median_abs_pct', 0):.0f} % max {h.get('max_abs_pct', 0):.0f} %"
                     + (f", full-size only median {hf['median_abs_pct']:.0f} % max {hf['max_abs_pct']:.0f} %"
                        if hf else "")
                     + (f", 4000x3000 (outside the fit) median {b['median_abs_pct']:.0f} %" if b else ""))
    for k, r in sorted(fit.get("augment", {}).items()):
        c, h = r["coef"], r.get("held_out", {})
        lines.append(f"  augment {k:22s} " + " ".join(f"{n}={x * 1e3:.3f}" for n, x in c.items())
                     + f" | held-out median {h.get('median_abs_pct', 0):.0f} % max {h.get('max_abs_pct', 0):.0f} %")
    for sec in ("collate", "transfer"):
        for k, r in sorted(fit.get(sec, {}).items()):
            c, h = r["coef"], r.get("held_out", {})
            above = c.get("s_per_mb_if_above_mmap_threshold")
            lines.append(f"  {sec} {k:26s} fixed {c['fixed_s'] * 1e3:.3f} ms + {c['s_per_mb'] * 1e3:.3f} ms/MB"
                         + (f" (+{above * 1e3:.3f} ms/MB, whole batch, above 32 MiB)" if above is not None else "")
                         + f" | held-out median {h.get('median_abs_pct', 0):.0f} % max {h.get('max_abs_pct', 0):.0f} %")
    for k in ("raw", "npy", "tokens"):
        r = fit.get("decode", {}).get(k)
        if r:
            c = r["coef"]
            lines.append(f"  {k:8s} fixed {c['fixed_s'] * 1e6:.1f} us + {c['s_per_mb'] * 1e3:.3f} ms/MB")
    return [*lines, ""]


def _expected_crop_px(w: int, h: int) -> float:
    """E[crop area] for the e2e chain: area fraction U(0.08, 1) of w*h, square, clamped to the short side."""
    fr = np.linspace(0.08, 1.0, 20001)
    return float(np.mean(np.minimum(fr * w * h, min(w, h) ** 2)))


def _report_check(data: dict[str, Any]) -> list[str]:
    """Out-of-sample check: the fitted components (decode + augment + collate, + transfer with workers)
    against the e2e DataLoader runs' CPU per image, which the fit never saw."""
    fit = data.get("fit", {})
    e2e = [r for k, run in data["runs"].items() if k.startswith("e2e:") for r in run["rows"]]
    if not e2e or "decode" not in fit or "augment" not in fit:
        return []
    d, mp, mb = fit["decode"]["pil"]["fit"]["coef"], 500 * 375 / 1e6, 76_400 / 1e6
    decode = d["fixed_s"] + (d["s_per_decoded_mp"] + d["s_per_stored_mp"]) * mp + d["s_per_compressed_mb"] * mb
    crop = _expected_crop_px(500, 375) / 1e6
    lines = ["Check on the e2e runs (never fitted): predicted CPU ms/image = PIL decode of a 500x375 q90 JPEG "
             f"({decode * 1e3:.3f}) + PIL train chain (mean crop {crop:.3f} MP) + collate [+ worker send + main "
             "receive per image with workers]:"]
    errs = []
    for r in e2e:
        a = fit["augment"]["train:pil:float32"]["coef"]
        out_mp = r["res"] ** 2 / 1e6
        aug = a["fixed_s"] + a["s_per_crop_input_mp"] * crop + a["s_per_output_mp"] * out_mp
        batch_mb = r["batch"] * 3 * r["res"] ** 2 * 4 / 1e6
        c = fit["collate"]["default_collate"]["coef"]
        col = c["fixed_s"] + c["s_per_mb"] * batch_mb + (c["s_per_mb_if_above_mmap_threshold"] * batch_mb
                                                         if batch_mb > MMAP_MB else 0.0)
        pred = decode + aug + col / r["batch"]
        if r["workers"]:
            w = "w2" if r["workers"] == 2 else "w1"
            send, recv = fit["transfer"][f"{w}:worker_send_extra"]["coef"], fit["transfer"][f"{w}:main_receive"]["coef"]
            pred += (send["fixed_s"] + send["s_per_mb"] * batch_mb + recv["fixed_s"] + recv["s_per_mb"] * batch_mb) \
                / r["batch"]
        meas = r["main_cpu_s_per_image"] + r["worker_cpu_s_per_image"]
        errs.append(pred / meas - 1)
        lines.append(f"  res {r['res']} workers {r['workers']} batch {r['batch']}: predicted {pred * 1e3:.2f} ms, "
                     f"measured {meas * 1e3:.2f} ms ({(pred / meas - 1) * 100:+.0f} %)")
    e = np.abs(np.array(errs))
    lines.append(f"  median |error| {np.median(e) * 100:.0f} %, max {e.max() * 100:.0f} % (n={len(e)}); the model "
                 "leaves out per-item Python work (file open/read, the Dataset and sampler, label tensors) and ran "
                 "on 2 shared cores (load average 6-8 during these runs)")
    return [*lines, ""]


def _report_sections(runs: dict[str, Any]) -> list[str]:
    lines: list[str] = []
    for k, run in sorted(runs.items()):
        sec = run["section"]
        if sec in ("e2e", "threads", "ffcv"):
            lines.append(f"{sec} [{k}] " + ("(the ffcv preset's figures):" if sec == "ffcv" else
                                             "(validation only, never fitted):"))
            for r in run["rows"]:
                cpu_ms = r.get("cpu_s_per_image", r.get("main_cpu_s_per_image", 0) + r.get("worker_cpu_s_per_image",
                                                                                            0)) * 1e3
                lines.append(f"  res {r['res']} workers {r['workers']} batch {r['batch']} "
                             f"torch threads/worker {r.get('threads_per_worker')} cv threads {r.get('cv_threads')} "
                             f"main threads {r.get('main_torch_threads', 1)} chain {r.get('chain', 'pil')[:20]}: "
                             f"{r['images_per_s']:.0f} images/s, {cpu_ms:.2f} CPU ms/image")
        if sec == "transfer":
            lines.append("transfer: batch bytes -> in-process make, 1-worker main receive / worker, wall per batch:")
            for r in run["rows"]:
                lines.append(f"  {r['batch_bytes'] / 1e6:7.2f} MB {r['dtype']:8s} in-process "
                             f"{r['inprocess_cpu_s_per_batch'] * 1e3:7.2f} ms | w1 main "
                             f"{r['w1']['main_cpu_s_per_batch'] * 1e3:6.2f} worker "
                             f"{r['w1']['worker_cpu_s_per_batch'] * 1e3:7.2f} | w2 main "
                             f"{r['w2']['main_cpu_s_per_batch'] * 1e3:6.2f} "
                             f"wall {r['w2']['wall_s_per_batch'] * 1e3:7.2f}")
    return lines


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="cmd", required=True)
    g = sub.add_parser("gen")
    g.add_argument("--dir", default="/tmp/lc_imgs")
    g.add_argument("--folder-images", type=int, default=1024)
    for name in ("decode", "augment", "collate", "transfer", "e2e", "threads", "ffcv"):
        s = sub.add_parser(name)
        s.add_argument("--dir", default="/tmp/lc_imgs")
        s.add_argument("--out", required=True)
        s.add_argument("--only", default="")
        s.add_argument("--images", type=int, default=1024)
    m = sub.add_parser("merge")
    m.add_argument("--parts", nargs="+", required=True)
    m.add_argument("--tag", default="", help="suffix for the run keys, e.g. '-repeat' for a second run")
    for name in ("fit", "yaml", "validation", "report"):
        f = sub.add_parser(name)
        f.add_argument("--results", default="")
        f.add_argument("--write", default="")
        f.add_argument("--ffcv-note", default="not measured: see the results .txt")
    args = ap.parse_args()
    {"fit": cmd_fit, "yaml": cmd_yaml, "validation": cmd_validation, "report": cmd_report, "gen": cmd_gen,
     "decode": cmd_decode,
     "augment": cmd_augment, "collate": cmd_collate,
     "transfer": cmd_transfer, "e2e": cmd_e2e, "threads": cmd_threads, "ffcv": cmd_ffcv,
     "merge": cmd_merge}[args.cmd](args)


if __name__ == "__main__":
    main()
