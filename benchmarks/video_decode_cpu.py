"""CPU cost of decoding one H.264 video frame, single-threaded (for the video workload preset).

Encodes a synthetic clip (moving gradient + noise, so the encoder cannot skip everything) with
libx264 at a Kinetics-like GOP and bitrate, then decodes it with one FFmpeg thread and reports
CPU seconds per frame at each resolution. Needs PyAV (``pip install av``), which is not a
project dependency; results go to benchmarks/results/video_decode_cpu.json with the CPU model.

Run: python benchmarks/video_decode_cpu.py
"""

from __future__ import annotations

import io
import json
import platform
import time
from pathlib import Path

import av  # type: ignore[import-not-found]
import numpy as np

FRAMES = 300  # 10 s at 30 frames/s, a Kinetics clip's length
# Kinetics-600's CVDF copy averages 1.52 MB per ~10 s clip (648 GB / 427,549 videos): about
# 1.2 Mbit/s. Each size is encoded at that rate and at a higher one, since decode cost grows with
# both pixels and bits (CABAC entropy decoding).
SIZES = {
    "340x256 @ 1.2 Mbit/s": (340, 256, 1_200_000),
    "640x360 @ 1.2 Mbit/s": (640, 360, 1_200_000),
    "1280x720 @ 1.2 Mbit/s": (1280, 720, 1_200_000),
    "1280x720 @ 4 Mbit/s": (1280, 720, 4_000_000),
    "1920x1080 @ 8 Mbit/s": (1920, 1080, 8_000_000),
}


def clip(width: int, height: int, bit_rate: int) -> bytes:
    buf = io.BytesIO()
    with av.open(buf, "w", format="mp4") as out:
        s = out.add_stream("libx264", rate=30)
        s.width, s.height, s.pix_fmt = width, height, "yuv420p"
        s.bit_rate = bit_rate
        s.options = {"preset": "veryfast", "g": "250"}
        rng = np.random.default_rng(0)
        yy, xx = np.mgrid[0:height, 0:width]
        for i in range(FRAMES):
            img = ((xx + 3 * i) % 256).astype(np.uint8)
            rgb = np.stack([img, ((yy + i) % 256).astype(np.uint8), (img // 2 + 64).astype(np.uint8)], axis=-1)
            rgb = np.clip(rgb.astype(np.int16) + rng.integers(-40, 40, rgb.shape), 0, 255).astype(np.uint8)
            for pkt in s.encode(av.VideoFrame.from_ndarray(rgb, format="rgb24")):
                out.mux(pkt)
        for pkt in s.encode():
            out.mux(pkt)
    return buf.getvalue()


def decode_cpu_s_per_frame(data: bytes, repeats: int = 3) -> float:
    best = float("inf")
    for _ in range(repeats):
        with av.open(io.BytesIO(data)) as f:
            stream = f.streams.video[0]
            stream.thread_count = 1
            stream.thread_type = "SLICE"
            t0 = time.process_time()
            n = sum(1 for _ in f.decode(stream))
            best = min(best, (time.process_time() - t0) / n)
    return best


def main() -> None:
    rows = []
    for label, (w, h, rate) in SIZES.items():
        data = clip(w, h, rate)
        s = decode_cpu_s_per_frame(data)
        rows.append(
            {
                "size": label,
                "width": w,
                "height": h,
                "bit_rate": rate,
                "bytes_per_10s_clip": len(data),
                "cpu_s_per_frame": s,
            }
        )
        print(f"{label:36s} {len(data) / 1e6:6.2f} MB per 10 s  {s * 1e3:6.3f} ms CPU per frame")
    cpu = next(
        (
            line.split(":", 1)[1].strip()
            for line in Path("/proc/cpuinfo").read_text().splitlines()
            if "model name" in line
        ),
        platform.processor(),
    )
    out = {
        "what": (
            "H.264 (libx264 veryfast, GOP 250, target bit rates as labelled; synthetic noisy frames) decode, "
            "1 FFmpeg thread, CPU seconds per frame (best of 3)"
        ),
        "cpu": cpu,
        "python": platform.python_version(),
        "pyav": av.__version__,
        "ffmpeg": av.library_versions.get("libavcodec"),
        "rows": rows,
    }
    dest = Path(__file__).parent / "results" / "video_decode_cpu.json"
    dest.write_text(json.dumps(out, indent=1))


if __name__ == "__main__":
    main()
