"""What-if levers (docs/model.md section 8): each fix the seeds name, applied alone to the plan,
ranked by the GPU utilisation it reaches; and the storage-side levers next to a recommendation.

lever_changes(): the levers that apply to a scenario, as Scenario changes.
levers(): each applied alone, ranked by GPU utilisation.
storage_levers(): shards, a local cache, RAM: the demand each leaves and what then serves it.
"""

from __future__ import annotations

import math
import re
from typing import Any

import pandas as pd

from calc import catalog
from calc import engine as en
from calc import storage as st
from calc.engine import plan_demand
from calc.errors import InputError
from calc.host import image_size
from calc.plan import Plan, as_scenario, plan
from calc.scenario import FIELDS, Scenario, input_text
from calc.sizing import PlanLike, as_plan, check_argument, recommend
from calc.units import fmt, parse

__all__ = ["lever_changes", "levers", "storage_levers"]


_FLOAT = re.compile(r":(float32|float64|float16|bfloat16)")
"""Float tensors the "uint8 tensors" lever sends as uint8 pixels; integer tensors (token ids,
labels) keep their type: a 32,000-word vocabulary does not fit in uint8 (issue 39)."""


def lever_changes(sc: Scenario) -> list[tuple[str, dict[str, Any]]]:
    """The what-if levers the seeds name, as Scenario changes; only those that apply to this plan.

    Read from the plan: RAM / tmpfs only when the dataset fits in each node's free RAM
    (``fits_in_ram``), a local NVMe tier only when one node reads (``clients``: a drive serves only
    its own node), and no lever that changes nothing (a cache fraction already above 20 %, shards
    already packed, GPU decode or pinned memory already on, tensors already uint8).
    """
    p = plan(sc)
    spec = sc.tensors or catalog.model(sc.model).tensors
    any_storage = {"storage_units": None, "storage_bytes_per_s": None, "storage_iops": None, "storage_latency_s": None}
    out: list[tuple[str, dict[str, Any]]] = []
    if sc.num_workers < int(FIELDS["num_workers"].maximum or 1024):
        more = min(max(2 * sc.num_workers, 8), int(FIELDS["num_workers"].maximum or 1024))
        out.append(("more workers", {"num_workers": more}))
    out.append(
        (
            "prefetch (workers overlap loading with compute)",
            {"num_workers": 4} if sc.num_workers == 0 else {"prefetch_factor": 2 * sc.prefetch_factor},
        )
    )
    if p.fits_in_ram:
        out.append(("RAM / tmpfs", {"storage": "ram-tmpfs", **any_storage}))
    if p.values["clients"] <= 1:
        out.append(("faster storage (Gen4 NVMe, as many as needed)", {"storage": "nvme-gen4", **any_storage}))
    if sc.examples_per_file < 1000:
        # A read is at most one shard (1,000 examples).
        request = "1 MiB" if 1000 * p.inputs["example_bytes"] >= 2**20 else f"{1000 * p.inputs['example_bytes']:.0f} B"
        out.append(("pack into 1 MiB-read shards", {"examples_per_file": 1000, "request_bytes": request}))
    if sc.cache_fraction < 0.2:
        out.append(("cache 20 % locally", {"cache_fraction": 0.2}))
    uint8 = _FLOAT.sub(":uint8", spec)
    if uint8 != spec:
        # uint8 images skip the float conversion and normalisation too (decoders.yaml's uint8 chains)
        out.append(("uint8 tensors", _priced(sc, p, {"tensors": uint8, "cpu_seconds_per_example": None})))
    out += _loader_levers(sc, p)
    if not sc.pin_memory:
        out.append(("pinned memory", {"pin_memory": True}))
    return out


RESIZE_SHORT_SIDE = 256 / 224
"""Offline resizing keeps the short side at 256/224 of the training side (the ImageNet recipe's
Resize(256) before its 224 px crop), so a RandomResizedCrop still has pixels to crop."""


def _loader_levers(sc: Scenario, p: Plan) -> list[tuple[str, dict[str, Any]]]:
    """The loader's own fixes, priced by the same decoder model as the plan (calc.host): GPU decode,
    a faster decoder, offline resizing, raw uint8 storage, fewer threads per worker, offline
    preprocessing. A measured CPU time is carried to each by the model's ratio (``_priced``)."""
    out: list[tuple[str, dict[str, Any]]] = []
    m = catalog.model(sc.model) if sc.model in catalog.models() else None
    pixels = sc.image_pixels or (m.image_pixels if m else "")
    side = p.inputs["train_resolution"]
    image = bool(pixels) and math.isfinite(side) and sc.media == "image"
    if image:
        if not sc.gpu_decode and sc.decoder != "dali-gpu":
            gpu = {"decoder": "dali-gpu", "gpu_decode": True, "cpu_seconds_per_example": None}
            out.append(("GPU decode (DALI nvJPEG)", gpu))
        out += _faster_decoder(sc)
        out += _smaller_images(sc, p, pixels, side)
    elif not sc.gpu_decode:
        out.append(("GPU decode (DALI)", {"gpu_decode": True}))
    if sc.threads_per_worker > 1:
        out.append(("one thread per worker", {"threads_per_worker": 1}))
    # Stored as the tensors the loader emits: the copy of their bytes is what is left (measured, raw:).
    raw_fixed, raw_mb, _, _ = catalog.loader_costs().raw
    copy_s = (raw_fixed + raw_mb * p.values["example_tensor_bytes"] / 1e6) / p.inputs["cpu_per_core_speed"]
    offline: dict[str, Any] = {"example_bytes": p.values["example_tensor_bytes"]}
    offline |= {"cpu_seconds_per_example": f"{copy_s:.6g} s", "measured_cpu": sc.cpu or catalog.server_cpu(sc.server)}
    out.append(("offline preprocessing (stored as tensors)", offline))
    return [(name, _priced(sc, p, change)) for name, change in out]


def _faster_decoder(sc: Scenario) -> list[tuple[str, dict[str, Any]]]:
    """The CPU decoder that costs this plan's images least, if it is not the one they use."""
    costs = {}
    for name, d in catalog.decoders().items():
        if not isinstance(d, catalog.Decoder) or d.on_gpu or name == "none":
            continue
        try:
            costs[name] = plan(sc.replace(decoder=name, cpu_seconds_per_example=None)).cpu_seconds_per_example
        except InputError:
            continue
    best = min(costs, key=lambda k: costs[k], default=None)
    used = sc.decoder or (catalog.model(sc.model).decoder if sc.model in catalog.models() else "")
    if best is None or best == used:
        return []
    return [(f"faster decoder ({best})", {"decoder": best, "cpu_seconds_per_example": None})]


def _smaller_images(sc: Scenario, p: Plan, pixels: str, side: float) -> list[tuple[str, dict[str, Any]]]:
    """Decoding at a reduced size (where the decoder can and the short side allows 1/2 at least),
    offline resizing (JPEGs with a short side of 256/224 of the training side, bytes in proportion)
    and raw uint8 pixels at that size, when the stored images are larger."""
    w, h = image_size(pixels)
    out: list[tuple[str, dict[str, Any]]] = []
    used = sc.decoder or (catalog.model(sc.model).decoder if sc.model in catalog.models() else "")
    d = catalog.decoders().get(used)
    if not sc.reduced_decode and isinstance(d, catalog.Decoder) and d.dct_scaling and min(w, h) / 2 >= side:
        out.append(
            ("decode at a reduced size (DCT scaling)", {"reduced_decode": True, "cpu_seconds_per_example": None})
        )
    short = max(math.ceil(side * RESIZE_SHORT_SIDE), 1)
    if min(w, h) <= short:
        return out
    scale = short / min(w, h)
    nw, nh = max(round(w * scale), 1), max(round(h * scale), 1)
    # A JPEG of the same quality keeps its bytes per pixel (inferred): bytes follow the pixels.
    jpeg = p.inputs["example_bytes"] * (nw * nh) / (w * h)
    resized = {"image_pixels": f"{nw}x{nh}", "example_bytes": f"{jpeg:.0f} B", "cpu_seconds_per_example": None}
    raw = {"decoder": "none", "image_pixels": f"{nw}x{nh}", "example_bytes": f"{nw * nh * 3} B"}
    return [
        *out,
        (f"offline resizing ({nw}x{nh} JPEGs)", resized),
        (f"raw uint8 storage ({nw}x{nh}x3)", raw | {"cpu_seconds_per_example": None}),
    ]


def _priced(sc: Scenario, p: Plan, change: dict[str, Any]) -> dict[str, Any]:
    """A loader lever on a plan whose CPU time was measured: the measurement times the decoder model's
    ratio (after / before), so the lever is priced on the same model as the plan; as given otherwise."""
    if sc.cpu_seconds_per_example is None or "cpu_seconds_per_example" not in change:
        return change
    if change["cpu_seconds_per_example"] is not None:
        return change
    try:
        before = plan(sc.replace(cpu_seconds_per_example=None)).cpu_seconds_per_example
        after = plan(sc.replace(**change)).cpu_seconds_per_example
    except InputError:
        return change  # no decoder model for this plan: the lever prices it as given
    if before <= 0:
        return change
    measured = p.inputs["cpu_seconds_given"] if math.isfinite(p.inputs["cpu_seconds_given"]) else None
    if measured is None or change.get("gpu_decode"):
        return change
    return change | {"cpu_seconds_per_example": f"{measured * after / before:.6g} s"}


def change_text(change: dict[str, Any]) -> str:
    """A lever's change as the tables show it: ``input=value``, each value by the inputs' one
    formatter (``calc.scenario.input_text``: "cpu_seconds_per_example=460 µs", not 0.00046)."""
    return ", ".join(f"{k}={input_text(k, v)}" for k, v in change.items() if v is not None)


def _engine_units(s: Scenario, change: dict[str, Any]) -> dict[str, Any]:
    """A lever that names a storage option "as many as needed" gets the units the engine sizes for
    the changed job's demand (``calc.engine.size_option``: per axis, protected, with the checkpoint writes),
    not the plan's own guess; other levers are returned as they are."""
    name = change.get("storage")
    if name is None or change.get("storage_units") is not None:
        return change
    o = st.option(name)
    if o.kind == "ram":
        return change  # RAM is one copy per node: nothing to count
    units = en.size_option(o, plan_demand(plan(s.replace(**change)))).units
    return change | {"storage_units": en.whole(units)}


def levers(sc: PlanLike, /, **overrides: Any) -> pd.DataFrame:
    """Each lever applied alone: the GPU utilisation it reaches, ranked best first.

    Columns: lever, change, gpu_utilization, achieved_samples_per_s, bottleneck, gain
    (utilisation points over the scenario as it is) and cpu_cores_freed_per_node (the loader cores
    per node the demand no longer needs: the CPU time it saves per example x examples/s x GPUs on
    the node; negative when it costs more). Levers that make no valid plan are left out.
    A lever that buys storage buys the units the sizing engine sizes for the job (``_engine_units``).
    """
    s = as_scenario(sc, **overrides)
    base = plan(s)
    rows = [
        {
            "lever": "as is",
            "change": "",
            "gpu_utilization": base.gpu_utilization,
            "achieved_samples_per_s": base.achieved_samples_per_s,
            "bottleneck": base.bottleneck,
            "gain": 0.0,
            "cpu_cores_freed_per_node": 0.0,
        }
    ]
    for name, lever in lever_changes(s):
        try:
            change = _engine_units(s, lever)
            q = plan(s.replace(**change))
        except InputError:
            continue
        shown = change_text(change) or "defaults"
        rows.append(
            {
                "lever": name,
                "change": shown,
                "gpu_utilization": q.gpu_utilization,
                "achieved_samples_per_s": q.achieved_samples_per_s,
                "bottleneck": q.bottleneck,
                "gain": q.gpu_utilization - base.gpu_utilization,
                "cpu_cores_freed_per_node": base.cpu_cores_per_node - q.cpu_cores_per_node,
            }
        )
    df = pd.DataFrame(rows)
    return df.sort_values(["gpu_utilization", "gain"], ascending=False, kind="stable").reset_index(drop=True)


def storage_levers(
    x: PlanLike, /, shard_bytes: float | str = "256 MiB", cache_fraction: float = 0.2, **overrides: Any
) -> pd.DataFrame:
    """The storage-side levers next to a recommendation: shards, a local cache, RAM.

    Each row applies one lever and reports the demand it leaves (reads/s, file opens/s,
    MB/s) and the first feasible row ``recommend`` then gives (cheapest known cost; "none"
    when no option serves), plus how many units of the scenario's own storage it needs, if it
    names one. Levers that change nothing here (shards no larger than an example, a cache
    fraction the scenario already has) are left out; the RAM row leaves no reads on the store
    only when RAM can hold the dataset.
    """
    p = as_plan(x, overrides)
    sc = p.scenario
    shard = parse(check_argument("shard_bytes", "example_bytes", shard_bytes), "bytes", "shard_bytes")
    fraction = check_argument("cache_fraction", "cache_fraction", cache_fraction)
    per_shard = max(1, int(shard // p.inputs["example_bytes"]))
    levers_: list[tuple[str, dict[str, Any]]] = [("as is", {})]
    if per_shard > 1 and per_shard > sc.examples_per_file:  # examples as large as a shard gain nothing
        request = min(2.0**20, per_shard * p.inputs["example_bytes"])  # a read is at most one shard
        levers_.append(
            (
                f"pack into {fmt(shard, 'bytes', binary=True)} shards, {fmt(request, 'bytes', binary=True)} reads",
                {"examples_per_file": per_shard, "request_bytes": "1 MiB" if request == 2**20 else f"{request:.0f} B"},
            )
        )
    if fraction > sc.cache_fraction:
        levers_.append((f"cache {fraction:.0%} locally", {"cache_fraction": fraction}))
    levers_.append(
        (
            "keep the dataset in RAM (page cache / tmpfs)",
            {
                "storage": "ram-tmpfs",
                "storage_units": None,
                "storage_bytes_per_s": None,
                "storage_iops": None,
                "storage_latency_s": None,
            },
        )
    )
    rows = []
    for name, change in levers_:
        q = plan(sc.replace(**change)) if change else p
        rec = recommend(q)
        ok = rec[rec["feasible"]]
        own = rec[rec["option"] == sc.storage]
        ram = rec[rec["option"] == "ram-tmpfs"].iloc[0]
        in_ram = name.startswith("keep") and bool(ram["feasible"])
        if name.startswith("keep"):
            best_option, best_units = ("ram-tmpfs" if ram["feasible"] else f"no: {ram['why_not']}"), float(ram["units"])
        elif len(ok):
            best_option, best_units = str(ok.iloc[0]["option"]), float(ok.iloc[0]["units"])  # 4.6875 TiB, not 4
        else:
            best_option, best_units = "none: no option in the catalog serves this demand", None
        rows.append(
            {
                "lever": name,
                "change": change_text(change),
                "read_iops": 0.0 if in_ram else q.read_iops,
                "file_opens_per_s": 0.0 if in_ram else q.file_opens_per_s,
                "read_bytes_per_s": 0.0 if in_ram else q.read_bytes_per_s,
                "best_option": best_option,
                "best_units": best_units,
                "own_storage_units": float(own.iloc[0]["units"]) if len(own) and not name.startswith("keep") else None,
            }
        )
    return pd.DataFrame(rows)
