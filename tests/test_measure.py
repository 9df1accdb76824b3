"""Probes on the CPU: storage over temporary files, a loader of known rate, a tiny model."""

from __future__ import annotations

import json
import math
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

import calc
from calc import measure
from calc.errors import InputError, PresetError


@pytest.fixture(scope="module")
def data_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    d = tmp_path_factory.mktemp("data")
    for i in range(8):
        (d / f"shard{i}.bin").write_bytes(bytes(range(256)) * 4096)  # 1 MiB each
    (d / "sub").mkdir()
    (d / "sub" / "small.bin").write_bytes(b"x" * 1000)
    return d


def test_storage_probe_on_real_files(data_dir: Path) -> None:
    before = sorted(p.name for p in data_dir.rglob("*"))
    r = measure.storage(data_dir, request_size="64 KiB", concurrency=2, seconds=0.5)
    assert r.files == 9 and r.bytes_total == 8 * 2**20 + 1000
    assert r.reads > 0 and math.isfinite(r.iops) and r.iops > 0
    assert 0 < r.bytes_per_s <= r.iops * 65536 * 1.0001
    assert 0 < r.latency_p50_s <= r.latency_p99_s
    assert r.cache  # says how (or whether) the page cache was kept out
    assert sorted(p.name for p in data_dir.rglob("*")) == before  # nothing written into the data


class _Clock:
    """Stands in for ``time`` inside calc.measure: the test moves ``now``, no wall clock is read."""

    def __init__(self) -> None:
        self.now = 0.0

    def perf_counter(self) -> float:
        return self.now

    def strftime(self, fmt: str) -> str:
        return time.strftime(fmt)


def test_storage_probe_arithmetic_on_a_simulated_clock(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # One reader on a device that takes 1/512 s per read, for 0.5 s of (simulated) time: reads start
    # at 0, 1/512, ..., 255/512 -> exactly 256 reads, 256 / 0.5 s = 512 reads/s, each 64 KiB:
    # 256 x 65,536 B / 0.5 s = 33,554,432 B/s; every latency 1/512 s = 1.953 ms.
    # (Binary fractions add up exactly in floating point.) How IOPS scale with readers on a real
    # clock: benchmarks/storage_probe_scaling.py.
    for i in range(4):
        (tmp_path / f"f{i}.bin").write_bytes(b"\0" * 2**20)
    clock = _Clock()
    monkeypatch.setattr(measure, "time", clock)
    calls = []

    def device(path: str, offset: int, size: int) -> int:
        calls.append((offset, size))
        clock.now += 1 / 512
        return size

    r = measure.storage(tmp_path, request_size="64 KiB", concurrency=1, seconds=0.5, reader=device)
    assert len(calls) == r.reads == 256
    assert all(size == 65536 and offset % 4096 == 0 and offset <= 2**20 - 65536 for offset, size in calls)
    assert r.seconds == 0.5 and r.iops == 512.0 and r.bytes_per_s == 33_554_432.0
    assert r.latency_p50_s == r.latency_p99_s == 1 / 512
    assert r.cache == "custom reader" and r.files == 4 and r.bytes_total == 4 * 2**20


def test_storage_feeds_a_plan(data_dir: Path) -> None:
    r = measure.storage(data_dir, concurrency=1, seconds=0.3)
    p = calc.plan("beast-imagenet-4xv100", **r.as_inputs())
    assert p.storage_bytes_per_s == r.bytes_per_s and p.stages[p.bottleneck] == min(p.stages.values())


def test_storage_preset_written_elsewhere(data_dir: Path, tmp_path: Path) -> None:
    r = measure.storage(data_dir, concurrency=1, seconds=0.2)
    out = measure.write_storage_preset(r, tmp_path / "mine.yaml")
    entry = yaml.safe_load(out.read_text())["measured-storage"]
    assert entry["iops"] == pytest.approx(r.iops, rel=1e-3) and entry["sources"]["iops"]
    with pytest.raises(InputError, match="inside the measured data directory"):
        measure.write_storage_preset(r, data_dir / "preset.yaml")


@pytest.mark.parametrize(
    ("kwargs", "needle"),
    [
        ({"request_size": "1 B"}, "request_size"),
        ({"concurrency": 0}, "concurrency"),
        ({"seconds": -1}, "seconds"),
        ({"request_size": "64 parsecs"}, "unknown unit"),
    ],
)
def test_storage_probe_bad_input(data_dir: Path, kwargs: dict[str, object], needle: str) -> None:
    with pytest.raises(InputError, match=needle):
        measure.storage(data_dir, **kwargs)  # type: ignore[arg-type]


def test_storage_probe_missing_or_empty_dir(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="not a directory"):
        measure.storage(tmp_path / "nope")
    with pytest.raises(InputError, match="no readable files"):
        measure.storage(tmp_path)


def test_loader_probe_known_rate(monkeypatch: pytest.MonkeyPatch) -> None:
    # Each batch of 32 takes 1/128 s of simulated time: 128 batches/s x 32 = 4,096 samples/s; the
    # first batch is warm-up, then 25 are timed: 800 samples in 25/128 s.
    clock = _Clock()
    monkeypatch.setattr(measure, "time", clock)

    def batches() -> Iterator[list[int]]:
        while True:
            clock.now += 1 / 128
            yield list(range(32))

    r = measure.loader(batches(), batches=25)
    assert r.batches == 25 and r.samples == 800
    assert r.seconds == 25 / 128 and r.samples_per_s == 4096.0 and r.batches_per_s == 128.0
    assert r.batch_latency_p50_s == r.batch_latency_p99_s == 1 / 128
    # 4,096 / 1,457 samples/s that the article's ResNet-50 on a V100 consumes = 2.811
    assert r.keeps_up(calc.plan("beast-resnet50-v100")) == pytest.approx(4096 / 1457, rel=1e-9)


def test_loader_probe_stops_after_seconds(monkeypatch: pytest.MonkeyPatch) -> None:
    # batches of 10 every 0.25 s, stop once 1 s has passed: batches at 0.25, 0.5, 0.75, 1.0 -> 4
    clock = _Clock()
    monkeypatch.setattr(measure, "time", clock)

    def batches() -> Iterator[list[int]]:
        while True:
            clock.now += 0.25
            yield list(range(10))

    r = measure.loader(batches(), seconds=1.0, warmup=0)
    assert (r.batches, r.samples, r.seconds, r.samples_per_s) == (4, 40, 1.0, 40.0)


def test_loader_probe_reads_tensor_batch_size() -> None:
    torch = pytest.importorskip("torch")
    ds = torch.utils.data.TensorDataset(torch.zeros(64, 3), torch.zeros(64))
    r = measure.loader(torch.utils.data.DataLoader(ds, batch_size=16), warmup=0)
    assert r.samples == 64 and r.batches == 4


def test_model_probe_tiny_network() -> None:
    torch = pytest.importorskip("torch")
    torch.manual_seed(0)
    net = torch.nn.Sequential(torch.nn.Linear(4, 3), torch.nn.ReLU(), torch.nn.Linear(3, 2))
    r = measure.model(net, torch.randn(1, 4), device="cpu")
    # params: 4*3 + 3 + 3*2 + 2 = 23
    assert r.params == 23
    # forward: 2*1*4*3 + 2*1*3*2 = 36 FLOPs (bias adds are not counted by FlopCounterMode)
    assert r.forward_flops_per_example == 36
    # backward: layer 2 input grad 12 + weight grad 12; layer 1 weight grad 24 (the input needs none) -> 84 in all
    assert r.train_flops_per_example == 84
    # saved for backward per example: the input (4 floats) and the ReLU output (3 floats) = 28 B
    assert r.activation_bytes_per_example == 28
    p = calc.plan(calc.Scenario(model="resnet18", batch_size=64, **r.as_inputs()))
    assert p.values["train_flops_per_example"] == 84


def test_model_probe_conv_flops() -> None:
    torch = pytest.importorskip("torch")
    net = torch.nn.Sequential(
        torch.nn.Conv2d(3, 8, 3, padding=1, bias=False), torch.nn.Flatten(), torch.nn.Linear(8 * 16, 10)
    )
    r = measure.model(net, torch.randn(1, 3, 4, 4), device="cpu")
    # conv: 2 x (8 x 4 x 4 outputs) x (3 x 3 x 3) = 6,912; linear: 2 x 128 x 10 = 2,560
    assert r.forward_flops_per_example == 6912 + 2560
    assert r.params == 8 * 27 + 128 * 10 + 10


def test_model_probe_bad_input() -> None:
    torch = pytest.importorskip("torch")
    with pytest.raises(InputError, match="precision"):
        measure.model(torch.nn.Linear(2, 2), torch.randn(1, 2), precision="fp64")
    with pytest.raises(InputError, match="example_input"):
        measure.model(torch.nn.Linear(2, 2), "not a tensor")


def test_model_preset_written_and_complete(tmp_path: Path) -> None:
    torch = pytest.importorskip("torch")
    from calc import catalog

    net = torch.nn.Sequential(torch.nn.Linear(4, 3), torch.nn.ReLU(), torch.nn.Linear(3, 2))
    r = measure.model(net, torch.randn(1, 4), device="cpu")
    out = measure.write_model_preset(
        r,
        "tiny_mlp",
        tmp_path / "tiny.yaml",
        tensors="x=4:float32,y=1:int64",
        example_bytes="16 B",
        dataset_examples=1000,
        cpu_seconds_per_example="1 us",
    )
    entry = yaml.safe_load(out.read_text())["tiny_mlp"]
    assert entry["params"] == 23
    assert calc.parse(entry["forward_flops"], "flops") == 36
    assert calc.parse(entry["activation_bytes"]["fp32"], "bytes") == 28
    assert set(catalog.MODEL_FIGURES) <= set(entry["sources"])


def test_model_probe_memory_traffic_by_hand() -> None:
    # One nn.Linear(64 -> 32, bias=False) in fp32, plain SGD (no momentum), batches 1 and 2.
    # W is 32 x 64 floats = 8,192 B; one example's input x is 64 floats = 256 B, its output 32
    # floats = 128 B. Bytes are counted per aten op: tensor inputs + tensor outputs.
    #   forward  mm(x, W.t()): read x 256 n + W 8,192, write y 128 n     -> 384 n + 8,192
    #   loss     sum(y): read y 128 n, write the 4 B scalar               -> 128 n + 4
    #   backward ones_like(loss): read 4 B, write 4 B                      -> 8
    #            expand of the scalar grad is a view (free); the weight grad
    #            mm(x.t(), dy): read x 256 n + dy 128 n, write dW 8,192   -> 384 n + 8,192
    #            (x needs no gradient, so there is no second mm)
    #   SGD      W.add_(dW, alpha=-lr): read W, read dW, write W          -> 3 x 8,192 = 24,576
    # per example: 384 + 128 + 384 = 896 B; per step: 8,192 + 4 + 8 + 8,192 + 24,576 = 40,972 B
    torch = pytest.importorskip("torch")
    net = torch.nn.Linear(64, 32, bias=False)
    r = measure.model(net, torch.randn(1, 64), device="cpu", optimizer="sgd", batch_sizes=(1, 2))
    assert r.memory_bytes_per_example == 896
    assert r.step_memory_bytes == 40972
    assert r.traffic_by_op["mm"] == (768, 16384) and r.traffic_by_op["add_"] == (0, 24576)
    assert r.traffic_by_op["sum"] == (128, 4) and r.traffic_by_op["ones_like"] == (0, 8)
    # FLOPs: forward 2 x 64 x 32 = 4,096 per example, weight grad the same; no per-step FLOPs
    assert r.train_flops_per_example == 8192 and r.step_flops == 0
    assert r.forward_flops_per_example == 4096
    # Batch sizes 3 and 7 split the same straight line the same way.
    r37 = measure.model(net, torch.randn(1, 64), device="cpu", optimizer="sgd", batch_sizes=(3, 7))
    assert (r37.memory_bytes_per_example, r37.step_memory_bytes) == (896, 40972)


def test_model_probe_memory_traffic_bf16_autocast_by_hand() -> None:
    # The same Linear under bf16 autocast on the CPU: autocast casts x and W to bf16 (_to_copy
    # reads the fp32 tensor and writes a bf16 one), mm moves 2-byte elements, and the probe's
    # .float() before the sum casts the output back.
    #   _to_copy per example: x 256 -> 128 (384), y 64 -> 128 (192), scalar grad 128 -> dy 64 (192)
    #            = 768 n;  per step: W 8,192 -> 4,096 (12,288) and dW 4,096 -> 8,192 (12,288) = 24,576
    #   mm       forward read x 128 n + W 4,096, write y 64 n; backward read x 128 n + dy 64 n,
    #            write dW 4,096 (bf16; autograd casts it to fp32, counted above) = 384 n + 8,192
    #   sum 128 n + 4, ones_like 8, SGD add_ 24,576 as in fp32
    # per example 768 + 384 + 128 = 1,280 B; per step 24,576 + 8,192 + 4 + 8 + 24,576 = 57,356 B
    torch = pytest.importorskip("torch")
    net = torch.nn.Linear(64, 32, bias=False)
    r = measure.model(net, torch.randn(1, 64), device="cpu", optimizer="sgd", precision="bf16")
    assert r.traffic_by_op["_to_copy"] == (768, 24576) and r.traffic_by_op["mm"] == (384, 8192)
    assert (r.memory_bytes_per_example, r.step_memory_bytes) == (1280, 57356)


def test_model_probe_traffic_on_meta_device_and_optimizer_state() -> None:
    # Meta tensors have shapes and dtypes but no memory: the counts are those of a real run.
    # SGD with momentum adds a buffer: buf.mul_(0.9) reads + writes it (2 W), buf.add_(dW) reads
    # buf and dW and writes buf (3 W), W.add_(buf) 3 W -> 8 x 8,192 = 65,536 B per step for the
    # update, plus 8,192 + 8,192 + 4 + 8 from forward/backward = 81,932 B.
    # AdamW (single-tensor, torch 2.13) per step: step += 1 on a 4 B counter (8), W.mul_(1 - lr wd)
    # (2 W), m.lerp_(dW) (3 W), v.mul_ (2 W), v.addcmul_(dW, dW) (4 W), sqrt (2 W), div (2 W),
    # add_(eps) (2 W), W.addcdiv_(m, denom) (4 W) = 21 W + 8 = 172,040 B, + 16,396 = 188,436 B.
    torch = pytest.importorskip("torch")
    for optimizer, step in (("sgd_momentum", 81932), ("adamw", 188436)):
        net = torch.nn.Linear(64, 32, bias=False, device="meta")
        r = measure.model(net, torch.randn(1, 64), device="meta", optimizer=optimizer)
        assert r.device == "meta" and r.params == 2048
        assert r.memory_bytes_per_example == 896 and r.step_memory_bytes == step
        assert r.train_flops_per_example == 8192
    cpu = measure.model(torch.nn.Linear(64, 32, bias=False), torch.randn(1, 64), device="cpu", optimizer="adamw")
    assert cpu.step_memory_bytes == 188436


def test_model_probe_traffic_of_a_small_convnet_is_linear() -> None:
    # BatchNorm, ReLU (in place), pooling and a loss: three batch sizes fall on one straight line.
    torch = pytest.importorskip("torch")

    class Net(torch.nn.Module):  # type: ignore[name-defined,misc]
        def __init__(self) -> None:
            super().__init__()
            self.body = torch.nn.Sequential(
                torch.nn.Conv2d(3, 8, 3, padding=1, bias=False),
                torch.nn.BatchNorm2d(8),
                torch.nn.ReLU(inplace=True),
                torch.nn.AdaptiveAvgPool2d(1),
                torch.nn.Flatten(),
                torch.nn.Linear(8, 5),
            )

        def forward(self, x: object, y: object) -> object:
            return torch.nn.functional.cross_entropy(self.body(x), y)

    x, y = torch.randn(1, 3, 8, 8), torch.tensor([1])
    r12 = measure.model(Net(), (x, y), device="cpu", batch_sizes=(2, 3))
    r25 = measure.model(Net(), (x, y), device="cpu", batch_sizes=(2, 5))
    assert r12.memory_bytes_per_example == pytest.approx(r25.memory_bytes_per_example)
    assert r12.step_memory_bytes == pytest.approx(r25.step_memory_bytes)
    # at least the conv's input and output are read and written per example, in both passes
    assert (r12.memory_bytes_per_example or 0) > 2 * (3 + 8) * 64 * 4
    assert (r12.step_memory_bytes or 0) > 0 and r12.optimizer == "sgd_momentum"


def test_model_probe_traffic_bad_input() -> None:
    torch = pytest.importorskip("torch")
    with pytest.raises(InputError, match="optimizer"):
        measure.model(torch.nn.Linear(2, 2), torch.randn(1, 2), device="cpu", optimizer="lion")
    with pytest.raises(InputError, match="meta"):
        measure.model(torch.nn.Linear(2, 2, device="meta"), torch.randn(1, 2), device="meta", precision="bf16")
    with pytest.raises(InputError, match="batch_sizes"):
        measure.model(torch.nn.Linear(2, 2), torch.randn(1, 2), device="cpu", batch_sizes=(2, 2))


def test_byte_counter_counts_foreach_writes() -> None:
    # The optimizers' foreach path (the default on CUDA) runs in-place list ops that return
    # nothing: the counter takes the written lists from the schema. _foreach_add_([a, b], [c, d]):
    # reads a, b, c, d and writes a, b -> 6 x 64 B; _foreach_mul_([a, b], 0.9): 4 x 64 B.
    torch = pytest.importorskip("torch")
    a, b, c, d = (torch.ones(16) for _ in range(4))
    with measure._byte_counter(torch) as counter:
        torch._foreach_add_([a, b], [c, d])
        torch._foreach_mul_([a, b], 0.9)
        a.add_(c)  # returns self: read a, read c, write a = 3 x 64 B
    assert counter.by_op == {"_foreach_add_": 384, "_foreach_mul_": 256, "add_": 192}
    # The foreach SGD step counts what the single-tensor one does: W.add_(dW) is 3 W per weight.
    net = torch.nn.Linear(64, 32, bias=False)
    net.weight.grad = torch.ones_like(net.weight)
    for foreach in (False, True):
        opt = torch.optim.SGD(net.parameters(), lr=1e-3, foreach=foreach)
        with measure._byte_counter(torch) as counter:
            opt.step()
        assert counter.total == 3 * 8192


def test_checkpoint_load_probe_feeds_the_restore(tmp_path: Path) -> None:
    torch = pytest.importorskip("torch")
    # 8 MiB of bf16 = 4,194,304 elements x 2 B = 8,388,608 B of tensor data, plus torch.save's
    # zip headers and pickle (a few kB)
    r = measure.checkpoint_load(size="8 MiB", repeats=3)
    assert 8_388_608 <= r.file_bytes < 8_388_608 + 65_536
    assert len(r.seconds) == 3 and r.bytes_per_s > 0
    # a shard the caller saved is loaded as it is
    shard = tmp_path / "shard.pt"
    torch.save({"w": torch.zeros(1000, dtype=torch.float32)}, shard)
    assert measure.checkpoint_load(shard, repeats=1).file_bytes == shard.stat().st_size
    # the measured rate becomes the plan's per-rank load rate: 8B ZeRO-3 on 8 ranks, nothing else
    # limiting the read, restores in 14,052,957,184 B / rate
    p = calc.plan("mlperf-checkpoint-llama3-8b", **r.as_inputs())
    assert p.checkpoint_restore_s == pytest.approx(14_052_957_184 / r.bytes_per_s, rel=1e-9)
    with pytest.raises(InputError, match="path"):
        measure.checkpoint_load(tmp_path / "missing.pt")
    with pytest.raises(InputError, match="repeats"):
        measure.checkpoint_load(shard, repeats=0)


def test_gpu_step_timing_on_a_simulated_clock(monkeypatch: pytest.MonkeyPatch) -> None:
    # The GPU timing without a GPU: each training step takes 0.25 s of simulated time. One warm-up
    # step (not timed), then iters = 4 timed steps: 4 x 0.25 s / 4 = 0.25 s a step. The peak is
    # read after the peak counter was reset (after the warm-up): 3 GiB here, as the fake reports.
    clock = _Clock()
    monkeypatch.setattr(measure, "time", clock)
    events: list[str] = []

    class Cuda:
        def synchronize(self) -> None:
            events.append("sync")

        def reset_peak_memory_stats(self) -> None:
            events.append("reset")

        def max_memory_allocated(self) -> int:
            events.append("peak")
            return 3 * 2**30

    class Torch:
        cuda = Cuda()

    def step(xn: object) -> None:
        assert xn == "batch"
        events.append("step")
        clock.now += 0.25

    peak, step_s = measure._cuda_step(step, "batch", 4, Torch())  # type: ignore[arg-type]
    assert step_s == 0.25 and peak == 3 * 2**30
    assert events == ["step", "sync", "reset", "step", "step", "step", "step", "sync", "peak"]


# ------------------------------------------------------------------ fio and DLIO results read back


def _fio_job(
    name: str, bs: str, read: tuple[float, float, float], write: tuple[float, float] = (0, 0)
) -> dict[str, Any]:
    """One job as fio --output-format=json writes it (the fields calc.measure reads)."""
    return {
        "jobname": name,
        "error": 0,
        "job options": {"bs": bs, "rw": "randread"},
        "read": {"iops": read[0], "bw_bytes": read[1], "runtime": 1000, "lat_ns": {"mean": read[2]}},
        "write": {"iops": write[0], "bw_bytes": write[1], "runtime": 1000 if write[0] else 0, "lat_ns": {"mean": 0.0}},
    }


FIO_RESULT: dict[str, Any] = {
    "fio version": "fio-3.33",
    "global options": {"directory": "/mnt/x", "bs": "4096"},
    "jobs": [
        # 16,000 reads/s of 64 KiB = 1,048,576,000 B/s; 375 us mean (6 in flight / 16,000 reads/s).
        _fio_job("reads-per-node", "65536", (16_000, 1_048_576_000, 375_000)),
        # 30 parts of 16 MiB a second = 503,316,480 B/s written.
        _fio_job("checkpoint-write-per-node", "16777216", (0, 0, 0), (30, 503_316_480)),
    ],
}


def test_fio_result_read_back_by_hand() -> None:
    m = measure.fio(FIO_RESULT)
    assert (m.read_job, m.write_job) == ("reads-per-node", "checkpoint-write-per-node")
    r = m.read
    assert (r.read_iops, r.read_bytes_per_s, r.read_latency_s, r.block_bytes) == (16_000, 1_048_576_000, 375e-6, 65536)
    assert m.write_bytes_per_s == 503_316_480 and m.job("checkpoint-write-per-node").block_bytes == 2**24
    # One bandwidth for a store given by its figures: the lower of reads and writes.
    assert m.as_inputs() == {
        "storage": None,
        "storage_units": None,
        "storage_bytes_per_s": 503_316_480,
        "storage_iops": 16_000,
        "storage_latency_s": 375e-6,
    }
    assert str(m) == (
        "fio reads-per-node: 16,000 reads/s of 64 KiB, 1.05 GB/s, mean read time 375 µs; "
        "checkpoint-write-per-node: 503.3 MB/s written"
    )
    # Reads only: the read bandwidth stands.
    reads_only = measure.fio({"jobs": FIO_RESULT["jobs"][:1]})
    assert reads_only.write_job is None and reads_only.as_inputs()["storage_bytes_per_s"] == 1_048_576_000


def test_fio_prefers_all_nodes_and_takes_named_jobs() -> None:
    all_nodes = _fio_job("reads-all-nodes", "65536", (40_000, 2_621_440_000, 300_000))
    m = measure.fio({"jobs": [*FIO_RESULT["jobs"], all_nodes]})
    assert m.read_job == "reads-all-nodes" and m.as_inputs()["storage_iops"] == 40_000
    assert (
        measure.fio({"jobs": [*FIO_RESULT["jobs"], all_nodes]}, read_job="reads-per-node").read_job == "reads-per-node"
    )
    # A job file of one's own: its one reading job; several need a name.
    mine = [_fio_job("a", "4k", (100, 409_600, 1e6)), _fio_job("b", "4k", (200, 819_200, 1e6))]
    assert measure.fio({"jobs": mine[:1]}).read_job == "a"
    assert math.isnan(measure.fio({"jobs": mine[:1]}).read.block_bytes)  # fio's own "4k" is not read as bytes
    with pytest.raises(InputError, match=r"read_job: .*several jobs that read: a, b; name one"):
        measure.fio({"jobs": mine})
    assert measure.fio({"jobs": mine}, read_job="b").read.read_iops == 200
    with pytest.raises(InputError, match=r"read_job: 'c' is not in"):
        measure.fio({"jobs": mine}, read_job="c")


def test_fio_results_it_cannot_read_are_refused(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="has no jobs"):
        measure.fio({"jobs": []})
    bad = dict(_fio_job("reads-per-node", "65536", (1, 1, 1)), error=5)
    with pytest.raises(InputError, match="fio reports error 5"):
        measure.fio({"jobs": [bad]})
    nan = _fio_job("reads-per-node", "65536", (float("nan"), 1, 1))
    with pytest.raises(InputError, match="iops is nan"):
        measure.fio({"jobs": [nan]})
    with pytest.raises(InputError, match="measured no reads"):
        measure.fio({"jobs": FIO_RESULT["jobs"][1:]})
    with pytest.raises(InputError, match="no read figures"):
        measure.fio({"jobs": [{"jobname": "x", "write": {}}]})
    with pytest.raises(InputError, match="cannot read"):
        measure.fio(tmp_path / "absent.json")
    (tmp_path / "bad.json").write_text("fio: note\n{oops")
    with pytest.raises(InputError, match="is not JSON"):
        measure.fio(tmp_path / "bad.json")
    # fio's notes before the JSON (stdout) are skipped; JSON text works as well as a path.
    (tmp_path / "ok.json").write_text("fio: file hash not empty on exit\n" + json.dumps(FIO_RESULT))
    assert measure.fio(tmp_path / "ok.json").read.read_iops == 16_000
    assert measure.fio(json.dumps(FIO_RESULT)).read.read_iops == 16_000


DLIO_SUMMARY: dict[str, Any] = {
    "num_accelerators": 8,
    "num_hosts": 1,
    "metric": {
        "train_au_percentage": [93.1, 95.9],
        "train_au_mean_percentage": 94.5,
        "train_au_meet_expectation": "success",
        "train_throughput_mean_samples_per_second": 160.0,
        # DLIO's "MB/second" is samples/s x record / 1024 / 1024: MiB/s.
        "train_io_mean_MB_per_second": 22366.7,
    },
}


def test_dlio_summary_read_back_by_hand() -> None:
    m = measure.dlio(DLIO_SUMMARY)
    assert (m.accelerators, m.au, m.au_target, m.samples_per_s) == (8, 0.945, True, 160.0)
    # 22,366.7 MiB/s x 1,048,576 = 23,453,184,819.2 B/s.
    assert m.bytes_per_s == pytest.approx(23_453_184_819.2, rel=1e-12)
    assert m.as_inputs() == {"storage": None, "storage_units": None, "storage_bytes_per_s": m.bytes_per_s}
    assert str(m) == "DLIO: AU 94.5% (met), 160 samples/s, 23.45 GB/s on 8 accelerator(s)"
    failed = measure.dlio({**DLIO_SUMMARY, "metric": {**DLIO_SUMMARY["metric"], "train_au_meet_expectation": "fail"}})
    assert not failed.au_target
    with pytest.raises(InputError, match="no metric section"):
        measure.dlio({"num_accelerators": 8})
    with pytest.raises(InputError, match="train_au_mean_percentage"):
        measure.dlio({**DLIO_SUMMARY, "metric": {}})


def _refusal(call: Any) -> tuple[str, str]:
    with pytest.raises(InputError) as e:
        call()
    return e.value.field, e.value.message


def test_fio_refusals_name_the_result_the_job_and_the_figure(tmp_path: Path) -> None:
    r = "the fio result"
    assert _refusal(lambda: measure.fio({"jobs": []})) == (
        "fio",
        f"{r} has no jobs; expected the output of fio --output-format=json",
    )
    bad = dict(_fio_job("reads-per-node", "65536", (1, 1, 1)), error=5)
    assert _refusal(lambda: measure.fio({"jobs": [bad]})) == (
        f"{r}: reads-per-node",
        "fio reports error 5 for this job; fix the run and measure again",
    )
    nameless = {k: v for k, v in bad.items() if k != "jobname"}
    assert _refusal(lambda: measure.fio({"jobs": [nameless]}))[0] == f"{r}: a job"
    nan = _fio_job("reads-per-node", "65536", (float("nan"), 1, 1))
    assert _refusal(lambda: measure.fio({"jobs": [nan]})) == (
        f"{r}: reads-per-node: read",
        "iops is nan; expected a number of at least 0",
    )
    for key, field in (("bw_bytes", "read"), ("runtime", "read")):
        broken = _fio_job("reads-per-node", "65536", (1, 1, 1))
        broken["read"][key] = -1
        assert _refusal(lambda b=broken: measure.fio({"jobs": [b]})) == (
            f"{r}: reads-per-node: {field}",
            f"{key} is -1; expected a number of at least 0",
        )
    late = _fio_job("reads-per-node", "65536", (1, 1, 1))
    late["read"]["lat_ns"] = {"mean": "soon"}
    assert _refusal(lambda: measure.fio({"jobs": [late]})) == (
        f"{r}: reads-per-node: read.lat_ns",
        "mean is 'soon'; expected a number of at least 0",
    )
    assert _refusal(lambda: measure.fio({"jobs": [{"jobname": "x", "write": {}}]})) == (
        f"{r}: x",
        "no read figures; expected fio's --output-format=json",
    )
    assert _refusal(lambda: measure.fio({"jobs": FIO_RESULT["jobs"][1:]})) == (
        "read_job",
        f"{r} measured no reads; run calc.fio_job's read jobs",
    )
    two = [_fio_job("a", "4k", (0, 0, 0), (1, 10)), _fio_job("b", "4k", (5, 20, 1e6), (1, 10))]
    assert _refusal(lambda: measure.fio({"jobs": two})) == (
        "write_job",
        f"{r} has several jobs that write: a, b; name one",
    )
    assert measure.fio({"jobs": two}, write_job="a").write_job == "a"
    m = measure.fio(FIO_RESULT)
    assert _refusal(lambda: m.job("c")) == (
        "job",
        "'c' is not in the fio result; its jobs: reads-per-node, checkpoint-write-per-node",
    )
    path = tmp_path / "absent.json"
    assert _refusal(lambda: measure.fio(path))[0] == "fio"
    assert _refusal(lambda: measure.fio(path))[1].startswith(f"cannot read {str(path)!r}: ")
    (tmp_path / "list.json").write_text("[1]")
    assert _refusal(lambda: measure.fio(tmp_path / "list.json")) == (
        "fio",
        f"{tmp_path / 'list.json'} holds a list; expected a JSON object",
    )
    (tmp_path / "bad.json").write_text("{oops")
    field, message = _refusal(lambda: measure.fio(tmp_path / "bad.json"))
    assert field == "fio" and message.startswith(f"{tmp_path / 'bad.json'} is not JSON (")


def test_fio_reads_what_the_result_gives_it() -> None:
    # A job without its own bs takes the global one; a result's JSON text may start with spaces;
    # each side's runtime is fio's milliseconds in seconds; half a read a second is still a read.
    job = _fio_job("reads-per-node", "65536", (0.5, 32_768, 2e6), (2, 8_192))
    del job["job options"]["bs"]
    m = measure.fio("  \n" + json.dumps({"global options": {"bs": "4096"}, "jobs": [job]}))
    r = m.read
    assert (r.block_bytes, r.read_iops, r.write_iops, r.write_bytes_per_s, r.runtime_s) == (4096, 0.5, 2, 8192, 1.0)
    # The one job that wrote gives the write bandwidth too: the lower of its 32,768 B/s read and 8,192 written.
    assert m.source == "the fio result" and m.write_job == "reads-per-node"
    assert m.as_inputs()["storage_bytes_per_s"] == 8192


def test_fio_notes_in_another_encoding_before_the_json(tmp_path: Path) -> None:
    # fio's stdout notes may hold bytes that are not UTF-8; the JSON after them is read all the same.
    path = tmp_path / "stdout.json"
    path.write_bytes(b"fio: note \xff\n" + json.dumps(FIO_RESULT).encode())
    assert measure.fio(path).read.read_iops == 16_000 and measure.fio(path).source == str(path)


def test_dlio_refusals_name_the_summary_and_the_figure() -> None:
    s = "the dlio result"
    assert _refusal(lambda: measure.dlio({"num_accelerators": 8})) == (
        "dlio",
        f"{s} has no metric section; expected DLIO's summary.json after training",
    )
    for key in (
        "train_au_mean_percentage",
        "train_throughput_mean_samples_per_second",
        "train_io_mean_MB_per_second",
    ):
        metric = {k: v for k, v in DLIO_SUMMARY["metric"].items() if k != key}
        assert _refusal(lambda m=metric: measure.dlio({**DLIO_SUMMARY, "metric": m})) == (
            f"{s}: metric",
            f"{key} is None; expected a number of at least 0",
        )
    assert _refusal(lambda: measure.dlio({"metric": DLIO_SUMMARY["metric"]})) == (
        s,
        "num_accelerators is None; expected a number of at least 0",
    )
    failed = measure.dlio({**DLIO_SUMMARY, "metric": {**DLIO_SUMMARY["metric"], "train_au_meet_expectation": "fail"}})
    assert str(failed) == "DLIO: AU 94.5% (not met), 160 samples/s, 23.45 GB/s on 8 accelerator(s)"


def test_fio_jobs_without_options_or_latencies() -> None:
    # fio omits "job options" for a job that sets none of its own, and a side that did nothing may
    # lack lat_ns: the global bs stands; a read job without its read time is refused (never a NaN input).
    job = _fio_job("reads-per-node", "65536", (100, 409_600, 1e6))
    del job["job options"]
    del job["write"]["lat_ns"]
    m = measure.fio({"global options": {"bs": "4096"}, "jobs": [job]})
    assert m.read.block_bytes == 4096 and m.read.read_latency_s == 1e-3
    no_lat = _fio_job("reads-per-node", "65536", (100, 409_600, 1e6))
    del no_lat["read"]["lat_ns"]
    assert _refusal(lambda: measure.fio({"jobs": [no_lat]})) == (
        "read_job",
        "reads-per-node in the fio result has no read latency (lat_ns); fio 3 writes it",
    )
    assert _refusal(lambda: measure.fio({"jobs": [job]}, read_job="c")) == (
        "read_job",
        "'c' is not in the fio result; its jobs: reads-per-node",
    )


def test_match_cpu_finds_the_catalog_key_in_a_model_name() -> None:
    # /proc/cpuinfo model names (lscpu's) against presets/cpus.yaml keys: every word of the key appears
    assert measure.match_cpu("Intel(R) Xeon(R) Platinum 8480C") == "xeon-8480c"
    assert measure.match_cpu("AMD EPYC 7742 64-Core Processor") == "epyc-7742"
    assert measure.match_cpu("Intel(R) Xeon(R) CPU E5-2698 v4 @ 2.20GHz") == "xeon-e5-2698v4"
    # a hypervisor that hides the model: not guessed, except the reference CPU's own (AMD family 26)
    assert measure.match_cpu("Intel(R) Xeon(R) Processor", "GenuineIntel", "6") == ""
    assert measure.match_cpu("AMD EPYC", "AuthenticAMD", "26") == "epyc-zen5-kvm"
    assert measure.match_cpu("AMD EPYC", "AuthenticAMD", "25") == ""


def test_transform_measures_cpu_time_per_example_and_records_the_cpu() -> None:
    def item(i: int) -> int:
        return sum(range(20_000 + i))  # a CPU-bound stand-in for decode + augment

    m = measure.transform(item, 16, repeats=3, cpu="xeon-8480c")
    assert m.examples == 16 and m.cpu == "xeon-8480c" and m.cpu_seconds_per_example > 0
    assert m.as_inputs() == {"cpu_seconds_per_example": m.cpu_seconds_per_example, "measured_cpu": "xeon-8480c"}
    # a plan on the reference CPU (per-core speed 1) re-projects it: x 0.85 / 1 (cpus.yaml xeon-8480c)
    p = calc.plan("beast-imagenet-4xv100", **m.as_inputs())
    assert p.cpu_seconds_per_example == pytest.approx(m.cpu_seconds_per_example * 0.85, rel=1e-12)
    assert "re-projected to epyc-zen5-kvm" in p.sources["cpu_seconds_per_example"]
    # collated in batches of 4: a collate function's time is added per example
    batched = measure.transform(
        item, 8, repeats=1, batch_size=4, collate=lambda xs: sum(range(50_000)), cpu="epyc-7742"
    )
    assert batched.collate_seconds_per_example > 0
    assert batched.cpu_seconds_per_example > batched.collate_seconds_per_example


def test_transform_refuses_what_it_cannot_time() -> None:
    with pytest.raises(InputError) as e:
        measure.transform(lambda i: i, 0)
    assert e.value.field == "examples"
    with pytest.raises(PresetError) as p:
        measure.transform(lambda i: i, 2, cpu="pentium-4")
    assert "pentium-4" in str(p.value) and "xeon-8480c" in str(p.value)
