"""calc.hf_config: Hugging Face configs read into Scenarios, parameter counts worked by hand.

The configs are the published model cards' config.json values (Hugging Face model pages; token ids
and dtypes as published), written here so the tests need no network.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

import calc
from calc import hf_config as H  # noqa: N812
from calc import transformer as T  # noqa: N812
from calc.errors import InputError

# meta-llama/Llama-2-7b-hf config.json
LLAMA2_7B: dict[str, Any] = {
    "architectures": ["LlamaForCausalLM"],
    "bos_token_id": 1,
    "eos_token_id": 2,
    "hidden_act": "silu",
    "hidden_size": 4096,
    "initializer_range": 0.02,
    "intermediate_size": 11008,
    "max_position_embeddings": 4096,
    "model_type": "llama",
    "num_attention_heads": 32,
    "num_hidden_layers": 32,
    "num_key_value_heads": 32,
    "pretraining_tp": 1,
    "rms_norm_eps": 1e-05,
    "rope_scaling": None,
    "tie_word_embeddings": False,
    "torch_dtype": "float16",
    "transformers_version": "4.31.0.dev0",
    "use_cache": True,
    "vocab_size": 32000,
}

# mistralai/Mistral-7B-v0.1 config.json
MISTRAL_7B: dict[str, Any] = {
    "architectures": ["MistralForCausalLM"],
    "bos_token_id": 1,
    "eos_token_id": 2,
    "hidden_act": "silu",
    "hidden_size": 4096,
    "initializer_range": 0.02,
    "intermediate_size": 14336,
    "max_position_embeddings": 32768,
    "model_type": "mistral",
    "num_attention_heads": 32,
    "num_hidden_layers": 32,
    "num_key_value_heads": 8,
    "rms_norm_eps": 1e-05,
    "rope_theta": 10000.0,
    "sliding_window": 4096,
    "tie_word_embeddings": False,
    "torch_dtype": "bfloat16",
    "transformers_version": "4.34.0.dev0",
    "use_cache": True,
    "vocab_size": 32000,
}

# mistralai/Mixtral-8x7B-v0.1 config.json
MIXTRAL_8X7B: dict[str, Any] = {
    "architectures": ["MixtralForCausalLM"],
    "attention_dropout": 0.0,
    "bos_token_id": 1,
    "eos_token_id": 2,
    "hidden_act": "silu",
    "hidden_size": 4096,
    "initializer_range": 0.02,
    "intermediate_size": 14336,
    "max_position_embeddings": 32768,
    "model_type": "mixtral",
    "num_attention_heads": 32,
    "num_experts_per_tok": 2,
    "num_hidden_layers": 32,
    "num_key_value_heads": 8,
    "num_local_experts": 8,
    "output_router_logits": False,
    "rms_norm_eps": 1e-05,
    "rope_theta": 1000000.0,
    "router_aux_loss_coef": 0.02,
    "sliding_window": None,
    "tie_word_embeddings": False,
    "torch_dtype": "bfloat16",
    "transformers_version": "4.36.0.dev0",
    "use_cache": True,
    "vocab_size": 32000,
}

# Qwen/Qwen2-7B-Instruct config.json
QWEN2_7B: dict[str, Any] = {
    "architectures": ["Qwen2ForCausalLM"],
    "attention_dropout": 0.0,
    "bos_token_id": 151643,
    "eos_token_id": 151645,
    "hidden_act": "silu",
    "hidden_size": 3584,
    "initializer_range": 0.02,
    "intermediate_size": 18944,
    "max_position_embeddings": 32768,
    "max_window_layers": 28,
    "model_type": "qwen2",
    "num_attention_heads": 28,
    "num_hidden_layers": 28,
    "num_key_value_heads": 4,
    "rms_norm_eps": 1e-06,
    "rope_theta": 1000000.0,
    "sliding_window": 131072,
    "tie_word_embeddings": False,
    "torch_dtype": "bfloat16",
    "transformers_version": "4.41.2",
    "use_cache": True,
    "use_sliding_window": False,
    "vocab_size": 152064,
}

# Qwen/Qwen2-0.5B config.json (tied embeddings)
QWEN2_05B: dict[str, Any] = QWEN2_7B | {
    "eos_token_id": 151643,
    "hidden_size": 896,
    "intermediate_size": 4864,
    "max_position_embeddings": 131072,
    "max_window_layers": 24,
    "num_attention_heads": 14,
    "num_hidden_layers": 24,
    "num_key_value_heads": 2,
    "tie_word_embeddings": True,
    "transformers_version": "4.40.1",
    "vocab_size": 151936,
}

# deepseek-ai/deepseek-moe-16b-base config.json: DeepSeek-V3's MoE keys (routed and shared experts,
# first dense layers) with multi-head attention (V3 itself uses MLA: refused below)
DEEPSEEK_MOE_16B: dict[str, Any] = {
    "architectures": ["DeepseekForCausalLM"],
    "attention_bias": False,
    "attention_dropout": 0.0,
    "aux_loss_alpha": 0.001,
    "bos_token_id": 100000,
    "eos_token_id": 100001,
    "first_k_dense_replace": 1,
    "hidden_act": "silu",
    "hidden_size": 2048,
    "initializer_range": 0.02,
    "intermediate_size": 10944,
    "max_position_embeddings": 4096,
    "model_type": "deepseek",
    "moe_intermediate_size": 1408,
    "moe_layer_freq": 1,
    "n_routed_experts": 64,
    "n_shared_experts": 2,
    "norm_topk_prob": False,
    "num_attention_heads": 16,
    "num_experts_per_tok": 6,
    "num_hidden_layers": 28,
    "num_key_value_heads": 16,
    "pretraining_tp": 1,
    "rms_norm_eps": 1e-06,
    "rope_scaling": None,
    "rope_theta": 10000,
    "scoring_func": "softmax",
    "seq_aux": True,
    "tie_word_embeddings": False,
    "torch_dtype": "bfloat16",
    "transformers_version": "4.36.0",
    "use_cache": True,
    "vocab_size": 102400,
}

# EleutherAI/pythia-160m config.json (GPT-NeoX: parallel residual, untied embeddings, biases)
PYTHIA_160M: dict[str, Any] = {
    "architectures": ["GPTNeoXForCausalLM"],
    "bos_token_id": 0,
    "eos_token_id": 0,
    "hidden_act": "gelu",
    "hidden_size": 768,
    "initializer_range": 0.02,
    "intermediate_size": 3072,
    "layer_norm_eps": 1e-05,
    "max_position_embeddings": 2048,
    "model_type": "gpt_neox",
    "num_attention_heads": 12,
    "num_hidden_layers": 12,
    "rotary_emb_base": 10000,
    "rotary_pct": 0.25,
    "tie_word_embeddings": False,
    "torch_dtype": "float16",
    "transformers_version": "4.24.0",
    "use_cache": True,
    "use_parallel_residual": True,
    "vocab_size": 50304,
}

# deepseek-ai/DeepSeek-V3 config.json, the keys that matter here
DEEPSEEK_V3_KEYS: dict[str, Any] = {
    "model_type": "deepseek_v3",
    "hidden_size": 7168,
    "kv_lora_rank": 512,
    "q_lora_rank": 1536,
    "num_hidden_layers": 61,
}


def _experts(m: H.HFModel) -> tuple[int, ...]:
    """(experts, active, expert FFN, shared, dense layers) of a config's architecture."""
    a = m.architecture
    return a.experts, a.experts_active, a.expert_ffn_hidden, a.shared_experts, a.dense_layers


def test_llama2_7b_parameters_by_hand() -> None:
    # Per layer: attention 4 x 4096^2 = 67,108,864; MLP 3 x 4096 x 11008 = 135,266,304; two RMSNorms
    # 8,192: 202,383,360; x 32 = 6,476,267,520; embedding and head 2 x 32000 x 4096 = 262,144,000;
    # final norm 4,096: 6,738,415,616 (the figure; "7B").
    m = H.architecture(LLAMA2_7B)
    assert m.params == 6_738_415_616 == m.active_params
    assert (
        m.architecture.layers,
        m.architecture.hidden,
        m.architecture.heads,
        m.architecture.kv_heads,
        m.architecture.ffn_hidden,
        m.architecture.vocab,
    ) == (32, 4096, 32, 32, 11008, 32000)
    assert m.architecture.gated and not m.tied and m.architecture.seq_len == 4096 and m.sliding_window is None


def test_mistral_7b_gqa_and_its_sliding_window() -> None:
    # Attention 2 x 4096^2 + 2 x 4096 x 1024 (8 KV heads of 128) = 41,943,040; MLP 3 x 4096 x 14336
    # = 176,160,768; norms 8,192: 218,112,000 x 32 = 6,979,584,000 + 262,144,000 + 4,096
    # = 7,241,732,096 ("7.24B", Mistral AI's announcement).
    assert H.architecture(MISTRAL_7B).params == 7_241_732_096
    # A 4096-token window is full attention for sequences of 4096 tokens or fewer; the config's own
    # 32,768 positions would need sliding-window attention, which calc.transformer does not model.
    with pytest.raises(InputError, match=r"config.json: sliding_window.*seq_len=4096 or less"):
        H.from_hf_config(MISTRAL_7B)
    assert H.from_hf_config(MISTRAL_7B, seq_len=4096).seq_len == 4096
    assert H.from_hf_config(MISTRAL_7B, seq_len=2048).seq_len == 2048


def test_mixtral_total_and_active_by_hand() -> None:
    # Per layer: attention 41,943,040; 8 experts x 3 x 4096 x 14336 = 1,409,286,144; router 8 x 4096
    # = 32,768; norms 8,192: 1,451,270,144 x 32 = 46,440,644,608 + 262,144,000 + 4,096
    # = 46,702,792,704 ("46.7B"). Active, top-2: 2 experts 352,321,536: 394,305,536 x 32
    # = 12,617,777,152 + 262,148,096 = 12,879,925,248 ("12.9B").
    m = H.architecture(MIXTRAL_8X7B)
    assert (m.params, m.active_params) == (46_702_792_704, 12_879_925_248)
    assert _experts(m) == (8, 2, 14336, 0, 0)


def test_mixtral_plan_runs_the_active_experts() -> None:
    # Training FLOPs per token from the active weights: 6 x (L w + V h) with the layer's matrices only
    # (no norms, no embedding look-up): active 12,879,925,248 - 32 x 8,192 norms - 4,096 - 131,072,000
    # embedding = 12,748,587,008; x 6 = 76,491,522,048; attention 7 x 32 x 4096 x 4096 = 3,758,096,384;
    # 80,249,618,432 a token x 4096 tokens = 328,702,437,097,472 FLOPs a sequence.
    sc = H.from_hf_config(MIXTRAL_8X7B, seq_len=4096, gpu="H100-SXM", precision="bf16")
    # 16 GPUs: AdamW's 16 B a parameter (issue 39's default) for 46.7 B is 87 GiB a GPU over 8 shards.
    p = calc.plan(sc, gpus_per_job=16, expert_parallel=8, state_shards=16, batch_size=1)
    assert float(p.values["train_flops_per_example"]) == pytest.approx(328_702_437_097_472, rel=1e-12)
    assert sc.params == 46_702_792_704


def test_qwen2_counts_its_qkv_biases() -> None:
    # h 3584, 28 heads of 128, 4 KV heads (512): Q and O 3584^2 = 12,845,056 each, K and V 3584 x 512
    # = 1,835,008 each: 29,360,128; Q K V biases 3584 + 512 + 512 = 4,608; MLP 3 x 3584 x 18944
    # = 203,685,888; norms 7,168: 233,057,792 x 28 = 6,525,618,176; 2 x 152064 x 3584 = 1,089,994,752;
    # + 3,584 = 7,615,616,512 ("7.6B", Qwen2 report).
    assert H.architecture(QWEN2_7B).params == 7_615_616_512


def test_qwen2_half_billion_ties_its_embeddings() -> None:
    # h 896, 14 heads of 64, 2 KV heads (128): 2 x 802,816 + 2 x 114,688 = 1,835,008; biases 1,152;
    # MLP 3 x 896 x 4864 = 13,074,432; norms 1,792: 14,912,384 x 24 = 357,897,216; one tied
    # 151936 x 896 = 136,134,656; + 896 = 494,032,768 (Hugging Face's "494M").
    m = H.architecture(QWEN2_05B)
    assert m.tied and m.params == 494_032_768
    # Untied it would count the head again: 136,134,656 more.
    assert H.architecture(QWEN2_05B | {"tie_word_embeddings": False}).params == 494_032_768 + 136_134_656


def test_deepseek_moe_shared_experts_and_first_dense_layer_by_hand() -> None:
    # Attention 4 x 2048^2 = 16,777,216. Layer 1 dense: MLP 3 x 2048 x 10944 = 67,239,936 + norms
    # 4,096 = 84,021,248. Layers 2-28 (27): 64 routed + 2 shared experts of 3 x 2048 x 1408
    # = 8,650,752 each: 570,949,632; router 64 x 2048 = 131,072: 587,862,016 each, 15,872,274,432;
    # embedding and head 2 x 102400 x 2048 = 419,430,400; final norm 2,048: 16,375,728,128
    # ("16.4B"). Active: 6 routed + 2 shared = 69,206,016 + 131,072: 86,118,400 x 27
    # = 2,325,196,800 + 84,021,248 + 419,432,448 = 2,828,650,496 ("2.8B").
    m = H.architecture(DEEPSEEK_MOE_16B)
    assert (m.params, m.active_params) == (16_375_728_128, 2_828_650_496)
    assert _experts(m) == (64, 6, 1408, 2, 1)
    assert m.architecture.ffn_hidden == 10944


def test_pythia_gpt_neox_biases_layernorms_and_untied_head() -> None:
    # Per layer 12 h^2 weights (QKV 3h^2, dense h^2, MLP 2 x 4h^2) = 7,077,888; biases QKV 3h, dense h,
    # MLP 4h + h and two LayerNorms 4h: 13 h = 9,984; x 12 = 85,054,464; final LayerNorm 2h: 85,056,000
    # (the Pythia paper's non-embedding count); embedding and head 2 x 50304 x 768 = 77,266,944:
    # 162,322,944 (Biderman et al. 2023, Table 1). Parallel residual and 25 % rotary change no count.
    m = H.architecture(PYTHIA_160M)
    assert m.params == 162_322_944 and not m.architecture.gated and not m.tied
    assert H.architecture(PYTHIA_160M | {"use_parallel_residual": False}).params == 162_322_944


def test_bias_flags_each_add_their_term() -> None:
    # Llama with attention_bias: Q K V 4096 x 3 + O 4096 = 16,384 a layer x 32 = 524,288 more;
    # mlp_bias: gate and up 2 x 11008 + down 4096 = 26,112 a layer x 32 = 835,584 more.
    base = H.architecture(LLAMA2_7B).params
    assert H.architecture(LLAMA2_7B | {"attention_bias": True}).params == base + 524_288
    assert H.architecture(LLAMA2_7B | {"mlp_bias": True}).params == base + 835_584
    # GPT-NeoX without attention biases: 12 x (3h + h) = 36,864 fewer.
    assert H.architecture(PYTHIA_160M | {"attention_bias": False}).params == 162_322_944 - 36_864
    with pytest.raises(InputError, match=r"config.json: attention_bias.*mistral has no biases"):
        H.architecture(MISTRAL_7B | {"attention_bias": True})


def test_kv_heads_default_to_heads_as_transformers_does() -> None:
    cfg = {k: v for k, v in LLAMA2_7B.items() if k != "num_key_value_heads"}
    assert H.architecture(cfg).architecture.kv_heads == 32


def test_scenario_states_every_architecture_figure() -> None:
    sc = H.from_hf_config(LLAMA2_7B, gpu="H100-SXM")
    for k in H.ARCH_FIELDS:
        assert getattr(sc, k) is not None, k
    assert sc.model == "transformer" and sc.mlp == "gated" and sc.params == 6_738_415_616
    # The data figures follow the 4096-token window: vocab 32000 < 65,500 stores uint16 tokens,
    # 4096 x 2 = 8192 B; CPU 18.2 us per 8192 tokens x 4096/8192 = 9.1 us; a dataset of 20 tokens
    # a parameter: 20 x 6,738,415,616 / 4096 = 32,902,419.99 -> 32,902,420 sequences.
    assert sc.tensors == "tokens=4096:int64,labels=4096:int64"
    assert sc.example_bytes == "8192 B" and sc.cpu_seconds_per_example == "9.1e-06 s"
    assert sc.dataset_examples == 32_902_420 and sc.examples_per_file == 1_000_000
    assert "seq_len 4096 (max_position_embeddings)" in sc.description
    assert "20 per parameter" in sc.description


def test_the_plan_takes_nothing_from_another_models_preset() -> None:
    # model="transformer" stands only for the family's efficiency: no figure of Llama 3.2 1B (the
    # transformer preset) reaches the plan's figures or their sources.
    p = calc.plan(H.from_hf_config(LLAMA2_7B, gpu="H100-SXM", precision="bf16", gpus_per_job=8, state_shards=8))
    used = ("architecture", "params", "train_flops_per_example", "activation_bytes_per_example", "example_bytes")
    for k in (*used, "tensors", "dataset_examples", "cpu_seconds_per_example"):
        assert "Llama-3.2" not in p.sources.get(k, ""), k
        assert "models.yaml transformer" not in p.sources.get(k, ""), k
    assert float(p.inputs["params"]) == 6_738_415_616
    # 6 x (32 x 202,375,168 + 32000 x 4096) = 6 x 6,607,077,376 = 39,642,464,256; + 7 x 32 x 4096 x 4096
    # = 3,758,096,384: 43,400,560,640 a token x 4096 = 177,768,696,381,440 a sequence.
    assert float(p.values["train_flops_per_example"]) == pytest.approx(177_768_696_381_440, rel=1e-12)


def test_large_vocabularies_store_int32_tokens() -> None:
    # Qwen2's 152,064 tokens need int32: 4096 x 4 = 16,384 B a sequence.
    sc = H.from_hf_config(QWEN2_7B, seq_len=4096)
    assert sc.example_bytes == "16384 B"
    assert float(T.token_bytes(65_499)) == 2.0 and float(T.token_bytes(65_500)) == 4.0


def test_given_inputs_win_and_architecture_inputs_are_refused() -> None:
    sc = H.from_hf_config(LLAMA2_7B, seq_len=2048, dataset_bytes="1 TB", name="mine")
    assert sc.name == "mine" and sc.dataset_examples is None and sc.dataset_bytes == "1 TB"
    assert sc.tensors == "tokens=2048:int64,labels=2048:int64" and "seq_len 2048 (given)" in sc.description
    with pytest.raises(InputError, match=r"hidden: comes from the Hugging Face config"):
        H.from_hf_config(LLAMA2_7B, hidden=1024)
    with pytest.raises(InputError, match=r"gpus_per_jobs"):
        H.from_hf_config(LLAMA2_7B, gpus_per_jobs=8)


@pytest.mark.parametrize(
    ("change", "field", "message"),
    [
        ({"model_type": "deepseek_v3"}, "model_type", "multi-head latent attention"),
        ({"model_type": "t5"}, "model_type", "encoder-decoder"),
        ({"model_type": "gemma"}, "model_type", "accepted: llama, mistral"),
        ({"model_type": None}, "model_type", "missing"),
        ({"kv_lora_rank": 512}, "kv_lora_rank", "multi-head latent attention"),
        ({"quantization_config": {"bits": 4}}, "quantization_config", "quantised"),
        ({"text_config": {}}, "text_config", "multimodal"),
        ({"my_new_key": 1}, "my_new_key", "not a key Feedrate reads"),
        ({"head_dim": 256}, "head_dim", "hidden = heads x head_dim"),
        ({"num_key_value_heads": 5}, "num_key_value_heads", "must divide num_attention_heads"),
        ({"num_attention_heads": 30}, "num_attention_heads", "must divide hidden_size"),
        ({"hidden_size": "4096"}, "hidden_size", "whole number"),
        ({"num_hidden_layers": 0}, "num_hidden_layers", "at least 1"),
        ({"vocab_size": True}, "vocab_size", "whole number"),
        ({"tie_word_embeddings": "no"}, "tie_word_embeddings", "true or false"),
        ({"is_encoder_decoder": True}, "is_encoder_decoder", "encoder-decoder"),
        ({"hidden_act": 3}, "hidden_act", "activation's name"),
        ({"num_local_experts": 8}, "num_local_experts", "experts are not read for llama"),
    ],
)
def test_refusals_name_the_key(change: dict[str, Any], field: str, message: str) -> None:
    with pytest.raises(InputError, match=rf"config.json: {field}.*{message}"):
        H.architecture(LLAMA2_7B | change)


def test_missing_keys_and_moe_rules_are_refused_by_name() -> None:
    cfg = {k: v for k, v in LLAMA2_7B.items() if k != "intermediate_size"}
    with pytest.raises(InputError, match=r"config.json: intermediate_size.*missing"):
        H.architecture(cfg)
    with pytest.raises(InputError, match=r"config.json: moe_layer_freq.*only 1"):
        H.architecture(DEEPSEEK_MOE_16B | {"moe_layer_freq": 2})
    with pytest.raises(InputError, match=r"config.json: first_k_dense_replace.*at most num_hidden_layers"):
        H.architecture(DEEPSEEK_MOE_16B | {"first_k_dense_replace": 29})
    with pytest.raises(InputError, match=r"config.json: model_type.*deepseek_v3.*multi-head latent"):
        H.architecture(DEEPSEEK_V3_KEYS)
    # A DeepSeek config with no routed experts is a dense model.
    dense = DEEPSEEK_MOE_16B | {"n_routed_experts": None}
    assert H.architecture(dense).architecture.experts == 0
    # Qwen2's sliding window applies only when switched on.
    on = QWEN2_7B | {"use_sliding_window": True, "sliding_window": 4096}
    with pytest.raises(InputError, match=r"config.json: sliding_window"):
        H.from_hf_config(on, seq_len=8192)
    assert H.from_hf_config(on, seq_len=4096).seq_len == 4096


def test_a_path_a_folder_or_text_errors(tmp_path: Path) -> None:
    folder = tmp_path / "Llama-2-7b-hf"
    folder.mkdir()
    (folder / "config.json").write_text(json.dumps(LLAMA2_7B))
    assert calc.from_hf_config(folder).name == "Llama-2-7b-hf"
    assert calc.from_hf_config(folder / "config.json").params == 6_738_415_616
    other = tmp_path / "pythia.json"
    other.write_text(json.dumps(PYTHIA_160M))
    assert calc.from_hf_config(other).name == "pythia"
    with pytest.raises(InputError, match=r"hf_config: cannot read"):
        calc.from_hf_config(tmp_path / "absent.json")
    (tmp_path / "bad.json").write_text("{not json")
    with pytest.raises(InputError, match=r"hf_config: bad.json is not JSON"):
        calc.from_hf_config(tmp_path / "bad.json")
    (tmp_path / "list.json").write_text("[1, 2]")
    with pytest.raises(InputError, match=r"expected a JSON object"):
        calc.from_hf_config(tmp_path / "list.json")


def _refused(cfg: dict[str, Any], **inputs: Any) -> InputError:
    with pytest.raises(InputError) as e:
        H.from_hf_config(cfg, **inputs)
    return e.value


def test_refusals_name_the_key_and_say_what_is_accepted_exactly() -> None:
    e = _refused(LLAMA2_7B | {"num_attention_heads": 30})
    assert (e.field, e.message) == ("config.json: num_attention_heads", "must divide hidden_size (4096), got 30")
    e = _refused(LLAMA2_7B | {"num_key_value_heads": 5})
    assert (e.field, e.message) == ("config.json: num_key_value_heads", "must divide num_attention_heads (32), got 5")
    e = _refused(LLAMA2_7B | {"head_dim": 256})
    assert e.field == "config.json: head_dim"
    assert (
        e.message
        == "256 is not hidden_size / num_attention_heads = 128: calc.transformer assumes hidden = heads x head_dim"
    )
    accepted = "accepted: llama, mistral, mixtral, qwen2, deepseek, gpt_neox"
    for bad in ("", 3, None):
        e = _refused(LLAMA2_7B | {"model_type": bad})
        assert (e.field, e.message) == ("config.json: model_type", f"missing; {accepted}")
    e = _refused(LLAMA2_7B | {"model_type": "gemma"})
    assert (e.field, e.message) == ("config.json: model_type", f"gemma is not a family Feedrate reads; {accepted}")
    e = _refused(LLAMA2_7B | {"model_type": "t5"})
    assert (e.field, e.message) == ("config.json: model_type", "t5 is an encoder-decoder")
    e = _refused(LLAMA2_7B | {"is_encoder_decoder": True})
    assert (e.field, e.message) == (
        "config.json: is_encoder_decoder",
        "an encoder-decoder is not modelled (decoders only)",
    )
    e = _refused(LLAMA2_7B | {"hidden_act": 3})
    assert (e.field, e.message) == ("config.json: hidden_act", "expected the activation's name, got 3")
    e = _refused(LLAMA2_7B | {"my_new_key": 1})
    assert e.field == "config.json: my_new_key" and e.message.startswith(
        "not a key Feedrate reads or knows to change no count; remove it if it does not change the architecture "
        "(read: model_type, hidden_size, num_hidden_layers, "
    )
    e = _refused({k: v for k, v in LLAMA2_7B.items() if k != "vocab_size"})
    assert (e.field, e.message) == ("config.json: vocab_size", "missing; llama configs state it")
    e = _refused(DEEPSEEK_MOE_16B | {"moe_layer_freq": 2})
    assert e.message == "only 1 (every layer past the dense ones a MoE layer) is modelled"
    e = _refused(DEEPSEEK_MOE_16B | {"first_k_dense_replace": 29})
    assert (e.field, e.message) == (
        "config.json: first_k_dense_replace",
        "must be at most num_hidden_layers (28), got 29",
    )
    e = _refused(MISTRAL_7B)
    assert e.field == "config.json: sliding_window" and e.message == (
        "attention sees 4096 tokens of a 32768-token sequence: sliding-window attention is not modelled; "
        "give seq_len=4096 or less"
    )
    e = _refused(LLAMA2_7B, gpus_per_jobs=8)
    assert e.field == "gpus_per_jobs" and "gpus_per_job" in e.message
    for key in ("num_local_experts", "n_routed_experts", "n_shared_experts", "moe_intermediate_size"):
        e = _refused(LLAMA2_7B | {key: 2})
        assert (e.field, e.message) == (
            f"config.json: {key}",
            "experts are not read for llama (accepted in: mixtral, deepseek)",
        )
    for key in ("attention_bias", "mlp_bias"):
        e = _refused(MISTRAL_7B | {key: True}, seq_len=4096)
        assert (e.field, e.message) == (f"config.json: {key}", "mistral has no biases in transformers; expected false")


def test_keys_left_out_take_the_families_documented_defaults() -> None:
    # transformers' config classes: untied embeddings, multi-query allowed, no sliding window unless
    # Qwen2's use_sliding_window, DeepSeek's no shared experts, no dense layers, every layer MoE.
    def without(cfg: dict[str, Any], *keys: str) -> dict[str, Any]:
        return {k: v for k, v in cfg.items() if k not in keys}

    assert H.architecture(without(LLAMA2_7B, "tie_word_embeddings", "hidden_act")).params == 6_738_415_616
    mqa = H.architecture(LLAMA2_7B | {"num_key_value_heads": 1})
    assert mqa.architecture.kv_heads == 1  # multi-query: K and V of one 128-wide head
    # K and V shrink from 2 x 4096 x 4096 to 2 x 4096 x 128 a layer: 32 x 32,505,856 = 1,040,187,392 fewer.
    assert mqa.params == 6_738_415_616 - 1_040_187_392
    qwen = H.architecture(without(QWEN2_7B, "use_sliding_window") | {"sliding_window": 4096})
    assert qwen.sliding_window is None and H.architecture(QWEN2_7B).sliding_window is None
    assert H.architecture(QWEN2_7B | {"use_sliding_window": True, "sliding_window": 4096}).sliding_window == 4096
    ds = H.architecture(without(DEEPSEEK_MOE_16B, "n_shared_experts", "first_k_dense_replace", "moe_layer_freq"))
    assert (ds.architecture.shared_experts, ds.architecture.dense_layers) == (0, 0)
    zero = H.architecture(DEEPSEEK_MOE_16B | {"n_shared_experts": 0, "first_k_dense_replace": 0})
    assert (zero.architecture.shared_experts, zero.architecture.dense_layers) == (0, 0)
    # Every layer dense (first_k_dense_replace = layers): 28 x 84,021,248 + 419,430,400 + 2,048.
    assert H.architecture(DEEPSEEK_MOE_16B | {"first_k_dense_replace": 28}).params == 2_772_027_392
    # DeepSeek's attention_bias: Q K V O biases, 4 x 2048 a layer x 28 = 229,376 more.
    assert H.architecture(DEEPSEEK_MOE_16B | {"attention_bias": True}).params == 16_375_728_128 + 229_376
    assert H.architecture(LLAMA2_7B).model_type == "llama"
    dense = H.from_hf_config(LLAMA2_7B)
    assert (dense.experts, dense.experts_active, dense.expert_ffn_hidden, dense.shared_experts, dense.dense_layers) == (
        0,
    ) * 5


def test_the_description_says_what_it_took() -> None:
    assert H.from_hf_config(LLAMA2_7B).description == (
        "llama from a Hugging Face config: 6,738,415,616 parameters, 32 layers x 4096 hidden; seq_len 4096 "
        "(max_position_embeddings); 2-byte tokens (uint16, Megatron-LM); dataset 32,902,420 sequences "
        "(134,768,312,320 tokens, 20 per parameter, Hoffmann et al. 2022; give dataset_examples or dataset_bytes)"
    )
    # Qwen2's 152,064 tokens are int32; 20 x 7,615,616,512 / 4096 = 37,185,627.5 -> 37,185,628 sequences.
    assert H.from_hf_config(QWEN2_7B, seq_len=4096).description.startswith(
        "qwen2 from a Hugging Face config: 7,615,616,512 parameters, 28 layers x 3584 hidden; seq_len 4096 (given); "
        "4-byte tokens (int32, Megatron-LM); dataset 37,185,628 sequences"
    )
    mixtral = H.from_hf_config(MIXTRAL_8X7B, seq_len=4096, example_bytes="8 KiB", dataset_examples=10**6)
    assert mixtral.description == (
        "mixtral from a Hugging Face config: 46,702,792,704 parameters (12,879,925,248 active), 32 layers x 4096 "
        "hidden; seq_len 4096 (given)"
    )
    assert H.from_hf_config(LLAMA2_7B, description="mine").description == "mine"
    assert H.from_hf_config(LLAMA2_7B, examples_per_file=5).examples_per_file == 5


def test_names_of_a_mapping() -> None:
    assert H.load(LLAMA2_7B | {"_name_or_path": "meta-llama/Llama-2-7b-hf/"})[1] == "Llama-2-7b-hf"
    assert H.load(LLAMA2_7B)[1] == "llama"
    assert H.load({"hidden_size": 1})[1] == "hf-config"


def test_what_the_scenario_and_the_file_errors_say(tmp_path: Path) -> None:
    assert H.from_hf_config(PYTHIA_160M).mlp == "plain" and H.from_hf_config(LLAMA2_7B).mlp == "gated"
    assert H.architecture(PYTHIA_160M).architecture.source == "Hugging Face config (gpt_neox)"
    e = _refused(DEEPSEEK_MOE_16B | {"moe_layer_freq": 2})
    assert e.field == "config.json: moe_layer_freq"
    (tmp_path / "list.json").write_text("[1, 2]")
    e = _refused(tmp_path / "list.json")  # type: ignore[arg-type]
    assert (e.field, e.message) == ("hf_config", "list.json holds a list; expected a JSON object")
    e = _refused(tmp_path / "absent.json")  # type: ignore[arg-type]
    assert e.field == "hf_config" and e.message.startswith(f"cannot read {str(tmp_path / 'absent.json')!r}: ")
