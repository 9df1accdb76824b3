"""Mutation score of the formula modules: how many small deliberate changes the tests catch.

    python benchmarks/mutation.py                         # every module in [tool.mutmut] only_mutate
    python benchmarks/mutation.py calc/demand.py          # one module
    python benchmarks/mutation.py calc/host.py --tests tests/test_host.py --survivors

mutmut (requirements-dev.txt) changes one operator, constant or argument at a time in the
modules given ("mutants") and runs the tests that call the changed function; a mutant is killed
when a test fails. The script prints, per module and in total, the killed share: (killed +
timed out) / all mutants. A survivor is a change no test notices: either a missing test or an
equivalent mutant (one that computes the same numbers, e.g. ``np.maximum(x, 1)`` vs
``np.maximum(x, 2)`` where x is never below 2).

It runs in a temporary copy of ``calc/``, ``presets/``, ``tests/`` and ``pyproject.toml``, so the
working tree is never touched and a fresh clone with the dev requirements is enough. The
configuration (modules, test selection) is ``[tool.mutmut]`` in pyproject.toml; the command line
overrides it.

mutmut leaves decorated functions alone, and most formulas carry ``@formula(output, text)``,
which only records the formula's text and returns the function unchanged. In the copy, each
``@formula(...)`` line is moved below its function as ``f = formula(...)(f)``: the same module,
whose formula bodies mutmut can now change. Other decorators (``functools.cache``) stay.

The machine's cores are shared: ``--max-children`` defaults to 1, and ``--timeout`` bounds the
whole run (seconds). Not part of ``make test``: a run over every module takes tens of minutes;
``--sample 50`` tests 50 mutants drawn at random instead (an estimate, +- about 6 points).
"""

from __future__ import annotations

import argparse
import ast
import json
import random
import shutil
import subprocess
import sys
import tempfile
import time
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
COPIED = ("calc", "presets", "tests", "pyproject.toml")

# mutmut's exit codes per mutant (mutmut/stats.py, status_by_exit_code): 1 and 3 are a failing
# test run (killed), 0 a passing one (survived), 33 and 5 no test calls the function, 36 and
# the SIGXCPU codes a timeout; anything else is "suspicious" or not run.
KILLED, SURVIVED, NO_TESTS, TIMEOUT = {1, 3}, {0}, {5, 33}, {36, 24, -24, 152, 255}


def undecorate_formulas(source: str) -> str:
    """Move each top-level ``@formula(...)`` below its function as ``name = formula(...)(name)``.

    ``formula`` returns the function it is given (calc/formula.py), so the module means the
    same; mutmut mutates undecorated functions only.
    """
    tree = ast.parse(source)
    lines = source.splitlines(keepends=True)
    edits = []
    for node in tree.body:
        if not isinstance(node, ast.FunctionDef) or not node.decorator_list:
            continue
        decs = node.decorator_list
        if not all(isinstance(d, ast.Call) and isinstance(d.func, ast.Name) and d.func.id == "formula" for d in decs):
            continue
        exprs = [ast.get_source_segment(source, d) for d in decs]
        first = min(d.lineno for d in decs) - 1  # the "@" shares the expression's first line
        edits.append((first, node.lineno - 1, node.end_lineno or node.lineno, node.name, exprs))
    for first, def_line, end, name, exprs in reversed(edits):
        lines.insert(end, "".join(f"{name} = ({e})({name})\n" for e in reversed(exprs)))
        del lines[first:def_line]
    out = "".join(lines)
    ast.parse(out)  # still Python
    return out


def _toml_list(xs: list[str]) -> str:
    return json.dumps(xs)  # a JSON list of strings is a TOML array


def prepare(work: Path, modules: list[str], tests: list[str], cfg: dict[str, object]) -> None:
    """Copy the project into ``work`` with a [tool.mutmut] section for ``modules`` and ``tests``."""
    for name in COPIED:
        src = ROOT / name
        if src.is_dir():
            shutil.copytree(src, work / name, ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
        else:
            shutil.copy2(src, work / name)
    for module in modules:
        path = work / module
        path.write_text(undecorate_formulas(path.read_text()))
    text = (work / "pyproject.toml").read_text()
    head, sep, tail = text.partition("[tool.mutmut]")
    if sep:  # drop the repository's section; the one below replaces it
        rest = tail.split("\n[", 1)
        text = head + ("[" + rest[1] if len(rest) > 1 else "")
    section = [
        "[tool.mutmut]",
        'source_paths = ["calc"]',
        f"only_mutate = {_toml_list(modules)}",
        'also_copy = ["presets"]',
        f"pytest_add_cli_args_test_selection = {_toml_list(tests)}",
        f"pytest_add_cli_args = {_toml_list(list(cfg.get('pytest_add_cli_args', [])))}",  # type: ignore[call-overload]
        "use_git_change_detection = false",
        f"timeout_multiplier = {float(cfg.get('timeout_multiplier', 15.0))}",  # type: ignore[arg-type]
    ]
    (work / "pyproject.toml").write_text(text.rstrip() + "\n\n" + "\n".join(section) + "\n")


def _codes(work: Path, module: str) -> dict[str, int | None]:
    meta = work / "mutants" / (module + ".meta")
    return json.loads(meta.read_text())["exit_code_by_key"] if meta.exists() else {}  # type: ignore[no-any-return]


def sample_mutants(mutmut: str, work: Path, modules: list[str], n: int, seed: int, timeout: float) -> list[str]:
    """Draw ``n`` mutants at random: mutmut generates them all (asked for a name that matches
    none, it stops after writing them and collecting which tests call which function)."""
    subprocess.run(
        [mutmut, "run", "--max-children", "1", "no-such-mutant"],
        cwd=work,
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )
    everything = sorted(k for module in modules for k in _codes(work, module))
    if not everything:
        raise SystemExit("mutmut generated no mutants")
    return sorted(random.Random(seed).sample(everything, min(n, len(everything))))


def tally(work: Path, modules: list[str], only: set[str] | None = None) -> dict[str, dict[str, object]]:
    """Counts per module from mutmut's ``mutants/<module>.meta`` files (``only``: a sample)."""
    out: dict[str, dict[str, object]] = {}
    for module in modules:
        codes = {k: v for k, v in _codes(work, module).items() if only is None or k in only}
        counts = {"killed": 0, "survived": 0, "no tests": 0, "timeout": 0, "other": 0}
        survivors = []
        for key, code in sorted(codes.items()):
            if code in KILLED:
                counts["killed"] += 1
            elif code in SURVIVED:
                counts["survived"] += 1
                survivors.append(key)
            elif code in NO_TESTS:
                counts["no tests"] += 1
                survivors.append(key)
            elif code in TIMEOUT:
                counts["timeout"] += 1
            else:
                counts["other"] += 1
                survivors.append(key)
        out[module] = {**counts, "total": len(codes), "survivors": survivors}
    return out


def share(c: dict[str, object]) -> float:
    """Killed share: (killed + timed out) / all mutants of the module."""
    total = int(c["total"])  # type: ignore[call-overload]
    return (int(c["killed"]) + int(c["timeout"])) / total if total else float("nan")  # type: ignore[call-overload]


def report(counts: dict[str, dict[str, object]]) -> str:
    rows = [f"{'module':<22} {'mutants':>7} {'killed':>6} {'timeout':>7} {'survived':>8} {'no tests':>8} {'share':>7}"]
    total: dict[str, object] = dict.fromkeys(("killed", "survived", "no tests", "timeout", "other", "total"), 0)
    for module, c in counts.items():
        rows.append(
            f"{module:<22} {c['total']:>7} {c['killed']:>6} {c['timeout']:>7} {c['survived']:>8} "
            f"{c['no tests']:>8} {share(c):>7.1%}"
        )
        for k, sofar in total.items():
            total[k] = int(sofar) + int(c[k])  # type: ignore[call-overload]
    rows.append(
        f"{'total':<22} {total['total']:>7} {total['killed']:>6} {total['timeout']:>7} {total['survived']:>8} "
        f"{total['no tests']:>8} {share(total):>7.1%}"
    )
    return "\n".join(rows)


def main(argv: list[str] | None = None) -> int:
    cfg = tomllib.loads((ROOT / "pyproject.toml").read_text()).get("tool", {}).get("mutmut", {})
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("modules", nargs="*", help="modules to mutate (default: [tool.mutmut] only_mutate)")
    ap.add_argument("--tests", nargs="+", help="test files or ids (default: [tool.mutmut] test selection)")
    ap.add_argument("--max-children", type=int, default=1, help="parallel test runs (default 1: cores are shared)")
    ap.add_argument("--timeout", type=float, default=3600.0, help="stop the whole run after this many seconds")
    ap.add_argument("--survivors", action="store_true", help="print each surviving mutant's diff")
    ap.add_argument("--json", type=Path, help="also write the counts to this file")
    ap.add_argument("--keep", type=Path, help="work in this folder (kept) instead of a temporary one")
    ap.add_argument("--sample", type=int, help="test only this many mutants drawn at random (an estimate)")
    ap.add_argument("--seed", type=int, default=0, help="seed of --sample")
    args = ap.parse_args(argv)
    modules = args.modules or list(cfg.get("only_mutate", []))
    tests = args.tests or list(cfg.get("pytest_add_cli_args_test_selection", []))
    if not modules or not tests:
        ap.error("no modules or tests: name them or set [tool.mutmut] only_mutate and test selection")
    missing = [m for m in modules + [t.split("::")[0] for t in tests] if not (ROOT / m).exists()]
    if missing:
        ap.error(f"not found: {', '.join(missing)}")
    mutmut = shutil.which("mutmut", path=str(Path(sys.executable).parent)) or shutil.which("mutmut")
    if mutmut is None:
        ap.error("mutmut is not installed: pip install -r requirements-dev.txt")
    work = args.keep or Path(tempfile.mkdtemp(prefix="feedrate-mutation-"))
    if args.keep and work.exists():
        shutil.rmtree(work)
    work.mkdir(parents=True, exist_ok=True)
    try:
        prepare(work, modules, tests, cfg)
        started = time.perf_counter()
        names: list[str] = []
        if args.sample:
            names = sample_mutants(mutmut, work, modules, args.sample, args.seed, args.timeout)
        run = subprocess.run(
            [mutmut, "run", "--max-children", str(args.max_children), *names],
            cwd=work,
            capture_output=True,
            text=True,
            timeout=args.timeout,
            check=False,
        )
        elapsed = time.perf_counter() - started
        if run.returncode != 0:
            sys.stderr.write(run.stdout[-4000:] + run.stderr[-4000:])
            print(f"mutmut run failed (exit {run.returncode})", file=sys.stderr)
            return 1
        counts = tally(work, modules, set(names) or None)
        print(report(counts))
        drawn = f"; a random sample of {len(names)} mutants (seed {args.seed})" if names else ""
        print(f"({elapsed:.0f} s; killed share = (killed + timeout) / mutants{drawn}; tests: {' '.join(tests)})")
        for module, c in counts.items():
            for key in c["survivors"]:  # type: ignore[attr-defined]
                if args.survivors:
                    shown = subprocess.run([mutmut, "show", key], cwd=work, capture_output=True, text=True, check=False)
                    print(shown.stdout)
                else:
                    print(f"survived: {key} ({module})")
        if args.json:
            args.json.write_text(json.dumps({"tests": tests, "seconds": round(elapsed), "modules": counts}, indent=1))
    finally:
        if not args.keep:
            shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
