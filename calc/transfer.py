"""Moving a dataset (docs/model.md section 9; DuckSoft's 3D-CT transfer article).

Stages: compress on N cores, send over the link, decompress. In sequence the times add;
streamed through a pipe (``tar | pigz | ssh | unpigz | tar``) the slowest stage sets the pace.

    compress   = dataset / min(cores x per_core_rate, read_rate)
    send       = dataset / ratio / link
    decompress = dataset / decompress_rate

References
----------
DuckSoft, "记一次深度学习数据传输及训练的性能优化" (blog post): 1 TiB at 100 MB/s takes ~3 h;
tar + gzip on one core ~2 h; pigz -p 60 under 10 min to 3.9 GB; copied in ~40 s; unpacked in
under 5 min.
zstd README (facebook/zstd): zlib -1 compresses at 105 MB/s and decompresses at 390 MB/s on
one core (i7-9700K), the defaults here.
"""

from __future__ import annotations

from calc._types import Numeric, floats, maximum, where
from calc.formula import formula, note

note("compress_s", "{compress_rule}")
note("send_s", "{dataset_bytes} / {compression_ratio} / {transfer_link_bytes_per_s}")
note("decompress_s", "{decompress_rule}")


def transfer_stages_s(
    dataset_bytes: Numeric,
    link_bytes_per_s: Numeric,
    compression_ratio: Numeric = 1.0,
    compress_bytes_per_s_per_core: Numeric = 105e6,
    compress_cores: Numeric = 1.0,
    decompress_bytes_per_s: Numeric = 390e6,
) -> tuple[Numeric, Numeric, Numeric]:
    """Seconds for compress, send and decompress; a ratio of 1 means no compression."""
    d = floats(dataset_bytes)
    ratio = floats(compression_ratio)
    packed = ratio > 1
    compress = where(packed, d / (floats(compress_cores) * compress_bytes_per_s_per_core), 0.0)
    send = d / ratio / link_bytes_per_s
    decompress = where(packed, d / decompress_bytes_per_s, 0.0)
    return compress, send, decompress


@formula("transfer_time_s", "{transfer_rule}")
def transfer_time_s(compress_s: Numeric, send_s: Numeric, decompress_s: Numeric, streamed: Numeric = 0.0) -> Numeric:
    """Total time [s]: the stages' sum, or the slowest one when streamed."""
    seq = floats(compress_s) + send_s + decompress_s
    return where(floats(streamed) > 0, maximum(maximum(compress_s, send_s), decompress_s), seq)


@formula("transfer_direct_time_s", "{dataset_bytes} / {transfer_link_bytes_per_s}")
def direct_time_s(dataset_bytes: Numeric, link_bytes_per_s: Numeric) -> Numeric:
    """A plain copy with no compression [s]."""
    return floats(dataset_bytes) / link_bytes_per_s
