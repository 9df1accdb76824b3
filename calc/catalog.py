"""The presets: GPUs, models, calibration measurements and scenarios, loaded from YAML.

Files live in the repository's ``presets/`` folder, installed as the ``calc.presets`` data
package, so ``import calc`` finds them from any working directory. YAML is read with
``yaml.safe_load`` only; every entry is validated and an error names file, entry and field.
"""

from __future__ import annotations

import difflib
import functools
import importlib.resources
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from calc.errors import InputError, PresetError
from calc.units import Kind, parse

PRECISIONS = ("fp32", "tf32", "fp16", "bf16", "fp8")
"""Training precisions. fp16, bf16 and fp8 mean mixed-precision training (autocast)."""


def precision_class(precision: str) -> str:
    """``fp32`` and ``tf32`` keep fp32 activations; the others are ``mixed``."""
    return precision if precision in ("fp32", "tf32") else "mixed"


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
    if not isinstance(name, str) or not name.strip():
        raise PresetError(field, f"expected a {what} name, got {name!r}")
    folded = {k.lower(): k for k in table}
    key = name.strip().lower()
    if key in folded:
        return folded[key]
    close = difflib.get_close_matches(key, folded, n=4, cutoff=0.4)
    hint = f"; did you mean {', '.join(folded[c] for c in close)}?" if close else ""
    raise PresetError(field, f"unknown {what} {name!r}{hint} (known: {', '.join(table)})")


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
        value = parse(self.get(key), kind, self.where(key))
        if positive and value <= 0:
            raise PresetError(self.where(key), f"must be positive, got {value!r}")
        return value

    def text(self, key: str, default: Any = ...) -> str:
        value = self.get(key, default)
        if not isinstance(value, str):
            raise PresetError(self.where(key), f"expected text, got {value!r}")
        return value


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


@dataclass(frozen=True)
class Measurement:
    """One measured training throughput (presets/calibration.yaml)."""

    model: str
    gpu: str
    precision: str
    batch_size: int
    samples_per_s: float
    source: str


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
            memory_bytes=e.quantity("memory", "bytes"),
            memory_bandwidth_bytes_per_s=e.quantity("memory_bandwidth", "bytes_per_s"),
            peak_flops_per_s=peaks,
            host_link=link.text("name"),
            host_link_bytes_per_s=link.quantity("bandwidth", "bytes_per_s"),
            source=e.text("source"),
            verified=e.text("verified", ""),
        )
    return out


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
        from calc.host import tensor_bytes  # validates the tensor spec

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
            cpu_seconds_per_example=e.quantity("cpu_seconds_per_example", "seconds"),
            calibration=cal_t,
            sources={str(k): str(v) for k, v in sources.items()},
        )
        missing = [f for f in MODEL_FIGURES if f not in model.sources]
        if missing:
            raise PresetError(e.where("sources"), f"no source for {', '.join(missing)}")
        out[str(name)] = model
    return out


@functools.cache
def measurements() -> tuple[Measurement, ...]:
    """The calibration anchors of presets/calibration.yaml."""
    raw = load_yaml(presets_dir() / "calibration.yaml")
    rows = raw.get("measurements") if isinstance(raw, dict) else None
    if not isinstance(rows, list):
        raise PresetError("calibration.yaml", "expected a list under 'measurements'")
    out = []
    for i, data in enumerate(rows):
        e = _Entry("calibration.yaml", f"measurements[{i}]", data)
        m = Measurement(
            model=lookup(e.text("model"), models(), "model", e.where("model")),
            gpu=lookup(e.text("gpu"), gpus(), "GPU", e.where("gpu")),
            precision=e.text("precision"),
            batch_size=int(e.quantity("batch_size", "count")),
            samples_per_s=e.quantity("samples_per_s", "count_per_s"),
            source=e.text("source"),
        )
        if m.precision not in PRECISIONS:
            raise PresetError(e.where("precision"), f"accepted: {', '.join(PRECISIONS)}")
        out.append(m)
    return tuple(out)


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
