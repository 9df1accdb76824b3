"""The loader model held out: every expressible row of presets/loader_validation.yaml planned,
the error per decoder and per CPU, before (the model before issue 42: one CPU constant per model)
and after, and the bottleneck named against the source's.

    python benchmarks/loader_validation_report.py                  # after, beside the saved before
    PYTHONPATH=<checkout of the code before issue 42> python benchmarks/loader_validation_report.py \\
        --write-before benchmarks/results/loader_validation_before.json

No row of presets/loader_validation.yaml is fitted: presets/decoders.yaml is fitted only on
benchmarks/loader_costs.py's component timings (decode, augment, collate, transfer).

What a row predicts (``KINDS``):
  cpu_ms_per_image   this repository's DataLoader runs (own_runs): process CPU time per image of the
                     main process and its workers, the figure the runs' shared cores leave exact:
                     worker CPU time per example + (with workers) the main process's receiving.
  decode_ratio       a published pair of decoders timed on the same image and CPU: the CPU cancels,
                     so the ratio is predicted whatever the (unnamed) CPU.
A row whose CPU, image or model the source does not state is listed with its reason, not planned.

Error: geometric mean of |ln(predicted / measured)|, shown as exp(...) - 1, and the mean ratio
predicted / measured (geometric). Bottleneck: the plan's stage against the source's (CPU for
cpu, workers and main; GPU; storage for storage and network).
"""

from __future__ import annotations

import argparse
import json
import math
import statistics
from collections import defaultdict
from pathlib import Path
from typing import Any

import yaml

import calc

ROOT = Path(__file__).resolve().parent.parent
ROWS = ROOT / "presets" / "loader_validation.yaml"
BEFORE = ROOT / "benchmarks" / "results" / "loader_validation_before.json"

OWN_JPEG_BYTES = 76_000
"""The own runs' generated 500x375 quality-90 JPEGs: about 76,000 B each (loader_validation.yaml)."""

TORCHCODEC_WIDTH = 480
"""torchcodec PR 1559's "320p" image: its width is not stated; 480 (3:2) is taken (427, 4:3, is
printed beside it as the range)."""

STAGE_CLASS = {"cpu": "CPU", "workers": "CPU", "main": "CPU", "gpu": "GPU", "storage": "storage", "network": "storage"}


def _known(inputs: dict[str, Any]) -> dict[str, Any]:
    """The inputs this code knows (the code before issue 42 lacks decoder, cpu, image_pixels ...)."""
    return {k: v for k, v in inputs.items() if k in calc.FIELDS}


def threads_of(row: dict[str, Any]) -> int:
    """The intra-op threads a run's workers ran: torch's, or OpenCV's pool where it set one."""
    return max(int(row.get("threads_per_worker") or 1), int(row.get("opencv_threads") or 1))


def own_inputs(row: dict[str, Any]) -> dict[str, Any]:
    """A run as plan inputs (its 2 cores, no SMT, the JPEGs it generated, DataLoader's defaults)."""
    return {
        "model": "resnet50",
        "gpu": "H100-SXM",
        "precision": "bf16",
        "batch_size": int(row["batch_size"]),
        "num_workers": int(row["num_workers"]),
        "pin_memory": False,  # torch.utils.data.DataLoader's default, as the runs used it
        "gpus_per_job": 1,
        "cpu_cores_per_node": int(row["cores"]),
        "cpu": row["cpu"],
        "cpu_threads_per_core": 1,
        "threads_per_worker": threads_of(row),
        "decoder": row["decoder"],
        "image_pixels": row["image"]["pixels"],
        "example_bytes": OWN_JPEG_BYTES,
        "train_resolution": int(row["output_resolution"]),
    }


def own_run(row: dict[str, Any]) -> dict[str, Any]:
    """One of this machine's DataLoader runs: its CPU ms per image predicted, its bottleneck named."""
    workers = int(row["num_workers"])
    p = calc.plan(**_known(own_inputs(row)))
    # Before issue 42 the plan knew one CPU time per example and nothing of the main process.
    main_s = p.values.get("main_seconds_per_example", 0.0) if workers > 0 else 0.0
    cpu_s = p.values.get("cpu_seconds_per_example", p.inputs.get("cpu_seconds_per_example", math.nan))
    return {
        "id": row["id"],
        "kind": "cpu_ms_per_image" if threads_of(row) == 1 else "cpu_ms_per_image, threads > 1",
        "decoder": row["decoder"],
        "cpu": row["cpu"],
        "measured": float(row["figure"]["cpu_ms_per_image"]),
        "predicted": (cpu_s + main_s) * 1e3,
        "bottleneck_source": "CPU",
        "bottleneck_plan": STAGE_CLASS.get(p.bottleneck, p.bottleneck),
    }


def thread_ratio(row: dict[str, Any], base: dict[str, Any]) -> dict[str, Any]:
    """A run with more intra-op threads per worker against the same run with one: images/s over images/s
    (the machine, its other load and the image cancel as far as they can)."""
    rates = [calc.plan(**_known(own_inputs(r))).achieved_samples_per_s for r in (row, base)]
    return {
        "id": f"{row['id']} / {base['id']}",
        "kind": "images_per_s vs one thread",
        "decoder": row["decoder"],
        "cpu": row["cpu"],
        "measured": float(row["figure"]["value"]) / float(base["figure"]["value"]),
        "predicted": rates[0] / rates[1],
        "bottleneck_source": None,
        "bottleneck_plan": None,
    }


def decode_ratio(a: dict[str, Any], b: dict[str, Any], width: int) -> dict[str, Any]:
    """Two decoders on one image and CPU: the ratio of their times (the CPU cancels)."""
    height = 320
    times = []
    for row in (a, b):
        inputs = {
            "model": "resnet50",
            "decoder": row["decoder"],
            "image_pixels": f"{width}x{height}",
            "example_bytes": int(row["image"]["bytes"]),
            "train_resolution": 224,
        }
        p = calc.plan(**_known(inputs))
        # The decode alone (before issue 42: one CPU time for every decoder, so the ratio is 1).
        times.append(p.values.get("decode_seconds_per_example", p.inputs.get("cpu_seconds_per_example")))
    return {
        "id": f"{a['id']} / {b['id']}",
        "kind": "decode_ratio",
        "decoder": f"{a['decoder']}/{b['decoder']}",
        "cpu": "laptop (not stated; cancels)",
        "measured": float(a["figure"]["value"]) / float(b["figure"]["value"]),
        "predicted": times[0] / times[1],
        "bottleneck_source": None,
        "bottleneck_plan": None,
    }


def predictions() -> tuple[list[dict[str, Any]], list[tuple[str, str]]]:
    """Every expressible row predicted by the code imported as ``calc``; the rest with their reason."""
    data = yaml.safe_load(ROWS.read_text())
    own = [r for r in data["own_runs"] if r.get("expressible") == "yes"]
    out = [own_run(r) for r in own]
    # the oversubscription runs against their one-thread twin (same workers, decoder and batch)
    for r in own:
        if threads_of(r) > 1:
            twin = next(
                (
                    b
                    for b in own
                    if threads_of(b) == 1
                    and (b["num_workers"], b["decoder"], b["batch_size"], b["output_resolution"])
                    == (r["num_workers"], r["decoder"], r["batch_size"], r["output_resolution"])
                    and b["id"].split("-")[1] == r["id"].split("-")[1]
                ),
                None,
            )
            if twin is not None:
                out.append(thread_ratio(r, twin))
    by_id = {r["id"]: r for r in data["rows"]}
    pair = (by_id.get("torchcodec-1559-pil-320p"), by_id.get("torchcodec-1559-tv-320p"))
    if all(pair):
        out.append(decode_ratio(pair[0], pair[1], TORCHCODEC_WIDTH))  # type: ignore[arg-type]
    used = {"torchcodec-1559-pil-320p", "torchcodec-1559-tv-320p"}
    skipped = [(r["id"], str(r.get("why", ""))) for r in data["rows"] if r["id"] not in used]
    return out, skipped


def _error(rows: list[dict[str, Any]], key: str = "predicted") -> tuple[float, float]:
    logs = [math.log(r[key] / r["measured"]) for r in rows]
    return math.exp(statistics.fmean(abs(x) for x in logs)) - 1, math.exp(statistics.fmean(logs))


def _table(title: str, groups: dict[str, list[dict[str, Any]]], before: dict[str, float]) -> None:
    print(f"\n{title}\n| group | rows | before | after |\n|---|---|---|---|")
    for name, rows in sorted(groups.items()):
        after, a_ratio = _error(rows)
        had = [dict(r, before=before[r["id"]]) for r in rows if r["id"] in before]
        b = f"{_error(had, 'before')[0]:.0%} (x{_error(had, 'before')[1]:.2f})" if had else "n/a"
        print(f"| {name} | {len(rows)} | {b} | {after:.0%} (x{a_ratio:.2f}) |")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--write-before", type=Path, help="write this code's predictions as the BEFORE file")
    args = ap.parse_args()
    rows, skipped = predictions()
    if args.write_before:
        saved = {r["id"]: {"predicted": r["predicted"], "bottleneck": r["bottleneck_plan"]} for r in rows}
        args.write_before.write_text(json.dumps(saved, indent=1) + "\n")
        print(f"wrote {args.write_before}: {len(rows)} rows")
        return
    saved = json.loads(BEFORE.read_text()) if BEFORE.exists() else {}
    before = {k: v["predicted"] for k, v in saved.items()}
    print("| row | kind | measured | before | after | bottleneck: source / before / after |")
    print("|---|---|---|---|---|---|")
    for r in rows:
        b = before.get(r["id"])
        shown = f"{b:.3g}" if b is not None else "n/a"
        was = saved.get(r["id"], {}).get("bottleneck")
        neck = f"{r['bottleneck_source']} / {was} / {r['bottleneck_plan']}" if r["bottleneck_source"] else ""
        print(f"| {r['id']} | {r['kind']} | {r['measured']:.3g} | {shown} | {r['predicted']:.3g} | {neck} |")
    by_decoder, by_cpu = defaultdict(list), defaultdict(list)
    for r in rows:
        by_decoder[r["decoder"]].append(r)
        by_cpu[r["cpu"]].append(r)
    by_kind = defaultdict(list)
    for r in rows:
        by_kind[r["kind"]].append(r)
    _table("Per decoder (geometric-mean error, mean ratio predicted / measured):", by_decoder, before)
    _table("Per CPU:", by_cpu, before)
    _table("Per figure predicted:", by_kind, before)
    _table("All rows:", {"all": rows}, before)
    named = [r for r in rows if r["bottleneck_source"]]
    right = sum(r["bottleneck_source"] == r["bottleneck_plan"] for r in named)
    was = sum(r["bottleneck_source"] == saved.get(r["id"], {}).get("bottleneck") for r in named)
    print(f"\nBottleneck named as the source names it: before {was}, after {right} of {len(named)} rows")
    narrow = decode_ratio_range()
    if narrow:
        print(f"torchcodec PIL/torchvision ratio at 427x320 (4:3) instead of 480x320: {narrow:.3f}")
    print(f"\nNot planned ({len(skipped)} rows; why, from the row):")
    for rid, why in skipped:
        print(f"- {rid}: {why}")


def decode_ratio_range() -> float | None:
    """The torchcodec ratio at the other plausible width (4:3), to show the unstated width's effect."""
    data = yaml.safe_load(ROWS.read_text())
    by_id = {r["id"]: r for r in data["rows"]}
    a, b = by_id.get("torchcodec-1559-pil-320p"), by_id.get("torchcodec-1559-tv-320p")
    if not (a and b):
        return None
    return float(decode_ratio(a, b, 427)["predicted"])


if __name__ == "__main__":
    main()
