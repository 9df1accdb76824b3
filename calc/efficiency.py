"""Share of the peak a GPU generation's kernels reach, and the transformer efficiency that follows it.

The transformer's layer efficiency ``e_ref`` is measured once, on one A100 layer
(calc.fit.TRANSFORMER_LAYER: the math time of a whole layer, GEMMs and the kernels between them).
A newer or older GPU runs the same layer with its own matrix-multiply kernels, whose best share of
the dense peak is published per GPU (presets/gemm.yaml ``peak_share``)::

    s_G      = best measured GEMM FLOP/s on G / dense peak of G              (peak_share)
    e_G      = e_ref x s_G / s_ref                                           (generation_efficiency)

so a GPU whose cuBLAS reaches 80 % of its peak where the A100's reaches 87 % runs the layer at
80 / 87 of the A100's layer efficiency. The ratio, not ``s_G`` itself, carries over: the layer
runs below the best GEMM (smaller shapes, element-wise kernels, launch gaps) on every GPU, and that
gap is in ``e_ref``. fp8 is the same ratio at fp8 over the GEMM roofline's reference GPU (H100
SXM, where presets/gemm.yaml's shapes were measured), applied to each precision's roofline share.

The attention core has its own kernels: where a measurement for the architecture's default kernel
is published (FlashAttention-2 on Hopper, cuDNN on Blackwell), its share of the 16-bit peak is the
attention efficiency (``peak_share`` of that kernel); elsewhere attention runs at ``e_G``.

References
----------
S. Bekman, "Machine Learning Engineering", compute/accelerator/README.md, "Maximum Achievable Matmul
FLOPS comparison table" (stas00/ml-engineering, commit 744d01e1, 2026-08-22).
Markidis et al., "NVIDIA Tensor Core Programmability, Performance & Precision", IPDPSW 2018.
Shah et al., "FlashAttention-3", arXiv:2407.08608 (FlashAttention-2 at 35 % of the H100's peak).
Zadouri et al., "FlashAttention-4" (cuDNN 9.13 attention on B200).
docs/model.md, "Efficiency per GPU generation".
"""

from __future__ import annotations

from calc._types import Numeric, floats


def peak_share(measured_flops_per_s: Numeric, peak_flops_per_s: Numeric) -> Numeric:
    """Share of the dense peak a measured kernel reaches [0-1]: ``measured / peak``."""
    share: Numeric = floats(measured_flops_per_s) / floats(peak_flops_per_s)
    return share


def generation_efficiency(reference_efficiency: Numeric, gpu_share: Numeric, reference_share: Numeric) -> Numeric:
    """The layer efficiency on another GPU generation [0-1]: ``e_ref x s_G / s_ref``.

    ``reference_efficiency`` was measured on the GPU whose best GEMM reaches ``reference_share``
    of its peak; ``gpu_share`` is the same measurement on the GPU planned for (``peak_share``).
    Equal shares give the reference efficiency back.
    """
    e: Numeric = floats(reference_efficiency) * floats(gpu_share) / floats(reference_share)
    return e
