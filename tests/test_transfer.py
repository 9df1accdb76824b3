"""Moving a dataset (calc/transfer.py, docs/model.md section 9), values worked by hand.

DuckSoft's 3D-CT article: 1 TiB at 100 MiB/s takes ~3 h; gzip on one core ~2 h, pigz on 60 cores
under 10 min to 3.9 GiB, copied in ~40 s, unpacked in under 5 min. zstd's README: zlib -1 at
105 MB/s compressing and 390 MB/s decompressing on one core, the defaults.
"""

from __future__ import annotations

import numpy as np
import pytest

from calc import transfer

TIB = 2**40
GIB = 2**30
MIB = 2**20


def test_plain_copy() -> None:
    # 1 TiB / 100 MiB/s = 1,048,576 MiB / 100 = 10,485.76 s = 2.91 h ("about three hours")
    assert transfer.direct_time_s(TIB, 100 * MIB) == pytest.approx(10_485.76, rel=1e-12)


def test_no_compression_only_sends() -> None:
    # ratio 1 (the default): nothing to compress or unpack; send 2.1 GB at 1.05 GB/s = 2 s
    c, s, u = transfer.transfer_stages_s(2.1e9, 1.05e9)
    assert (c, s, u) == (0.0, 2.0, 0.0)


def test_default_rates_are_zlib_level_1_on_one_core() -> None:
    # ratio 2: compress 2.1 GB / 105 MB/s = 20 s; send 1.05 GB / 1.05 GB/s = 1 s; unpack 2.1 GB / 390 MB/s
    c, s, u = transfer.transfer_stages_s(2.1e9, 1.05e9, 2.0)
    assert c == 20.0
    assert s == 1.0
    assert u == 2.1e9 / 390e6  # 5.3846 s
    # a ratio of 1.5 compresses too: 2.1 GB / 1.5 / 1.05 GB/s = 1.333 s
    c, s, _ = transfer.transfer_stages_s(2.1e9, 1.05e9, 1.5)
    assert c == 20.0 and s == pytest.approx(4 / 3, rel=1e-12)


def test_the_articles_luna_transfer() -> None:
    # pigz -p 60: one core does 1 TiB in 2 h (7,200 s) -> 60 cores 120 s; 1 TiB -> 3.9 GiB is a
    # ratio of 1,024 / 3.9 = 262.56; 3.9 GiB / 100 MiB/s = 39.94 s; unpack 1 TiB in 300 s
    c, s, u = transfer.transfer_stages_s(
        TIB,
        100 * MIB,
        compression_ratio=TIB / (3.9 * GIB),
        compress_bytes_per_s_per_core=TIB / 7200,
        compress_cores=60,
        decompress_bytes_per_s=TIB / 300,
    )
    assert c == pytest.approx(120.0, rel=1e-12)
    assert s == pytest.approx(39.936, rel=1e-12)
    assert u == pytest.approx(300.0, rel=1e-12)
    # in sequence the stages add (459.9 s); streamed through a pipe the slowest, unpacking, sets the pace
    assert transfer.transfer_time_s(c, s, u) == pytest.approx(459.936, rel=1e-12)
    assert transfer.transfer_time_s(c, s, u, streamed=1) == pytest.approx(300.0, rel=1e-12)
    assert transfer.transfer_time_s(c, s, u, streamed=True) == pytest.approx(300.0, rel=1e-12)


def test_streamed_takes_whichever_stage_is_slowest() -> None:
    # each stage in turn the slowest: sum 3 + 1 + 1 = 5, the slowest 3
    c, s, u = np.array([3.0, 1.0, 1.0]), np.array([1.0, 3.0, 1.0]), np.array([1.0, 1.0, 3.0])
    assert list(transfer.transfer_time_s(c, s, u)) == [5.0, 5.0, 5.0]
    assert list(transfer.transfer_time_s(c, s, u, 1.0)) == [3.0, 3.0, 3.0]
    assert list(transfer.transfer_time_s(c, s, u, np.array([0.0, 1.0, 0.0]))) == [5.0, 3.0, 5.0]


def test_integer_inputs_do_not_overflow() -> None:
    # sweep axes passed as integers must not wrap around in int64 (max 9.2e18):
    # 3e9 cores x 4e9 B/s = 1.2e19 B/s compresses 1.2e19 B in 1 s
    c, _, _ = transfer.transfer_stages_s(1.2e19, 1.0, 2.0, np.array([4_000_000_000]), np.array([3_000_000_000]))
    assert float(c[0]) == pytest.approx(1.0, rel=1e-12)
    # 6e18 s + 6e18 s = 1.2e19 s in sequence
    six = np.array([6_000_000_000_000_000_000])
    assert float(transfer.transfer_time_s(six, six, 0)[0]) == pytest.approx(1.2e19, rel=1e-12)
