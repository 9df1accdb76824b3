"""Measure the inputs that matter on your own machine, and feed them into a plan.

* ``storage(path)``: random-read IOPS, MB/s and latency percentiles over the files under a
  directory, defeating the page cache where it can (O_DIRECT, else POSIX_FADV_DONTNEED) and
  saying so where it cannot. It only reads: nothing is written into the data directory.
* ``loader(iterable)``: samples/s and per-batch latency of any iterable of batches (a
  PyTorch DataLoader included; torch is not required), and the CPU it ran on.
* ``fio(result)`` and ``dlio(summary)``: a run of the jobs calc.fio_job and calc.dlio_workload
  write, read back from fio's JSON output and DLIO's summary.json into a measured store.
* ``transform(dataset)``: the CPU time one example costs your own Dataset or transform (decode,
  augment, and the collate of a batch when given one), on this CPU, recorded with the CPU
  (``presets/cpus.yaml``) so that a plan on another CPU re-projects it by per-core speed.
* ``model(module, example_input)``: parameters, forward and training FLOPs (torch's
  FlopCounterMode), activation bytes per example (bytes saved for backward, measured at two
  batch sizes), and on a GPU peak memory and step time. Needs PyTorch (``pip install torch``).

Each result has ``as_inputs()``: the Scenario inputs it measured, ready for ``calc.plan``.
"""

from __future__ import annotations

import json
import math
import mmap
import os
import random
import statistics
import sys
import threading
import time
from collections.abc import Callable, Iterable, Mapping
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import yaml

from calc import catalog
from calc.errors import InputError
from calc.units import fmt, parse

ALIGN = 4096
"""O_DIRECT needs buffers, offsets and sizes aligned to the logical block size (4 KiB covers it)."""


def _percentile(xs: list[float], q: float) -> float:
    if not xs:
        return 0.0
    s = sorted(xs)
    return s[min(len(s) - 1, max(0, math.ceil(q / 100 * len(s)) - 1))]


# ------------------------------------------------------------------------------- storage


@dataclass(frozen=True)
class StorageMeasurement:
    """Random reads of ``request_bytes`` with ``concurrency`` readers over ``files`` files."""

    path: str
    files: int
    bytes_total: int
    request_bytes: int
    concurrency: int
    seconds: float
    reads: int
    iops: float
    bytes_per_s: float
    latency_p50_s: float
    latency_p99_s: float
    cache: str
    """How the page cache was kept out: "O_DIRECT", "fadvise DONTNEED", or a warning."""

    def as_inputs(self) -> dict[str, Any]:
        """Scenario inputs: this storage's bandwidth, IOPS and latency."""
        return {
            "storage_bytes_per_s": self.bytes_per_s,
            "storage_iops": self.iops,
            "storage_latency_s": self.latency_p50_s,
        }

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    def __str__(self) -> str:
        return (
            f"{fmt(self.iops, 'count_per_s', 'reads/s')} of {fmt(self.request_bytes, 'bytes', binary=True)}, "
            f"{fmt(self.bytes_per_s, 'bytes_per_s')}, latency p50 {fmt(self.latency_p50_s, 'seconds')} "
            f"p99 {fmt(self.latency_p99_s, 'seconds')} at concurrency {self.concurrency} ({self.cache})"
        )


Reader = Callable[[str, int, int], int]
"""(file path, offset, size) -> bytes read. Injected in tests to model a device's latency."""


class _FileReader:
    """Reads with O_DIRECT into a page-aligned buffer, or drops the file's cached pages first."""

    def __init__(self, size: int) -> None:
        self.buf = mmap.mmap(-1, max(size, ALIGN))  # anonymous mmap is page-aligned
        self.mode = "O_DIRECT" if hasattr(os, "O_DIRECT") else ""

    def __call__(self, path: str, offset: int, size: int) -> int:
        if self.mode == "O_DIRECT":
            try:
                fd = os.open(path, os.O_RDONLY | os.O_DIRECT)
            except OSError:
                self.mode = ""  # tmpfs and some network file systems refuse O_DIRECT
            else:
                try:
                    return os.preadv(fd, [memoryview(self.buf)[:size]], offset)
                except OSError:
                    self.mode = ""
                finally:
                    os.close(fd)
        fd = os.open(path, os.O_RDONLY)
        try:
            if hasattr(os, "posix_fadvise"):
                os.posix_fadvise(fd, offset, size, os.POSIX_FADV_DONTNEED)
            return len(os.pread(fd, size, offset))
        finally:
            os.close(fd)


def _files_under(path: Path) -> list[tuple[str, int]]:
    if not path.is_dir():
        raise InputError("path", f"{str(path)!r} is not a directory; give a folder of data files")
    out = []
    for root, _, names in os.walk(path):
        for n in names:
            p = os.path.join(root, n)
            try:
                size = os.path.getsize(p)
            except OSError:
                continue
            if size > 0 and os.path.isfile(p):
                out.append((p, size))
    if not out:
        raise InputError("path", f"no readable files under {str(path)!r}")
    return out


def storage(
    path: str | os.PathLike[str],
    request_size: int | str = "64 KiB",
    concurrency: int = 8,
    seconds: float = 5.0,
    progress: bool = False,
    seed: int = 0,
    reader: Reader | None = None,
) -> StorageMeasurement:
    """Random-read the files under ``path`` for ``seconds`` with ``concurrency`` threads.

    Offsets are random and aligned to 4 KiB; a file smaller than ``request_size`` is read
    whole. Threads release the GIL in the read system call, so they overlap like a
    DataLoader's workers.
    """
    req = int(parse(request_size, "bytes", "request_size"))
    if req < 512 or req > 2**30:
        raise InputError("request_size", f"{req} bytes; accepted: 512 B to 1 GiB")
    if not 1 <= concurrency <= 1024:
        raise InputError("concurrency", f"{concurrency}; accepted: 1 to 1024")
    if not 0 < seconds <= 3600:
        raise InputError("seconds", f"{seconds}; accepted: more than 0, at most 3600")
    files = _files_under(Path(path))
    rng = random.Random(seed)
    tally = _Tally()
    stop = time.perf_counter() + seconds
    threads = [
        threading.Thread(
            target=_read_randomly, args=(files, req, stop, rng.randrange(2**31), reader, tally), daemon=True
        )
        for _ in range(concurrency)
    ]
    started = time.perf_counter()
    for t in threads:
        t.start()
    while any(t.is_alive() for t in threads):
        if progress:
            done = min(1.0, (time.perf_counter() - started) / seconds)
            sys.stderr.write(f"\rmeasuring {path}: [{'#' * int(done * 30):<30}] {done:4.0%}")
            sys.stderr.flush()
        for t in threads:
            t.join(timeout=0.25)
    if progress:
        sys.stderr.write("\n")
    elapsed = time.perf_counter() - started
    return StorageMeasurement(
        path=str(path),
        files=len(files),
        bytes_total=sum(s for _, s in files),
        request_bytes=req,
        concurrency=concurrency,
        seconds=elapsed,
        reads=tally.reads,
        iops=tally.reads / elapsed,
        bytes_per_s=tally.bytes / elapsed,
        latency_p50_s=_percentile(tally.latencies, 50),
        latency_p99_s=_percentile(tally.latencies, 99),
        cache=_cache_note(reader, tally.modes),
    )


@dataclass
class _Tally:
    """What the reader threads found, merged under ``lock``: latencies [s], reads, bytes and
    how each bypassed the page cache."""

    latencies: list[float] = field(default_factory=list)
    reads: int = 0
    bytes: int = 0
    modes: set[str] = field(default_factory=set)
    lock: threading.Lock = field(default_factory=threading.Lock)


def _read_randomly(
    files: list[tuple[str, int]], req: int, stop: float, seed: int, reader: Reader | None, tally: _Tally
) -> None:
    """One reader thread: random aligned reads of random files until ``stop``, timed one by one."""
    r = random.Random(seed)
    read = reader or _FileReader(-(-req // ALIGN) * ALIGN)
    local: list[float] = []
    n = nbytes = 0
    while time.perf_counter() < stop:
        p, size = files[r.randrange(len(files))]
        size_here = min(req, size)
        aligned = -(-size_here // ALIGN) * ALIGN
        offset = r.randrange(0, max(size - size_here, 0) + 1) // ALIGN * ALIGN
        t0 = time.perf_counter()
        got = read(p, offset, aligned if isinstance(read, _FileReader) and read.mode else size_here)
        local.append(time.perf_counter() - t0)
        n += 1
        nbytes += min(got, size_here)
    with tally.lock:
        tally.latencies.extend(local)
        tally.reads += n
        tally.bytes += nbytes
        if isinstance(read, _FileReader):
            tally.modes.add(read.mode or "fadvise")


def _cache_note(reader: Reader | None, modes: set[str]) -> str:
    """How the page cache was kept out of the measurement, or a warning that it was not."""
    if reader is not None:
        return "custom reader"
    if modes == {"O_DIRECT"}:
        return "O_DIRECT"
    if "fadvise" in modes and hasattr(os, "posix_fadvise"):
        return "fadvise DONTNEED (O_DIRECT refused): pages may still be cached on tmpfs or network file systems"
    return "warning: could not bypass the page cache; the result may come from RAM"


def write_storage_preset(
    m: StorageMeasurement, out: str | os.PathLike[str], name: str = "measured-storage", site: str = "on-prem"
) -> Path:
    """Write a storage option of your own (the presets/storage.yaml format) for a measurement;
    ``calc.plan(..., storage="FILE")`` reads it back (calc.storage.own_option).

    The probe reads only: the write rate is written as the read rate and its source says so
    (replace it with the system's write figure); no price (add ``purchase_price`` or
    ``price_per_gb_month`` and their sources to have it priced and bought). Refuses to write
    inside the measured directory: the probe never touches the data.
    """
    target = Path(out).resolve()
    data_dir = Path(m.path).resolve()
    if target == data_dir or data_dir in target.parents:
        raise InputError("write_preset", f"{target} is inside the measured data directory; write it elsewhere")
    entry = {
        name: {
            "label": f"Measured: {m.path}",
            "kind": "local",
            "unit": "system",
            "iops": round(m.iops, 1),
            "iops_request": f"{m.request_bytes} B",
            "iops_queue_depth": m.concurrency,
            "read_bandwidth": f"{m.bytes_per_s:.0f} B/s",
            "write_bandwidth": f"{m.bytes_per_s:.0f} B/s",
            "latency": f"{m.latency_p50_s * 1e6:.1f} us",
            "site": site,
            "verified": "measured",
            "no_price_reason": "measured, not bought: add purchase_price or price_per_gb_month (with sources)",
            "sources": {
                **{
                    k: f"calc.measure.storage on {time.strftime('%Y-%m-%d')}, {m.reads} reads in {m.seconds:.1f} s; "
                    f"{m.cache}"
                    for k in ("iops", "read_bandwidth", "latency")
                },
                "write_bandwidth": "not measured (the probe only reads): the read rate, an assumption to replace",
            },
        }
    }
    target.write_text(yaml.safe_dump(entry, sort_keys=False))
    return target


# ---------------------------------------------------------------------- fio and DLIO results

FIO_READ_JOBS = ("reads-all-nodes", "reads-per-node")
"""calc.fio_job's read jobs, the store's aggregate first: the one a result's read figures come from."""

FIO_WRITE_JOBS = ("checkpoint-write-all-nodes", "checkpoint-write-per-node")
"""calc.fio_job's checkpoint write jobs, all nodes first."""


@dataclass(frozen=True)
class FioJob:
    """One job (one reporting group) of an fio JSON result [base units]."""

    name: str
    block_bytes: float
    """The job's ``bs`` [bytes] (NaN where the result does not state it)."""
    read_iops: float
    read_bytes_per_s: float
    read_latency_s: float
    """Mean time of a read, submission to completion (fio ``lat_ns.mean``) [s]."""
    write_iops: float
    write_bytes_per_s: float
    runtime_s: float


@dataclass(frozen=True)
class FioMeasurement:
    """An fio run read back: each job, and the store's figures from the read and write jobs.

    ``read_job`` is calc.fio_job's all-nodes read job where the result holds it, else its
    per-node one, else the one job that read (or the one named); ``write_job`` likewise.
    """

    jobs: tuple[FioJob, ...]
    read_job: str
    write_job: str | None
    source: str

    def job(self, name: str) -> FioJob:
        """The job called ``name`` (InputError naming the jobs when there is none)."""
        for j in self.jobs:
            if j.name == name:
                return j
        raise InputError("job", f"{name!r} is not in {self.source}; its jobs: {', '.join(j.name for j in self.jobs)}")

    @property
    def read(self) -> FioJob:
        return self.job(self.read_job)

    @property
    def write_bytes_per_s(self) -> float:
        """The write job's bandwidth [bytes/s] (NaN: no write job)."""
        return self.job(self.write_job).write_bytes_per_s if self.write_job else math.nan

    def as_inputs(self) -> dict[str, Any]:
        """Scenario inputs: the store's random reads/s, read time and bandwidth as measured, in place
        of a storage option (``storage`` and ``storage_units`` cleared: the measured store is the job's).

        A store given by these inputs has one bandwidth for reads and checkpoint writes
        (``storage_bytes_per_s``): where the run wrote too, it is the lower of the read and write
        bandwidths (a store that serves the job at that figure serves it)."""
        r = self.read
        bw = r.read_bytes_per_s if self.write_job is None else min(r.read_bytes_per_s, self.write_bytes_per_s)
        figures = {"storage_bytes_per_s": bw, "storage_iops": r.read_iops, "storage_latency_s": r.read_latency_s}
        return {"storage": None, "storage_units": None, **figures}

    def __str__(self) -> str:
        r = self.read
        size = fmt(r.block_bytes, "bytes", binary=True)
        text = (
            f"fio {r.name}: {fmt(r.read_iops, 'count_per_s', 'reads/s')} of {size}, "
            f"{fmt(r.read_bytes_per_s, 'bytes_per_s')}, mean read time {fmt(r.read_latency_s, 'seconds')}"
        )
        if self.write_job:
            text += f"; {self.write_job}: {fmt(self.write_bytes_per_s, 'bytes_per_s')} written"
        return text


def _json_result(result: str | os.PathLike[str] | Mapping[str, Any], what: str) -> tuple[dict[str, Any], str]:
    """A JSON result given as a path, JSON text or the parsed mapping, and a name for messages."""
    if isinstance(result, Mapping):
        return dict(result), f"the {what} result"
    text, source = str(result), f"the {what} result"
    if not text.lstrip().startswith("{"):
        path = Path(result)
        try:
            text = path.read_text(encoding="utf-8", errors="replace")
        except OSError as e:
            raise InputError(what, f"cannot read {str(path)!r}: {e.strerror}") from None
        source = str(path)
        # fio prints notes ("fio: ...") before the JSON when it writes to stdout: start at the object.
        text = text[text.find("{") :] if "{" in text else text
    try:
        data = json.loads(text)
    except json.JSONDecodeError as e:
        raise InputError(what, f"{source} is not JSON ({e.msg}, line {e.lineno})") from None
    if not isinstance(data, dict):
        raise InputError(what, f"{source} holds a {type(data).__name__}; expected a JSON object")
    return data, source


def _number(d: Mapping[str, Any], key: str, where: str) -> float:
    v = d.get(key)
    if isinstance(v, bool) or not isinstance(v, int | float) or not math.isfinite(v) or v < 0:
        raise InputError(where, f"{key} is {v!r}; expected a number of at least 0")
    return float(v)


def _fio_side(j: Mapping[str, Any], side: str, where: str) -> tuple[float, float, float, float]:
    """(operations/s, bytes/s, mean latency [s], runtime [s]) of a job's read or write side."""
    d = j.get(side)
    if not isinstance(d, Mapping):
        raise InputError(where, f"no {side} figures; expected fio's --output-format=json")
    lat = d.get("lat_ns")
    mean_ns = _number(lat, "mean", f"{where}: {side}.lat_ns") if isinstance(lat, Mapping) else math.nan
    w = f"{where}: {side}"
    return _number(d, "iops", w), _number(d, "bw_bytes", w), mean_ns / 1e9, _number(d, "runtime", w) / 1e3


def _fio_job(j: Mapping[str, Any], global_bs: Any, source: str) -> FioJob:
    name = str(j.get("jobname", ""))
    where = f"{source}: {name or 'a job'}"
    if j.get("error"):
        raise InputError(where, f"fio reports error {j['error']} for this job; fix the run and measure again")
    r_iops, r_bw, r_lat, r_s = _fio_side(j, "read", where)
    w_iops, w_bw, _, w_s = _fio_side(j, "write", where)
    opts = j.get("job options")
    bs = opts.get("bs", global_bs) if isinstance(opts, Mapping) else global_bs
    try:
        block = parse(str(bs), "bytes", "bs") if bs is not None else math.nan
    except InputError:
        block = math.nan  # fio's own size syntax (4k, 1m) where units.parse does not read it
    return FioJob(name, block, r_iops, r_bw, r_lat, w_iops, w_bw, max(r_s, w_s))


def _pick(jobs: tuple[FioJob, ...], named: str | None, ours: tuple[str, ...], did: str, source: str) -> str | None:
    """The job the figures come from: the one named, else calc.fio_job's first present, else the one
    job that ``did`` (read or write); several others are refused, naming them."""
    names = [j.name for j in jobs]
    if named is not None:
        if named not in names:
            raise InputError(f"{did}_job", f"{named!r} is not in {source}; its jobs: {', '.join(names)}")
        return named
    for n in ours:
        if n in names:
            return n
    active = [j.name for j in jobs if (j.read_bytes_per_s if did == "read" else j.write_bytes_per_s) > 0]
    if len(active) > 1:
        raise InputError(f"{did}_job", f"{source} has several jobs that {did}: {', '.join(active)}; name one")
    return active[0] if active else None


def fio(
    result: str | os.PathLike[str] | Mapping[str, Any], read_job: str | None = None, write_job: str | None = None
) -> FioMeasurement:
    """Read an fio JSON result (``fio --output-format=json``: a path, the JSON text or its mapping).

    The read figures come from ``read_job`` (default: calc.fio_job's all-nodes read job, else its
    per-node one, else the only job that read), the write bandwidth from ``write_job`` likewise;
    a result with no read is refused. ``as_inputs()`` gives the plan the measured store.
    """
    data, source = _json_result(result, "fio")
    raw = data.get("jobs")
    if not isinstance(raw, list) or not raw or not all(isinstance(j, Mapping) for j in raw):
        raise InputError("fio", f"{source} has no jobs; expected the output of fio --output-format=json")
    glob = data.get("global options")
    global_bs = glob.get("bs") if isinstance(glob, Mapping) else None
    jobs = tuple(_fio_job(j, global_bs, source) for j in raw)
    read = _pick(jobs, read_job, FIO_READ_JOBS, "read", source)
    chosen = next((j for j in jobs if j.name == read), None)
    if chosen is None or chosen.read_iops <= 0:
        raise InputError("read_job", f"{source} measured no reads; run calc.fio_job's read jobs")
    if not math.isfinite(chosen.read_latency_s):
        raise InputError("read_job", f"{chosen.name} in {source} has no read latency (lat_ns); fio 3 writes it")
    return FioMeasurement(jobs, chosen.name, _pick(jobs, write_job, FIO_WRITE_JOBS, "write", source), source)


@dataclass(frozen=True)
class DlioMeasurement:
    """A DLIO run's summary (``summary.json``): the job emulated on the store, and its verdict."""

    accelerators: int
    au: float
    """Mean accelerator utilisation over the epochs [0-1]."""
    au_target: bool
    """DLIO's own verdict: ``train_au_meet_expectation`` is ``success``."""
    samples_per_s: float
    """Training samples a second, all accelerators [samples/s]."""
    bytes_per_s: float
    """Bytes read a second, all accelerators [bytes/s] (DLIO's "MB/second" is MiB/s)."""

    def as_inputs(self) -> dict[str, Any]:
        """Scenario inputs: the store's bandwidth as DLIO saw it, in place of a storage option. Where
        the run met its AU the store delivered at least this (a lower bound); where it did not, this
        is what the store gave. DLIO's summary holds no reads/s or read time: those stay the plan's."""
        return {"storage": None, "storage_units": None, "storage_bytes_per_s": self.bytes_per_s}

    def __str__(self) -> str:
        return (
            f"DLIO: AU {self.au:.1%} ({'met' if self.au_target else 'not met'}), "
            f"{fmt(self.samples_per_s, 'count_per_s', 'samples/s')}, {fmt(self.bytes_per_s, 'bytes_per_s')} "
            f"on {self.accelerators} accelerator(s)"
        )


def dlio(summary: str | os.PathLike[str] | Mapping[str, Any]) -> DlioMeasurement:
    """Read DLIO's ``summary.json`` (its output folder; a path, the JSON text or its mapping)."""
    data, source = _json_result(summary, "dlio")
    m = data.get("metric")
    if not isinstance(m, Mapping):
        raise InputError("dlio", f"{source} has no metric section; expected DLIO's summary.json after training")
    where = f"{source}: metric"
    return DlioMeasurement(
        accelerators=int(_number(data, "num_accelerators", source)),
        au=_number(m, "train_au_mean_percentage", where) / 100,
        au_target=m.get("train_au_meet_expectation") == "success",
        samples_per_s=_number(m, "train_throughput_mean_samples_per_second", where),
        bytes_per_s=_number(m, "train_io_mean_MB_per_second", where) * 2**20,
    )


# -------------------------------------------------------------------------------- loader


def this_cpu() -> tuple[str, str]:
    """The presets/cpus.yaml key of the CPU this process runs on ("" when not in the catalog) and
    its model name as /proc/cpuinfo gives it."""
    info: dict[str, str] = {}
    try:
        first = Path("/proc/cpuinfo").read_text().split("\n\n")[0]
    except OSError:
        first = ""
    for line in first.splitlines():
        k, _, v = line.partition(":")
        info.setdefault(k.strip(), v.strip())
    name = info.get("model name", "")
    return match_cpu(name, info.get("vendor_id", ""), info.get("cpu family", "")), name


def match_cpu(model_name: str, vendor: str = "", family: str = "") -> str:
    """The cpus.yaml key whose words (``xeon-8480c``: xeon, 8480c) all appear in ``model_name``,
    else the reference CPU when the vendor and family are its own (AMD family 26, Zen 5, under a
    hypervisor that hides the model), else ""."""
    joined = "".join(model_name.lower().replace("(r)", "").replace("(tm)", "").replace("-", "").split())
    for key in catalog.cpus():
        parts = key.split("-")
        if len(parts) > 1 and all(part in joined for part in parts):
            return key
    ref = catalog.reference_cpu()
    if vendor == "AuthenticAMD" and family == "26" and model_name.strip() == "AMD EPYC":
        return ref
    return ""


@dataclass(frozen=True)
class LoaderMeasurement:
    """Throughput of an iterable of batches, and the CPU it ran on."""

    batches: int
    samples: int
    seconds: float
    samples_per_s: float
    batches_per_s: float
    batch_latency_p50_s: float
    batch_latency_p99_s: float
    cpu: str = ""
    """The presets/cpus.yaml key of the CPU this ran on ("" when not in the catalog)."""

    def as_inputs(self) -> dict[str, Any]:
        """Not a Scenario input by itself: compare ``samples_per_s`` with the plan's demand."""
        return {"measured_loader_samples_per_s": self.samples_per_s}

    def keeps_up(self, plan: Any) -> float:
        """Measured samples/s over the plan's demand per GPU (>= 1: this loader keeps up)."""
        demand = float(plan.per_gpu_samples_per_s)
        return self.samples_per_s / demand if demand > 0 else math.inf


def _batch_len(batch: Any) -> int:
    if isinstance(batch, dict) and batch:
        return _batch_len(next(iter(batch.values())))
    if isinstance(batch, list | tuple) and batch and not isinstance(batch[0], int | float):
        return _batch_len(batch[0])
    shape = getattr(batch, "shape", None)
    if shape is not None and len(shape) > 0:
        return int(shape[0])
    return len(batch) if hasattr(batch, "__len__") else 1


def loader(
    iterable: Iterable[Any],
    batches: int | None = None,
    seconds: float | None = None,
    warmup: int = 1,
    batch_size: int | None = None,
) -> LoaderMeasurement:
    """Time batches from ``iterable`` (after ``warmup`` batches, which start workers).

    Stops after ``batches`` batches, after ``seconds``, or when the iterable ends. The batch
    size is read from the first tensor's leading dimension unless ``batch_size`` is given.
    """
    if batches is not None and batches < 1:
        raise InputError("batches", f"{batches}; accepted: at least 1")
    if seconds is not None and seconds <= 0:
        raise InputError("seconds", f"{seconds}; accepted: more than 0")
    it = iter(iterable)
    for _ in range(warmup):
        if next(it, None) is None:
            raise InputError("iterable", "ended during warm-up; give more batches or warmup=0")
    lat: list[float] = []
    samples = 0
    start = last = time.perf_counter()
    for batch in it:
        now = time.perf_counter()
        lat.append(now - last)
        last = now
        samples += batch_size or _batch_len(batch)
        if (batches is not None and len(lat) >= batches) or (seconds is not None and now - start >= seconds):
            break
    elapsed = last - start
    if not lat or elapsed <= 0:
        raise InputError("iterable", "gave no batches to time")
    return LoaderMeasurement(
        batches=len(lat),
        samples=samples,
        seconds=elapsed,
        samples_per_s=samples / elapsed,
        batches_per_s=len(lat) / elapsed,
        batch_latency_p50_s=statistics.median(lat),
        batch_latency_p99_s=_percentile(lat, 99),
        cpu=this_cpu()[0],
    )


@dataclass(frozen=True)
class TransformMeasurement:
    """The CPU time one example costs a Dataset or transform, on one core of the CPU it ran on."""

    examples: int
    cpu_seconds_per_example: float
    """Median over ``repeats`` passes of process CPU time / examples (decode, augment, collate)."""
    collate_seconds_per_example: float
    cpu: str
    """The presets/cpus.yaml key of this CPU ("" when not in the catalog: pass ``cpu=``)."""
    cpu_model: str
    note: str = ""

    def as_inputs(self) -> dict[str, Any]:
        """``cpu_seconds_per_example`` and the CPU it was measured on (``measured_cpu``), so that a
        plan on another CPU re-projects it; with no catalog CPU, the time alone (on the plan's CPU)."""
        out: dict[str, Any] = {"cpu_seconds_per_example": self.cpu_seconds_per_example}
        if self.cpu:
            out["measured_cpu"] = self.cpu
        return out


def transform(
    dataset: Any,
    examples: int = 64,
    *,
    repeats: int = 5,
    warmup: int = 2,
    batch_size: int | None = None,
    collate: Callable[[list[Any]], Any] | None = None,
    cpu: str | None = None,
) -> TransformMeasurement:
    """Time ``dataset[i]`` (a Dataset, or any callable ``dataset(i)``) for ``examples`` examples,
    with process CPU time (``time.process_time``: the library threads a decoder starts count too),
    the median of ``repeats`` passes. With ``batch_size`` the examples are also collated in batches
    (``collate``, default torch's ``default_collate`` when torch is installed) and that time is
    added per example. ``cpu`` names the presets/cpus.yaml CPU when this one is not recognised.

    Run it in an otherwise idle process: process CPU time counts every thread of this process.
    """
    if examples < 1 or repeats < 1:
        raise InputError("examples", f"{examples} examples, {repeats} repeats; accepted: at least 1 of each")
    get: Callable[[int], Any] = (
        dataset if callable(dataset) and not hasattr(dataset, "__getitem__") else (dataset.__getitem__)
    )
    size = len(dataset) if hasattr(dataset, "__len__") else examples
    if size < 1:
        raise InputError("dataset", "is empty; accepted: a Dataset with at least one example")
    for i in range(warmup):
        get(i % size)
    passes, collated = [], []
    fold = collate or (_default_collate() if batch_size else None)
    for _ in range(repeats):
        t0 = time.process_time()
        items = [get(i % size) for i in range(examples)]
        t1 = time.process_time()
        passes.append((t1 - t0) / examples)
        if batch_size and fold is not None:
            t2 = time.process_time()
            for b in range(0, examples, batch_size):
                fold(items[b : b + batch_size])
            collated.append((time.process_time() - t2) / examples)
    found, model_name = this_cpu()
    key = catalog.cpu(cpu, "cpu").name if cpu else found
    per_collate = statistics.median(collated) if collated else 0.0
    note = "" if key else f"this CPU ({model_name or 'unknown'}) is not in presets/cpus.yaml: pass cpu= to name it"
    return TransformMeasurement(
        examples=examples,
        cpu_seconds_per_example=statistics.median(passes) + per_collate,
        collate_seconds_per_example=per_collate,
        cpu=key,
        cpu_model=model_name,
        note=note,
    )


def _default_collate() -> Callable[[list[Any]], Any] | None:
    try:
        from torch.utils.data import default_collate
    except ImportError:
        return None
    return default_collate


# --------------------------------------------------------------------------------- model


@dataclass(frozen=True)
class ModelMeasurement:
    """What one example costs a model, measured with PyTorch.

    ``train_flops_per_example`` is the slope of one full training step's FLOPs (forward +
    backward + optimizer step) over the batch size; ``memory_bytes_per_example`` the slope of
    the bytes the step's aten ops read and write, and ``step_memory_bytes`` the intercept: the
    batch-independent traffic (weights read, gradients written, optimizer state updated).
    """

    params: int
    forward_flops_per_example: float
    train_flops_per_example: float
    activation_bytes_per_example: float
    precision: str
    device: str
    peak_memory_bytes: float | None = None
    step_time_s: float | None = None
    batch_size: int | None = None
    notes: list[str] = field(default_factory=list)
    memory_bytes_per_example: float | None = None
    """Bytes read + written per example in one training step (slope over the batch size)."""
    step_memory_bytes: float | None = None
    """Bytes read + written per training step that do not grow with the batch (intercept)."""
    step_flops: float | None = None
    """FLOPs per training step that do not grow with the batch (intercept; usually 0)."""
    optimizer: str | None = None
    traffic_batch_sizes: tuple[int, int] | None = None
    traffic_by_op: dict[str, tuple[float, float]] = field(default_factory=dict)
    """aten op name -> (bytes per example, bytes per step), the split of the two totals."""

    def as_inputs(self) -> dict[str, Any]:
        """Scenario inputs measured here (a GPU step time only when measured on a GPU)."""
        out: dict[str, Any] = {
            "forward_flops_per_example": self.forward_flops_per_example,
            "activation_bytes_per_example": self.activation_bytes_per_example,
            "train_flops_multiplier": self.train_flops_per_example / self.forward_flops_per_example,
        }
        if self.step_time_s is not None and self.batch_size is not None:
            out.update(step_time_s=self.step_time_s, batch_size=self.batch_size)
        return out


def _torch() -> Any:
    try:
        import torch
    except ImportError:
        raise InputError("torch", "calc.measure.model needs PyTorch: pip install torch") from None
    return torch


def _with_batch(x: Any, n: int, torch: Any) -> Any:
    """Repeat a batch-of-one example along dim 0."""
    if isinstance(x, torch.Tensor):
        return x.repeat(n, *([1] * (x.dim() - 1)))
    if isinstance(x, tuple | list):
        return type(x)(_with_batch(v, n, torch) for v in x)
    if isinstance(x, dict):
        return {k: _with_batch(v, n, torch) for k, v in x.items()}
    raise InputError("example_input", f"expected tensors (or tuples/dicts of them), got {type(x).__name__}")


def _call(module: Any, x: Any) -> Any:
    if isinstance(x, dict):
        return module(**x)
    if isinstance(x, tuple | list):
        return module(*x)
    return module(x)


def _scalar(out: Any, torch: Any) -> Any:
    if hasattr(out, "loss") and isinstance(out.loss, torch.Tensor):
        out = out.loss
    elif hasattr(out, "logits"):
        out = out.logits
    if isinstance(out, tuple | list):
        out = out[0]
    if isinstance(out, torch.Tensor) and out.dim() == 0 and out.dtype == torch.float32:
        return out  # already a loss: no extra op
    return out.float().sum() if isinstance(out, torch.Tensor) else out


NO_TRAFFIC_OPS = frozenset(
    [
        "view",
        "_unsafe_view",
        "_reshape_alias",
        "reshape",
        "view_as",
        "t",
        "transpose",
        "expand",
        "expand_as",
        "permute",
        "detach",
        "alias",
        "as_strided",
        "slice",
        "select",
        "unsqueeze",
        "squeeze",
        "narrow",
        "split",
        "split_with_sizes",
        "unbind",
        "chunk",
        "diagonal",
        "unfold",
        "lift_fresh",
        "empty",
        "empty_like",
        "empty_strided",
        "new_empty",
        "new_empty_strided",
        "size",
        "sym_size",
        "stride",
        "sym_stride",
        "numel",
        "sym_numel",
        "is_same_size",
        "_has_compatible_shallow_copy_type",
        "set_",
        "resize_",
        "_local_scalar_dense",
    ]
)
"""aten ops that move no data: views, metadata and allocations (the writer of the memory counts)."""

WRITE_ONLY_OPS = frozenset(["copy_", "fill_", "zero_", "normal_", "uniform_", "random_", "bernoulli_", "exponential_"])
"""In-place ops that only write their first argument (its old contents are not read)."""


def _byte_counter(torch: Any) -> Any:
    """A TorchDispatchMode that adds up, per aten op, the bytes of its tensor inputs and outputs.

    Views and metadata-only ops count nothing; an in-place op reads and writes its first
    argument (``add_``: read self, read other, write self) unless it only writes it
    (``copy_``, ``fill_``, ``zero_``...); an ``out=`` tensor is only written; an in-place op
    that returns nothing (the ``_foreach_*_`` ops a CUDA optimizer step runs) writes the
    arguments its schema marks as mutated. Sizes are logical
    (``Tensor.nbytes``): an expanded tensor counts every element it presents to the op.
    Works for meta tensors (only shapes and dtypes are needed).
    """
    from torch.utils._python_dispatch import TorchDispatchMode
    from torch.utils._pytree import tree_flatten

    def nbytes(tree: Any) -> int:
        return sum(int(t.nbytes) for t in tree_flatten(tree)[0] if isinstance(t, torch.Tensor))

    class ByteCounter(TorchDispatchMode):  # type: ignore[no-untyped-call]
        def __init__(self) -> None:
            super().__init__()  # type: ignore[no-untyped-call]
            self.by_op: dict[str, int] = {}

        @property
        def total(self) -> int:
            return sum(self.by_op.values())

        def __torch_dispatch__(self, func: Any, types: Any, args: Any = (), kwargs: Any = None) -> Any:
            kwargs = kwargs or {}
            out = func(*args, **kwargs)
            name = func.overloadpacket.__name__
            if name in NO_TRAFFIC_OPS or func.is_view:
                return out
            reads = args[1:] if name in WRITE_ONLY_OPS else args
            read_kwargs = {k: v for k, v in kwargs.items() if k != "out"}
            written = nbytes(out)
            if not written:  # in-place ops that return nothing (_foreach_add_ ...): their mutated arguments
                schema = func._schema.arguments
                written = nbytes(
                    [
                        a
                        for a, s in zip(args, schema, strict=False)
                        if s.alias_info is not None and s.alias_info.is_write
                    ]
                )
            self.by_op[name] = self.by_op.get(name, 0) + nbytes((reads, read_kwargs)) + written
            return out

    return ByteCounter()


OPTIMIZERS = ("sgd", "sgd_momentum", "adamw")


def _optimizer(name: str, params: Any, torch: Any) -> Any:
    if name == "sgd":
        return torch.optim.SGD(params, lr=1e-3)
    if name == "sgd_momentum":
        return torch.optim.SGD(params, lr=1e-3, momentum=0.9)
    if name == "adamw":
        return torch.optim.AdamW(params, lr=1e-4)
    raise InputError("optimizer", f"{name!r}; accepted: {', '.join(OPTIMIZERS)}")


def model(
    module: Any,
    example_input: Any,
    precision: str = "fp32",
    batch_sizes: tuple[int, int] = (1, 2),
    device: str | None = None,
    time_batch: int | None = None,
    iters: int = 10,
    optimizer: str = "sgd_momentum",
    traffic: bool = True,
) -> ModelMeasurement:
    """Measure ``module`` on ``example_input`` (one example, leading dimension 1).

    FLOPs come from ``torch.utils.flop_counter.FlopCounterMode`` (2 FLOPs per multiply-add,
    ops it does not know count 0). Activation bytes are the bytes of non-parameter tensors
    autograd saves for backward, at two batch sizes; the slope is per example.

    Memory traffic (``traffic=True``): one full training step (forward, backward of the
    module's scalar output - a loss, or the sum of its output - and ``optimizer``'s step) is
    run under a byte-counting dispatch mode at ``batch_sizes`` a < b, after one uncounted step
    that creates the optimizer state; the traffic and FLOPs split linearly into a per-step part
    and a per-example part: ``bytes(n) = step_memory_bytes + n x memory_bytes_per_example``.
    The module's parameters are updated by those steps.

    ``device="meta"`` counts FLOPs and bytes without memory or compute (fp32 only: autocast
    has no meta backend). On a CUDA device it also reports peak memory and the step time of
    forward + backward + optimizer step at ``time_batch``.
    """
    torch = _torch()
    a, b = _check_model_args(precision, optimizer, batch_sizes)
    dev = _device(device, precision, torch)
    module = module.to(dev)
    x1 = _with_batch(example_input, 1, torch)
    x1 = torch.utils._pytree.tree_map(lambda t: t.to(dev) if isinstance(t, torch.Tensor) else t, x1)
    autocast = _Autocast(torch, dev, {"bf16": torch.bfloat16, "fp16": torch.float16}.get(precision))
    notes: list[str] = []
    params = sum(p.numel() for p in module.parameters())
    forward = _forward_flops(module, x1, autocast)
    if forward == 0:
        raise InputError("module", "FlopCounterMode counted no FLOPs: the model uses no matmul or convolution it knows")
    act = _activation_bytes(module, x1, a, b, autocast, torch)
    if act <= 0:
        notes.append("saved-tensor bytes did not grow with batch size; the model may run in inference mode")

    step = _TrainStep(module, _optimizer(optimizer, module.parameters(), torch), autocast, torch)
    flops, moved = _counted_steps(step, x1, a, b, traffic, torch)
    train = (flops[b] - flops[a]) / (b - a)
    step_flops = flops[a] - a * train
    by_op = _traffic_by_op(moved, a, b) if traffic else {}
    per_ex = sum(v[0] for v in by_op.values()) if traffic else None
    per_step = sum(v[1] for v in by_op.values()) if traffic else None
    if per_step is not None and per_step < 0:
        notes.append("per-step bytes came out negative: traffic is not linear in the batch size here")

    peak = step_s = None
    if dev.type == "cuda":
        time_batch = time_batch or b
        peak, step_s = _cuda_step(step, _with_batch(x1, time_batch, torch), iters, torch)
    return ModelMeasurement(
        params=int(params),
        forward_flops_per_example=forward,
        train_flops_per_example=train,
        activation_bytes_per_example=float(act),
        precision=precision,
        device=str(dev),
        peak_memory_bytes=peak,
        step_time_s=step_s,
        batch_size=time_batch if step_s else None,
        notes=notes,
        memory_bytes_per_example=per_ex,
        step_memory_bytes=per_step,
        step_flops=step_flops,
        optimizer=optimizer,
        traffic_batch_sizes=(a, b),
        traffic_by_op=by_op,
    )


def _check_model_args(precision: str, optimizer: str, batch_sizes: tuple[int, int]) -> tuple[int, int]:
    """The probe's choices, refused with what is accepted; the two batch sizes."""
    if precision not in ("fp32", "bf16", "fp16"):
        raise InputError("precision", f"{precision!r}; accepted: fp32, bf16, fp16")
    if optimizer not in OPTIMIZERS:
        raise InputError("optimizer", f"{optimizer!r}; accepted: {', '.join(OPTIMIZERS)}")
    a, b = batch_sizes
    if not 1 <= a < b:
        raise InputError("batch_sizes", f"{batch_sizes}; accepted: two sizes 1 <= a < b")
    return a, b


def _device(device: str | None, precision: str, torch: Any) -> Any:
    """The torch device to measure on: the one named, else CUDA when there is one, else the CPU."""
    dev = torch.device(device or ("cuda" if torch.cuda.is_available() else "cpu"))
    if dev.type == "meta" and precision != "fp32":
        raise InputError("precision", f"{precision!r} on the meta device; autocast needs a real device (fp32 only)")
    return dev


def _forward_flops(module: Any, x1: Any, autocast: _Autocast) -> float:
    """FLOPs of one forward pass of one example (torch's FlopCounterMode)."""
    from torch.utils.flop_counter import FlopCounterMode

    with FlopCounterMode(display=False) as fwd, autocast():
        out = _call(module, x1)
    forward = float(fwd.get_total_flops())
    del out
    return forward


class _Autocast:
    """A fresh autocast context per use: the precision's (bf16, fp16), or autocast off (fp32)."""

    def __init__(self, torch: Any, dev: Any, dtype: Any) -> None:
        self.torch, self.dev, self.dtype = torch, dev, dtype

    def __call__(self) -> Any:
        if self.dtype is None:
            if self.dev.type in ("cpu", "cuda"):
                return self.torch.autocast(self.dev.type, enabled=False)
            return _NullContext()
        return self.torch.autocast(self.dev.type, dtype=self.dtype)


def _activation_bytes(module: Any, x1: Any, a: int, b: int, autocast: _Autocast, torch: Any) -> float:
    """Bytes autograd saves for backward per example: the slope between batches ``a`` and ``b``
    of the non-parameter storages the forward pass saves."""

    def storage_key(t: Any) -> int:
        return int(t.untyped_storage()._cdata)  # one key per storage, on every device (meta included)

    param_keys = {storage_key(p) for p in module.parameters()}

    def saved_bytes(n: int) -> int:
        seen: dict[int, int] = {}

        def pack(t: Any) -> Any:
            if isinstance(t, torch.Tensor) and storage_key(t) not in param_keys:
                seen[storage_key(t)] = t.untyped_storage().nbytes()
            return t

        xn = _with_batch(x1, n, torch)
        with torch.autograd.graph.saved_tensors_hooks(pack, lambda t: t), autocast():
            out = _call(module, xn)
        del out
        return sum(seen.values())

    return (saved_bytes(b) - saved_bytes(a)) / (b - a)


class _TrainStep:
    """One full training step: forward under autocast, backward of the scalar output, the
    optimizer's step, gradients dropped."""

    def __init__(self, module: Any, opt: Any, autocast: _Autocast, torch: Any) -> None:
        self.module, self.opt, self.autocast, self.torch = module, opt, autocast, torch

    def __call__(self, xn: Any) -> None:
        with self.autocast():
            loss = _scalar(_call(self.module, xn), self.torch)
        loss.backward()
        self.opt.step()
        self.opt.zero_grad(set_to_none=True)


def _counted_steps(
    step: _TrainStep, x1: Any, a: int, b: int, traffic: bool, torch: Any
) -> tuple[dict[int, float], dict[int, dict[str, int]]]:
    """FLOPs and bytes per aten op of one training step at batches ``a`` and ``b``, after one
    uncounted step (it creates the optimizer state: not a steady-state step)."""
    from torch.utils.flop_counter import FlopCounterMode

    flops: dict[int, float] = {}
    moved: dict[int, dict[str, int]] = {}
    step(_with_batch(x1, a, torch))
    for n in (a, b):
        xn = _with_batch(x1, n, torch)
        counter = _byte_counter(torch) if traffic else _NullContext()
        with FlopCounterMode(display=False) as fc, counter:
            step(xn)
        flops[n] = float(fc.get_total_flops())
        moved[n] = dict(counter.by_op) if traffic else {}
    return flops, moved


def _traffic_by_op(moved: dict[int, dict[str, int]], a: int, b: int) -> dict[str, tuple[float, float]]:
    """aten op -> (bytes per example, bytes per step): each op's bytes at batches ``a`` and ``b``
    split into a slope and an intercept (ops that moved nothing left out)."""
    by_op: dict[str, tuple[float, float]] = {}
    for op in sorted(set(moved[a]) | set(moved[b])):
        ba, bb = moved[a].get(op, 0), moved[b].get(op, 0)
        slope = (bb - ba) / (b - a)
        if ba or bb:
            by_op[op] = (slope, ba - a * slope)
    return by_op


def _cuda_step(step: _TrainStep, xn: Any, iters: int, torch: Any) -> tuple[float, float]:
    """Peak GPU memory [bytes] and the mean time of ``iters`` training steps [s] after a warm-up."""
    step(xn)
    torch.cuda.synchronize()
    torch.cuda.reset_peak_memory_stats()
    t0 = time.perf_counter()
    for _ in range(iters):
        step(xn)
    torch.cuda.synchronize()
    step_s = (time.perf_counter() - t0) / iters
    return float(torch.cuda.max_memory_allocated()), step_s


class _NullContext:
    """A context manager that does nothing (and has an empty ``by_op``)."""

    def __init__(self) -> None:
        self.by_op: dict[str, int] = {}

    def __enter__(self) -> _NullContext:
        return self

    def __exit__(self, *exc: object) -> None:
        return None


def write_model_preset(
    m: ModelMeasurement,
    name: str,
    out: str | os.PathLike[str],
    tensors: str,
    example_bytes: str | float,
    dataset_examples: float,
    cpu_seconds_per_example: str | float,
) -> Path:
    """Write a models.yaml entry for a measured model (with what only you know about the data)."""
    cls = "fp32" if m.precision == "fp32" else "mixed"
    other = "mixed" if cls == "fp32" else "fp32"
    factor = 0.5 if cls == "fp32" else 2.0
    src = f"calc.measure.model on {m.device}, {time.strftime('%Y-%m-%d')}"
    entry: dict[str, dict[str, Any]] = {
        name: {
            "params": m.params,
            "forward_flops": f"{m.forward_flops_per_example:.6g} FLOPs",
            "activation_bytes": {
                cls: f"{m.activation_bytes_per_example:.0f} B",
                other: f"{m.activation_bytes_per_example * factor:.0f} B",
            },
            "tensors": tensors,
            "example_bytes": example_bytes,
            "dataset_examples": dataset_examples,
            "cpu_seconds_per_example": cpu_seconds_per_example,
            "calibration": [name, "resnet50"],
            "sources": {
                "params": src,
                "forward_flops": f"{src} (FlopCounterMode)",
                "activation_bytes": f"{src}: {cls} measured, {other} x{factor} (inferred)",
                "tensors": "user",
                "example_bytes": "user",
                "dataset_examples": "user",
                "cpu_seconds_per_example": "user (calc.measure.loader)",
            },
        }
    }
    fields = entry[name]
    sources: dict[str, str] = fields.pop("sources")
    fields["train_flops"] = f"{m.train_flops_per_example:.6g} FLOPs"
    sources["train_flops"] = f"{src} (FlopCounterMode, training step slope over batch {m.traffic_batch_sizes})"
    if m.memory_bytes_per_example is not None and m.step_memory_bytes is not None:
        how = f"{src} (aten-op bytes read + written, {m.optimizer}, batch {m.traffic_batch_sizes}); {cls} only"
        fields["memory_traffic"] = {cls: f"{m.memory_bytes_per_example:.0f} B"}
        fields["step_traffic"] = {cls: f"{m.step_memory_bytes:.0f} B"}
        sources["memory_traffic"] = how
        sources["step_traffic"] = how
    fields["sources"] = sources
    path = Path(out)
    path.write_text(yaml.safe_dump(entry, sort_keys=False))
    return path


# --------------------------------------------------------------------- checkpoint load


@dataclass(frozen=True)
class CheckpointLoadMeasurement:
    """``torch.load`` of one tensor file of ``file_bytes``, timed ``repeats`` times after a warm-up."""

    path: str
    file_bytes: int
    seconds: tuple[float, ...]
    bytes_per_s: float
    """File bytes / median load time [bytes/s]: one rank's read + deserialise rate."""

    def as_inputs(self) -> dict[str, Any]:
        """Scenario input: the per-rank checkpoint load rate a restore uses."""
        return {"checkpoint_load_bytes_per_s": self.bytes_per_s}

    def __str__(self) -> str:
        return (
            f"torch.load of {fmt(self.file_bytes, 'bytes', binary=True)}: {fmt(self.bytes_per_s, 'bytes_per_s')} "
            f"(median of {len(self.seconds)}; "
            f"{fmt(min(self.seconds), 'seconds')} to {fmt(max(self.seconds), 'seconds')})"
        )


def checkpoint_load(
    path: str | os.PathLike[str] | None = None, size: str | float = "256 MiB", repeats: int = 5
) -> CheckpointLoadMeasurement:
    """Time ``torch.load`` of a checkpoint shard on this machine's CPU [bytes/s].

    With ``path`` it loads that file (a shard saved by ``torch.save``); without, it saves a
    bf16 tensor of ``size`` to a temporary file and loads that. The page cache is warm after
    the first (untimed) load, so this is the deserialisation rate, not the storage's: a
    restore takes the lesser of this and the rank's share of the storage path
    (``calc.checkpoint.restore_time_s``). The median of ``repeats`` loads is reported.
    """
    import tempfile

    torch = _torch()
    if repeats < 1:
        raise InputError("repeats", f"{repeats}; accepted: 1 or more")
    with tempfile.TemporaryDirectory() as tmp:
        if path is None:
            n = int(parse(size, "bytes", "size")) // 2
            if n < 1:
                raise InputError("size", f"{size}; accepted: at least 2 B")
            target = Path(tmp) / "shard.pt"
            torch.save({"shard": torch.ones(n, dtype=torch.bfloat16)}, target)
        else:
            target = Path(path)
            if not target.is_file():
                raise InputError("path", f"{path}: no such file; accepted: a file written by torch.save")
        size_bytes = target.stat().st_size
        torch.load(target, weights_only=True)  # warm the page cache
        times = []
        for _ in range(repeats):
            t0 = time.perf_counter()
            loaded = torch.load(target, weights_only=True)
            times.append(time.perf_counter() - t0)
            del loaded
    median = statistics.median(times)
    return CheckpointLoadMeasurement(str(target), size_bytes, tuple(times), size_bytes / median)
