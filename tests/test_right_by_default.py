"""Your own job, right by default (issue 39): what a newcomer types first is right or says what it
assumed. Each test is one repro of the issue, with the number main gave in its comment."""

from __future__ import annotations

import json
import math
import os
import shutil
from pathlib import Path

import pytest
import yaml

import calc
from calc import cli
from calc.errors import DoesNotFitError, InputError

H100 = {"gpu": "H100-SXM", "precision": "bf16"}
LLAMA2_13B = {"model": "transformer", "layers": 40, "hidden": 5120, "heads": 40, "seq_len": 4096}


def test_a_transformer_by_four_figures_is_the_model_stated() -> None:
    """main: kv_heads 8, FFN 8192 and vocab 128,256 came from Llama 3.2 1B: 8.86 B parameters,
    checkpoints 115.6 GiB, no warning. Now vocab (no rule gives it) is asked for, and with it the
    model is Llama 2 13B: 13,015,864,320 parameters (40 x (2 x 5120^2 x 2 + 3 x 5120 x 13,824 +
    2 x 5120) + 2 x 32,000 x 5120 + 5120), 14 B a parameter = 169.70 GiB."""
    with pytest.raises(InputError) as e:
        calc.plan(**LLAMA2_13B, **H100, gpus_per_job=8, zero_stage=3)
    assert e.value.field == "vocab" and "no rule gives them" in e.value.message
    p = calc.plan(**LLAMA2_13B, vocab=32000, **H100, gpus_per_job=8, zero_stage=3, checkpoint_interval_s="1h")
    assert p.model_params == 13_015_864_320
    assert p.checkpoint_bytes / 2**30 == pytest.approx(13_015_864_320 * 14 / 2**30)
    assert p.formatted("checkpoint_bytes") == "169.7 GiB"
    said = next(w for w in p.warnings if "stated by its figures" in w)
    for assumed in ("kv_heads 40 (= heads", "ffn_hidden 13,824 (the gated rule", "mlp gated"):
        assert assumed in said
    assert "Llama-3.2-1B" not in p.sources["architecture"]  # the preset's source is not this model's


def test_a_named_preset_with_a_new_size_names_what_it_kept() -> None:
    p = calc.plan(model="llama3_8b", hidden=5120, heads=40, **H100, gpus_per_job=8, zero_stage=3)
    kept = next(w for w in p.warnings if "kept from the llama3_8b preset" in w)
    assert "kv_heads 8" in kept and "ffn_hidden 14,336" in kept and "vocab 128,256" in kept
    assert not [
        w
        for w in calc.plan(model="llama3_8b", seq_len=4096, **H100, gpus_per_job=8, zero_stage=3).warnings
        if "kept from" in w
    ]  # the sequence is how it trains, not its size


def test_model_params_is_an_output() -> None:
    """main: no output showed the parameter count the plan used. Llama 2 7B's published count."""
    assert "model_params" in calc.OUTPUTS
    p = calc.plan(model="gpt_7b", **H100, gpus_per_job=8, zero_stage=3)
    assert p.model_params == 6_738_415_616
    assert p.formatted("model_params") == "6,738,415,616 parameters"


def test_a_transformer_defaults_to_adamw_and_says_so() -> None:
    """main: SGD with momentum (12 B a parameter) fit gpt_7b unsharded on one 80 GB H100 (state
    75.31 GiB). AdamW's 16 B: 6,738,415,616 x 16 = 100.4 GiB, which does not fit."""
    with pytest.raises(DoesNotFitError) as e:
        calc.plan(model="gpt_7b", **H100)
    assert "bf16/adamw" in e.value.message and "state 100.4 GiB" in e.value.message
    p = calc.plan(model="gpt_7b", **H100, gpus_per_job=8, zero_stage=3)
    assert any(w.startswith("optimizer not given: adamw, the default for a transformer model") for w in p.warnings)
    cnn = calc.plan("resnet50-8xh100-imagenet")
    assert cnn.inputs["bytes_per_param"] == 12.0  # a CNN keeps SGD with momentum
    assert not [w for w in calc.plan("beast-imagenet-4xv100").warnings if "optimizer not given" in w]


def test_a_pipeline_bubble_over_a_tenth_is_said() -> None:
    """main: PP 2 with one micro-batch idled 50 % of the step with no word. (2 - 1) / (1 + 1)."""
    kw = {"model": "llama3_8b", **H100, "gpus_per_job": 8, "pipeline_parallel": 2, "zero_stage": 1}
    p = calc.plan(**kw, gradient_accumulation=1)
    assert p.pipeline_bubble == pytest.approx(0.5)
    said = next(w for w in p.warnings if w.startswith("Pipeline bubble: 50%"))
    assert "9 or more micro-batches" in said  # (p - 1) x 0.9 / 0.1 = 9
    nine = calc.plan(**kw, gradient_accumulation=9)  # 1 / (9 + 1) = 10 %: at the share, not over it
    assert nine.pipeline_bubble == pytest.approx(0.1)
    assert not [w for w in nine.warnings if w.startswith("Pipeline bubble")]


@pytest.mark.parametrize("seq", [2048, 4096, 8192])
def test_token_examples_follow_the_sequence(seq: int) -> None:
    """main: an example stayed 8,192 tokens (32,768 B) at every seq_len, so 9 TB was 274.7 M
    examples at each and the epoch grew with the sequence. Now seq x 4 B (vocab 128,256 > 65,500)."""
    p = calc.plan(model="llama3_8b", seq_len=seq, **H100, gpus_per_job=8, zero_stage=1, dataset_bytes="9 TB")
    assert p.inputs["example_bytes"] == seq * 4
    assert p.example_tensor_bytes == 2 * seq * 8  # tokens and labels, int64 in the loader
    assert p.inputs["dataset_examples"] * seq == pytest.approx(9e12 / 4, rel=1e-9)  # the same tokens


def test_token_width_follows_the_vocabulary() -> None:
    small = calc.plan(**LLAMA2_13B, vocab=32000, **H100, gpus_per_job=8, zero_stage=3)
    assert small.inputs["example_bytes"] == 4096 * 2  # uint16: 32,000 < 65,500


def test_tokens_to_train_set_the_run_length() -> None:
    """main: no input for it. 136 B tokens at the plan's rate, and the milestones it keeps."""
    kw = {"run_length_s": None}
    p = calc.plan("llama3-8b-pretrain-8xh100", **kw, train_tokens="136e9")
    rate = p.per_gpu_samples_per_s * 8 * 8192  # tokens/s of the job
    assert p.run_length_used_s == pytest.approx(136e9 / rate)
    assert p.checkpoint_milestones == math.floor(p.run_length_used_s / 86400)
    with pytest.raises(InputError) as e:
        calc.plan("llama3-8b-pretrain-8xh100", train_tokens="1T")  # beside its run_length_s
    assert e.value.field == "train_tokens"
    with pytest.raises(InputError) as e:
        calc.plan("beast-imagenet-4xv100", train_tokens="1T")
    assert e.value.field == "train_tokens" and "run_length_s" in e.value.message


@pytest.mark.parametrize(
    ("layout", "field"),
    [
        ({"pipeline_parallel": 2, "virtual_pipeline_stages": 3}, "virtual_pipeline_stages"),  # 32 / 2 = 16, not / 3
        ({"pipeline_parallel": 1, "virtual_pipeline_stages": 2}, "virtual_pipeline_stages"),  # nothing to interleave
    ],
)
def test_interleaved_pipelines_megatron_refuses(layout: dict[str, int], field: str) -> None:
    """main: accepted, with a 5.3 % and a 0 % bubble."""
    with pytest.raises(InputError) as e:
        calc.plan(model="llama3_8b", **H100, gpus_per_job=8, gradient_accumulation=6, zero_stage=1, **layout)
    assert e.value.field == field and "Megatron-LM" in e.value.message


def test_an_uneven_pipeline_names_the_flags_megatron_needs() -> None:
    """main: 32 layers over 3 stages, no word. Megatron splits 33 / 3 with the embedding counted."""
    p = calc.plan(
        model="llama3_8b", **H100, gpus_per_job=24, pipeline_parallel=3, gradient_accumulation=24, zero_stage=1
    )
    assert any("--account-for-embedding-in-pipeline-split" in w and "33 / 3 = 11" in w for w in p.warnings)


# ---------------------------------------------------------------- the command line


GPT_7B_SETS = [x for kv in ("model=gpt_7b", "gpu=H100-SXM", "precision=bf16", "zero_stage=3", "gpus_per_job=8")
               for x in ("--set", kv)]  # fmt: skip
"""A 7B model on 8 H100s, sharded, as --set pairs: the command line's newcomer."""


def test_the_command_line_starts_from_nothing_when_no_preset_is_named() -> None:
    """main: --set on no preset edited beast-imagenet-4xv100 and kept its measured step (model
    state 98 MiB for a 7B model)."""
    argv = ["plan", *GPT_7B_SETS]
    assert json.loads(cli.run([*argv, "--format", "json"]))["model_state_bytes"] == pytest.approx(
        6_738_415_616 * 16 / 8  # AdamW's 16 B, ZeRO-3 over 8 GPUs
    )
    text = cli.run(argv)
    assert text.startswith("custom: gpt_7b on 8 x H100-SXM, bf16") and "beast" not in text
    assert "step time from model;" in text  # main: "from re-projected measurement" (V100's measured step)
    assert cli.run(["plan"]).startswith("beast-imagenet-4xv100:")  # nothing typed: the article's example


def test_the_command_line_reads_a_scenario_file_blank_and_a_new_name(tmp_path: Path) -> None:
    """main: each refused as "unknown scenario"."""
    f = tmp_path / "mine.yaml"
    f.write_text(calc.scenario("vit-b16-a100", gpus_per_job=16).to_yaml())
    assert cli.run(["plan", str(f)]).startswith("vit-b16-a100-edited: vit_b16 on 16 x A100-SXM4-80GB")
    with pytest.raises(InputError) as e:
        cli.run(["plan", "blank", "--set", "params=1e8"])
    assert e.value.field == "model" and "missing" in e.value.message  # a blank model asks for its figures
    assert cli.run(["plan", "myjob", *GPT_7B_SETS]).startswith("myjob: gpt_7b on 8 x H100-SXM")
    with pytest.raises(InputError) as e:
        cli.run(["plan", "beast-imagenet-4xv10", "--set", "jobs=2"])  # a near miss is never planned as new
    assert "did you mean beast-imagenet-4xv100" in e.value.message


def test_max_gpus_honours_the_format() -> None:
    """main: --format json printed "34 GPUs of mlperf-unet3d-h100 at 90% utilisation"."""
    argv = ["max-gpus", "mlperf-unet3d-h100", "--read-bytes-per-s", "100 GB/s"]
    assert json.loads(cli.run([*argv, "--format", "json"]))["gpus"] == 34
    assert yaml.safe_load(cli.run([*argv, "--format", "yaml"]))["gpus"] == 34
    assert "34" in cli.run([*argv, "--format", "csv"]).splitlines()[1]


def test_explain_honours_the_format() -> None:
    rows = json.loads(cli.run(["explain", "beast-imagenet-4xv100", "--format", "json"]))
    read = next(r for r in rows if r["output"] == "read_bytes_per_s")
    assert read["value"] == pytest.approx(calc.plan("beast-imagenet-4xv100").read_bytes_per_s)


@pytest.mark.parametrize("form", cli.FORMATS)
def test_recommend_prints_no_nan(form: str) -> None:
    """main: the storage levers under `recommend beast-nfs-shop` printed NaN."""
    out = cli.run(["recommend", "beast-nfs-shop", "--format", form])
    assert "NaN" not in out and " nan" not in out.lower().replace("nan-", "")


def test_own_storage_without_sources_names_the_field(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """main: "storage: missing" (the file's field was lost)."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "nas.yaml").write_text(
        "lab-nas: {label: NAS, kind: nfs, unit: system, iops: 600000, read_bandwidth: 22 GB/s, latency: 0.5 ms,"
        " capacity: 150 TB, purchase_price: 180000, site: on-prem}\n"
    )
    with pytest.raises(InputError) as e:
        calc.plan("beast-imagenet-4xv100", storage="nas.yaml")
    assert e.value.field == "storage"
    assert e.value.message.startswith("nas.yaml: lab-nas: sources: missing")


@pytest.mark.skipif(
    shutil.which("chromium") is None and not os.environ.get("BROWSER_PATH"),
    reason="kaleido needs a Chrome or Chromium (apt-get install chromium)",
)
def test_a_figure_saves_as_png(tmp_path: Path) -> None:
    """main: write_image raised "Image export requires the Kaleido package" (not installed)."""
    p = calc.plan("beast-imagenet-4xv100")
    out = tmp_path / "map.png"
    calc.plots.storage_map(p, calc.recommend(p)).write_image(out, width=1280, height=800)
    assert out.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_a_sweep_keeps_its_inputs_and_costs_each_row() -> None:
    """main: sweeping cpu_cores_per_node gave [27.07, 27.07] (the output of the same name) and no cost."""
    df = calc.sweep("beast-imagenet-4xv100", cpu_cores_per_node=[4, 8])
    assert df["cpu_cores_per_node"].tolist() == [4, 8]
    needed = calc.plan("beast-imagenet-4xv100").cpu_cores_per_node  # the cores do not change what is needed
    assert df["cpu_cores_per_node_output"].tolist() == [pytest.approx(needed)] * 2
    costed = calc.sweep("resnet50-8xh100-imagenet", cost=True, gpus_per_job=[8, 16])
    # 8 and 16 H100s at gpus.yaml's on-demand price per GPU-hour, 720 h a month
    price = calc.gpus()["H100-SXM"].price_per_hour
    assert costed["gpu_usd_per_month"].tolist() == pytest.approx([8 * price * 720, 16 * price * 720])
    for _, row in costed.iterrows():
        rec = calc.recommend("resnet50-8xh100-imagenet", gpus_per_job=int(row["gpus_per_job"]))
        best = rec[rec["feasible"]].iloc[0]
        assert row["storage"] == best["option"]
        assert row["storage_usd_per_month"] == pytest.approx(best["monthly_total_usd"])


def test_fewest_workers_says_when_no_count_suffices() -> None:
    """main: -1 (explained only in the docstring)."""
    with pytest.raises(InputError) as e:
        calc.fewest_workers("luna-unet3d-1080ti")
    assert e.value.field == "num_workers" and "bound by storage" in e.value.message


def test_a_flat_monthly_fee_for_a_system_already_paid_for(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """main: no such figure; a system already bought cost $0 a month, or had to be given a price."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "paid.yaml").write_text(
        "lab-nas: {label: NAS, kind: nfs, unit: system, iops: 600000, read_bandwidth: 22 GB/s, latency: 0.5 ms,"
        " capacity: 150 TB, max_units: 1, purchase_price: 0, monthly_fee: 2500, site: on-prem, verified: I,"
        " write_bandwidth: 12 GB/s, sources: {iops: q, read_bandwidth: q, write_bandwidth: q, latency: q, capacity: q,"
        " max_units: q, purchase_price: paid,"
        " monthly_fee: the support contract}}\n"
    )
    rec = calc.recommend("beast-imagenet-4xv100", storage="paid.yaml", site="on-prem")
    row = rec.set_index("option").loc["paid.yaml"]
    assert row["feasible"] and row["purchase_usd"] == 0
    assert row["monthly_rent_usd"] == 2500 and row["monthly_total_usd"] == 2500  # the fee, whatever else
    assert "$2,500 a month flat" in row["price_note"]


# ---------------------------------------------------------------- layouts and counts


def test_gpu_group_counts_context_parallelism_the_shard_group_and_experts() -> None:
    from calc.sizing import gpu_group

    base = calc.scenario("llama3-8b-pretrain-8xh100")
    assert gpu_group(base.replace(tensor_parallel=2, context_parallel=2)) == 4  # 2 x 1 x lcm(2, 1, 1)
    assert gpu_group(base.replace(tensor_parallel=2, context_parallel=2, shard_group=8)) == 2 * 8  # lcm(2, 8) = 8
    assert gpu_group(base.replace(context_parallel=3, shard_group=2)) == 6  # lcm(3, 2)


def test_max_gpus_tries_only_layouts_a_plan_takes() -> None:
    from calc.sizing import gpu_group

    """main: context parallelism left out of the grouping: "tensor x pipeline x context parallel = 2 must
    divide gpus_per_job = 32239", a count the user never gave."""
    kw = {"read_bytes_per_s": "1 GB/s", "context_parallel": 2}
    n = calc.max_gpus("llama3-8b-pretrain-8xh100", **kw)
    assert n > 0 and n % 2 == 0  # whole tensor x pipeline x context-parallel groups
    fed = calc.plan("llama3-8b-pretrain-8xh100", storage_bytes_per_s="1 GB/s", context_parallel=2, gpus_per_job=n)
    assert fed.stages["storage"] >= fed.per_gpu_samples_per_s * (1 - 1e-9)  # the reads are fed at n
    for kw2 in ({"shard_group": 8}, {"tensor_parallel": 2}):
        m = calc.max_gpus("llama3-8b-pretrain-8xh100", **kw, **kw2)
        assert m % gpu_group(calc.scenario("llama3-8b-pretrain-8xh100", context_parallel=2, **kw2)) == 0


def test_a_clusters_shared_jobs_input_is_refused_by_name() -> None:
    """main: TypeError: as_cluster() got multiple values for argument 'jobs'."""
    with pytest.raises(InputError) as e:
        calc.cluster({"beast-nfs-shop": 1}, jobs=3)
    assert e.value.field == "jobs" and "cannot be a shared input" in e.value.message


def test_max_gpus_says_what_binds_so_two_routes_that_differ_say_why(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """main: 22 GB/s and 600,000 reads/s given alone, and the same figures as a storage YAML with a
    per-client cap of 11.25 GB/s, gave different counts with no word why. Each count now says what the
    next GPUs would lack: 3D U-Net on one node reads at the node's cap in the YAML (11.25 GB/s), the
    whole 22 GB/s alone."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "nas.yaml").write_text(
        "lab-nas: {label: NAS, kind: nfs, unit: system, iops: 600000, iops_request: 4 KiB, read_bandwidth: 22 GB/s,"
        " write_bandwidth: 12 GB/s, latency: 0.5 ms, capacity: 150 TB, max_units: 1, client_bandwidth: 11.25 GB/s,"
        " purchase_price: 180000, site: on-prem, verified: I, sources: {iops: q, read_bandwidth: q,"
        " write_bandwidth: q, latency: q, capacity: q, max_units: q, client_bandwidth: q, purchase_price: q}}\n"
    )
    alone = calc.max_gpus("mlperf-unet3d-h100", read_bytes_per_s="22 GB/s", read_iops=600000)
    as_yaml = calc.max_gpus("mlperf-unet3d-h100", storage="nas.yaml")
    assert int(as_yaml) < int(alone)
    assert "bandwidth: 22 GB/s supplied" in alone.why and "bandwidth: 11.25 GB/s supplied" in as_yaml.why
    assert calc.max_gpus("mlperf-unet3d-h100", read_bytes_per_s="100 GB/s") == 34  # still an int
