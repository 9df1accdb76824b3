"""calc.transformer: hand-worked figures (arithmetic in the comments)."""

from __future__ import annotations

from typing import Any

import pytest

import calc
from calc import transformer as T  # noqa: N812 - the formulas read like the paper


def test_llama_layer_flops_at_4096_tokens_by_hand() -> None:
    # One Llama-3-8B-style layer, h 4096, 32 heads, 8 KV heads, gated FFN 14336, s 4096.
    # Weights: attention 2 x 4096^2 x (1 + 8/32) = 41,943,040; MLP 3 x 4096 x 14336 = 176,160,768;
    # total 218,103,808. Training 6 x weights = 1,308,622,848 FLOPs per token;
    # causal attention as flash attention runs it: forward 2 x h x s, backward 2.5 x that,
    # 7 x 4096 x 4096 = 117,440,512; sum 1,426,063,360 per token.
    per_token = T.train_flops_per_token(1, 4096, 32, 8, 14336, 0, 4096, 1)
    assert float(per_token) == pytest.approx(1_426_063_360, rel=1e-12)
    assert float(T.attention_flops_per_token(1, 4096, 4096)) == pytest.approx(117_440_512)
    # Full recompute adds a forward pass: 1,426,063,360 / 3 = 475,354,453.3 per token;
    # selective only the causal attention core forward: 2 x 4096 x 4096 = 33,554,432.
    assert float(T.recompute_flops_per_token(per_token, 1, 4096, 4096, 2)) == pytest.approx(475_354_453.33)
    assert float(T.recompute_flops_per_token(per_token, 1, 4096, 4096, 1)) == pytest.approx(33_554_432)


def test_pipeline_bubble_pp4_8_micro_batches() -> None:
    # (p - 1) / (m + p - 1) = 3 / (8 + 3) = 3/11 = 27.3 %; interleaved v=3: 1 / (8 + 1) = 11.1 %.
    assert float(T.pipeline_bubble(4, 8)) == pytest.approx(3 / 11)
    assert float(T.pipeline_bubble(4, 8, 3)) == pytest.approx(1 / 9)
    assert float(T.pipeline_bubble(1, 8)) == 0.0


def test_tensor_parallel_bytes_per_layer() -> None:
    # b 1, s 2048, h 12288, t 8: one all-reduce is 1 x 2048 x 12288 x 2 B = 50,331,648 B; a ring
    # moves 2 x 7/8 of it per rank = 88,080,384 B; 2 forward + 2 backward = 352,321,536 B,
    # 6 with full recompute (forward rerun) = 528,482,304 B.
    assert float(T.tensor_parallel_bytes_per_layer(1, 2048, 12288, 8, 0)) == pytest.approx(352_321_536)
    assert float(T.tensor_parallel_bytes_per_layer(1, 2048, 12288, 8, 2)) == pytest.approx(528_482_304)
    assert float(T.tensor_parallel_bytes_per_layer(1, 2048, 12288, 1, 0)) == 0.0


def test_activation_bytes_by_hand() -> None:
    # GPT layer (k = a, f = 4h), h 1000: 2 x (6h + 2h) + 4 x 4h = 16h + 16h = 32,000 B per token.
    assert float(T.activation_bytes_per_token_layer(1000, 10, 10, 4000, 0)) == pytest.approx(32_000)
    # 2 layers, s 100, vocab 50, no recompute: 100 x (2 x 32,000 + 4 x 50) = 6,420,000 B;
    # full: 100 x (2 x 2 x 1000 + 32,000 + 200) = 3,620,000 B.
    none = T.activation_bytes_per_sequence(2, 1000, 10, 10, 4000, 50, 100, 0, 0)
    full = T.activation_bytes_per_sequence(2, 1000, 10, 10, 4000, 50, 100, 0, 2)
    assert float(none) == pytest.approx(6_420_000)
    assert float(full) == pytest.approx(3_620_000)


def test_a_batch_fits_only_with_activation_checkpointing() -> None:
    # Llama 3 8B, 8192 tokens, H100 80 GB (79.65 GiB), AdamW state sharded over 8 GPUs:
    # 8,030,261,248 x 16 B / 8 = 14.96 GiB. Activations per sequence without recompute: per layer
    # per token 2 x (6 x 4096 + 2 x 4096 x 8/32) + 8 x 14336 = 53,248 + 114,688 = 167,936 B;
    # x 32 layers + 4 x 128,256 logits = 5,886,976 B per token x 8192 = 44.9 GiB. Batch 2:
    # 1 + 14.96 + 89.8 GiB > 79.65: does not fit. Full: 32 x 2 x 4096 + 167,936 + 513,024 = 943,104 B
    # per token x 8192 = 7.2 GiB; 2 sequences take 1 + 14.96 + 14.4 = 30.4 GiB: fits.
    kw: dict[str, Any] = {
        "model": "llama3_8b",
        "gpu": "H100-SXM",
        "precision": "bf16",
        "optimizer": "adamw",
        "state_shards": 8,
        "gpus_per_job": 8,
    }
    with pytest.raises(calc.DoesNotFitError):
        calc.plan(batch_size=2, **kw)
    p = calc.plan(batch_size=2, activation_checkpointing="full", **kw)
    assert p.activation_bytes_per_example == pytest.approx(943_104 * 8192, rel=1e-9)
    assert p.memory_used_bytes < p.gpu_memory_bytes


def test_plan_rederives_from_the_architecture_and_shows_terms() -> None:
    p4 = calc.plan(
        model="llama3_8b",
        seq_len=4096,
        gpu="H100-SXM",
        precision="bf16",
        batch_size=1,
        state_shards=8,
        gpus_per_job=8,
        optimizer="adamw",
    )
    p8 = calc.plan(
        model="llama3_8b",
        seq_len=8192,
        gpu="H100-SXM",
        precision="bf16",
        batch_size=1,
        state_shards=8,
        gpus_per_job=8,
        optimizer="adamw",
    )
    # FLOPs per sequence: 6 x (32 x 218,103,808 + 128,256 x 4096) + 7 x 32 x 4096 x s, times s.
    dense = 6 * (32 * 218_103_808 + 128_256 * 4096)
    assert p4.train_flops_per_example == pytest.approx((dense + 7 * 32 * 4096 * 4096) * 4096)
    assert p8.train_flops_per_example == pytest.approx((dense + 7 * 32 * 4096 * 8192) * 8192)
    text = p8.explain()
    for term in ("pipeline_bubble", "tensor_parallel_comm_s", "data_parallel_comm_s", "recompute_flops_per_example"):
        assert term in text


def test_pipeline_bubble_in_the_step() -> None:
    # Same per-rank work, pp 4 with 8 micro-batches: the step is 11/8 of the micro-batch time sum.
    kw: dict[str, Any] = {
        "model": "transformer",
        "gpu": "A100-SXM4-80GB",
        "precision": "bf16",
        "optimizer": "adamw",
        "batch_size": 1,
        "model_state_bytes": 0,
        "activation_bytes_per_example": 1,
        "gradient_accumulation": 8,
        "gpus_per_job": 4,
    }
    p = calc.plan(pipeline_parallel=4, **kw)
    assert p.pipeline_bubble == pytest.approx(3 / 11)


def test_unknown_architecture_input_is_an_error() -> None:
    with pytest.raises(calc.InputError, match="layers"):
        calc.plan(model="resnet50", hidden=1024)
    # Layout inputs a CNN cannot use are refused by name, not silently ignored.
    bad: tuple[dict[str, Any], ...] = (
        {"gradient_accumulation": 4},
        {"activation_checkpointing": "full"},
        {"context_parallel": 2},
    )
    for inputs in bad:
        with pytest.raises(calc.InputError, match=next(iter(inputs))):
            calc.plan(model="resnet50", gpus_per_job=2, **inputs)
    with pytest.raises(calc.InputError, match="kv_heads"):
        calc.plan(model="transformer", heads=32, kv_heads=5)


def test_llm_validation_error_bands() -> None:
    summary = calc.calibration().attrs["llm_validation"]
    assert set(summary.band) == {"<5B", "5-20B", ">20B"} and set(summary.layout) == {"none", "TP/PP"}
    t = calc.calibrate.llm_validation()
    bf16 = t[t.precision != "fp8"]
    # Held-out rows (never fitted): the 16-bit rows at 2,048 tokens within -20 % .. +20 % each
    # (the long-sequence small-model rows are 25-32 % optimistic: docs/model.md, "Transformers").
    short = bf16[~bf16.name.str.contains("8192")]
    assert ((short.error > -0.2) & (short.error < 0.2)).all()
    assert calc.calibrate.geomean_error(bf16.predicted_tokens_per_s_per_gpu, bf16.measured_tokens_per_s_per_gpu) < 0.12
