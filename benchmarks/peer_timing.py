"""A transformer plan beside the public peer's: ``calc.plan`` against llm-analysis's ``train()``.

    pip install llm-analysis   # the peer (PyPI), in the same environment
    python benchmarks/peer_timing.py

Both are timed in one run on the same public configurations (the models' published architectures,
GPUs and layouts, below), each call computed from scratch: calc's plan cache is bypassed
(``calc.plan._plan.__wrapped__`` on a new Scenario, so the inputs are validated too) and llm-analysis
is called as its README shows (``analysis.train``, its own model and GPU configs, logging off, no
output files). CPU time of this thread (``time.thread_time``), the minimum of 7 rounds of 50 calls,
rounds of the two interleaved so that both see the same load on a shared machine. Prints each
configuration's time per plan for both and the ratio calc / peer (the goal: at most 1.5).
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from typing import Any

from calc.plan import _plan
from calc.scenario import Scenario

CONFIGS: list[tuple[str, dict[str, Any], dict[str, Any]]] = [
    (
        "Llama 2 7B, 8 x A100 80GB, FSDP, s 4096, micro-batch 2",
        {
            "model": "transformer",
            "layers": 32,
            "hidden": 4096,
            "heads": 32,
            "kv_heads": 32,
            "ffn_hidden": 11008,
            "vocab": 32000,
            "seq_len": 4096,
            "gpu": "A100-SXM4-80GB",
            "gpus_per_job": 8,
            "zero_stage": 3,
            "batch_size": 2,
        },
        {
            "model_name": "NousResearch_Llama-2-7b-hf",
            "gpu_name": "a100-sxm-80gb",
            "total_num_gpus": 8,
            "ds_zero": 3,
            "batch_size_per_gpu": 2,
            "seq_len": 4096,
            "flash_attn": True,
            "mlp_gated_linear_units": True,
        },
    ),
    (
        "Llama 2 70B, 256 x H100, TP 8 PP 4, s 4096, 16 micro-batches of 1",
        {
            "model": "transformer",
            "layers": 80,
            "hidden": 8192,
            "heads": 64,
            "kv_heads": 8,
            "ffn_hidden": 28672,
            "vocab": 32000,
            "seq_len": 4096,
            "gpu": "H100-SXM",
            "gpus_per_job": 256,
            "tensor_parallel": 8,
            "pipeline_parallel": 4,
            "zero_stage": 1,
            "batch_size": 1,
            "gradient_accumulation": 16,
        },
        {
            "model_name": "upstage_Llama-2-70b-instruct-v2",
            "gpu_name": "h100-sxm-80gb",
            "total_num_gpus": 256,
            "tp_size": 8,
            "pp_size": 4,
            "ds_zero": 1,
            "batch_size_per_gpu": 1,
            "gradient_accumulation_steps": 16,
            "seq_len": 4096,
            "flash_attn": True,
            "mlp_gated_linear_units": True,
        },
    ),
    (
        "GPT-3 175B (Megatron), 1,024 x A100 80GB, TP 8 PP 8, s 2048, full recompute",
        {
            "model": "transformer",
            "layers": 96,
            "hidden": 12288,
            "heads": 96,
            "kv_heads": 96,
            "ffn_hidden": 49152,
            "vocab": 51200,
            "seq_len": 2048,
            "mlp": "plain",
            "gpu": "A100-SXM4-80GB",
            "gpus_per_job": 1024,
            "tensor_parallel": 8,
            "pipeline_parallel": 8,
            "batch_size": 1,
            "gradient_accumulation": 128,
            "activation_checkpointing": "full",
        },
        {
            "model_name": "megatron-lm-175b",
            "gpu_name": "a100-sxm-80gb",
            "total_num_gpus": 1024,
            "tp_size": 8,
            "pp_size": 8,
            "batch_size_per_gpu": 1,
            "gradient_accumulation_steps": 128,
            "seq_len": 2048,
            "activation_recomputation": 2,
        },
    ),
]
"""(what it is, calc.plan inputs, llm-analysis train() inputs): the same job stated to each."""

COMMON_CALC = {"precision": "bf16", "optimizer": "adamw", "gpus_per_node": 8}
COMMON_PEER = {"dtype_name": "w16a16e16", "log_level": "ERROR", "flops_efficiency": 0.5, "hbm_memory_efficiency": 0.9}


def _best(fn: Callable[[], object], calls: int) -> float:
    """CPU seconds of this thread for one call: the least over one round of ``calls`` calls."""
    start = time.thread_time()
    for _ in range(calls):
        fn()
    return (time.thread_time() - start) / calls


def main() -> None:
    try:
        from llm_analysis import analysis
    except ImportError:
        raise SystemExit("benchmarks/peer_timing.py needs the peer: pip install llm-analysis") from None
    logging.disable(logging.CRITICAL)
    print("configuration | calc.plan [ms] | llm-analysis train() [ms] | calc / peer")
    print("---|---|---|---")
    ratios = []
    for what, ours, theirs in CONFIGS:

        def plan(kw: dict[str, Any] = ours) -> object:
            return _plan.__wrapped__(Scenario(**COMMON_CALC, **kw))

        def peer(kw: dict[str, Any] = theirs) -> object:
            return analysis.train(**COMMON_PEER, **kw)

        plan()
        peer()  # warm both: presets read and the fit made once per process; the peer's configs loaded
        t_ours, t_peer = [], []
        for _ in range(7):
            t_ours.append(_best(plan, 50))
            t_peer.append(_best(peer, 50))
        a, b = min(t_ours), min(t_peer)
        ratios.append(a / b)
        print(f"{what} | {a * 1e3:.3f} | {b * 1e3:.3f} | {a / b:.2f}")
    worst = max(ratios)
    print(f"\nworst ratio {worst:.2f} (goal: at most 1.5: {'met' if worst <= 1.5 else 'MISSED'})")


if __name__ == "__main__":
    main()
