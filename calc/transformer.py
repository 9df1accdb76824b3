"""A dense decoder transformer by its architecture: FLOPs, traffic, memory and parallel layout.

Symbols (per model replica unless said): L layers, h hidden, a heads, k KV heads (grouped-query
attention; k = a is plain multi-head), f FFN hidden, V vocabulary, s sequence length [tokens],
b micro-batch [sequences], t tensor-, p pipeline-, c context-parallel ranks, d data-parallel
replicas, m micro-batches per step per replica (gradient accumulation), v interleaved pipeline
chunks. 16-bit activations (bf16/fp16 mixed precision) throughout.

FLOPs per token, training (as executed)::

    F_tok = 6 (L w + V h) + 7 L h s
    w     = 2 h^2 (1 + k/a) + n_mlp h f             (weights of one layer; n_mlp 3 gated, 2 plain)

``6 x weights`` is forward (2 per multiply-add) plus backward (4: input and weight gradients),
with the output head (V h) and without the embedding look-up (no multiply). Attention scores
and values are ``2 x 2 s h`` per token per layer forward over the full s x s; the causal mask
leaves half of it to compute, and flash attention kernels skip the masked blocks, so the
executed count is ``2 s h`` forward; flash attention's backward recomputes QK^T and runs 2.5x
the forward, ``7 L h s`` for training (the exact per-op count of QK^T and AV; published MFU
figures count the full 12 L h s, which a causal kernel never runs). The attention core runs at
its own measured efficiency where one is published (presets/gemm.yaml ``attention``,
calc.fit.generation_efficiencies).
Recompute adds a forward pass (full: F_tok / 3) or only the attention core (selective:
``2 L h s``, Korthikanti et al. 2022 section 5).

Activations saved per token per layer (flash attention, no dropout, sequence parallelism with
tensor parallelism so every term divides by t)::

    a = 2h (norm 1 in) + 2h (QKV in) + 2h (Q) + 4h k/a (K, V) + 2h (attention out)
      + 2h (norm 2 in) + 2h (MLP in) + 8f gated (gate, up, act, product) | 4f plain (fc1 out, act)

For GPT (k = a, f = 4h) that is 32 h bytes against Korthikanti's 34 h, whose 2 h are dropout
masks; their 5 a s / h attention-matrix term is not stored by flash attention, which is why
``selective`` saves nothing more here. ``full`` keeps only each layer's input (2 h) plus one
layer's working set. Pipeline 1F1B keeps min(p, m) micro-batches in flight on the first stage.

References
----------
Narayanan et al., "Efficient Large-Scale Language Model Training on GPU Clusters Using
Megatron-LM", SC21, arXiv:2104.04473 (tensor-parallel all-reduces, pipeline bubble, eq. 3).
Korthikanti et al., "Reducing Activation Recomputation in Large Transformer Models", MLSys 2023,
arXiv:2205.05198 (activation bytes, selective recompute, Tables 4-5).
Kaplan et al., "Scaling laws for neural language models", 2020, section 2.1 (6 N per token).
Dao et al., "FlashAttention", NeurIPS 2022 (no s x s matrix stored).
docs/model.md, "Transformers by their architecture".
"""

from __future__ import annotations

import functools
import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from calc import catalog, memory
from calc._types import Numeric, clip, flag, floats, isnan, maximum, minimum, scalar, where
from calc.errors import InputError, PresetError
from calc.formula import formula
from calc.units import parse

if TYPE_CHECKING:  # the type only: calc.scenario sits above the formulas, and resolve calls this
    from calc.scenario import Scenario

CHECKPOINTING = ("none", "selective", "full")
"""Activation checkpointing modes, by code 0..2."""

ACTIVATION_BYTES = 2.0
"""Bytes per activation element: bf16/fp16 mixed precision [bytes]."""

LOGIT_BYTES = 4.0
"""Bytes per logit kept for the loss: fp32 cross-entropy input [bytes per vocabulary entry]."""

TRAFFIC_PER_ACTIVATION_BYTE = catalog.TRAFFIC_PER_ACTIVATION_BYTE
"""GPU-memory traffic per saved activation byte: written and read once each, its gradient
written and read once (2 + 2), the fused-kernel count (calc.catalog)."""

STEP_BYTES_PER_PARAM = 32.0
"""GPU-memory traffic per parameter per optimizer step [bytes]: the estimate calc.catalog uses
(weights read twice, gradients written, Adam state read and written)."""

GRAD_BYTES = 2.0
"""Bytes per gradient element on the wire: bf16 reduction (PyTorch FSDP MixedPrecision and
Megatron-Core's default grad_reduce_in_fp32=False) [bytes]."""

NETWORK_PER_GPU: dict[str, tuple[float, str]] = {
    "A100-SXM4-80GB": (25e9, "one 200 Gb/s HDR InfiniBand HCA per GPU (DGX A100, Selene; servers.yaml DGX-A100)"),
    "A100-SXM4-40GB": (25e9, "one 200 Gb/s HDR InfiniBand HCA per GPU (DGX A100; servers.yaml DGX-A100)"),
    "H100-SXM": (50e9, "one 400 Gb/s ConnectX-7 per GPU (DGX H100; servers.yaml DGX-H100)"),
    "H200": (50e9, "one 400 Gb/s ConnectX-7 per GPU (DGX H200 / HGX H200; servers.yaml)"),
    "B200": (50e9, "one 400 Gb/s ConnectX-7 per GPU (DGX B200; servers.yaml DGX-B200 compute_network)"),
}
"""Compute-fabric bandwidth per GPU between nodes, one direction [bytes/s], of the GPU's usual
server, for scenarios that name no server (one that does uses its own ``compute_network``). GPUs
not listed get 100 Gb/s (12.5 GB/s) and a warning."""

DEFAULT_NETWORK_PER_GPU = 12.5e9
"""Assumed inter-node bandwidth per GPU when the GPU has no entry in NETWORK_PER_GPU [bytes/s]."""


@dataclass(frozen=True)
class Architecture:
    """A dense decoder transformer (presets/models.yaml ``architecture``)."""

    layers: int
    hidden: int
    heads: int
    kv_heads: int
    ffn_hidden: int
    vocab: int
    seq_len: int
    gated: bool
    source: str
    experts: int = 0
    experts_active: int = 0
    expert_ffn_hidden: int = 0
    shared_experts: int = 0
    dense_layers: int = 0


MOE_INPUTS = ("experts", "experts_active", "expert_ffn_hidden", "shared_experts", "dense_layers")
"""Mixture-of-experts fields of an architecture (0 experts = a dense model); ``dense_layers`` are
the first layers that keep the dense FFN (DeepSeek-V3's ``first_k_dense_replace``)."""


@functools.cache
def architectures() -> dict[str, Architecture]:
    """Model presets that carry an ``architecture`` mapping, by name."""
    raw = catalog.load_mapping("models.yaml", "model")
    out: dict[str, Architecture] = {}
    for name, data in raw.items():
        if not isinstance(data, dict) or "architecture" not in data:
            continue
        a = data["architecture"]
        where = f"models.yaml: {name}: architecture"
        if not isinstance(a, dict):
            raise PresetError(where, "expected a mapping")
        vals: dict[str, int] = {}
        for key in ("layers", "hidden", "heads", "kv_heads", "ffn_hidden", "vocab", "seq_len"):
            v = a.get(key)
            if not isinstance(v, int) or isinstance(v, bool) or v < 1:
                raise PresetError(f"{where}: {key}", f"expected a positive whole number, got {v!r}")
            vals[key] = v
        gated = a.get("gated")
        if not isinstance(gated, bool):
            raise PresetError(f"{where}: gated", f"expected true or false, got {gated!r}")
        src = a.get("source")
        if not isinstance(src, str) or not src:
            raise PresetError(f"{where}: source", "expected the source of the architecture")
        for key in MOE_INPUTS:
            v = a.get(key, 0)
            if not isinstance(v, int) or isinstance(v, bool) or v < 0:
                raise PresetError(f"{where}: {key}", f"expected a whole number (0 = none), got {v!r}")
            vals[key] = v
        out[str(name)] = Architecture(gated=gated, source=src, **vals)
    return out


_f = floats  # one scenario's numbers stay NumPy scalars (calc._types)


def layer_weights(hidden: Numeric, heads: Numeric, kv_heads: Numeric, ffn_hidden: Numeric, gated: Numeric) -> Numeric:
    """Weights of one layer's matrix multiplies [parameters]: ``2h^2 (1 + k/a) + n_mlp h f``."""
    h = _f(hidden)
    n_mlp = where(_f(gated) > 0, 3.0, 2.0)
    return 2 * h * h * (1 + _f(kv_heads) / _f(heads)) + n_mlp * h * _f(ffn_hidden)


def params_count(
    layers: Numeric,
    hidden: Numeric,
    heads: Numeric,
    kv_heads: Numeric,
    ffn_hidden: Numeric,
    vocab: Numeric,
    gated: Numeric,
    tied: Numeric = 0.0,
) -> Numeric:
    """Parameters [1]: L (w + 2h norms) + V h embedding + V h head (none if tied) + h final norm."""
    h = _f(hidden)
    w = layer_weights(hidden, heads, kv_heads, ffn_hidden, gated)
    heads_and_embeddings = 2 - flag(_f(tied) > 0)
    return _f(_f(layers) * (_f(w) + 2 * h) + _f(vocab) * h * heads_and_embeddings + h)


def bias_params(
    layers: Numeric,
    hidden: Numeric,
    heads: Numeric,
    kv_heads: Numeric,
    ffn_hidden: Numeric,
    gated: Numeric,
    qkv_bias: Numeric = 0.0,
    out_bias: Numeric = 0.0,
    mlp_bias: Numeric = 0.0,
    norm_bias: Numeric = 0.0,
) -> Numeric:
    """Parameters ``params_count`` leaves out: biases and LayerNorm shifts [1].

    Per layer, each where its flag is set: the Q, K and V biases ``h + 2h k/a`` (Qwen2's
    ``q_proj``/``k_proj``/``v_proj``, GPT-NeoX's fused ``query_key_value``), the output
    projection's ``h``, the MLP's ``n_up f + h`` (``n_up`` 2 gated: gate and up; 1 plain) and the
    two LayerNorms' shifts ``2h``; with ``norm_bias`` also the final norm's ``h``. Every term is
    one parameter per output feature of a matrix ``params_count`` counts, so none of them changes
    the matrix-multiply FLOPs.

    References
    ----------
    Biderman et al., "Pythia", ICML 2023, Table 1 (Pythia-160M: 162,322,944 parameters, 85,056,000
    without embeddings = 12 x (12 h^2 + 13 h) + 2 h at h 768: 13 h = 2 h norm scales + 11 h here).
    """
    h = _f(hidden)
    n_up = where(_f(gated) > 0, 2.0, 1.0)
    qkv = (_f(qkv_bias) > 0) * (h + 2 * h * _f(kv_heads) / _f(heads))
    out = (_f(out_bias) > 0) * h
    mlp = (_f(mlp_bias) > 0) * (n_up * _f(ffn_hidden) + h)
    norms = (_f(norm_bias) > 0) * 2 * h
    return _f(_f(layers) * (qkv + out + mlp + norms) + (_f(norm_bias) > 0) * h)


TOKEN_DTYPE_LIMIT = 65500
"""Largest vocabulary Megatron-LM stores as uint16 tokens (``DType.optimal_dtype``: a cardinality
below 65,500 is uint16, else int32; megatron/core/datasets/indexed_dataset.py)."""


def token_bytes(vocab: Numeric) -> Numeric:
    """Bytes per stored token [bytes]: 2 below ``TOKEN_DTYPE_LIMIT`` tokens, else 4."""
    return where(_f(vocab) < TOKEN_DTYPE_LIMIT, 2.0, 4.0)


def train_flops_per_token(
    layers: Numeric,
    hidden: Numeric,
    heads: Numeric,
    kv_heads: Numeric,
    ffn_hidden: Numeric,
    vocab: Numeric,
    seq_len: Numeric,
    gated: Numeric,
    kernels: Numeric = 0.0,
) -> Numeric:
    """Training FLOPs per token, no recompute [FLOPs]: ``6 (L w + V h) + 7 L h s`` (module docstring;
    ``12 L h s`` for the attention without flash kernels, ``kernels`` 2)."""
    return _f(dense_flops_per_token(layers, hidden, heads, kv_heads, ffn_hidden, vocab, gated)) + _f(
        attention_flops_per_token(layers, hidden, seq_len, kernels)
    )


def dense_flops_per_token(
    layers: Numeric,
    hidden: Numeric,
    heads: Numeric,
    kv_heads: Numeric,
    ffn_hidden: Numeric,
    vocab: Numeric,
    gated: Numeric,
) -> Numeric:
    """Matrix-multiply FLOPs per token for training [FLOPs]: ``6 (L w + V h)``."""
    w = layer_weights(hidden, heads, kv_heads, ffn_hidden, gated)
    return 6 * (_f(layers) * _f(w) + _f(vocab) * _f(hidden))


def attention_flops_per_token(layers: Numeric, hidden: Numeric, seq_len: Numeric, kernels: Numeric = 0.0) -> Numeric:
    """Attention-core FLOPs per token for training, as the kernels execute them [FLOPs].

    Flash attention (``kernels`` 0 or 1): forward QK^T and AV over the causal half,
    ``2 x 2 s h / 2 = 2 s h`` per layer; the backward recomputes QK^T and takes 2.5 x the forward
    (Dao 2023, FlashAttention-2, the FLOP count of its benchmarks): ``7 L h s`` in all. Without
    flash kernels (``kernels`` 2, GPT-era Megatron: batched matmuls over the whole s x s, masked
    after): forward ``4 s h``, backward twice that, ``12 L h s`` (Narayanan et al. 2021, eq. 3's
    attention terms).
    """
    per_layer = where(_f(kernels) == 2, 12.0, 7.0)
    return per_layer * _f(layers) * _f(hidden) * _f(seq_len)


FLASH_ARCHITECTURES_MISSING = ("Volta", "Turing", "Pascal")
"""GPU architectures (gpus.yaml ``architecture``) without flash-attention kernels: FlashAttention-2
runs on Ampere, Ada and Hopper (Dao-AILab/flash-attention README, "Installation and features",
checked 2026-11-24), PyTorch's flash SDPA backend needs sm80 or newer. There the default
``kernels`` is ``gpt`` (the s x s attention matrix materialised, as Megatron ran before flash)."""


def default_kernels(architecture: str) -> str:
    """The kernel stack a GPU runs by default: ``gpt`` without flash attention, else ``compiled``."""
    return "gpt" if architecture.startswith(FLASH_ARCHITECTURES_MISSING) else "compiled"


@formula(
    "recompute_flops_per_example",
    "{seq_len} x (full: forward pass = F_tok / 3; selective: 2 x {layers} x {hidden} x {seq_len}; none: 0)",
)
def recompute_flops_per_token(
    train_flops_per_token: Numeric,
    layers: Numeric,
    hidden: Numeric,
    seq_len: Numeric,
    mode: Numeric,
    kernels: Numeric = 0.0,
) -> Numeric:
    """FLOPs re-run per token by activation checkpointing [FLOPs]; ``mode`` 0 none, 1 selective, 2 full.

    Full reruns the forward pass (a third of training FLOPs); selective reruns only the causal
    attention core, ``2 s h`` per layer (Korthikanti et al. 2022, section 5).
    """
    m = _f(mode)
    # the attention core's forward: 2 s h causal (flash), 4 s h over the whole s x s without it
    attention = where(_f(kernels) == 2, 4.0, 2.0) * _f(layers) * _f(hidden) * _f(seq_len)
    return where(m == 2, _f(train_flops_per_token) / 3, where(m == 1, attention, 0.0))


def activation_bytes_per_token_layer(
    hidden: Numeric, heads: Numeric, kv_heads: Numeric, ffn_hidden: Numeric, gated: Numeric
) -> Numeric:
    """Bytes one layer saves per token with no recompute (flash attention, 16-bit) [bytes].

    ``2 x (6h + 2h k/a) + (8f gated | 4f plain)`` (module docstring).
    """
    h, f = _f(hidden), _f(ffn_hidden)
    mlp = where(_f(gated) > 0, 8.0, 4.0) * f
    return ACTIVATION_BYTES * (6 * h + 2 * h * _f(kv_heads) / _f(heads)) + mlp


def moe_ffn(
    layers: Numeric,
    dense_layers: Numeric,
    ffn_hidden: Numeric,
    expert_ffn_hidden: Numeric,
    experts: Numeric,
    experts_active: Numeric,
    shared_experts: Numeric,
    gated: Numeric,
) -> tuple[Numeric, Numeric]:
    """The FFN width a mixture of experts computes and holds, averaged over its layers [1].

    Returns ``(f_active, f_total)``: the dense FFN width that has the same matrix-multiply
    weights per token (``f_active``) and in all (``f_total``). The first ``dense_layers`` keep
    the dense FFN ``f``; each MoE layer runs its top-``k`` routed and ``S`` shared experts of
    width ``f_e`` and a router of ``h x E`` (``E / n_mlp`` in FFN-width units)::

        f_active = (L_d f + (L - L_d) (f_e (k + S) + E / n_mlp)) / L
        f_total  = (L_d f + (L - L_d) (f_e (E + S) + E / n_mlp)) / L

    Every formula in ``f`` (weights, FLOPs, saved activations, traffic) is linear in it, so a
    MoE model runs through them with ``f_active`` (FLOPs from the active parameters) while its
    memory and checkpoints count ``f_total`` (all of them). ``E = 0`` is a dense model: both are
    ``f``.

    References
    ----------
    Jiang et al., "Mixtral of Experts", arXiv:2401.04088 (8 experts, top-2, 46.7 B / 12.9 B).
    DeepSeek-AI, "DeepSeek-V3 Technical Report", arXiv:2412.19437 (256 routed + 1 shared, top-8,
    first 3 layers dense; 671 B total, 37 B active).
    """
    n_layers, e = _f(layers), _f(experts)
    moe = e > 0
    one = (layers, dense_layers, ffn_hidden, expert_ffn_hidden, experts_active, shared_experts, gated)
    if scalar(moe) and not moe and all(map(scalar, one)):
        return _f(ffn_hidden), _f(ffn_hidden)  # one dense model: f, as the ``where``s below pick (~3 us in resolve)
    n_mlp = where(_f(gated) > 0, 3.0, 2.0)
    d = where(moe, minimum(_f(dense_layers), n_layers), n_layers)
    fe, router = _f(expert_ffn_hidden), e / n_mlp
    active = (
        d * _f(ffn_hidden) + (n_layers - d) * (fe * (_f(experts_active) + _f(shared_experts)) + router)
    ) / n_layers
    total = (d * _f(ffn_hidden) + (n_layers - d) * (fe * (e + _f(shared_experts)) + router)) / n_layers
    return where(moe, active, _f(ffn_hidden)), where(moe, total, _f(ffn_hidden))


def expert_params(
    layers: Numeric,
    dense_layers: Numeric,
    hidden: Numeric,
    expert_ffn_hidden: Numeric,
    experts: Numeric,
    gated: Numeric,
) -> Numeric:
    """Parameters of the routed experts, the part expert parallelism splits [1]:
    ``(L - L_d) x E x n_mlp h f_e`` (0 for a dense model)."""
    n_mlp = where(_f(gated) > 0, 3.0, 2.0)
    moe_layers = where(_f(experts) > 0, _f(layers) - minimum(_f(dense_layers), _f(layers)), 0.0)
    return moe_layers * _f(experts) * n_mlp * _f(hidden) * _f(expert_ffn_hidden)


def all_to_all_bytes_per_layer(
    micro_batch: Numeric,
    seq_len: Numeric,
    hidden: Numeric,
    experts_active: Numeric,
    expert_parallel: Numeric,
    context_parallel: Numeric = 1.0,
) -> Numeric:
    """Bytes one rank sends per MoE layer per micro-batch for expert parallelism [bytes].

    Each token goes to ``k`` experts: dispatch and combine all-to-alls forward and the same two
    backward, ``4 x b s/c x k x h x 2 B``, of which ``(ep - 1) / ep`` leaves the rank (Lepikhin
    et al. 2020, GShard; Megatron-Core MoE token dispatcher).
    """
    ep = _f(expert_parallel)
    tokens = _f(micro_batch) * _f(seq_len) / _f(context_parallel)
    return 4 * tokens * _f(experts_active) * _f(hidden) * ACTIVATION_BYTES * (ep - 1) / ep


KERNELS = ("compiled", "flash", "gpt")
"""Kernel stacks for saved activations, by code 0..2 (``saved_bytes_per_token_layer``)."""


def saved_bytes_per_token_layer(
    hidden: Numeric,
    heads: Numeric,
    kv_heads: Numeric,
    ffn_hidden: Numeric,
    gated: Numeric,
    seq_len: Numeric,
    kernels: Numeric,
    mode: Numeric,
) -> Numeric:
    """Bytes one layer keeps per token for its backward pass, by kernel stack [bytes].

    ``kernels`` 0 ``compiled`` (today's common stack: flash attention, no dropout, element-wise
    ops compiled or fused so norm outputs, activation functions and products are recomputed in
    the backward, torch.compile's min-cut partitioner, Megatron-Core's fused kernels)::

        2 x (4h + 2h k/a) + (4f gated: gate and up | 2f plain: fc1 out)

    (norm 1 in, Q, K, V, attention out, norm 2 in; the MLP's matrix-multiply outputs).
    1 ``flash`` (flash attention, eager element-wise): ``activation_bytes_per_token_layer``.
    2 ``gpt`` (Korthikanti et al. 2022, eq. 1: no flash attention, dropout 0.1, eager)::

        14h + 4h k/a + 5 a s + (8f gated | 4f plain)

    which is their ``34 h + 5 a s`` for ``k = a, f = 4h`` (the ``5 a s`` are the softmax
    output, its dropout mask and output, per token). Selective recompute (``mode`` 1) drops the
    ``5 a s`` of ``gpt`` (Korthikanti section 5) and, with flash attention, recomputes the
    element-wise ops (torchtitan's op-level selective checkpointing): the ``compiled`` figure.
    """
    h, f, a = _f(hidden), _f(ffn_hidden), _f(heads)
    kv = h * _f(kv_heads) / a
    g = _f(gated) > 0

    def compiled() -> Numeric:
        return ACTIVATION_BYTES * (4 * h + 2 * kv) + where(g, 4.0, 2.0) * f

    def flash() -> Numeric:
        return _f(activation_bytes_per_token_layer(hidden, heads, kv_heads, ffn_hidden, gated))

    def gpt() -> Numeric:
        return 14 * h + 4 * kv + where(g, 8.0, 4.0) * f + where(_f(mode) == 1, 0.0, 5 * a * _f(seq_len))

    k, m = _f(kernels), _f(mode)
    if type(k) is float and type(m) is float:
        # One scenario on Python floats: only the stack the wheres below pick, the same float (~1.5 us less).
        picked = gpt() if k == 2 else compiled() if k == 0 or m == 1 else flash()
        if type(picked) is float:
            return picked
    return where(k == 2, gpt(), where((k == 0) | (m == 1), compiled(), flash()))


def in_flight_layers(
    layers: Numeric, pipeline_parallel: Numeric, micro_batches: Numeric, virtual_stages: Numeric = 1.0
) -> Numeric:
    """Layers' activations the first pipeline stage holds at its peak [layers].

    1F1B: the first stage runs ``min(p, m)`` forwards before its first backward, each of its
    ``L / p`` layers. Interleaved with ``v`` chunks per stage it holds ``1 + (p - 1) / (p v)``
    times more (Korthikanti et al. 2022, section 4.2.3). One stage: one micro-batch at a time.
    """
    p, v = _f(pipeline_parallel), _f(virtual_stages)
    extra = where(v > 1, 1 + (p - 1) / (p * v), 1.0)
    return _f(layers) / p * minimum(p, _f(micro_batches)) * extra


def activation_bytes_per_sequence(
    layers: Numeric,
    hidden: Numeric,
    heads: Numeric,
    kv_heads: Numeric,
    ffn_hidden: Numeric,
    vocab: Numeric,
    seq_len: Numeric,
    gated: Numeric,
    mode: Numeric,
    tensor_parallel: Numeric = 1.0,
    context_parallel: Numeric = 1.0,
    pipeline_parallel: Numeric = 1.0,
    micro_batches: Numeric = 1.0,
    kernels: Numeric = 1.0,
    virtual_stages: Numeric = 1.0,
) -> Numeric:
    """Activation memory one sequence of a micro-batch takes on the busiest rank [bytes].

    The first pipeline stage holds ``in_flight_layers`` layers' activations
    (``saved_bytes_per_token_layer`` each; full recompute keeps each layer's 2h input and one
    layer's working set); with one stage the logits (fp32, ``4 V`` per token) are on it too.
    Tensor parallelism with sequence parallelism and context parallelism split every tensor
    (Korthikanti et al. 2022, Table 2: ``34 s b h L / t`` with selective recompute).
    """
    per_layer = _f(saved_bytes_per_token_layer(hidden, heads, kv_heads, ffn_hidden, gated, seq_len, kernels, mode))
    full = _f(mode) == 2
    # The working set is mode 0's layer: the same call again where mode is one scenario's 0 (~1 us).
    none = type(mode) is float and mode == 0.0
    working = (
        per_layer
        if none
        else _f(saved_bytes_per_token_layer(hidden, heads, kv_heads, ffn_hidden, gated, seq_len, kernels, 0.0))
    )
    kept = where(full, ACTIVATION_BYTES * _f(hidden), per_layer)
    p = _f(pipeline_parallel)
    held = in_flight_layers(layers, p, micro_batches, virtual_stages)
    tokens = _f(seq_len) / (_f(tensor_parallel) * _f(context_parallel))
    logits = where(p <= 1, LOGIT_BYTES * _f(vocab), 0.0)
    return tokens * (held * kept + where(full, working, 0.0) + logits)


def traffic_bytes_per_sequence(
    layers: Numeric,
    hidden: Numeric,
    heads: Numeric,
    kv_heads: Numeric,
    ffn_hidden: Numeric,
    vocab: Numeric,
    seq_len: Numeric,
    gated: Numeric,
    mode: Numeric,
    ranks: Numeric = 1.0,
    kernels: Numeric = 0.0,
) -> Numeric:
    """GPU-memory traffic of one sequence on one rank, fused kernels [bytes].

    Each saved activation byte is written and read, and its gradient written and read (4x);
    a full recompute writes the forward activations once more (x 1.5); the fp32 logits are
    written and read. ``ranks`` = t x c x p shares it out. Without flash kernels (``kernels`` 2)
    the s x s softmax chain (``5 a s`` bytes per token per layer: scores, mask, dropout output)
    moves the same 4x.
    """
    per_layer = _f(activation_bytes_per_token_layer(hidden, heads, kv_heads, ffn_hidden, gated)) + where(
        _f(kernels) == 2, 5 * _f(heads) * _f(seq_len), 0.0
    )
    again = where(_f(mode) == 2, 1.5, 1.0)
    per_token = TRAFFIC_PER_ACTIVATION_BYTE * _f(layers) * per_layer * again + 2 * LOGIT_BYTES * _f(vocab)
    return _f(seq_len) * per_token / _f(ranks)


@formula("pipeline_bubble", "({pipeline_parallel} - 1) / v / ({gradient_accumulation} + ({pipeline_parallel} - 1) / v)")
def pipeline_bubble(pipeline_parallel: Numeric, micro_batches: Numeric, virtual_stages: Numeric = 1.0) -> Numeric:
    """Share of a pipelined step spent idle [0-1]: ``(p - 1) / (m + p - 1)`` for 1F1B.

    With ``v`` interleaved chunks per stage the idle time shrinks v-fold:
    ``((p - 1) / v) / (m + (p - 1) / v)`` (Narayanan et al. 2021, sections 2.2.1-2.2.2).
    """
    idle = (_f(pipeline_parallel) - 1) / _f(virtual_stages)
    return idle / (_f(micro_batches) + idle)


def ring_all_reduce_bytes(size_bytes: Numeric, ranks: Numeric) -> Numeric:
    """Bytes each rank sends in a ring all-reduce of ``size_bytes``: ``2 (n - 1) / n x size``."""
    n = _f(ranks)
    return 2 * (n - 1) / n * _f(size_bytes)


@formula(
    "tensor_parallel_comm_s",
    "{gradient_accumulation} x {layers} / {pipeline_parallel} x (TP: 4 (full recompute: 6) x 2 ({tensor_parallel} - 1)"
    " / {tensor_parallel} x {batch_size} x {seq_len} / {context_parallel} x {hidden} x 2 B"
    " + CP: 3 ({context_parallel} - 1) x K,V chunk) / {gpu_link_bytes_per_s} + pipeline sends / link",
)
def tensor_parallel_bytes_per_layer(
    micro_batch: Numeric,
    seq_len: Numeric,
    hidden: Numeric,
    tensor_parallel: Numeric,
    mode: Numeric,
    context_parallel: Numeric = 1.0,
) -> Numeric:
    """Bytes one rank sends per layer per micro-batch for tensor parallelism [bytes].

    Megatron's layer does 2 all-reduces of ``b s h`` 16-bit values forward and 2 backward
    (one after attention, one after the MLP; with sequence parallelism the same bytes as
    all-gather + reduce-scatter); a full recompute reruns the 2 forward ones. Each moves
    ``2 (t - 1) / t`` of its size per rank (ring). Context parallelism splits s.
    """
    count = where(_f(mode) == 2, 6.0, 4.0)
    size = _f(micro_batch) * _f(seq_len) / _f(context_parallel) * _f(hidden) * ACTIVATION_BYTES
    return count * ring_all_reduce_bytes(size, tensor_parallel)


def context_parallel_bytes_per_layer(
    micro_batch: Numeric,
    seq_len: Numeric,
    hidden: Numeric,
    heads: Numeric,
    kv_heads: Numeric,
    context_parallel: Numeric,
    tensor_parallel: Numeric = 1.0,
) -> Numeric:
    """Bytes one rank sends per layer per micro-batch for ring-attention context parallelism [bytes].

    Forward passes its K and V chunk (``b s/c x 2 h k/a`` values) round the ring (c - 1 hops);
    backward passes K, V and their gradients: 3 x that in all.
    """
    c = _f(context_parallel)
    kv = _f(micro_batch) * _f(seq_len) / c * 2 * _f(hidden) * _f(kv_heads) / _f(heads) / _f(tensor_parallel)
    return 3 * (c - 1) * kv * ACTIVATION_BYTES


def pipeline_bytes_per_micro_batch(
    micro_batch: Numeric, seq_len: Numeric, hidden: Numeric, tensor_parallel: Numeric, context_parallel: Numeric
) -> Numeric:
    """Bytes one stage sends per micro-batch (activation forward, its gradient backward) [bytes].

    Scatter/gather over the tensor-parallel ranks (Narayanan et al. 2021, section 4.1) sends
    ``1/t`` of it per rank.
    """
    return (
        2 * _f(micro_batch) * _f(seq_len) * _f(hidden) * ACTIVATION_BYTES / (_f(tensor_parallel) * _f(context_parallel))
    )


def data_parallel_bytes(params_per_rank: Numeric, replicas: Numeric, sharded: Numeric) -> Numeric:
    """Bytes one rank sends per step for data parallelism over a flat ring [bytes].

    Replicated state: a ring all-reduce of the gradients, ``2 (d - 1)/d x P x 2 B``. Sharded
    (ZeRO-3 / FSDP): weights all-gathered forward and backward and gradients reduce-scattered,
    ``3 (d - 1)/d x P x 2 B`` (Rajbhandari et al. 2020, ZeRO, section 7).
    """
    d = _f(replicas)
    ring = (d - 1) / d * _f(params_per_rank) * GRAD_BYTES
    return where(_f(sharded) > 0, 3 * ring, 2 * ring)


def collective_time_s(
    size_bytes: Numeric,
    ranks: Numeric,
    ranks_per_node: Numeric,
    link_bytes_per_s: Numeric,
    network_bytes_per_s_per_gpu: Numeric,
    passes: Numeric,
) -> Numeric:
    """Time of ``passes`` reduce-scatter or all-gather passes of ``size_bytes`` over ``ranks`` [s].

    Hierarchical, as NCCL runs it on servers with NVLink inside and one NIC per GPU: ``g``
    ranks per node, ``N = n / g`` nodes. Each pass moves ``(g - 1)/g x S`` per rank over the
    GPU link and ``(N - 1)/N x S / g`` per rank over its own NIC (each GPU carries the
    inter-node share of its ``1/g`` slice)::

        t = passes x ((g - 1)/g x S / link + (N - 1)/N x S / (g x net))

    An all-reduce is 2 passes (reduce-scatter + all-gather). One node (``N = 1``) is the flat
    ring over NVLink; adding a node adds only the inter-node share, so the time grows smoothly
    across the node boundary instead of moving every byte at the network rate.

    References
    ----------
    Thakur, Rabenseifner, Gropp, "Optimization of Collective Communication Operations in MPICH",
    IJHPCA 2005 (ring reduce-scatter/all-gather). NCCL docs, "Performance: bus bandwidth".
    """
    n = maximum(_f(ranks), 1.0)
    g = clip(_f(ranks_per_node), 1.0, n)
    nodes = n / g
    s = _f(size_bytes)
    return _f(passes) * (
        (g - 1) / g * s / _f(link_bytes_per_s) + (nodes - 1) / nodes * s / (g * _f(network_bytes_per_s_per_gpu))
    )


@formula(
    "data_parallel_comm_s",
    "exposed part of: ZeRO stage 0-2: 2 passes, 3: 3 passes of {params} / ({tensor_parallel} x {pipeline_parallel})"
    " x 2 B over the shard group (NVLink in a node, {network_bytes_per_s_per_gpu} across nodes) + 2 passes of"
    " its shard across replicas (hybrid); hidden behind compute as the framework overlaps it"
    " (calc.transformer.exposed_data_parallel_s), or the share data_parallel_overlap says",
)
def data_parallel_time_s(
    params_per_rank: Numeric,
    shard_ranks: Numeric,
    replicas: Numeric,
    zero_stage: Numeric,
    ranks_per_node: Numeric,
    link_bytes_per_s: Numeric,
    network_bytes_per_s_per_gpu: Numeric,
) -> Numeric:
    """Data-parallel traffic time per step, none of it hidden [s].

    Over the ``D = shard_ranks`` ranks that share one sharded copy: ZeRO-0/1/2 reduce-scatter the
    gradients and all-gather the weights (or all-reduce them: the same 2 passes), ZeRO-3/FSDP
    all-gather the weights forward and backward and reduce-scatter the gradients (3 passes;
    Rajbhandari et al. 2020, section 7). With hybrid sharding (``D`` below the ``replicas`` data-
    parallel ranks) each shard is then all-reduced across the ``R = replicas / D`` copies (2
    passes of ``P / D``; PyTorch HSDP, DeepSpeed hpZ). 2 B per element (bf16 reduction).
    """
    size = _f(params_per_rank) * GRAD_BYTES
    d, r = maximum(_f(shard_ranks), 1.0), maximum(_f(replicas), 1.0)
    g = _f(ranks_per_node)
    inner = collective_time_s(
        size,
        d,
        minimum(g, d),
        link_bytes_per_s,
        network_bytes_per_s_per_gpu,
        where(_f(zero_stage) >= 3, 3.0, 2.0),
    )
    copies = r / d
    across = collective_time_s(
        size / d, copies, maximum(g / d, 1.0), link_bytes_per_s, network_bytes_per_s_per_gpu, 2.0
    )
    return _f(inner) + where(copies > 1, _f(across), 0.0)


DDP_BUCKET_BYTES = 25 * 2**20
"""PyTorch DistributedDataParallel's default gradient bucket, ``bucket_cap_mb=25`` [bytes]
(torch.nn.parallel.DistributedDataParallel docs)."""

OVERLAP = ("ddp", "fsdp", "megatron", "megatron_overlap", "nemo")
"""Framework overlap defaults, by code 0..4 (``exposed_data_parallel_s``; nemo overlaps as megatron_overlap)."""

MEGATRON_BUCKET_PARAMS = 40e6
"""Megatron-Core's default gradient bucket with ``--overlap-grad-reduce``: max(40,000,000,
1,000,000 x data-parallel size) parameters (megatron/core/distributed/distributed_data_parallel_config.py,
``bucket_size``; found by find_string, checked 2026-11-24)."""


def exposed_data_parallel_s(
    comm_s: Numeric,
    framework: Numeric,
    micro_batch_compute_s: Numeric,
    micro_batches: Numeric,
    shared_link_s: Numeric,
    params_per_rank: Numeric,
    layers_per_rank: Numeric,
    given_overlap: Numeric,
    data_parallel_ranks: Numeric = 1.0,
) -> Numeric:
    """The part of the data-parallel traffic a step waits for [s].

    With ``given_overlap`` (a share in 0-1; NaN = the framework's default) it is
    ``(1 - overlap) x comm``. Otherwise, by ``framework``:

    * 0 DDP (and ZeRO-1/2 without model parallelism): gradients are all-reduced in 25 MiB
      buckets during the last micro-batch's backward; what stays is the traffic beyond that
      backward, at least the last bucket: ``max(comm - backward, comm x bucket / grads)``.
    * 1 FSDP (ZeRO-3): all-gathers are prefetched and reduce-scatters overlap throughout the
      step; the first all-gather (before any compute) and the last reduce-scatter stay, one
      layer each: ``max(comm - compute, comm x 2 / (3 L))``.
    * 2 Megatron (tensor or pipeline parallel): Megatron-LM's ``--overlap-grad-reduce`` and
      ``--overlap-param-gather`` are off by default: all of it.
    * 3 Megatron with both on (4: NeMo and Megatron-Bridge run them on by default): gradients
      reduce-scattered in buckets of max(40 M, 1 M x d) parameters during the last backward,
      weights all-gathered during the first forward: the whole micro-batch hides them, all but
      one bucket: ``max(comm - micro-batch, comm x bucket / params per rank)``.

    The backward is two thirds of a micro-batch's compute (``micro_batch_compute_s``; 4 of the 6
    FLOPs per parameter per token). Tensor/context-parallel traffic on the same link
    (``shared_link_s`` per micro-batch, 0 where data-parallel traffic leaves the node) takes its
    time out of the window the data-parallel traffic could hide in.
    """
    comm, fw = _f(comm_s), _f(framework)
    grads = maximum(_f(params_per_rank) * GRAD_BYTES, 1.0)
    mb_c, shared = _f(micro_batch_compute_s), _f(shared_link_s)
    ddp = maximum(comm - maximum(2 / 3 * (mb_c - shared), 0.0), comm * minimum(DDP_BUCKET_BYTES / grads, 1.0))
    fsdp = maximum(
        comm - maximum(_f(micro_batches) * (mb_c - shared), 0.0),
        comm * minimum(2 / (3 * maximum(_f(layers_per_rank), 1.0)), 1.0),
    )
    bucket = maximum(MEGATRON_BUCKET_PARAMS, 1e6 * _f(data_parallel_ranks)) * GRAD_BYTES
    megatron = maximum(comm - maximum(mb_c - shared, 0.0), comm * minimum(bucket / grads, 1.0))
    default = where(fw == 0, ddp, where(fw == 1, fsdp, where(fw >= 3, megatron, comm)))
    given = _f(given_overlap)
    return where(isnan(given), default, (1 - given) * comm)  # NaN: no overlap given


ARCH_FORMULAS: dict[str, str] = {
    # Per rank of tensor x pipeline x context parallel; the attention core (with its selective
    # recompute) runs at its own measured efficiency, every other FLOP at the GEMMs'.
    "compute_time_per_example_s": "({train_flops_per_example} + {recompute_flops_per_example}"
    " - {attention_core_flops_per_example}) / {model_parallel_ranks} / ({peak_flops_per_s} x {efficiency})"
    " + {attention_core_flops_per_example} / {model_parallel_ranks}"
    " / ({attention_peak_flops_per_s} x {attention_efficiency})",
    # No fill term: the layer efficiency was measured at a real micro-batch, under-filling included.
    # A GPU's share of a replica's step: the micro-batch x micro-batches over its model-parallel ranks.
    "gpu_samples_per_s": "{batch_size} x {gradient_accumulation} / {model_parallel_ranks} / {step_time_s}"
    " x {scaling_efficiency}",
    "fixed_time_s": "{step_traffic_bytes} / ({memory_bandwidth_bytes_per_s} x {memory_efficiency})"
    " + {launch_overhead_s}",
    # The architecture's traffic is already the fused kernels' (``kernels``): no stack share, no depthwise term.
    "memory_time_per_example_s": "{memory_traffic_bytes_per_example} / ({memory_bandwidth_bytes_per_s}"
    " x {memory_efficiency})",
}
"""Formulas that replace the generic ones (calc.compute) for a model given by its architecture."""


def step_time_s(
    micro_batch: Numeric,
    micro_batches: Numeric,
    per_example_s: Numeric,
    fill_s: Numeric,
    comm_per_micro_batch_s: Numeric,
    bubble: Numeric,
    fixed_s: Numeric,
    data_parallel_exposed_s: Numeric,
    stack_factor: Numeric,
) -> Numeric:
    """One training step of a pipelined, micro-batched replica [s].

    A micro-batch takes ``b x per-example + fill + communication`` on a stage; ``m`` of them
    plus the bubble, ``m / (1 - bubble)`` micro-batch times in all, then the per-step part
    (optimizer traffic, launch) and the exposed gradient traffic.
    """
    t_mb = _f(micro_batch) * _f(per_example_s) + _f(fill_s) + _f(comm_per_micro_batch_s)
    pipe = _f(micro_batches) / (1 - _f(bubble)) * t_mb
    return _f(stack_factor) * (pipe + _f(fixed_s)) + _f(data_parallel_exposed_s)


def links(gpu: str, host_link_bytes_per_s: float, server: str = "") -> tuple[float, str, float, str, list[str]]:
    """The GPU-to-GPU link and the inter-node bandwidth per GPU, one direction [bytes/s], sources, warnings.

    The link is half the GPU's NVLink figure (gpus.yaml ``nvlink``, both directions: a ring
    all-reduce sends and receives at once), else its host link. The network is the named server's
    ``compute_network`` over its GPUs (servers.yaml), else ``NETWORK_PER_GPU``, else 100 Gb/s.
    """

    warnings: list[str] = []
    g = catalog.gpus().get(gpu)
    if g is not None and math.isfinite(g.nvlink_bytes_per_s):
        link, link_src = g.nvlink_bytes_per_s / 2, f"half of {g.nvlink}"
    else:
        link, link_src = (
            host_link_bytes_per_s,
            f"{gpu}: no NVLink figure; its host link (PCIe) carries GPU-to-GPU traffic",
        )
        warnings.append(f"{gpu} has no NVLink figure in gpus.yaml: tensor/context-parallel traffic uses its host link.")
    srv = catalog.servers().get(server) if server else None
    if srv is not None and math.isfinite(srv.compute_network_bytes_per_s):
        net = srv.compute_network_bytes_per_s / srv.gpus_per_node
        net_src = f"{srv.name} compute_network ({srv.compute_network}) / {srv.gpus_per_node} GPUs (servers.yaml)"
    elif gpu in NETWORK_PER_GPU:
        net, net_src = NETWORK_PER_GPU[gpu]
    else:
        net, net_src = DEFAULT_NETWORK_PER_GPU, "assumed 100 Gb/s per GPU (calc.transformer.DEFAULT_NETWORK_PER_GPU)"
        if not math.isnan(net):
            warnings.append(
                f"{gpu}: no inter-node bandwidth figure; 100 Gb/s per GPU assumed for data-parallel traffic."
            )
    return link, link_src, net, net_src, warnings


def checkpointing_code(mode: str) -> float:
    """Index of an activation-checkpointing mode in ``CHECKPOINTING``; ``auto`` is -1 (chosen in
    calc.stages: the least recompute that fits)."""
    return -1.0 if mode == "auto" else float(CHECKPOINTING.index(mode))


def framework_code(zero_stage: int | None, model_parallel: int, given: str | None = None) -> float:
    """Whose overlap default applies (``OVERLAP``): the one given, else FSDP for ZeRO-3, Megatron
    for tensor/pipeline/context parallelism, else DDP (bucketed all-reduce; ZeRO-1/2 alike)."""
    if given is not None:
        return float(OVERLAP.index(given))
    return 1.0 if (zero_stage or 0) >= 3 else 2.0 if model_parallel > 1 else 0.0


def describe(a: Mapping[str, float]) -> str:
    """One line naming an architecture (for sources)."""
    return (
        f"{a['layers']:g} layers x {a['hidden']:g} hidden, {a['heads']:g} heads ({a['kv_heads']:g} KV),"
        f" FFN {a['ffn_hidden']:g} {'gated' if a['gated'] else 'plain'}, vocab {a['vocab']:g}, seq {a['seq_len']:g}"
    )


ARCH_INPUTS = ("layers", "hidden", "heads", "kv_heads", "ffn_hidden", "vocab", "seq_len")
"""Scenario inputs that state an architecture (with ``mlp`` and ``params``)."""

LAYOUT_INPUTS: dict[str, Any] = {
    "tensor_parallel": 1,
    "pipeline_parallel": 1,
    "context_parallel": 1,
    "virtual_pipeline_stages": 1,
    "gradient_accumulation": 1,
    "mlp": None,
    "activation_checkpointing": ("auto", "none"),
    "kernels": None,
    "data_parallel_overlap": None,
    "data_parallel_framework": None,
    "gpu_link_bytes_per_s": None,
    "network_bytes_per_s_per_gpu": None,
    "expert_parallel": 1,
    **dict.fromkeys(MOE_INPUTS),
}
"""Inputs that describe a transformer's parallel layout or kernels, with the value(s) that mean
"not used": a model without an architecture refuses any other value, each the same way."""


_UNUSED = tuple((k, u if isinstance(u, tuple) else (u,)) for k, u in LAYOUT_INPUTS.items())
"""``LAYOUT_INPUTS`` with every "not used" value as a tuple (the check runs on every plan)."""


HEADS_REPLICATED_BY = (
    "bigcode-project/Megatron-LM (StarCoder's fork: the KV projection run duplicated on every tensor-parallel rank,"
    " PR 51)"
)
"""Where a training framework replicates the KV heads over tensor-parallel ranks (fewer KV heads than ranks)."""

HEADS_UNEVEN_BY = (
    "DeepSpeed AutoTP (deepspeed/module_inject/tp_shard.py get_shard_size: ranks hold heads // t or one more)"
)
"""Where a training framework splits the heads unevenly over tensor-parallel ranks."""


def check_layout(sc: Scenario, v: Mapping[str, float]) -> list[str]:
    """Refuse a layout no framework runs (InputError naming the field and the rule); warn where one
    framework runs what Megatron-LM refuses (the returned warnings say which framework, and how).

    Megatron-LM's argument checks (megatron/training/arguments.py): hidden divisible by heads;
    heads and KV heads (query groups) divisible by tensor parallel; no more pipeline stages than
    layers; the sequence divisible by 2 x context parallel (load-balanced causal ring attention);
    no more interleaved model chunks than a stage's layers. Of these, the heads rule is Megatron's
    alone: a KV head count below the tensor-parallel ranks runs with the KV heads replicated
    (``HEADS_REPLICATED_BY``), heads not divisible by them run split unevenly (``HEADS_UNEVEN_BY``).
    More ranks than heads no framework splits.
    """
    h, a, k, layers, s = v["hidden"], v["heads"], v["kv_heads"], v["layers"], v["seq_len"]
    t, p, c, vs = sc.tensor_parallel, sc.pipeline_parallel, sc.context_parallel, sc.virtual_pipeline_stages
    warnings: list[str] = []
    if k > a or a % k:
        raise InputError("kv_heads", f"must divide heads ({a:g}), got {k:g}")
    # A preset's architecture is as its source publishes it (DLIO's hypothetical llama3_1t has
    # 25872 / 192 heads, which Megatron would run only with an explicit kv_channels).
    if h % a and (sc.hidden is not None or sc.heads is not None):
        raise InputError("heads", f"must divide hidden ({h:g}) into whole heads, got {a:g}")
    if t > a:
        raise InputError(
            "tensor_parallel", f"must be at most heads ({a:g}): no framework splits one head over ranks, got {t}"
        )
    if a % t:
        busiest = math.ceil(a / t)
        warnings.append(
            f"tensor_parallel {t} does not divide the {a:g} heads: Megatron-LM refuses it; {HEADS_UNEVEN_BY} runs "
            f"it, the busiest rank with {busiest} heads where an even split would give {a / t:g}: its attention "
            f"takes x{busiest / (a / t):.3g} as long, which this plan does not add (it splits the heads evenly)."
        )
    elif k % t:
        warnings.append(
            f"tensor_parallel {t} does not divide the {k:g} KV heads: Megatron-LM refuses it; {HEADS_REPLICATED_BY} "
            f"runs it with each KV head on {t / k:g} ranks (every rank holds and computes all {k:g} KV heads "
            f"where an even split would give {k / t:g}): this plan counts the even split."
        )
    check_pipeline(int(layers), p, vs)
    if c > 1 and s % (2 * c):
        raise InputError(
            "context_parallel",
            f"2 x context_parallel must divide seq_len ({s:g}) (Megatron's load-balanced ring attention), got {c}",
        )
    return warnings


def resolve(
    sc: Scenario, model: str, gpu: str, host_link_bytes_per_s: float
) -> tuple[dict[str, float], dict[str, str], list[str]]:
    """The architecture and layout inputs of a scenario as numbers (look-ups only).

    ``arch`` is 1 where the model is a transformer by its architecture: its preset has one or
    the scenario states every field. Returns values, sources and warnings for calc.plan.
    """

    preset = architectures().get(model)
    fields = vars(sc)  # the fields as given (one dict read each, not two getattr calls)
    given = {k: fields[k] for k in ARCH_INPUTS if fields[k] is not None}
    mp = sc.tensor_parallel * sc.pipeline_parallel * sc.context_parallel
    v: dict[str, float] = {
        "context_parallel": float(sc.context_parallel),
        "virtual_pipeline_stages": float(sc.virtual_pipeline_stages),
        "gradient_accumulation": float(sc.gradient_accumulation),
        "checkpointing": checkpointing_code(sc.activation_checkpointing),
        "kernels": float(KERNELS.index(sc.kernels or default_kernels(_architecture(gpu)))),
        "data_parallel_overlap": math.nan if sc.data_parallel_overlap is None else float(sc.data_parallel_overlap),
        "dp_framework": framework_code(
            memory.zero_stage_used(sc.zero_stage, sc.data_parallel_framework), mp, sc.data_parallel_framework
        ),
        "shard_group": float(sc.shard_group),
    }
    src: dict[str, str] = {}
    warnings: list[str] = []
    dp_cp = sc.gpus_per_job // max(sc.tensor_parallel * sc.pipeline_parallel, 1)
    if sc.shard_group and (sc.shard_group > dp_cp or dp_cp % sc.shard_group):
        raise InputError(
            "shard_group",
            f"must divide the {dp_cp} data-parallel ranks (gpus_per_job / (tensor x pipeline parallel)), "
            f"got {sc.shard_group}; accepted: 0 (all of them) or a divisor of {dp_cp}",
        )
    if preset is None and not given:
        _refuse_layout(sc, model)
        v["arch"], v["checkpointing"] = 0.0, 0.0
        v |= dict.fromkeys(
            (*ARCH_INPUTS, "gated", "gpu_link_bytes_per_s", "network_bytes_per_s_per_gpu", "attention_efficiency"), 1.0
        )
        v |= dict.fromkeys(MOE_INPUTS, 0.0) | {"expert_parallel": 1.0, "ffn_active": 1.0, "ffn_total": 1.0}
        return v, src, warnings
    v["arch"] = 1.0
    gated = sc.mlp == "gated" if sc.mlp is not None else (preset.gated if preset else True)
    figures, assumed, from_preset = stated_architecture(given, preset, model, gated, sc.mlp is not None)
    v |= figures
    warnings += assumed
    v["gated"] = float(gated)
    for k in MOE_INPUTS:
        given_k = getattr(sc, k)
        v[k] = float(given_k if given_k is not None else (getattr(preset, k) if preset else 0))
    v["expert_parallel"] = float(sc.expert_parallel)
    active, total = moe_ffn(
        v["layers"],
        v["dense_layers"],
        v["ffn_hidden"],
        v["expert_ffn_hidden"],
        v["experts"],
        v["experts_active"],
        v["shared_experts"],
        v["gated"],
    )
    v["ffn_active"], v["ffn_total"] = float(active), float(total)
    warnings += check_layout(sc, v)
    warnings += pipeline_split_note(int(v["layers"]), sc.pipeline_parallel, sc.virtual_pipeline_stages)
    check_experts(sc, v)
    src["architecture"] = _architecture_source(model, preset, given, v, from_preset)
    _resolve_links(sc, gpu, host_link_bytes_per_s, v, src, warnings)
    return v, src, warnings


def _architecture_source(
    model: str, preset: Architecture | None, given: Mapping[str, Any], v: Mapping[str, float], from_preset: bool
) -> str:
    """Where the architecture came from; the preset's source only where the preset gave its shape
    (``stated_architecture``'s ``from_preset``). A transformer stated by its figures is the scenario's
    alone: what it leaves out comes by rule (kv_heads = heads, the gated FFN width, a dense gated MLP),
    named in the plan's warnings, not taken from the generic preset (issue 39)."""
    head = "scenario" if given else f"models.yaml {model}"
    return f"{head}: {describe(v)}" + (f" ({preset.source})" if preset is not None and from_preset else "")


def _architecture(gpu: str) -> str:
    g = catalog.gpus().get(gpu)
    return g.architecture if g is not None else ""


def check_experts(sc: Scenario, v: Mapping[str, float]) -> None:
    """Refuse a mixture of experts the frameworks would refuse (InputError naming field and rule).

    Top-k needs ``1 <= k <= E`` and an expert width; expert parallelism must divide the experts
    (each rank holds ``E / ep``) and the data- x context-parallel ranks it is carved from
    (Megatron-Core ``expert_model_parallel_size``); a dense model has nothing to split.
    """
    e, k, ep = v["experts"], v["experts_active"], sc.expert_parallel
    if e == 0:
        for name in ("experts_active", "expert_ffn_hidden", "shared_experts", "expert_parallel"):
            if v[name] > (1 if name == "expert_parallel" else 0):
                raise InputError(name, "applies to a mixture of experts: set experts (routed experts per layer) first")
        return
    if not 1 <= k <= e:
        raise InputError("experts_active", f"must be from 1 to experts ({e:g}), got {k:g}")
    if v["expert_ffn_hidden"] < 1:
        raise InputError("expert_ffn_hidden", "a mixture of experts needs the width of one expert's FFN")
    dp_cp = sc.gpus_per_job // max(sc.tensor_parallel * sc.pipeline_parallel, 1)
    if e % ep or dp_cp % ep:
        raise InputError(
            "expert_parallel",
            f"must divide experts ({e:g}) and the {dp_cp} data- x context-parallel ranks it is carved from, got {ep}",
        )


def _refuse_layout(sc: Scenario, model: str) -> None:
    """A model without an architecture refuses every layout input set away from "not used"."""
    for name, unused in _UNUSED:
        if getattr(sc, name) not in unused:
            raise InputError(
                name,
                f"applies to a transformer by its architecture; model {model} has none (use a model with an "
                f"architecture, e.g. llama3_8b or transformer, or give {', '.join(ARCH_INPUTS)})",
            )


def _resolve_links(
    sc: Scenario, gpu: str, host_link_bytes_per_s: float, v: dict[str, float], src: dict[str, str], warnings: list[str]
) -> None:
    """The GPU link and the network per GPU: the scenario's, else the presets' (``links``)."""
    link, link_src, net, net_src, w = links(gpu, host_link_bytes_per_s, sc.server or "")
    if sc.gpu_link_bytes_per_s is not None:
        link, link_src = parse(sc.gpu_link_bytes_per_s, "bytes_per_s", "gpu_link_bytes_per_s"), "scenario"
    elif sc.tensor_parallel * sc.context_parallel > 1 or sc.gpus_per_job > 1:
        warnings += w[:1]
    if sc.network_bytes_per_s_per_gpu is not None:
        net, net_src = parse(sc.network_bytes_per_s_per_gpu, "bytes_per_s", "network_bytes_per_s_per_gpu"), "scenario"
    elif sc.gpus_per_job > sc.gpus_per_node:
        warnings += w[1:]
    v["gpu_link_bytes_per_s"], v["network_bytes_per_s_per_gpu"] = link, net
    src["gpu_link_bytes_per_s"], src["network_bytes_per_s_per_gpu"] = link_src, net_src


Dims = tuple[Numeric, Numeric, Numeric, Numeric, Numeric, Numeric, Numeric]
"""layers, hidden, heads, kv_heads, ffn_hidden, vocab, seq_len."""


def dims(x: Mapping[str, Numeric]) -> Dims:
    """The architecture inputs of resolved values, in ``ARCH_INPUTS`` order."""
    return (x["layers"], x["hidden"], x["heads"], x["kv_heads"], x["ffn_hidden"], x["vocab"], x["seq_len"])


GEMM_BYTES: dict[str, tuple[float, float]] = {"bf16": (2.0, 2.0), "fp16": (2.0, 2.0), "fp8": (1.0, 2.0)}
"""Bytes per element of a GEMM's operands and of its result, by precision [bytes]: fp8 GEMMs read
8-bit operands and write a 16-bit result (cuBLASLt / Transformer Engine on Hopper)."""


def gemm_time_s(
    m: Numeric,
    n: Numeric,
    k: Numeric,
    peak_flops_per_s: Numeric,
    bandwidth_bytes_per_s: Numeric,
    operand_bytes: Numeric,
    result_bytes: Numeric,
    peak_efficiency: Numeric,
    bandwidth_efficiency: Numeric,
) -> Numeric:
    """Time of one matrix multiply ``C[m x n] = A[m x k] B[k x n]`` [s]: a roofline sum.

    ``t = 2 m n k / (P e_p) + (b_in (m k + k n) + b_out m n) / (W e_w)``: the math at a share
    ``e_p`` of the tensor-core peak ``P`` [FLOP/s] plus reading both operands and writing the
    result at a share ``e_w`` of the memory bandwidth ``W`` [bytes/s]. A sum, not a max, because
    a tiled GEMM's prologue (first tiles loaded) and epilogue (result written) do not overlap its
    main loop; the sum is what makes a small ``k`` (little reuse per output) fall off.

    References
    ----------
    Williams, Waterman, Patterson, "Roofline", CACM 52(4), 2009 (arithmetic intensity).
    NVIDIA, "Matrix Multiplication Background User's Guide" (GEMM arithmetic intensity
    ``2 m n k / (b (m k + k n + m n))``). Fitted on presets/gemm.yaml (calc.calibrate.gemm_fit).
    """
    flops = 2 * _f(m) * _f(n) * _f(k)
    moved = _f(operand_bytes) * (_f(m) * _f(k) + _f(k) * _f(n)) + _f(result_bytes) * _f(m) * _f(n)
    return flops / (_f(peak_flops_per_s) * _f(peak_efficiency)) + moved / (
        _f(bandwidth_bytes_per_s) * _f(bandwidth_efficiency)
    )


def gemm_efficiency(m: Numeric, n: Numeric, k: Numeric, peak_flops_per_s: Numeric, time_s: Numeric) -> Numeric:
    """Share of the peak a matrix multiply of ``time_s`` reaches [0-1]: ``2 m n k / (P x t)``.

    With ``t`` from ``gemm_time_s`` it rises with the arithmetic intensity ``2 m n k / bytes``
    towards ``e_p``.
    """
    return 2 * _f(m) * _f(n) * _f(k) / (_f(peak_flops_per_s) * _f(time_s))


def layer_gemms(
    tokens: Numeric,
    hidden: Numeric,
    heads: Numeric,
    kv_heads: Numeric,
    ffn_hidden: Numeric,
    gated: Numeric,
    tensor_parallel: Numeric = 1.0,
) -> list[tuple[Numeric, Numeric, Numeric]]:
    """The 12 matrix multiplies of one layer's training step on one rank, as ``(m, n, k)``.

    Forward (``m`` = tokens): QKV ``(T, h (1 + 2k/a) / t, h)``, attention out ``(T, h, h / t)``,
    MLP up ``(T, n_up f / t, h)`` (n_up 2 gated, 1 plain), MLP down ``(T, h, f / t)``. Each has
    a data-gradient GEMM ``(m, k, n)`` and a weight-gradient GEMM ``(k, n, m)`` (the reduction
    runs over the tokens), as Transformer Engine's GEMM benchmark lists them (fprop, dgrad, wgrad).
    """
    h, t = _f(hidden), _f(tensor_parallel)
    up = where(_f(gated) > 0, 2.0, 1.0) * _f(ffn_hidden)
    fwd = [
        (_f(tokens), h * (1 + 2 * _f(kv_heads) / _f(heads)) / t, h),
        (_f(tokens), h, h / t),
        (_f(tokens), up / t, h),
        (_f(tokens), h, _f(ffn_hidden) / t),
    ]
    out: list[tuple[Numeric, Numeric, Numeric]] = []
    for m, n, k in fwd:
        out += [(m, n, k), (m, k, n), (k, n, m)]
    return out


def layer_gemm_time_s(
    gemms: list[tuple[Numeric, Numeric, Numeric]],
    precision: str,
    peak_flops_per_s: Numeric,
    bandwidth_bytes_per_s: Numeric,
    peak_efficiency: Numeric,
    bandwidth_efficiency: Numeric,
) -> Numeric:
    """Sum of ``gemm_time_s`` over a layer's matrix multiplies (``layer_gemms``) [s]."""
    b_in, b_out = GEMM_BYTES[precision]
    total: Numeric = 0.0
    for m, n, k in gemms:
        total = _f(total) + _f(
            gemm_time_s(
                m, n, k, peak_flops_per_s, bandwidth_bytes_per_s, b_in, b_out, peak_efficiency, bandwidth_efficiency
            )
        )
    return total


def quantized_elements(gemms: list[tuple[Numeric, Numeric, Numeric]], micro_batches: Numeric = 1.0) -> Numeric:
    """Elements an fp8 layer quantizes per micro-batch [1]: ``sum (m k + m n + k n / mb)`` over the
    forward GEMMs of ``layer_gemms``.

    Each forward GEMM's input (``m k``) and the output gradient its data- and weight-gradient
    GEMMs read (``m n``) are cast every micro-batch (one pass writes the transposed copy the
    backward needs too); its weight (``k n``) once per step: Transformer Engine keeps the fp8
    weight across micro-batches when told it is not the first (``is_first_microbatch``, which
    Megatron-Core sets), so it is shared by the ``mb`` micro-batches of a step.
    """
    total: Numeric = 0.0
    for m, n, k in gemms[0::3]:
        total = _f(total) + _f(m) * _f(k) + _f(m) * _f(n) + _f(k) * _f(n) / _f(micro_batches)
    return total


def fp8_math_factor(
    tokens: Numeric,
    hidden: Numeric,
    heads: Numeric,
    kv_heads: Numeric,
    ffn_hidden: Numeric,
    gated: Numeric,
    tensor_parallel: Numeric,
    peak_16bit_flops_per_s: Numeric,
    peak_fp8_flops_per_s: Numeric,
    bandwidth_bytes_per_s: Numeric,
    layer_efficiency: Numeric,
    gemm_peak_efficiency_16bit: Numeric,
    gemm_peak_efficiency_fp8: Numeric,
    gemm_bandwidth_efficiency: Numeric,
    quantization_bytes_per_element: Numeric,
    micro_batches: Numeric = 1.0,
) -> Numeric:
    """fp8 math time of a layer over its 16-bit math time [1] (below 1 is faster).

    The 16-bit math time ``T16 = F / (P16 e_layer)`` (the transformer efficiency measured on a
    whole layer) holds the layer's 12 GEMMs, ``G16 = sum gemm_time_s`` at 16-bit, and the rest
    ``T16 - G16`` (kernels between them, launch gaps), which fp8 does not speed up. fp8 replaces
    the GEMMs by the fp8 GEMMs at the same shapes, ``G8``, plus quantizing their operands (cast,
    scale, transpose: memory-bound), ``Q = c x quantized_elements / (W e_w)`` with ``c`` the bytes
    moved per quantized element (calc.calibrate.fp8_quantization_bytes)::

        factor = (max(T16 - G16, 0) + G8 + Q) / max(T16, G16)

    ``Q`` grows with the tokens and the width (``T h``) while the GEMMs grow with ``T h^2``, so
    narrow layers gain less from fp8; weights are cast once per step of ``micro_batches``.
    ``tokens`` is the micro-batch's tokens on one rank (b s / c); ``gemm_*`` are the fitted GEMM
    roofline parameters (calc.calibrate.gemm_fit).

    References
    ----------
    Micikevicius et al., "FP8 Formats for Deep Learning", arXiv:2209.05433 (fp8 GEMM inputs, 16-bit
    outputs, per-tensor scaling). NVIDIA Transformer Engine, "GEMM Speedups Across Precisions" and
    docs/examples/gemm_profiling (autocast vs pre-quantized GEMM time). presets/gemm.yaml.
    """
    gemms = layer_gemms(tokens, hidden, heads, kv_heads, ffn_hidden, gated, tensor_parallel)
    flops: Numeric = 0.0
    for m, n, k in gemms:
        flops = _f(flops) + 2 * _f(m) * _f(n) * _f(k)
    g16 = _f(
        layer_gemm_time_s(
            gemms,
            "bf16",
            peak_16bit_flops_per_s,
            bandwidth_bytes_per_s,
            gemm_peak_efficiency_16bit,
            gemm_bandwidth_efficiency,
        )
    )
    g8 = _f(
        layer_gemm_time_s(
            gemms,
            "fp8",
            peak_fp8_flops_per_s,
            bandwidth_bytes_per_s,
            gemm_peak_efficiency_fp8,
            gemm_bandwidth_efficiency,
        )
    )
    q = (
        _f(quantization_bytes_per_element)
        * _f(quantized_elements(gemms, micro_batches))
        / (_f(bandwidth_bytes_per_s) * _f(gemm_bandwidth_efficiency))
    )
    t16 = _f(flops) / (_f(peak_16bit_flops_per_s) * _f(layer_efficiency))
    return (maximum(t16 - g16, 0.0) + g8 + q) / maximum(t16, g16)


# --- A transformer stated by part of its figures (issue 39) ------------------------------------

GENERIC_MODEL = "transformer"
"""The model preset that stands for "a transformer by its own figures": left alone it is Llama
3.2 1B (its preset), but once any of its size figures is given the model is the one stated, and
no other figure comes from that preset (``stated_architecture``)."""

SIZE_INPUTS = ARCH_INPUTS[:6]
"""The figures that set a transformer's size (``seq_len`` is how it is trained, not its size)."""

STATED_REQUIRED = ("layers", "hidden", "heads", "vocab")
"""Figures no rule derives from the others: a model stated by its figures must give them."""

GATED_FFN_MULTIPLE = 256
"""A gated FFN's width is rounded up to a multiple of this [units] (Llama's ``multiple_of``)."""


def gated_ffn_hidden(hidden: int, multiple_of: int = GATED_FFN_MULTIPLE) -> int:
    """FFN width of a gated (SwiGLU) MLP from the hidden size [units]: ``2/3 x 4h``, rounded up.

    ``f = multiple_of x ceil(int(2 x 4h / 3) / multiple_of)``: the gate's third matrix is paid for
    by a third less width, so the MLP keeps the ``8 h^2`` weights of a plain ``4h`` one. It gives
    Llama 1 and 2's widths: 11,008 (h 4,096), 13,824 (h 5,120), 17,920 (h 6,656), 22,016 (h 8,192,
    before Llama 2 70B's ``ffn_dim_multiplier`` 1.3).

    References
    ----------
    meta-llama/llama, llama/model.py, ``FeedForward.__init__`` (``hidden_dim = int(2 * hidden_dim /
    3)``; ``multiple_of * ((hidden_dim + multiple_of - 1) // multiple_of)``, ``multiple_of: int =
    256``; ``TransformerBlock`` passes ``hidden_dim=4 * args.dim``).
    """
    f = int(2 * 4 * hidden / 3)
    return multiple_of * -(-f // multiple_of)


def plain_ffn_hidden(hidden: int) -> int:
    """FFN width of a plain (two-matrix) MLP [units]: ``4h`` (GPT-2, BERT; Megatron-LM's
    ``ffn_hidden_size = 4 * hidden_size`` when not given, megatron/training/arguments.py)."""
    return 4 * hidden


def stated_architecture(
    given: Mapping[str, int], preset: Architecture | None, model: str, gated: bool, mlp_given: bool
) -> tuple[dict[str, float], list[str], bool]:
    """The seven figures of a transformer, and a warning naming each one the plan assumed.

    - A named preset (``llama3_8b``) keeps its own figures where none is given; a given size
      figure that differs from it leaves the others as the preset's, and the warning names them.
    - A model stated by its figures (``model="transformer"`` with any size figure, or a model
      without an architecture preset) takes nothing from a preset's size: ``layers``, ``hidden``,
      ``heads`` and ``vocab`` must be given (``vocab`` is the tokenizer's: no rule gives it);
      ``kv_heads`` = ``heads`` (plain multi-head attention) and ``ffn_hidden`` by the gated rule
      (``gated_ffn_hidden``; ``4h`` for a plain MLP) when left out; ``seq_len`` from the preset, if
      any. The warning names each figure assumed, with its rule.

    Returns the figures, the warnings, and whether they are the preset's own (for the source).

    Raises
    ------
    InputError
        A figure no rule derives, naming it and the rules for the others.
    """
    sized = [k for k in SIZE_INPUTS if k in given]
    if preset is not None and (model != GENERIC_MODEL or not sized):
        figures = {k: float(given.get(k, getattr(preset, k))) for k in ARCH_INPUTS}
        changed = [k for k in sized if given[k] != getattr(preset, k)]
        kept = [f"{k} {getattr(preset, k):,}" for k in SIZE_INPUTS if k not in given]
        notes = []
        if changed and kept:
            notes.append(
                f"{model} with {', '.join(f'{k} {given[k]:,}' for k in changed)}: {', '.join(kept)} kept from the "
                f"{model} preset; give them if your model differs."
            )
        return figures, notes, True
    missing = [k for k in STATED_REQUIRED if k not in given]
    if missing:
        raise InputError(
            missing[0],
            f"a transformer stated by its figures needs {', '.join(STATED_REQUIRED)} (missing: {', '.join(missing)}); "
            "no rule gives them (vocab is the tokenizer's: 32,000 Llama 2, 50,257 GPT-2, 128,256 Llama 3). "
            "kv_heads (= heads) and ffn_hidden (the gated rule, 2/3 x 4 x hidden rounded up to 256) may be left out",
        )
    h, a = given["hidden"], given["heads"]
    assumed: list[str] = []
    kv = given.get("kv_heads", a)
    if "kv_heads" not in given:
        assumed.append(f"kv_heads {a:,} (= heads: plain multi-head attention; give kv_heads for grouped-query)")
    ffn = given.get("ffn_hidden", gated_ffn_hidden(h) if gated else plain_ffn_hidden(h))
    if "ffn_hidden" not in given:
        rule = "the gated rule, 2/3 x 4 x hidden rounded up to 256 (Llama)" if gated else "4 x hidden (plain MLP)"
        assumed.append(f"ffn_hidden {ffn:,} ({rule})")
    if not mlp_given:
        assumed.append("mlp gated (SwiGLU, three FFN matrices; mlp='plain' for two)" if gated else "mlp plain")
    seq = given.get("seq_len", preset.seq_len if preset is not None else 0)
    if not seq:
        raise InputError("seq_len", f"model {model} has no architecture preset to take it from; give seq_len")
    if "seq_len" not in given:
        assumed.append(f"seq_len {seq:,} (the {model} preset's)")
    figures = {"layers": given["layers"], "hidden": h, "heads": a, "kv_heads": kv, "ffn_hidden": ffn}
    figures |= {"vocab": given["vocab"], "seq_len": seq}
    notes = [f"{model} stated by its figures; assumed: {'; '.join(assumed)}."] if assumed else []
    return {k: float(x) for k, x in figures.items()}, notes, False


def token_window(tensors: str, window: int) -> bool:
    """Whether a model's tensors are token windows of ``window`` tokens: every tensor one
    dimension of that length (``tokens=8192:int64,labels=8192:int64``)."""
    parts = [p.split("=", 1)[-1].split(":", 1)[0] for p in tensors.split(",")]
    return bool(parts) and all(p.strip() == str(window) for p in parts)


def resize_window(tensors: str, seq_len: int) -> str:
    """A token window's tensors at ``seq_len`` tokens: each tensor's one dimension replaced."""
    out = []
    for part in tensors.split(","):
        name, rest = part.split("=", 1)
        out.append(f"{name}={seq_len}:{rest.split(':', 1)[1]}")
    return ",".join(out)


PIPELINE_BUBBLE_WARN_SHARE = 0.1
"""A pipeline bubble above this share of the step is said in the plan's warnings [0-1]. Narayanan
et al. 2021 (section 2.2.1) ask for ``m >> p`` micro-batches to keep it small; at 10 % a tenth of
the GPUs' time idles, as much as a typical data-loading stall worth fixing."""


def bubble_note(bubble: float, pipeline_parallel: int, micro_batches: int, virtual_stages: int) -> list[str]:
    """A warning when the pipeline bubble exceeds ``PIPELINE_BUBBLE_WARN_SHARE``, with the fewest
    micro-batches per step that bring it under (``pipeline_bubble`` solved for ``m``)."""
    share = PIPELINE_BUBBLE_WARN_SHARE
    if not bubble > share:
        return []
    idle = (pipeline_parallel - 1) / virtual_stages
    enough = math.ceil(idle * (1 - share) / share - 1e-9)
    return [
        f"Pipeline bubble: {bubble:.0%} of the step idles while {micro_batches} micro-batch"
        f"{'es' if micro_batches != 1 else ''} per step fill and drain {pipeline_parallel} pipeline stages (over "
        f"{share:.0%}); {enough} or more micro-batches (gradient_accumulation) bring it to {share:.0%} or less; "
        "interleaved stages (virtual_pipeline_stages) or fewer stages (pipeline_parallel) also cut it."
    ]


PIPELINE_SPLIT_FLAGS = {
    0: "",
    1: "--account-for-embedding-in-pipeline-split",
    2: "--account-for-embedding-in-pipeline-split and --account-for-loss-in-pipeline-split",
}
"""Megatron-LM's flags that count the embedding (and the loss) as one more layer each when it
splits the layers over pipeline stages, by the layers they add (megatron/training/arguments.py)."""


def pipeline_split(layers: int, pipeline_parallel: int, virtual_stages: int) -> int:
    """Layers Megatron-LM's split counts beside the model's to lay this pipeline out evenly: 0, 1
    (the embedding) or 2 (the embedding and the loss); -1 where none does.

    megatron/training/arguments.py ``validate_args`` (and TransformerConfig for
    ``--num-virtual-stages-per-pipeline-rank``): the layers, plus one for the embedding and one for
    the loss when ``--account-for-embedding-in-pipeline-split`` / ``--account-for-loss-in-pipeline-split``
    are set, "must be divisible" by the pipeline-model-parallel size, and the layers of each pipeline
    rank by the virtual stages (interleaved chunks) per rank.
    """
    for extra in PIPELINE_SPLIT_FLAGS:
        n = layers + extra
        if n % pipeline_parallel == 0 and (n // pipeline_parallel) % virtual_stages == 0:
            return extra
    return -1


def check_pipeline(layers: int, pipeline_parallel: int, virtual_stages: int) -> None:
    """Refuse a pipeline layout Megatron-LM refuses (InputError naming the field and the rule).

    - at most one pipeline stage per layer;
    - interleaving (``virtual_stages`` > 1) needs more than one pipeline stage ("When interleaved
      schedule is used, pipeline-model-parallel size should be greater than 1", with p2p overlap,
      Megatron's default);
    - an interleaved pipeline splits the layers (with the embedding and loss counted where
      Megatron's flags allow, ``pipeline_split``) evenly into stages, and each stage's into its
      chunks. A plain pipeline that does not split evenly runs with Megatron's uneven first and
      last stages (``--decoder-first-pipeline-num-layers``): ``pipeline_split_note`` says so.
    """
    p, vs = pipeline_parallel, virtual_stages
    if p > layers:
        raise InputError("pipeline_parallel", f"must be at most layers ({layers}): a stage holds a layer, got {p}")
    if vs > 1 and p < 2:
        raise InputError(
            "virtual_pipeline_stages",
            f'interleaves pipeline stages: it needs pipeline_parallel of 2 or more (Megatron-LM: "When interleaved '
            f'schedule is used, pipeline-model-parallel size should be greater than 1"), got {vs} with 1 stage',
        )
    if vs > 1 and pipeline_split(layers, p, vs) < 0:
        raise InputError(
            "virtual_pipeline_stages",
            f"must divide the layers of each of the {p} pipeline stages ({layers} / {p}, or {layers + 1} / {p} and "
            f'{layers + 2} / {p} with the embedding and the loss counted as layers; Megatron-LM: "number of layers '
            f'per pipeline stage must be divisible" by the interleaved chunks), got {vs}',
        )


def pipeline_split_note(layers: int, pipeline_parallel: int, virtual_stages: int) -> list[str]:
    """A warning naming the Megatron-LM flags a pipeline layout needs where the layers do not
    split evenly over its stages (``pipeline_split``)."""
    p = pipeline_parallel
    extra = pipeline_split(layers, p, virtual_stages) if p > 1 else 0
    if extra == 0:
        return []
    if extra < 0:
        return [
            f"{layers} layers do not split evenly over {p} pipeline stages: Megatron-LM runs it only with uneven first "
            "and last stages (--decoder-first-pipeline-num-layers, --decoder-last-pipeline-num-layers; without them "
            '"Number of layers should be divisible by the pipeline-model-parallel size"); the plan holds '
            f"{layers / p:.3g} layers a stage."
        ]
    n = layers + extra
    return [
        f"{layers} layers over {p} pipeline stages split evenly only with the embedding"
        f"{' and the loss counted as layers' if extra == 2 else ' counted as a layer'} ({n} / {p} = "
        f"{n // p} a stage; Megatron-LM {PIPELINE_SPLIT_FLAGS[extra]}); the plan holds "
        f"{layers / p:.3g} model layers a stage."
    ]
