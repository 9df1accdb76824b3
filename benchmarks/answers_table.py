"""Every preset's answer, as the CLI prints it, with the monthly cost split into its charges.

    python benchmarks/answers_table.py > out.md
    python benchmarks/answers_table.py --before before.md > changes.md

With ``--before`` (this script's output on an older commit), each answer that differs is printed
before and after, and the unchanged ones are named in one list at the end.

For each scenario preset: the answer as it stands, with ``server=DGX-H100`` (an on-prem
cluster), and for three presets with a cloud server; then each cluster preset's answer. Used for
docs/answers_before_after.md (issue 18's closing note, then issues 28 and 37).
"""

from __future__ import annotations

import importlib
import sys
from pathlib import Path
from typing import Any

# This checkout's calc, not the one the shared virtualenv installs (run it on an older commit's copy).
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import calc
from calc.units import fmt_usd

CLOUD = {
    "clip-vitl14-datacomp-webdataset": "aws-p5.48xlarge",
    "resnet50-8xh100-imagenet": "gcp-a3-highgpu-8g",
    "mlperf-checkpoint-llama3-70b": "azure-ND-H100-v5",
}


def charges(a: Any) -> str:
    """The chosen answer's monthly charges, when the Answer carries them."""
    c = getattr(a, "charges", None)
    if not c:
        b = a.best
        if b is None:
            return "charges: none (no option serves)"
        return (
            f"charges (best one-tier row): {fmt_usd(b.get('monthly_usd', float('nan')))} a month rented and read "
            f"(reads {fmt_usd(b.get('monthly_read_usd', float('nan')))}), "
            f"{fmt_usd(b.get('purchase_usd', float('nan')))} to buy; writes and egress not charged"
        )
    return "charges a month: " + ", ".join(f"{k} {fmt_usd(v)}" for k, v in c.items())


def block(name: str, **over: Any) -> list[str]:
    head = name + "".join(f" --set {k}={v}" for k, v in over.items())
    try:
        a = calc.answer(name, **over)
    except calc.InputError as exc:
        return [f"### `{head}`", "", f"error: {exc}", ""]
    out = [f"### `{head}`", ""]
    out += [f"- {line}" for line in a.lines()]
    out.append(f"- {charges(a)}")
    return [*out, ""]


def cluster_blocks() -> list[str]:
    """Each cluster preset's answer (its inputs module moved in issue 37: either place is read)."""
    moved = (Path(calc.__file__).parent / "cluster_input.py").is_file()
    inputs = importlib.import_module("calc.cluster_input" if moved else "calc.cluster")
    out: list[str] = []
    for name in inputs.clusters():
        a = calc.answer(calc.cluster(inputs.load(name)))
        out += [f"### `cluster {name}`", "", *(f"- {line}" for line in a.lines()), ""]
    return out


def blocks(text: str) -> dict[str, str]:
    """``### `head``` sections of this script's output, by head."""
    out: dict[str, str] = {}
    for part in text.split("### `")[1:]:
        head, _, body = part.partition("`")
        out[head] = body.strip()
    return out


def main() -> None:
    lines: list[str] = []
    for name in calc.scenarios():
        lines += block(name)
        lines += block(name, server="DGX-H100")
        if name in CLOUD:
            lines += block(name, server=CLOUD[name])
    lines += cluster_blocks()
    if len(sys.argv) == 3 and sys.argv[1] == "--before":
        with open(sys.argv[2], encoding="utf-8") as f:
            before = blocks(f.read())
        after = blocks("\n".join(lines))
        lines, same = [], []
        for head, body in after.items():
            if before.get(head) == body:
                same.append(f"`{head}`")
                continue
            lines += [
                f"## `{head}`",
                "",
                "**Before**",
                "",
                before.get(head, "(not in the before run)"),
                "",
                "**After**",
            ]
            lines += ["", body, ""]
        lines += [f"## Unchanged ({len(same)})", "", ", ".join(same), ""]
    sys.stdout.write("\n".join(lines))


if __name__ == "__main__":
    main()
