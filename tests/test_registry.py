"""The output registry and the guard on explained formulas.

Every output is declared once (``calc.registry``), so adding one touches one declaration and
its formula. The guard: every formula that ``explain()`` shows as arithmetic, re-evaluated
from the numbers it shows (4 significant figures, as displayed), must give the value it shows.
A formula text that drifted from the code (the Young-Daly text once divided the checkpoint by
the read bandwidth while the code used the save time) fails here.
"""

from __future__ import annotations

import ast
import math
import re
from pathlib import Path

import pytest

import calc
from calc.explain import formula, render_formula
from calc.formula import FORMULAS
from calc.plan import Plan
from calc.registry import BY_STAGE, OUTPUTS, STATES, Output, stage
from calc.stages import CHECKPOINT_OUTPUTS, UNLIMITED

FUNCS = {"sqrt": math.sqrt, "min": min, "max": max, "floor": math.floor, "ceil": math.ceil}
# Words that annotate a term with its unit in a formula text ("x 16 batches", "x 2 kept").
UNIT_WORDS = re.compile(r"\b(batches|pinned|GPUs|kept|reads/example|ranks|B)\b")
# Trailing remarks in brackets that are prose, not arithmetic.
REMARKS = re.compile(r"\((0 = no MTBF given|no cache is warm yet|the article's bound[^)]*)\)")


def _shown(v: float) -> float:
    """A number as the page shows it: 4 significant figures."""
    return float(f"{v:.4g}")


def arithmetic(p: Plan, name: str) -> tuple[str, float] | None:
    """The formula of ``name`` evaluated from the plan's shown numbers; None when it is prose or a rule."""
    symbolic, _ = render_formula(p, formula(p, name))
    expr = REMARKS.sub("", UNIT_WORDS.sub("", symbolic)).replace(" x ", " * ").strip()
    try:
        tree = ast.parse(expr, mode="eval")
    except SyntaxError:
        return None
    allowed = (ast.Expression, ast.BinOp, ast.Call, ast.Name, ast.Constant, ast.Load, ast.UnaryOp)
    allowed += (ast.Add, ast.Sub, ast.Mult, ast.Div, ast.USub)
    if not all(isinstance(n, allowed) for n in ast.walk(tree)):
        return None
    env: dict[str, float] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Name) and node.id not in FUNCS:
            if node.id in p.values:
                env[node.id] = _shown(float(p.values[node.id]))
            elif node.id in p.inputs:
                env[node.id] = _shown(float(p.inputs[node.id]))
            else:
                return None
    if not all(math.isfinite(v) for v in env.values()):
        return None
    try:
        value = eval(compile(tree, name, "eval"), {"__builtins__": {}, **FUNCS}, env)
    except ZeroDivisionError:  # a rate over an interval of 0: no checkpoints, said by the rule
        return None
    return expr, float(value)


CASES = [
    *[(name, {}) for name in calc.scenarios()],
    ("mlperf-checkpoint-llama3-70b", {"storage": "aws-efs-elastic", "mtbf_s": "24 h"}),
    ("mlperf-checkpoint-llama3-70b", {"storage": "aws-efs-elastic", "mtbf_s": "24 h", "checkpoint_mode": "async"}),
    ("beast-imagenet-4xv100", {"compression_ratio": 2}),
    ("beast-imagenet-4xv100", {"compression_ratio": 2, "streamed": True}),
    ("beast-nfs-shop", {"storage": "nvme-gen4", "storage_units": 2}),
    # Storage at another site, read over the link between sites (the network stage's site-link share).
    (
        "beast-imagenet-4xv100",
        {"site": "on-prem", "storage": "aws-s3-standard", "allow_other_site": True, "site_link_bytes_per_s": "1 Gb/s"},
    ),
]


@pytest.mark.parametrize(("preset", "overrides"), CASES)
def test_every_explained_formula_gives_the_value_shown(preset: str, overrides: dict[str, object]) -> None:
    p = calc.plan(preset, **overrides)
    checked, wrong = 0, []
    for name in OUTPUTS:
        if p.values[name] == 0 and OUTPUTS[name].not_given:
            continue  # shown as words ("n/a: no checkpoints"), not as a number
        got = arithmetic(p, name)
        if got is None:
            continue
        checked += 1
        expr, value = got
        shown = float(p.values[name])
        if not math.isclose(value, shown, rel_tol=0.01, abs_tol=1e-9):
            wrong.append(f"{name}: {expr} = {value:.6g}, shown {shown:.6g}")
    assert not wrong, "\n".join(wrong)
    # Half the outputs are arithmetic; the rest are look-ups, rules or prose (sources).
    assert checked >= 30


def test_the_guard_catches_a_formula_that_drifted() -> None:
    # The Young-Daly text as it once was: sqrt(2 x (checkpoint / read bandwidth) x MTBF).
    # 70B (911.2 GiB = 978.4 GB) on EFS (12.58 GB/s read) with MTBF 24 h = 86,400 s:
    # sqrt(2 x 77.78 s x 86,400 s) = 3,666 s = 61 min, but the plan (save time 3.04 min) shows 93.5 min.
    p = calc.plan("mlperf-checkpoint-llama3-70b", storage="aws-efs-elastic", mtbf_s="24 h")
    old = "sqrt(2 x ({checkpoint_bytes} / {storage_bytes_per_s}) x {mtbf_s})"
    saved = FORMULAS["young_daly_interval_s"]
    FORMULAS["young_daly_interval_s"] = old
    try:
        got = arithmetic(p, "young_daly_interval_s")
    finally:
        FORMULAS["young_daly_interval_s"] = saved
    assert got is not None
    assert got[1] == pytest.approx(3666, rel=0.01)
    assert not math.isclose(got[1], p.young_daly_interval_s, rel_tol=0.01)


def _declared_output_names() -> list[str]:
    """Every ``Output("name", ...)`` written in calc/, read from the source (a dict cannot hold a
    name twice, so the registry alone cannot show a second declaration)."""
    names = []
    for path in (Path(calc.__file__).parent).glob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            if (
                isinstance(node, ast.Call)
                and isinstance(node.func, ast.Name)
                and node.func.id == "Output"
                and node.args
                and isinstance(node.args[0], ast.Constant)
            ):
                names.append(str(node.args[0].value))
    return names


def test_each_output_is_declared_once_with_one_formula() -> None:
    declared = _declared_output_names()
    assert sorted(declared) == sorted(set(declared)), "an output is declared twice in calc/"
    assert set(declared) == set(OUTPUTS)
    assert set(OUTPUTS) <= set(FORMULAS)
    # Every output belongs to exactly one stage.
    owners = [name for names in BY_STAGE.values() for name in names]
    assert sorted(owners) == sorted(OUTPUTS)
    # Derived groups hold what their declarations say, nothing listed by hand.
    assert {"checkpoint_bytes", "checkpoint_write_bytes_per_s", "young_daly_interval_s"} <= set(CHECKPOINT_OUTPUTS)
    assert "read_iops" not in CHECKPOINT_OUTPUTS
    assert set(UNLIMITED) == {
        "storage_bytes_per_s",
        "storage_write_bytes_per_s",
        "storage_iops",
        "node_network_bytes_per_s",
        # infinite where one example's activations alone fill the GPU: no sharding of the state fits it
        "smallest_shard_group",
    }


def test_a_second_declaration_is_refused() -> None:
    with pytest.raises(ValueError, match="declared twice"):
        stage(Output("read_iops", "count_per_s", "Random reads/s again"))(lambda x, out: None)


def test_plan_attributes_come_from_the_registry() -> None:
    p = calc.plan("beast-imagenet-4xv100")
    assert isinstance(p.batch_size, int)  # declared integer=True
    # 4 GPUs x 128 examples / 0.087 s = 5,885.06 reads/s of one 64 KiB file each (the article's figure).
    assert p.read_iops == pytest.approx(4 * 128 / 0.087, rel=1e-12)
    assert isinstance(p.read_iops, float)
    with pytest.raises(AttributeError, match="no output 'read_iop'"):
        _ = p.read_iop


def test_the_network_stage_formula_gives_its_value_with_a_site_link() -> None:
    # Stage capacities are kept values, not outputs, so the guard above skips them: check this one.
    # DGX-A100's storage link is finite, so both shares show; 1 Gb/s / 4 GPUs is the narrower:
    # 125e6 / 4 / 65,536 B = 476.84 samples/s per GPU.
    p = calc.plan(
        "beast-imagenet-4xv100",
        server="DGX-A100",
        storage="aws-s3-standard",
        allow_other_site=True,
        site_link_bytes_per_s="1 Gb/s",
    )
    got = arithmetic(p, "network_samples_per_s_per_gpu")
    assert got is not None
    assert got[1] == pytest.approx(p.values["network_samples_per_s_per_gpu"], rel=0.01)
    assert got[1] == pytest.approx(476.84, rel=0.001)


def test_a_flop_rate_in_a_formula_is_shown_as_a_flop_rate_not_a_time() -> None:
    """Defect: attention_peak_flops_per_s ends in "_s" and was shown as "11,446,759,259 d"."""
    from calc.explain import input_kind

    assert input_kind("attention_peak_flops_per_s") == "flops_per_s"
    assert input_kind("attention_core_flops_per_example") == "flops"
    assert input_kind("anything_bytes_per_example") == "bytes"
    assert input_kind("checkpoint_host_copy_s") == "seconds"
    # fp8 on an H100 SXM: attention stays bf16, 989 TFLOP/s dense (gpus.yaml, NVIDIA's table halved).
    lines = calc.plan("llama3-8b-pretrain-8xh100", precision="fp8").explain().splitlines()
    shown = lines[next(i for i, s in enumerate(lines) if s.startswith("compute_time_per_example_s")) + 1]
    assert "(989 TFLOP/s x" in shown and " d " not in shown


def test_coded_stage_values_are_declared_with_their_words() -> None:
    # fits, step_method and bottleneck are written by stages and read by plan and sweep by name:
    # each is declared once on its stage, with the words of its codes.
    assert set(STATES) == {"fits", "step_method", "bottleneck"}
    assert STATES["fits"] == ("no", "yes")
    assert "storage" in STATES["bottleneck"] and "gpu" in STATES["bottleneck"]
    p = calc.plan("beast-imagenet-4xv100")
    assert p.bottleneck in STATES["bottleneck"] and p.step_method in STATES["step_method"]
    assert calc.sweep("beast-imagenet-4xv100", gpus_per_job=[1, 4])["bottleneck"].cat.categories.tolist() == list(
        STATES["bottleneck"]
    )
