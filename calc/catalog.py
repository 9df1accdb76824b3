"""The presets: GPUs, models, calibration measurements and scenarios, loaded from YAML.

Files live in the repository's ``presets/`` folder, installed as the ``calc.presets`` data
package, so ``import calc`` finds them from any working directory. YAML is read with
``yaml.safe_load`` only; every entry is validated and an error names file, entry and field.
"""

from __future__ import annotations

import dataclasses
import difflib
import functools
import importlib.resources
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from calc import compute
from calc.errors import InputError, PresetError
from calc.host import image_size, tensor_bytes
from calc.units import Kind, check_range, parse

STACKS = ("ngc", "eager", "optimized", "compiled")
"""Software stacks a step runs on (a scenario's ``stack``, a measurement's in calibration.yaml):

- ``ngc``: NGC PyTorch as NVIDIA DeepLearningExamples run it (channels_last, AMP, DALI; one kernel
  per op). The reference every fitted figure stands for, and the default.
- ``eager``: plain eager PyTorch in its default NCHW layout (an added cost per byte of traffic).
- ``optimized``: NVIDIA's optimised stacks (MXNet or TensorFlow with XLA, DALI; MLPerf-style):
  element-wise ops fused into their neighbours (calc.compute.STACK_FUSES).
- ``compiled``: PyTorch with torch.compile (Inductor fuses the point-wise ops likewise).
"""

STACK_ALIASES = {"tuned": "ngc"}
"""Older names still read (links, YAML, presets): ``tuned`` was the NGC-style reference stack."""

STACK_LABELS = {
    "ngc": "NGC PyTorch (DeepLearningExamples: channels_last, AMP, DALI)",
    "eager": "eager PyTorch (NCHW, one kernel per op)",
    "optimized": "NVIDIA-optimised (MXNet / TensorFlow-XLA with DALI, MLPerf-style fused kernels)",
    "compiled": "compiled PyTorch (torch.compile)",
}
"""How each stack is named on the card, in the report and the dashboard."""


def stack_name(name: str, where: str = "stack") -> str:
    """A stack name in its canonical spelling (``tuned`` reads as ``ngc``); PresetError otherwise."""
    key = STACK_ALIASES.get(name.strip().lower(), name.strip().lower())
    if key not in STACKS:
        raise PresetError(where, f"unknown stack {name!r}; accepted: {', '.join(STACKS)} (tuned = ngc)")
    return key


PRECISIONS = ("fp32", "tf32", "fp16", "bf16", "fp8")
"""Training precisions. fp16, bf16 and fp8 mean mixed-precision training (autocast)."""


def precision_class(precision: str) -> str:
    """``fp32`` and ``tf32`` keep fp32 activations; the others are ``mixed``."""
    return precision if precision in ("fp32", "tf32") else "mixed"


def memory_class(precision: str) -> str:
    """Activation and traffic figures: ``fp32`` (also tf32: its tensors stay fp32) or ``mixed``."""
    return "fp32" if precision in ("fp32", "tf32") else "mixed"


TRAFFIC_PER_ACTIVATION_BYTE = 4.0
"""Estimated GPU-memory traffic per byte of saved activations, for models with no measured
traffic: each saved activation is written in the forward pass and read in the backward pass,
and its gradient is written and read once more (2 + 2). Stated as an estimate in the plan."""


def presets_dir() -> Path:
    """The folder holding the preset YAML files.

    A source checkout (or an editable install) reads ``<repo>/presets``; an installed wheel
    reads the ``calc.presets`` data package.
    """
    here = Path(__file__).resolve().parent.parent / "presets"
    if (here / "gpus.yaml").is_file():
        return here
    return Path(str(importlib.resources.files("calc.presets")))


def load_yaml(path: Path, max_bytes: int = 1_000_000) -> Any:
    """Read one YAML file safely; errors name the file."""
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise PresetError(path.name, f"cannot read: {exc.strerror}") from None
    return parse_yaml(text, path.name, max_bytes)


def parse_yaml(text: str, source: str, max_bytes: int = 1_000_000) -> Any:
    """``yaml.safe_load`` with a size limit and an error that names ``source``."""
    if len(text.encode("utf-8")) > max_bytes:
        raise PresetError(source, f"larger than {max_bytes:,} bytes")
    try:
        return yaml.safe_load(text)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f" at line {mark.line + 1}, column {mark.column + 1}" if mark else ""
        problem = getattr(exc, "problem", None) or str(exc).splitlines()[0]
        raise PresetError(source, f"malformed YAML{where}: {problem}") from None


def lookup(name: object, table: Mapping[str, Any], what: str, field: str) -> str:
    """Find ``name`` in ``table`` case-insensitively; an unknown name lists close matches."""
    if isinstance(name, str) and name in table:
        return name  # the common case: already canonical
    if not isinstance(name, str) or not name.strip():
        raise PresetError(field, f"expected a {what} name, got {name!r}")
    folded = {k.lower(): k for k in table}
    key = name.strip().lower()
    if key in folded:
        return folded[key]
    close = close_names(key, list(table), 4)
    hint = f"; did you mean {', '.join(close)}?" if close else ""
    raise PresetError(field, f"unknown {what} {name!r}{hint} (known: {', '.join(table)})")


def close_names(word: str, names: list[str], n: int = 3, cutoff: float = 0.4) -> list[str]:
    """Names ``word`` may have meant: those containing it (``A100`` -> ``A100-SXM4-80GB``,
    ``fsx`` -> ``aws-fsx-lustre-*``, ``p5`` -> ``aws-p5.48xlarge``; up to 6), then the closest by
    spelling (difflib), ``n`` of those at most; case-insensitive."""
    key = word.strip().lower()
    folded = {k.lower(): k for k in names}
    contained = [k for k in folded if key and key in k][:6] if len(key) >= 2 else []
    spelled = [k for k in difflib.get_close_matches(key, list(folded), n=n, cutoff=cutoff) if k not in contained]
    return [folded[k] for k in [*contained, *spelled][: max(n, len(contained))]]


class _Entry:
    """Reads typed fields of one YAML mapping, naming ``file: entry: field`` on error."""

    def __init__(self, file: str, name: str, data: object) -> None:
        if not isinstance(data, dict):
            raise PresetError(f"{file}: {name}", f"expected a mapping, got {type(data).__name__}")
        self.file, self.name, self.data = file, name, data

    def where(self, key: str) -> str:
        return f"{self.file}: {self.name}: {key}"

    def get(self, key: str, default: Any = ...) -> Any:
        if key not in self.data:
            if default is ...:
                raise PresetError(self.where(key), "missing")
            return default
        return self.data[key]

    def quantity(self, key: str, kind: Kind, positive: bool = True) -> float:
        """``key`` in base units: more than 0, or 0 or more where ``positive`` is False (prices,
        counts); never negative. Checked by the one range check, raised as a preset error."""
        value = parse(self.get(key), kind, self.where(key))
        accepted = "more than 0" if positive else "0 or more"
        try:
            check_range(self.where(key), value, 0.0, above=positive, accepted=accepted)
        except InputError as e:
            raise PresetError(e.field, e.message) from None
        return value

    def text(self, key: str, default: Any = ...) -> str:
        value = self.get(key, default)
        if not isinstance(value, str):
            raise PresetError(self.where(key), f"expected text, got {value!r}")
        return value

    def choice(self, key: str, accepted: Sequence[str], default: Any = ...) -> str:
        """A text field that must be one of ``accepted`` (``default`` where absent, unchecked)."""
        value = self.text(key, default)
        if value not in accepted and not (default is not ... and value == default):
            raise PresetError(self.where(key), f"unknown {value!r}; accepted: {', '.join(accepted)}")
        return value

    def sub(self, key: str) -> _Entry | None:
        """An optional nested mapping as an entry of its own (errors name ``entry: key: field``)."""
        raw = self.get(key, None)
        return None if raw is None else _Entry(self.file, f"{self.name}: {key}", raw)


@dataclass(frozen=True)
class GPU:
    """One GPU preset. Memory in bytes (binary GiB in the YAML), rates per second."""

    name: str
    memory_bytes: float
    memory_bandwidth_bytes_per_s: float
    peak_flops_per_s: Mapping[str, float]
    host_link: str
    host_link_bytes_per_s: float
    source: str
    verified: str = ""
    price_per_hour: float = math.nan
    price_source: str = ""
    jpeg_decode_images_per_s: float = math.nan
    video_decode_fps_1080p: float = math.nan
    decoder_source: str = ""
    architecture: str = ""
    nvlink_bytes_per_s: float = math.nan
    nvlink: str = ""
    tensor_flops_per_clock_per_sm: float = math.nan
    """Dense 16-bit tensor FLOPs per clock per SM with FP32 accumulate (gpus.yaml ``tensor_per_sm``)."""
    tensor_source: str = ""

    def peak(self, precision: str) -> float:
        """Dense peak FLOP/s at ``precision``; an error if the GPU has no such path."""
        if precision not in self.peak_flops_per_s:
            have = ", ".join(self.peak_flops_per_s)
            raise InputError("precision", f"{self.name} has no {precision} peak in its datasheet; accepted: {have}")
        return self.peak_flops_per_s[precision]


@dataclass(frozen=True)
class Model:
    """One model preset: cost of a step and size of an example (see presets/models.yaml)."""

    name: str
    params: float
    forward_flops: float
    activation_bytes: Mapping[str, float]
    tensors: str
    example_bytes: float
    dataset_examples: float
    cpu_seconds_per_example: float
    calibration: tuple[str, ...]
    sources: Mapping[str, str] = field(default_factory=dict)
    train_flops: float = math.nan
    memory_traffic: Mapping[str, float] = field(default_factory=dict)
    step_traffic: Mapping[str, float] = field(default_factory=dict)
    family: str = "cnn"
    decoder: str = ""
    """What decodes a stored example (a presets/decoders.yaml key); empty: the model states its
    CPU cost as ``cpu_seconds_per_example`` instead."""
    image_pixels: str = ""
    """The stored image's width x height (``500x375``); empty for data that is not an image."""
    train_resolution: float = math.nan
    """The side [px] the per-example figures were taken at (and its default training side)."""
    vision: Mapping[str, float] = field(default_factory=dict)
    """A ViT image tower: ``patch``, ``layers``, ``hidden`` (calc.resolution); empty for a CNN."""
    fused_traffic_share: Mapping[str, float] = field(default_factory=dict)
    """Share of the per-example traffic a fusing stack removes, per memory class [0-1]
    (calc.compute.fused_traffic_share of the measured per-op bytes); empty: not measured."""
    depthwise_traffic_share: float = 0.0
    """Share of the per-example traffic in depthwise convolutions [0-1] (0: none)."""

    def traffic(self, memory_class: str) -> tuple[float, float, str]:
        """GPU-memory bytes per example and per step [bytes], and their source.

        Measured per op where presets/models.yaml has them; otherwise estimated from the
        saved activations and the parameter count (and the source says so).
        """
        if memory_class in self.memory_traffic:
            return (
                self.memory_traffic[memory_class],
                self.step_traffic[memory_class],
                f"models.yaml {self.name} ({memory_class}): {self.sources.get('memory_traffic', '')}",
            )
        per_example = TRAFFIC_PER_ACTIVATION_BYTE * self.activation_bytes[memory_class]
        step = self.params * 32.0  # weights read twice, gradients written, optimizer state read+written
        return (
            per_example,
            step,
            (
                f"estimated: {TRAFFIC_PER_ACTIVATION_BYTE:g} x activation bytes per example, "
                "32 B per parameter per step "
                f"(no measured traffic for {self.name} in models.yaml)"
            ),
        )


@dataclass(frozen=True)
class Measurement:
    """One measured training throughput (presets/calibration.yaml)."""

    model: str
    gpu: str
    precision: str
    batch_size: int
    samples_per_s: float
    source: str
    stack: str = "ngc"
    framework: str = ""
    layout: str = ""
    data: str = ""
    gpus: int = 1


@dataclass(frozen=True)
class ScalingRow:
    """A published multi-GPU throughput table: total samples/s at several GPU counts."""

    model: str
    gpu: str
    precision: str
    gpus: tuple[int, ...]
    samples_per_s: tuple[float, ...]
    source: str


@dataclass(frozen=True)
class StackPair:
    """One published eager / compiled pair (calibration.yaml ``stack_pairs``): the same model, GPUs and
    batch trained both ways, as model-FLOPs utilisation [0-1]."""

    model: str
    gpu: str
    precision: str
    eager_mfu: float
    compiled_mfu: float
    source: str


FAMILIES = ("cnn", "transformer")
"""Model families the step-time fit may give their own compute efficiency (models.yaml ``family``)."""

MODEL_FIGURES = (
    "params",
    "forward_flops",
    "activation_bytes",
    "tensors",
    "example_bytes",
    "dataset_examples",
    "cpu_seconds_per_example",
)
"""Every figure of a model preset, each of which needs an entry under ``sources``."""


def load_mapping(file: str, what: str) -> dict[Any, Any]:
    """A preset file that must be a mapping of names (``what``) to entries."""
    raw = load_yaml(presets_dir() / file)
    if not isinstance(raw, dict):
        raise PresetError(file, f"expected a mapping of {what} names")
    return raw


@functools.cache
def gpus() -> dict[str, GPU]:
    """All GPU presets by name."""
    raw = load_mapping("gpus.yaml", "GPU")
    out = {}
    for name, data in raw.items():
        e = _Entry("gpus.yaml", str(name), data)
        peaks_raw = e.get("peak_flops")
        if not isinstance(peaks_raw, dict) or not peaks_raw:
            raise PresetError(e.where("peak_flops"), "expected a mapping precision: FLOP/s")
        peaks = {}
        for p, v in peaks_raw.items():
            if p not in PRECISIONS:
                raise PresetError(e.where(f"peak_flops.{p}"), f"unknown precision; accepted: {', '.join(PRECISIONS)}")
            peaks[p] = parse(v, "flops_per_s", e.where(f"peak_flops.{p}"))
        link = _Entry("gpus.yaml", f"{name}: host_link", e.get("host_link"))
        out[str(name)] = GPU(
            name=str(name),
            memory_bytes=e.quantity("addressable_memory" if "addressable_memory" in e.data else "memory", "bytes"),
            memory_bandwidth_bytes_per_s=e.quantity("memory_bandwidth", "bytes_per_s"),
            peak_flops_per_s=peaks,
            host_link=link.text("name"),
            host_link_bytes_per_s=link.quantity("bandwidth", "bytes_per_s"),
            source=e.text("source"),
            verified=e.text("verified", ""),
            architecture=_architecture(e),
            **_nvlink(e),
            **_tensor_per_sm(e),
            **_gpu_price(e),
            **_gpu_decoders(e),
        )
    return out


def _nvlink(e: _Entry) -> dict[str, Any]:
    """A GPU's NVLink: bandwidth per GPU both directions [bytes/s] and 'name (source)'; none: {}."""
    n = e.sub("nvlink")
    if n is None:
        return {}
    return {
        "nvlink_bytes_per_s": n.quantity("bandwidth", "bytes_per_s"),
        "nvlink": f"{n.text('name')}: {n.get('bandwidth')} per GPU both directions ({n.text('source')})",
    }


def _tensor_per_sm(e: _Entry) -> dict[str, Any]:
    """A GPU's dense 16-bit tensor FLOPs per clock per SM and its source; none: {}."""
    t = e.sub("tensor_per_sm")
    if t is None:
        return {}
    return {"tensor_flops_per_clock_per_sm": t.quantity("flops_per_clock", "count"), "tensor_source": t.text("source")}


def _architecture(e: _Entry) -> str:
    return e.choice("architecture", tuple(compute.ARCHITECTURE_FP32_LANES), "")


def _gpu_decoders(e: _Entry) -> dict[str, Any]:
    """A GPU's hardware JPEG and video decode rates (NaN where none is given) and their source."""
    d = e.sub("decoders")
    if d is None:
        return {}
    return {
        "jpeg_decode_images_per_s": d.quantity("jpeg_images_per_s", "count_per_s"),
        "video_decode_fps_1080p": d.quantity("video_fps_1080p", "count_per_s"),
        "decoder_source": d.text("source"),
    }


def _gpu_price(e: _Entry) -> dict[str, Any]:
    """A GPU's on-demand price per GPU-hour and its source, or the note saying why there is none."""
    p = e.sub("price_per_hour")
    if p is None:
        return {"price_source": e.text("price_note", "no price in gpus.yaml")}
    return {
        "price_per_hour": p.quantity("usd", "count"),
        "price_source": f"{p.text('what')}; {p.text('source')} (dated {p.get('date', '?')})",
    }


def _share(e: _Entry, key: str) -> float:
    """A share of a model's traffic [0-1], range-checked."""
    v = e.quantity(key, "count", positive=False)
    if not v < 1:
        raise PresetError(e.where(key), f"a share of the traffic from 0 to below 1, got {v:g}")
    return v


def _model_extras(e: _Entry, name: str) -> dict[str, Any]:
    """A model preset's optional figures: measured training FLOPs, traffic, the fusable and depthwise shares."""
    extra: dict[str, Any] = {}
    if "train_flops" in e.data:
        extra["train_flops"] = e.quantity("train_flops", "flops")
    for key in ("memory_traffic", "step_traffic"):
        if key in e.data:
            t = _Entry("models.yaml", f"{name}: {key}", e.get(key))
            extra[key] = {c: t.quantity(c, "bytes", positive=key == "memory_traffic") for c in ("fp32", "mixed")}
    if "fused_traffic_share" in e.data:
        t = _Entry("models.yaml", f"{name}: fused_traffic_share", e.get("fused_traffic_share"))
        extra["fused_traffic_share"] = {c: _share(t, c) for c in ("fp32", "mixed")}
    if "depthwise_traffic_share" in e.data:
        extra["depthwise_traffic_share"] = _share(e, "depthwise_traffic_share")
    if ("memory_traffic" in extra) != ("step_traffic" in extra):
        raise PresetError(e.where("memory_traffic"), "give memory_traffic and step_traffic together")
    return extra


@functools.cache
def models() -> dict[str, Model]:
    """All model presets by name."""
    raw = load_mapping("models.yaml", "model")
    out = {}
    for name, data in raw.items():
        e = _Entry("models.yaml", str(name), data)
        act = _Entry("models.yaml", f"{name}: activation_bytes", e.get("activation_bytes"))
        cal = e.get("calibration")
        cal_t = (cal,) if isinstance(cal, str) else tuple(cal) if isinstance(cal, list) else ()
        if not cal_t or not all(isinstance(c, str) for c in cal_t):
            raise PresetError(e.where("calibration"), "expected a model name or a list of them")
        sources = e.get("sources")
        if not isinstance(sources, dict):
            raise PresetError(e.where("sources"), "expected a mapping field: source")
        tensors = e.text("tensors")
        tensor_bytes(tensors, e.where("tensors"))
        model = Model(
            name=str(name),
            params=e.quantity("params", "count"),
            forward_flops=e.quantity("forward_flops", "flops"),
            activation_bytes={
                "fp32": act.quantity("fp32", "bytes"),
                "mixed": act.quantity("mixed", "bytes"),
            },
            tensors=tensors,
            example_bytes=e.quantity("example_bytes", "bytes"),
            dataset_examples=e.quantity("dataset_examples", "count"),
            cpu_seconds_per_example=(
                e.quantity("cpu_seconds_per_example", "seconds")
                if "cpu_seconds_per_example" in e.data or "decoder" not in e.data
                else math.nan
            ),
            calibration=cal_t,
            sources={str(k): str(v) for k, v in sources.items()},
        )
        extra = _model_extras(e, str(name))
        family = e.choice("family", FAMILIES, "cnn")
        model = dataclasses.replace(model, family=family, **extra, **_model_image(e))
        figures = [f for f in MODEL_FIGURES if f in e.data or f != "cpu_seconds_per_example"]
        missing = [f for f in (*figures, *extra, *IMAGE_FIGURES) if f not in model.sources and f in e.data]
        if missing:
            raise PresetError(e.where("sources"), f"no source for {', '.join(missing)}")
        out[str(name)] = model
    return out


IMAGE_FIGURES = ("decoder", "image_pixels", "train_resolution", "vision")
"""A model preset's image: what decodes it, its stored size, the side its figures were taken at,
a ViT tower's shape (each with an entry under ``sources`` when given)."""


def _model_image(e: _Entry) -> dict[str, Any]:
    """A model's image figures (decoder, stored size, training side, ViT tower); none: {}."""
    out: dict[str, Any] = {}
    if "decoder" in e.data:
        out["decoder"] = lookup(e.text("decoder"), decoders(), "decoder", e.where("decoder"))
        out["image_pixels"] = e.text("image_pixels")
        image_size(out["image_pixels"], e.where("image_pixels"))
    if "train_resolution" in e.data:
        out["train_resolution"] = e.quantity("train_resolution", "count")
    v = e.sub("vision")
    if v is not None:
        out["vision"] = {k: v.quantity(k, "count") for k in ("patch", "layers", "hidden")}
        if "train_resolution" not in out:
            raise PresetError(e.where("train_resolution"), "a vision tower needs the side its figures were taken at")
    return out


@functools.cache
def measurements(file: str = "calibration.yaml") -> tuple[Measurement, ...]:
    """Measured training throughputs: the calibration anchors (or, with ``file="validation.yaml"``,
    the held-out rows that are never fitted)."""
    raw = load_yaml(presets_dir() / file)
    rows = raw.get("measurements") if isinstance(raw, dict) else None
    if not isinstance(rows, list):
        raise PresetError(file, "expected a list under 'measurements'")
    out = []
    for i, data in enumerate(rows):
        e = _Entry(file, f"measurements[{i}]", data)
        m = Measurement(
            model=lookup(e.text("model"), models(), "model", e.where("model")),
            gpu=lookup(e.text("gpu"), gpus(), "GPU", e.where("gpu")),
            precision=e.choice("precision", PRECISIONS),
            batch_size=int(e.quantity("batch_size", "count")),
            samples_per_s=e.quantity("samples_per_s", "count_per_s"),
            source=e.text("source"),
            stack=stack_name(e.text("stack", "ngc"), e.where("stack")),
            framework=str(e.get("framework", "")),
            layout=str(e.get("layout", "")),
            data=str(e.get("data", "")),
            gpus=int(e.quantity("gpus", "count")) if "gpus" in e.data else 1,
        )
        out.append(m)
    return tuple(out)


@functools.cache
def scaling_rows() -> tuple[ScalingRow, ...]:
    """Published multi-GPU tables (calibration.yaml ``scaling``)."""
    raw = load_yaml(presets_dir() / "calibration.yaml")
    rows = raw.get("scaling", []) if isinstance(raw, dict) else []
    out = []
    for i, data in enumerate(rows or []):
        e = _Entry("calibration.yaml", f"scaling[{i}]", data)
        counts, rates = e.get("gpus"), e.get("samples_per_s")
        if not isinstance(counts, list) or not isinstance(rates, list) or len(counts) != len(rates) or 1 not in counts:
            raise PresetError(e.where("gpus"), "expected equal lists of GPU counts (including 1) and samples/s")
        out.append(
            ScalingRow(
                model=lookup(e.text("model"), models(), "model", e.where("model")),
                gpu=lookup(e.text("gpu"), gpus(), "GPU", e.where("gpu")),
                precision=e.choice("precision", PRECISIONS),
                gpus=tuple(int(parse(c, "count", e.where("gpus"))) for c in counts),
                samples_per_s=tuple(parse(r, "count_per_s", e.where("samples_per_s")) for r in rates),
                source=e.text("source"),
            )
        )
    return tuple(out)


@functools.cache
def stack_pairs() -> tuple[StackPair, ...]:
    """Published eager / compiled transformer pairs (calibration.yaml ``stack_pairs``)."""
    raw = load_yaml(presets_dir() / "calibration.yaml")
    rows = raw.get("stack_pairs", []) if isinstance(raw, dict) else []
    out = []
    for i, data in enumerate(rows or []):
        e = _Entry("calibration.yaml", f"stack_pairs[{i}]", data)
        mfu = {k: e.quantity(k, "count") for k in ("eager_mfu", "compiled_mfu")}
        for k, v in mfu.items():
            if not 0 < v <= 1:
                raise PresetError(e.where(k), f"{v:g} is not a share of the peak; accepted: above 0, at most 1")
        pair = StackPair(
            model=e.text("model"),
            gpu=lookup(e.text("gpu"), gpus(), "GPU", e.where("gpu")),
            precision=e.choice("precision", PRECISIONS),
            eager_mfu=mfu["eager_mfu"],
            compiled_mfu=mfu["compiled_mfu"],
            source=e.text("source"),
        )
        out.append(pair)
    return tuple(out)


@dataclass(frozen=True)
class Server:
    """One GPU-server preset (presets/servers.yaml): what a node brings; NaN = not published."""

    name: str
    label: str
    gpu: str
    gpus_per_node: int
    cpu_cores: float
    ram_bytes: float
    storage_network_bytes_per_s: float
    storage_network: str
    sources: Mapping[str, str] = field(default_factory=dict)
    local_nvme_bytes: float = math.nan
    local_nvme_read_bytes_per_s: float = math.nan
    local_nvme: str = ""
    block_bytes_per_s: float = math.inf
    compute_network_bytes_per_s: float = math.nan
    compute_network: str = ""
    drive_bays: int = -1
    """Data-drive bays of the chassis (-1: not stated; 0: none, a rented instance)."""
    bays_used: int = 0
    bay_form_factor: str = ""
    bay_interface: str = ""
    cpu: str = ""
    """The node's CPU (a presets/cpus.yaml key); empty: not stated."""

    @property
    def free_bays(self) -> int:
        """Bays a bought cache drive can go into (0 when not stated)."""
        return max(self.drive_bays - self.bays_used, 0)

    @property
    def site(self) -> str:
        """``aws``, ``gcp`` or ``azure`` for a cloud instance (its name prefix), else ``on-prem``."""
        prefix = self.name.split("-", 1)[0].lower()
        return prefix if prefix in ("aws", "gcp", "azure") else "on-prem"


@dataclass(frozen=True)
class CPU:
    """One CPU preset (presets/cpus.yaml): what a core does relative to the reference CPU the
    loader costs were measured on (presets/decoders.yaml), and its threads."""

    name: str
    label: str
    cores_per_socket: float
    threads_per_core: int
    per_core_speed: float
    smt_gain: float
    source: str


@functools.cache
def _cpus_raw() -> dict[Any, Any]:
    return load_mapping("cpus.yaml", "CPU")


@functools.cache
def cpus() -> dict[str, CPU]:
    """CPU presets by name (presets/cpus.yaml ``cpus``)."""
    raw = _cpus_raw()
    top = _Entry("cpus.yaml", "top level", raw)
    gain = top.quantity("smt_throughput_gain", "count")
    if not 1 <= gain <= 2:
        raise PresetError(top.where("smt_throughput_gain"), f"{gain:g}; accepted: 1 to 2 (two threads on one core)")
    table = _Entry("cpus.yaml", "cpus", raw.get("cpus"))
    out = {}
    for name, data in table.data.items():
        e = _Entry("cpus.yaml", f"cpus: {name}", data)
        tpc = int(e.quantity("threads_per_core", "count"))
        if tpc not in (1, 2):
            raise PresetError(e.where("threads_per_core"), f"{tpc}; accepted: 1 or 2")
        # A CPU with no per-core speed is listed, and refused by name when chosen (calc.catalog.cpu).
        speed = e.quantity("per_core_speed", "count") if "per_core_speed" in e.data else math.nan
        sources = e.get("sources", {})
        why = sources.get("per_core_speed", "no source") if isinstance(sources, dict) else "no source"
        if not math.isfinite(speed):
            why = e.text("note", "no per_core_speed")
        out[str(name)] = CPU(
            name=str(name),
            label=e.text("label", str(name)),
            cores_per_socket=e.quantity("cores_per_socket", "count"),
            threads_per_core=tpc,
            per_core_speed=speed,
            smt_gain=gain if tpc > 1 else 1.0,
            source=f"per-core speed {speed:g} x the reference CPU's ({why})" if math.isfinite(speed) else why,
        )
    ref = str(raw.get("reference", ""))
    if out.get(ref) is None or out[ref].per_core_speed != 1:
        raise PresetError("cpus.yaml: reference", f"{ref!r}; accepted: a CPU of the file with per_core_speed 1")
    return out


def cpu(name: str, field: str = "cpu") -> CPU:
    """A CPU preset by name (case-insensitive); an unknown name lists the known ones, one with no
    per-core speed says why and which have one."""
    table = cpus()
    c = table[lookup(name, table, "CPU", field)]
    if not math.isfinite(c.per_core_speed):
        priced = ", ".join(k for k, v in table.items() if math.isfinite(v.per_core_speed))
        raise PresetError(
            field, f"{c.name} has no per_core_speed in presets/cpus.yaml ({c.source}); accepted: {priced}"
        )
    return c


def reference_cpu() -> str:
    """The CPU the loader costs of presets/decoders.yaml were measured on (per-core speed 1)."""
    ref = str(_decoders_raw().get("reference_cpu", ""))
    if ref != str(_cpus_raw().get("reference", "")) or ref not in cpus():
        raise PresetError("decoders.yaml: reference_cpu", f"{ref!r}; accepted: cpus.yaml's reference CPU")
    return ref


def server_cpu(server_name: str | None) -> str:
    """The CPU a plan runs its loader on when none is given: its server's, else the reference CPU."""
    if server_name:
        s = server(server_name)
        if s.cpu:
            return s.cpu
    return reference_cpu()


@dataclass(frozen=True)
class Decoder:
    """How one decoder's CPU time grows with an image, on one reference core (presets/decoders.yaml)."""

    name: str
    label: str
    fixed_s: float
    s_per_megapixel: float
    s_per_megapixel_above_knee: float
    knee_megapixels: float
    s_per_stored_megapixel: float
    s_per_megabyte: float
    dct_scaling: bool
    hw_share: float
    """Share of images a GPU's hardware JPEG decoder takes (nvJPEG on A100 and later); 0 on the CPU."""
    on_gpu: bool
    augment: str
    """The augmentation chain after it (decoders.yaml ``augment``): Pillow's own for Pillow images,
    the OpenCV/NumPy chain for arrays; ``gpu`` when the GPU augments."""
    source: str
    own_augment: tuple[float, float, float] = ()  # type: ignore[assignment]
    """A whole pipeline's own augmentation (s fixed, per crop MP, per output MP); empty: the chain's."""


GPU_HOST_HUFFMAN = "turbojpeg"
"""The decoder whose entropy-decoding terms stand for nvJPEG's host-side Huffman decoder (decoders.yaml
dali-gpu ``note``: libjpeg-style entropy decoding, not measured on a GPU here)."""

PIL_CHAINS = ("pil", "pillow-simd")
"""Decoders that hand Pillow images to Pillow's own augmentation chain; the rest hand arrays to OpenCV's."""


@dataclass(frozen=True)
class LoaderCosts:
    """The loader's costs besides decoding, on one reference core (presets/decoders.yaml):
    augmentation by chain and output dtype, collate, hand-over and pinning per batch and per MB."""

    augment_chains: Mapping[str, tuple[float, float, float]]
    """``chain:dtype`` -> (s fixed, s per crop-input MP, s per output MP)."""
    collate: tuple[float, float, float, float]
    """(s per batch, s per MB, s per MB more above the threshold, the threshold [MB]) of a batch."""
    send: tuple[float, float, float, float]
    receive: tuple[float, float, float, float]
    pin: tuple[float, float, float, float]
    raw: tuple[float, float, float, float]
    source: str

    def augment(self, d: Decoder, dtype: str) -> tuple[float, float, float]:
        """Seconds fixed, per crop megapixel and per output megapixel after ``d`` to ``dtype`` tensors."""
        if d.on_gpu:
            return (0.0, 0.0, 0.0)
        if d.own_augment:
            return d.own_augment  # a whole pipeline (FFCV): its own output term, whatever the dtype
        return self.augment_chains[f"{d.augment}:{'uint8' if dtype == 'uint8' else 'float32'}"]


@functools.cache
def _decoders_raw() -> dict[Any, Any]:
    return load_mapping("decoders.yaml", "decoder")


def _fixed_and_mb(file: str, where: str, data: object) -> tuple[float, float, float, float]:
    """A cost of ``s_fixed`` + ``s_per_megabyte`` x MB, and ``s_per_megabyte_if_above_mmap_threshold``
    more per MB when the batch is above ``mmap_threshold_megabytes`` (its pages fault in; none: 0, inf)."""
    e = _Entry(file, where, data)
    above = "s_per_megabyte_if_above_mmap_threshold"
    return (
        e.quantity("s_fixed", "seconds", positive=False),
        e.quantity("s_per_megabyte", "seconds", positive=False),
        e.quantity(above, "seconds", positive=False) if above in e.data else 0.0,
        e.quantity("mmap_threshold_megabytes", "count") if "mmap_threshold_megabytes" in e.data else math.inf,
    )


@functools.cache
def loader_costs() -> LoaderCosts:
    """The non-decode loader costs of presets/decoders.yaml."""
    raw = _decoders_raw()
    f = "decoders.yaml"
    chains: dict[str, tuple[float, float, float]] = {}
    for chain, variants in _Entry(f, "augment", raw.get("augment")).data.items():
        for dtype in ("float32", "uint8"):
            data = _Entry(f, f"augment: {chain}", variants).get(f"train_{dtype}", None)
            if data is None:
                continue
            a = _Entry(f, f"augment: {chain}: train_{dtype}", data)
            chains[f"{chain}:{dtype}"] = tuple(  # type: ignore[assignment]
                a.quantity(k, "seconds", positive=False)
                for k in ("s_fixed", "s_per_crop_input_megapixel", "s_per_output_megapixel")
            )
    col, tr, rw = (_Entry(f, k, raw.get(k)) for k in ("collate", "transfer", "raw"))
    return LoaderCosts(
        augment_chains=chains,
        collate=_fixed_and_mb(f, "collate: default_collate", col.get("default_collate")),
        pin=_fixed_and_mb(f, "collate: pin_memory_copy", col.get("pin_memory_copy")),
        # Two workers' figures: a loader has several (one worker's differ by under 30 %).
        send=_fixed_and_mb(f, "transfer: w2_worker_send_extra", tr.get("w2_worker_send_extra")),
        receive=_fixed_and_mb(f, "transfer: w2_main_receive", tr.get("w2_main_receive")),
        raw=_fixed_and_mb(f, "raw: raw", rw.get("raw")),
        source=f"decoders.yaml, measured on {raw.get('reference_cpu', '?')} ({raw.get('results', '')})",
    )


def _decoder(name: str, e: _Entry, raw_cost: tuple[float, ...], huffman: Decoder | None) -> Decoder:
    """One decoder entry: its own measured terms, raw pixels' copy cost (``none``), or for a GPU
    decoder the host-side Huffman terms of ``huffman``, of which its hardware share is spared."""
    label = e.text("label", name)
    if name == "none":
        return Decoder(name, label, raw_cost[0], 0, 0, math.inf, 0, raw_cost[1], False, 0, False, "opencv", label)
    # (raw pixels are one example's copy: its per-MB step, for batches, does not apply)
    hw = e.quantity("hw_decoder_share", "count", positive=False) if "hw_decoder_share" in e.data else math.nan
    if math.isfinite(hw):
        if huffman is None:
            raise PresetError(e.where("note"), f"a GPU decoder needs {GPU_HOST_HUFFMAN}'s host-side terms")
        h = huffman
        return Decoder(
            name,
            label,
            0,
            0,
            0,
            math.inf,
            h.s_per_stored_megapixel,
            h.s_per_megabyte,
            False,
            hw,
            True,
            "gpu",
            f"{label}: nvJPEG's host-side Huffman decoding as {h.name}'s per-MB and per-stored-MP "
            f"terms; {hw:g} of images on the hardware decoder where the GPU has one",
        )
    if "pipeline_s_per_image_224px_1_workers" in e.data:
        return _whole_pipeline(name, label, e)
    if "decode_s_per_megapixel" not in e.data:
        raise PresetError(e.where("decode_s_per_megapixel"), e.text("note", "no measured coefficients"))
    q = {
        k: e.quantity(k, "seconds", positive=False)
        for k in (
            "decode_s_fixed",
            "decode_s_per_megapixel",
            "decode_s_per_megapixel_if_above_knee",
            "decode_s_per_stored_megapixel",
            "decode_s_per_megabyte",
        )
    }
    return Decoder(
        name,
        label,
        q["decode_s_fixed"],
        q["decode_s_per_megapixel"],
        q["decode_s_per_megapixel_if_above_knee"],
        e.quantity("knee_megapixels", "count"),
        q["decode_s_per_stored_megapixel"],
        q["decode_s_per_megabyte"],
        bool(e.get("dct_scaling", False)),
        0.0,
        False,
        name if name in PIL_CHAINS else "opencv",
        f"{label}, measured ({e.text('fit_error', 'fit error not stated')})",
    )


WHOLE_PIPELINE_IMAGE = "500x375"
"""The one stored size a decoder measured only as a whole pipeline (FFCV) was timed on (decoders.yaml note)."""


def _whole_pipeline(name: str, label: str, e: _Entry) -> Decoder:
    """A decoder measured only as its whole pipeline (decode, crop, flip, to-tensor) on one stored size, at
    224 and 160 px: the difference over the output pixels is its per-output-MP term (augment chain
    ``name``), the rest a fixed cost per image; neither follows the stored image (not measured)."""
    t224 = e.quantity("pipeline_s_per_image_224px_1_workers", "seconds")
    t160 = e.quantity("pipeline_s_per_image_160px_1_workers", "seconds")
    per_output_mp = (t224 - t160) / ((224 * 224 - 160 * 160) / 1e6)
    fixed = t224 - per_output_mp * 224 * 224 / 1e6
    src = (
        f"{label}, its whole pipeline measured on {WHOLE_PIPELINE_IMAGE} JPEGs at 224 and 160 px: "
        f"{fixed * 1e3:.3g} ms an image + {per_output_mp * 1e3:.3g} ms per output MP"
    )
    return Decoder(name, label, fixed, 0, 0, math.inf, 0, 0, False, 0, False, name, src, (0.0, 0.0, per_output_mp))


@functools.cache
def decoder_table() -> dict[str, Decoder | str]:
    """Every decoder of presets/decoders.yaml: its coefficients, or why it cannot be priced."""
    table = _Entry("decoders.yaml", "decoders", _decoders_raw().get("decoders"))
    raw_cost = loader_costs().raw
    entries = {str(k): _Entry("decoders.yaml", f"decoders: {k}", v) for k, v in table.data.items()}
    out: dict[str, Decoder | str] = {}
    for name in sorted(entries, key=lambda k: "hw_decoder_share" in entries[k].data):  # GPU decoders last
        try:
            huffman = out.get(GPU_HOST_HUFFMAN)
            out[name] = _decoder(name, entries[name], raw_cost, huffman if isinstance(huffman, Decoder) else None)
        except PresetError as err:
            out[name] = err.message
    return {k: out[k] for k in entries}


def decoders() -> dict[str, Decoder | str]:
    """Decoder names (presets/decoders.yaml), each with its coefficients or why it has none."""
    return decoder_table()


def decoder(name: str, field: str = "decoder") -> Decoder:
    """A decoder preset by name (case-insensitive); an unknown name lists the known ones, one with no
    measured cost says so."""
    table = decoder_table()
    key = lookup(name, table, "decoder", field)
    d = table[key]
    if isinstance(d, str):
        priced = ", ".join(k for k, v in table.items() if isinstance(v, Decoder))
        raise PresetError(field, f"{key} has no CPU cost in presets/decoders.yaml ({d}); accepted: {priced}")
    return d


@functools.cache
def servers() -> dict[str, Server]:
    """GPU-server presets by name."""
    raw = load_mapping("servers.yaml", "server")
    out = {}
    for name, data in raw.items():
        e = _Entry("servers.yaml", str(name), data)
        g = _Entry("servers.yaml", f"{name}: gpus", e.get("gpus"))
        net = e.get("storage_network", None)
        n = _Entry("servers.yaml", f"{name}: storage_network", net) if isinstance(net, dict) else None
        sources = e.get("sources", {})
        nvme = e.sub("local_nvme")
        out[str(name)] = Server(
            name=str(name),
            label=e.text("label", str(name)),
            gpu=lookup(g.text("name"), gpus(), "GPU", g.where("name")),
            gpus_per_node=int(g.quantity("count", "count")),
            cpu_cores=e.quantity("cpu_cores", "count") if "cpu_cores" in e.data else math.nan,
            ram_bytes=e.quantity("ram", "bytes") if "ram" in e.data else math.nan,
            storage_network_bytes_per_s=n.quantity("bandwidth", "bytes_per_s") if n else math.nan,
            storage_network=n.text("name", "") if n else "",
            sources={str(k): str(v) for k, v in sources.items()} if isinstance(sources, dict) else {},
            local_nvme_bytes=nvme.quantity("capacity", "bytes") if nvme else math.nan,
            local_nvme_read_bytes_per_s=(
                nvme.quantity("read_bandwidth", "bytes_per_s") if nvme and "read_bandwidth" in nvme.data else math.nan
            ),
            local_nvme=f"{nvme.get('count', '?')} x {nvme.text('drive', '')}" if nvme else "",
            # Block volumes (EBS, managed disks) share one per-instance cap, apart from the NIC.
            block_bytes_per_s=(
                e.quantity("block_storage_bandwidth", "bytes_per_s")
                if "block_storage_bandwidth" in e.data
                else math.inf
            ),
            **_compute_network(e),
            **_drive_bays(e),
            cpu=lookup(e.text("cpu"), cpus(), "CPU", e.where("cpu")) if "cpu" in e.data else "",
        )
    return out


def _drive_bays(e: _Entry) -> dict[str, Any]:
    """A server's drive bays: {count, used, form_factor, interface}; none stated: {}."""
    b = e.sub("drive_bays")
    if b is None:
        return {}
    count, used = int(b.quantity("count", "count", positive=False)), int(b.quantity("used", "count", positive=False))
    if used > count:
        raise PresetError(b.where("used"), f"{used} drives used in {count} bays; accepted: at most count")
    return {
        "drive_bays": count,
        "bays_used": used,
        "bay_form_factor": b.text("form_factor"),
        "bay_interface": b.text("interface"),
    }


def _compute_network(e: _Entry) -> dict[str, Any]:
    """A server's GPU fabric between nodes: bandwidth [bytes/s] and its name; none: {}."""
    c = e.sub("compute_network")
    if c is None:
        return {}
    return {"compute_network_bytes_per_s": c.quantity("bandwidth", "bytes_per_s"), "compute_network": c.text("name")}


def server(name: str) -> Server:
    """A GPU-server preset by name (case-insensitive)."""
    table = servers()
    return table[lookup(name, table, "server", "server")]


def gpu(name: str) -> GPU:
    """A GPU preset by name (case-insensitive)."""
    table = gpus()
    return table[lookup(name, table, "GPU", "gpu")]


def model(name: str) -> Model:
    """A model preset by name (case-insensitive)."""
    table = models()
    return table[lookup(name, table, "model", "model")]


@functools.cache
def scenario_files() -> dict[str, Path]:
    """Scenario preset files by name (presets/scenarios/NAME.yaml)."""
    folder = presets_dir() / "scenarios"
    return {p.stem: p for p in sorted(folder.glob("*.yaml"))}


def tensor_flops_per_clock(g: GPU, precision: str) -> float:
    """Dense tensor FLOPs per clock per SM at ``precision`` [FLOPs]: the 16-bit rate (gpus.yaml
    ``tensor_per_sm``) scaled by the GPU's own peaks (TF32 half of it, fp8 twice, as the datasheets
    print them); NaN where the GPU has no figure."""
    ref = g.peak_flops_per_s.get("fp16", g.peak_flops_per_s.get("bf16", math.nan))
    return g.tensor_flops_per_clock_per_sm * g.peak(precision) / ref


def convolution_peak_share(gpu: str, precision: str, family: str, flops_per_shared_byte: float) -> tuple[float, str]:
    """The share of a GPU's peak a CNN's convolutions can reach at ``precision``, with its source.

    fp32 (TF32 off: CUDA cores): by the architecture's FP32 lanes per SM
    (calc.compute.fp32_convolution_share). A tensor-core precision: the share the SM's shared
    memory can feed at ``flops_per_shared_byte`` (the fitted FLOPs per byte it delivers,
    calc.compute.tensor_convolution_share). 1 for a transformer (its FLOPs are GEMMs, fed from
    larger tiles) and where the GPU has no figure (said in the source).
    """
    if family != "cnn":
        return 1.0, ""
    g = gpus().get(gpu)
    if precision != "fp32":
        if g is None or not math.isfinite(g.tensor_flops_per_clock_per_sm):
            return 1.0, f"{gpu}: no tensor rate per SM in gpus.yaml, so its {precision} peak is taken as reachable"
        per_clock = tensor_flops_per_clock(g, precision)
        share = float(
            compute.tensor_convolution_share(per_clock, compute.OPERAND_BYTES[precision], flops_per_shared_byte)
        )
        return share, (
            f"{precision} convolutions reach {share:.3g} of the tensor peak on {gpu}: shared memory feeds "
            f"{compute.SHARED_MEMORY_BYTES_PER_CLOCK:g} B per clock per SM at {flops_per_shared_byte:.3g} FLOPs "
            f"per byte against {per_clock:g} tensor FLOPs per clock per SM at "
            f"{compute.OPERAND_BYTES[precision]:g}-byte operands ({g.tensor_source})"
        )
    arch = g.architecture if g is not None else ""
    if not arch:
        return (
            1.0,
            f"{gpu}: no architecture in gpus.yaml, so no FP32 lane figure; its datasheet fp32 peak is"
            " taken as reachable",
        )
    lanes, src = compute.ARCHITECTURE_FP32_LANES[arch]
    share = float(compute.fp32_convolution_share(lanes))
    return share, f"fp32 convolutions reach {share:g} of the fp32 peak on {arch} ({lanes} FP32 lanes per SM: {src})"


# ------------------------------------------------------------------ published reference tiers (issue 38)

CACHE_SHARES = ("all", "part", "none")
"""What a node's cache holds of the dataset, as presets/reference_tiers.yaml names each tier's workload."""


@dataclass(frozen=True)
class ReferenceTier:
    """One published storage tier (presets/reference_tiers.yaml): per-node and per-SU read and
    write [bytes/s], the workload it names and what the node's cache holds of that workload's data."""

    name: str
    label: str
    workload: str
    cache: str
    node_read_bytes_per_s: float
    node_write_bytes_per_s: float
    su_read_bytes_per_s: float
    su_write_bytes_per_s: float
    nodes_per_su: int
    source: str


@functools.cache
def reference_tiers() -> dict[str, ReferenceTier]:
    """NVIDIA DGX SuperPOD's Good / Better / Best storage tiers by name, with their source."""
    f = "reference_tiers.yaml"
    raw = load_mapping(f, "reference tier")
    top = _Entry(f, "top level", raw)
    nodes = int(top.quantity("nodes_per_su", "count"))
    source = top.text("source")
    table = _Entry(f, "tiers", top.get("tiers"))
    out = {}
    for name, data in table.data.items():
        e = _Entry(f, f"tiers: {name}", data)
        cache = e.choice("cache", CACHE_SHARES)
        out[str(name)] = ReferenceTier(
            name=str(name),
            label=e.text("label"),
            workload=e.text("workload"),
            cache=cache,
            **{
                f"{k}_bytes_per_s": e.quantity(k, "bytes_per_s")
                for k in ("node_read", "node_write", "su_read", "su_write")
            },
            nodes_per_su=nodes,
            source=source,
        )
    if sorted(t.cache for t in out.values()) != sorted(CACHE_SHARES):
        raise PresetError(f"{f}: tiers", "accepted: one tier for each cache share (all, part, none)")
    return out
