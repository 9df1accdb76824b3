"""A Hugging Face ``config.json`` read into a Scenario: ``calc.from_hf_config(config, **inputs)``.

The config states the architecture; every figure of it goes into the Scenario explicitly
(layers, hidden, heads, KV heads, FFN, vocabulary, MLP kind, the mixture of experts and the exact
parameter count with biases and tied embeddings), with ``model="transformer"`` only for the
family's fitted efficiency: nothing is left for a model preset to fill. The data figures follow
from the sequence: tokens and labels tensors, the stored token size, the CPU time of one token
window, the dataset. Each family's keys are read by name; a key that is neither read, nor known
to change no count (token ids, norm epsilons, rotary bases, dropouts, router loss weights), nor
refused with its reason (multi-head latent attention, sliding-window attention beyond the
sequence, quantised weights, a multimodal wrapper) is refused by name: a config Feedrate cannot
read never becomes another model's figures.

Families (``model_type``), as ``transformers`` builds them:

========= ===== ================================ ==========================================
family    MLP   biases                           experts
========= ===== ================================ ==========================================
llama     gated ``attention_bias``: Q K V O;     -
                ``mlp_bias``: gate, up, down
mistral   gated none                             -
mixtral   gated none                             ``num_local_experts``, ``num_experts_per_tok``
qwen2     gated Q K V always                     -
deepseek  gated ``attention_bias``: Q K V O      ``n_routed_experts``, ``n_shared_experts``,
                                                 ``first_k_dense_replace``
gpt_neox  plain ``attention_bias`` (default on): -
                QKV and dense; MLP always;
                LayerNorm shifts
========= ===== ================================ ==========================================

Positions: every family here is rotary (no position parameters); ``max_position_embeddings`` is
the longest sequence the model takes and the default ``seq_len`` (give ``seq_len=`` for the run's
window). GPT-NeoX's parallel residual and partial rotary change no count.

References
----------
Hugging Face transformers, ``LlamaConfig``, ``MistralConfig``, ``MixtralConfig``, ``Qwen2Config``,
``GPTNeoXConfig`` (their documented defaults); DeepSeek-AI, deepseek-moe-16b-base
``configuration_deepseek.py``. Hoffmann et al., "Training Compute-Optimal Large Language Models",
2022 (about 20 tokens per parameter: the default dataset).
"""

from __future__ import annotations

import dataclasses
import json
import math
import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from calc import transformer
from calc.errors import InputError
from calc.scenario import FIELDS, Scenario, unknown_input
from calc.units import fmt

MOE_FAMILIES = ("mixtral", "deepseek")
"""Families whose experts are read (a dense family stating experts is refused)."""

FAMILIES = ("llama", "mistral", "mixtral", "qwen2", "deepseek", "gpt_neox")
"""``model_type`` values read (dense and mixture-of-experts decoders)."""

REFUSED_FAMILIES = {
    "deepseek_v2": "multi-head latent attention (kv_lora_rank), which calc.transformer does not model",
    "deepseek_v3": "multi-head latent attention (kv_lora_rank) and multi-token prediction layers, which "
    "calc.transformer does not model (the deepseek_v3 preset approximates MLA as multi-head attention)",
    "t5": "an encoder-decoder",
    "mt5": "an encoder-decoder",
    "bart": "an encoder-decoder",
    "whisper": "an encoder-decoder",
}
"""Families refused with the reason (anything else outside ``FAMILIES`` is refused too)."""

READ = (
    "model_type",
    "hidden_size",
    "num_hidden_layers",
    "num_attention_heads",
    "num_key_value_heads",
    "intermediate_size",
    "vocab_size",
    "max_position_embeddings",
    "tie_word_embeddings",
    "attention_bias",
    "mlp_bias",
    "head_dim",
    "sliding_window",
    "use_sliding_window",
    "max_window_layers",
    "num_local_experts",
    "num_experts_per_tok",
    "n_routed_experts",
    "n_shared_experts",
    "moe_intermediate_size",
    "first_k_dense_replace",
    "moe_layer_freq",
    "is_encoder_decoder",
    "hidden_act",
)
"""Keys read into the architecture or checked against what calc.transformer models."""

NEUTRAL = (
    # bookkeeping and tokens
    "architectures",
    "_name_or_path",
    "auto_map",
    "torch_dtype",
    "dtype",
    "transformers_version",
    "bos_token_id",
    "eos_token_id",
    "pad_token_id",
    "tokenizer_class",
    "use_cache",
    "initializer_range",
    # numerics of the same matrices: norm epsilons, rotary bases and scaling, tensor-parallel slicing
    "rms_norm_eps",
    "layer_norm_eps",
    "rope_theta",
    "rope_scaling",
    "rope_parameters",
    "rotary_pct",
    "rotary_emb_base",
    "pretraining_tp",
    "use_parallel_residual",
    # training regularisation
    "attention_dropout",
    "hidden_dropout",
    "classifier_dropout",
    # routing rules and losses of the same experts
    "output_router_logits",
    "router_aux_loss_coef",
    "router_jitter_noise",
    "aux_loss_alpha",
    "seq_aux",
    "scoring_func",
    "norm_topk_prob",
    "topk_method",
    "n_group",
    "topk_group",
    "routed_scaling_factor",
)
"""Keys that change no parameter, FLOP or byte Feedrate counts (each group's reason above it)."""

REFUSED_KEYS = {
    "kv_lora_rank": "multi-head latent attention is not modelled (calc.transformer counts Q, K, V, O)",
    "q_lora_rank": "multi-head latent attention is not modelled (calc.transformer counts Q, K, V, O)",
    "qk_rope_head_dim": "multi-head latent attention is not modelled (calc.transformer counts Q, K, V, O)",
    "qk_nope_head_dim": "multi-head latent attention is not modelled (calc.transformer counts Q, K, V, O)",
    "v_head_dim": "multi-head latent attention is not modelled (calc.transformer counts Q, K, V, O)",
    "num_nextn_predict_layers": "multi-token prediction layers are not modelled",
    "quantization_config": "quantised weights are not modelled (the plan counts 16-bit training state)",
    "layer_types": "per-layer attention kinds (hybrid or sliding-window layers) are not modelled",
    "text_config": "a multimodal wrapper: give the language model's own config (its text_config)",
    "vision_config": "a vision tower is not modelled: give the language model's own config",
}
"""Keys whose presence means an architecture calc.transformer does not model, with the reason."""

TOKENS_PER_PARAM = 20.0
"""Training tokens per parameter of the default dataset: the compute-optimal ratio of Hoffmann et
al. 2022 (Chinchilla: 1.4 T tokens for 70 B parameters)."""

TOKEN_WINDOW_CPU_S = 1.82e-5
"""CPU time to cut one 8,192-token window from a memory-mapped token file into int64 tokens and
labels tensors [s] (benchmarks/results/token_slice_cpu.json, 18.17 us on one Xeon core)."""

TOKEN_WINDOW = 8192
"""Tokens in the measured window of ``TOKEN_WINDOW_CPU_S`` (the copy scales with the tokens)."""

SEQUENCES_PER_FILE = 1_000_000
"""Sequences per token file: Megatron-LM's indexed datasets hold a corpus in a few large .bin
files (millions of sequences each), as the llama3-8b-pretrain-8xh100 preset."""

ARCH_FIELDS = (
    "model",
    "layers",
    "hidden",
    "heads",
    "kv_heads",
    "ffn_hidden",
    "vocab",
    "mlp",
    "params",
    *transformer.MOE_INPUTS,
)
"""Scenario inputs the config states (refused as keyword inputs: edit the config instead)."""


@dataclass(frozen=True)
class HFModel:
    """A config's architecture as calc.transformer counts it, and what the config adds to it."""

    model_type: str
    architecture: transformer.Architecture
    """Layers, widths, heads, experts; ``seq_len`` is ``max_position_embeddings``."""
    tied: bool
    params: int
    """Every parameter: all experts, biases, LayerNorm shifts, the head unless tied."""
    active_params: int
    """Parameters one token runs through: the active and shared experts instead of all."""
    sliding_window: int | None
    """Tokens a sliding-window attention sees (None: full attention)."""

    def scenario_fields(self) -> dict[str, Any]:
        """The Scenario inputs of the architecture, every one given."""
        a = self.architecture
        widths = {k: getattr(a, k) for k in ("layers", "hidden", "heads", "kv_heads", "ffn_hidden", "vocab")}
        experts = {k: getattr(a, k) for k in transformer.MOE_INPUTS}
        mlp = "gated" if a.gated else "plain"
        return {"model": "transformer", **widths, "mlp": mlp, "params": self.params, **experts}


def load(config: str | os.PathLike[str] | Mapping[str, Any]) -> tuple[dict[str, Any], str]:
    """The config as a mapping and a name for it (the folder a ``config.json`` sits in)."""
    if isinstance(config, Mapping):
        name = str(config.get("_name_or_path") or config.get("model_type") or "hf-config")
        return dict(config), name.rstrip("/").split("/")[-1]
    path = Path(config)
    if path.is_dir():
        path = path / "config.json"
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as e:
        raise InputError("hf_config", f"cannot read {str(path)!r}: {e.strerror}; give a config.json") from None
    try:
        data = json.loads(text)
    except json.JSONDecodeError as e:
        raise InputError("hf_config", f"{path.name} is not JSON ({e.msg}, line {e.lineno})") from None
    if not isinstance(data, dict):
        raise InputError("hf_config", f"{path.name} holds a {type(data).__name__}; expected a JSON object")
    # A checkout's config.json is named by its folder (Llama-2-7b-hf/config.json), any other file by itself.
    return data, (path.resolve().parent.name if path.name == "config.json" else path.stem) or "hf-config"


def _whole(cfg: Mapping[str, Any], key: str, least: int = 1, default: int | None = None) -> int:
    """``cfg[key]`` as a whole number of at least ``least`` (``default`` where absent or null)."""
    v = cfg.get(key)
    if v is None and default is not None:
        return default
    if v is None:
        raise InputError(f"config.json: {key}", f"missing; {cfg.get('model_type')} configs state it")
    if isinstance(v, bool) or not isinstance(v, int) or v < least:
        raise InputError(f"config.json: {key}", f"expected a whole number of at least {least}, got {v!r}")
    return v


def _flag(cfg: Mapping[str, Any], key: str, default: bool) -> bool:
    v = cfg.get(key, default)
    if v is None:
        return default
    if not isinstance(v, bool):
        raise InputError(f"config.json: {key}", f"expected true or false, got {v!r}")
    return v


def _check_keys(cfg: Mapping[str, Any]) -> str:
    """The family, after every key is read, known to change no count, or refused (by name)."""
    family = cfg.get("model_type")
    if not isinstance(family, str) or not family:
        raise InputError("config.json: model_type", f"missing; accepted: {', '.join(FAMILIES)}")
    if family in REFUSED_FAMILIES:
        raise InputError("config.json: model_type", f"{family} is {REFUSED_FAMILIES[family]}")
    if family not in FAMILIES:
        raise InputError(
            "config.json: model_type", f"{family} is not a family Feedrate reads; accepted: {', '.join(FAMILIES)}"
        )
    for key, value in cfg.items():
        if key in REFUSED_KEYS and value is not None:
            raise InputError(f"config.json: {key}", REFUSED_KEYS[key])
        if key not in READ and key not in NEUTRAL and key not in REFUSED_KEYS:
            raise InputError(
                f"config.json: {key}",
                "not a key Feedrate reads or knows to change no count; remove it if it does not change the "
                f"architecture (read: {', '.join(READ)})",
            )
    if _flag(cfg, "is_encoder_decoder", False):
        raise InputError("config.json: is_encoder_decoder", "an encoder-decoder is not modelled (decoders only)")
    act = cfg.get("hidden_act", "silu")
    if not isinstance(act, str):
        raise InputError("config.json: hidden_act", f"expected the activation's name, got {act!r}")
    return family


def _experts(cfg: Mapping[str, Any], family: str, layers: int) -> tuple[int, int, int, int, int]:
    """(experts, active, expert FFN, shared, dense layers); all 0 for a dense family."""
    if family == "mixtral":
        e = _whole(cfg, "num_local_experts")
        return e, _whole(cfg, "num_experts_per_tok"), _whole(cfg, "intermediate_size"), 0, 0
    if family != "deepseek" or cfg.get("n_routed_experts") is None:
        for key in ("num_local_experts", "n_routed_experts", "n_shared_experts", "moe_intermediate_size"):
            if cfg.get(key) is not None and family not in MOE_FAMILIES:
                raise InputError(
                    f"config.json: {key}", f"experts are not read for {family} (accepted in: {', '.join(MOE_FAMILIES)})"
                )
        return 0, 0, 0, 0, 0
    if _whole(cfg, "moe_layer_freq", 1, 1) != 1:
        raise InputError(
            "config.json: moe_layer_freq", "only 1 (every layer past the dense ones a MoE layer) is modelled"
        )
    dense = _whole(cfg, "first_k_dense_replace", 0, 0)
    if dense > layers:
        raise InputError(
            "config.json: first_k_dense_replace", f"must be at most num_hidden_layers ({layers}), got {dense}"
        )
    return (
        _whole(cfg, "n_routed_experts"),
        _whole(cfg, "num_experts_per_tok"),
        _whole(cfg, "moe_intermediate_size"),
        _whole(cfg, "n_shared_experts", 0, 0),
        dense,
    )


def _biases(cfg: Mapping[str, Any], family: str) -> tuple[bool, bool, bool, bool]:
    """(Q K V, output, MLP, LayerNorm shift) biases of a family, read from its keys."""
    if family == "gpt_neox":
        attn = _flag(cfg, "attention_bias", True)
        return attn, attn, True, True
    if family == "qwen2":
        return True, False, False, False
    if family in ("llama", "deepseek"):
        attn = _flag(cfg, "attention_bias", False)
        return attn, attn, family == "llama" and _flag(cfg, "mlp_bias", False), False
    for key in ("attention_bias", "mlp_bias"):
        if _flag(cfg, key, False):
            raise InputError(f"config.json: {key}", f"{family} has no biases in transformers; expected false")
    return False, False, False, False


def _attention(cfg: Mapping[str, Any], hidden: int) -> tuple[int, int]:
    """(heads, KV heads): KV heads default to heads (multi-head), as transformers' configs do."""
    heads = _whole(cfg, "num_attention_heads")
    kv = _whole(cfg, "num_key_value_heads", 1, heads)
    if hidden % heads:
        raise InputError("config.json: num_attention_heads", f"must divide hidden_size ({hidden}), got {heads}")
    head_dim = cfg.get("head_dim")
    if head_dim is not None and head_dim != hidden // heads:
        raise InputError(
            "config.json: head_dim",
            f"{head_dim!r} is not hidden_size / num_attention_heads = {hidden // heads}: calc.transformer "
            "assumes hidden = heads x head_dim",
        )
    if heads % kv:
        raise InputError("config.json: num_key_value_heads", f"must divide num_attention_heads ({heads}), got {kv}")
    return heads, kv


def _window(cfg: Mapping[str, Any], family: str) -> int | None:
    """Tokens a sliding-window attention sees, None for full attention (Qwen2 only with
    ``use_sliding_window``; Mistral and Mixtral whenever ``sliding_window`` is set)."""
    if family == "qwen2" and not _flag(cfg, "use_sliding_window", False):
        return None
    if cfg.get("sliding_window") is None:
        return None
    return _whole(cfg, "sliding_window")


def architecture(config: str | os.PathLike[str] | Mapping[str, Any]) -> HFModel:
    """Read a Hugging Face config (a path, a folder holding ``config.json``, or its mapping)."""
    cfg, _ = load(config)
    family = _check_keys(cfg)
    layers, hidden = _whole(cfg, "num_hidden_layers"), _whole(cfg, "hidden_size")
    heads, kv = _attention(cfg, hidden)
    ffn, vocab = _whole(cfg, "intermediate_size"), _whole(cfg, "vocab_size")
    e, k, fe, shared, dense = _experts(cfg, family, layers)
    gated = family != "gpt_neox"
    tied = _flag(cfg, "tie_word_embeddings", False)  # every family's config class defaults to untied
    qkv_b, out_b, mlp_b, norm_b = _biases(cfg, family)
    active, total = transformer.moe_ffn(layers, dense, ffn, fe, e, k, shared, float(gated))
    extra = transformer.bias_params(layers, hidden, heads, kv, ffn, float(gated), qkv_b, out_b, mlp_b, norm_b)

    def count(width: float) -> int:
        weights = transformer.params_count(layers, hidden, heads, kv, width, vocab, float(gated), float(tied))
        return round(float(weights) + float(extra))

    arch = transformer.Architecture(
        layers=layers,
        hidden=hidden,
        heads=heads,
        kv_heads=kv,
        ffn_hidden=ffn,
        vocab=vocab,
        seq_len=_whole(cfg, "max_position_embeddings"),
        gated=gated,
        source=f"Hugging Face config ({family})",
        experts=e,
        experts_active=k,
        expert_ffn_hidden=fe,
        shared_experts=shared,
        dense_layers=dense,
    )
    return HFModel(family, arch, tied, count(float(total)), count(float(active)), _window(cfg, family))


def from_hf_config(config: str | os.PathLike[str] | Mapping[str, Any], **inputs: Any) -> Scenario:
    """A Scenario for a model given by its Hugging Face ``config.json`` (a path, its folder, or the
    mapping), plus any other input as a keyword (``gpu=``, ``gpus_per_job=``, ``seq_len=`` ...).

    Every architecture figure comes from the config (an input that restates one is refused: edit
    the config); ``seq_len`` defaults to ``max_position_embeddings``. Unless given: tensors
    ``tokens`` and ``labels`` of ``seq_len`` int64, ``example_bytes`` = ``seq_len`` stored tokens
    (``calc.transformer.token_bytes``), the CPU time of the window (``TOKEN_WINDOW_CPU_S`` per
    8,192 tokens), ``SEQUENCES_PER_FILE`` sequences per file and a dataset of ``TOKENS_PER_PARAM``
    tokens per parameter; the description says which of these it took.
    """
    m = architecture(config)
    _, name = load(config)
    unknown = sorted(set(inputs) - set(FIELDS))
    if unknown:
        raise InputError(unknown[0], unknown_input(unknown[0]))
    clash = sorted(set(inputs) & set(ARCH_FIELDS))
    if clash:
        raise InputError(clash[0], "comes from the Hugging Face config; edit the config instead")
    seq_given = inputs.get("seq_len") is not None
    positions = m.architecture.seq_len
    sc = Scenario(**({"name": name} | m.scenario_fields() | {"seq_len": positions} | inputs))
    s = int(sc.seq_len or positions)
    if m.sliding_window is not None and s > m.sliding_window:
        raise InputError(
            "config.json: sliding_window",
            f"attention sees {m.sliding_window} tokens of a {s}-token sequence: sliding-window attention is not "
            f"modelled; give seq_len={m.sliding_window} or less",
        )
    data, notes = _data_figures(sc, m, s, inputs)
    where = "given" if seq_given else "max_position_embeddings"
    said = [f"seq_len {s} ({where})", *notes]
    a = m.architecture
    description = inputs.get("description") or (
        f"{m.model_type} from a Hugging Face config: {m.params:,} parameters"
        + (f" ({m.active_params:,} active)" if a.experts else "")
        + f", {a.layers} layers x {a.hidden} hidden; "
        + "; ".join(said)
    )
    return dataclasses.replace(sc, description=description, **data)


def _data_figures(sc: Scenario, m: HFModel, s: int, inputs: Mapping[str, Any]) -> tuple[dict[str, Any], list[str]]:
    """The data inputs a token window implies, for those not given, and a note for each default."""
    out: dict[str, Any] = {}
    notes: list[str] = []
    token = int(float(transformer.token_bytes(m.architecture.vocab)))
    if sc.tensors is None:
        out["tensors"] = f"tokens={s}:int64,labels={s}:int64"
    if sc.example_bytes is None:
        out["example_bytes"] = f"{s * token} B"
        notes.append(f"{token}-byte tokens ({'uint16' if token == 2 else 'int32'}, Megatron-LM)")
    if sc.cpu_seconds_per_example is None:
        out["cpu_seconds_per_example"] = f"{TOKEN_WINDOW_CPU_S * s / TOKEN_WINDOW:.6g} s"
    if "examples_per_file" not in inputs:
        out["examples_per_file"] = SEQUENCES_PER_FILE
    if sc.dataset_examples is None and sc.dataset_bytes is None:
        examples = math.ceil(TOKENS_PER_PARAM * m.params / s)
        out["dataset_examples"] = examples
        notes.append(
            f"dataset {examples:,} sequences ({fmt(examples * s, 'count', 'tokens')}, "
            f"{TOKENS_PER_PARAM:g} per parameter, Hoffmann et al. 2022; give dataset_examples or dataset_bytes)"
        )
    return out, notes
