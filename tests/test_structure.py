"""The package's shape (docs/model.md section 1): imports point down, none hides in a function, and
functions stay short.

Read from the source with ``ast``: an import of a calc module at a module's top level is an edge of
the import graph (imports under ``if TYPE_CHECKING:`` are for types only and do not run); the graph
must have no cycle, and no function may import a calc module (the way a cycle used to be dodged).
"""

from __future__ import annotations

import ast
import functools
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
CALC = ROOT / "calc"
MODULES = {p.stem: p for p in CALC.glob("*.py")}

FUNCTION_IMPORTS_ALLOWED: set[str] = set()
"""Modules whose functions may still import calc modules: none (the CLI's moved to the top with
issue 30's rewrite)."""

MAX_LINES = 80


def _calc_targets(node: ast.Import | ast.ImportFrom) -> set[str]:
    """The calc modules an import statement names."""
    if isinstance(node, ast.Import):
        return {a.name.split(".")[1] for a in node.names if a.name.startswith("calc.")}
    if node.module == "calc":
        return {a.name for a in node.names if a.name in MODULES}
    if node.module and node.module.startswith("calc."):
        return {node.module.split(".")[1]}
    return set()


@functools.cache
def _tree(path: Path) -> ast.Module:
    return ast.parse(path.read_text(), str(path))


def import_graph() -> dict[str, set[str]]:
    """Module -> the calc modules it imports at its top level (run time only)."""
    graph: dict[str, set[str]] = {}
    for name, path in MODULES.items():
        edges: set[str] = set()
        for node in _tree(path).body:
            if isinstance(node, ast.Import | ast.ImportFrom):
                edges |= _calc_targets(node)
        graph[name] = edges - {name}
    return graph


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected groups of more than one module (Tarjan's algorithm)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    out: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        for w in sorted(graph.get(v, ())):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            group = []
            while True:
                w = stack.pop()
                group.append(w)
                if w == v:
                    break
            if len(group) > 1 or v in graph.get(v, ()):
                out.append(sorted(group))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return out


def function_imports() -> list[str]:
    """``module.function: calc.x`` for every calc import inside a function."""
    found = []
    for name, path in MODULES.items():
        for fn in ast.walk(_tree(path)):
            if isinstance(fn, ast.FunctionDef | ast.AsyncFunctionDef):
                for node in ast.walk(fn):
                    if isinstance(node, ast.Import | ast.ImportFrom) and _calc_targets(node):
                        found.append(f"{name}.{fn.name}: {sorted(_calc_targets(node))}")
    return found


def lengths(tree: ast.Module, stem: str) -> dict[str, int]:
    """``stem.function`` -> lines from its ``def`` to its last line (the longest of each name)."""
    out: dict[str, int] = {}
    for fn in ast.walk(tree):
        if isinstance(fn, ast.FunctionDef | ast.AsyncFunctionDef) and fn.end_lineno is not None:
            key = f"{stem}.{fn.name}"
            out[key] = max(out.get(key, 0), fn.end_lineno - fn.lineno + 1)
    return out


def function_lengths() -> dict[str, int]:
    """``module.function`` -> lines, for calc/ and app.py."""
    out: dict[str, int] = {}
    for path in [*MODULES.values(), ROOT / "app.py"]:
        out.update(lengths(_tree(path), path.stem))
    return out


def test_the_checks_find_what_they_look_for() -> None:
    # A two-module cycle and a self-import are found; a chain is not.
    assert cycles({"a": {"b"}, "b": {"a"}, "c": {"a"}}) == [["a", "b"]]
    assert cycles({"a": {"a"}}) == [["a"]]
    assert cycles({"a": {"b"}, "b": {"c"}, "c": set()}) == []
    # Both import forms name their targets; other packages are not edges.
    assert _calc_targets(ast.parse("from calc import plan, storage as st").body[0]) == {"plan", "storage"}  # type: ignore[arg-type]
    assert _calc_targets(ast.parse("import calc.sizing").body[0]) == {"sizing"}  # type: ignore[arg-type]
    assert _calc_targets(ast.parse("from calc.units import fmt").body[0]) == {"units"}  # type: ignore[arg-type]
    assert _calc_targets(ast.parse("import numpy").body[0]) == set()  # type: ignore[arg-type]


def test_no_import_cycle_among_calc_modules() -> None:
    assert cycles(import_graph()) == []


def test_the_layers_point_down() -> None:
    # The formulas import no catalog, scenario or plan; the engine imports no sizing or cluster;
    # nothing below the presentation imports it (calc.cluster's command output is the one
    # presentation it composes, and it is above report).
    graph = import_graph()
    formulas = {"demand", "host", "storage", "pipeline", "transfer", "memory", "checkpoint", "compute", "units"}
    for f in formulas - {"storage"}:
        assert not graph[f] & {"catalog", "scenario", "resolve", "plan", "sizing", "cluster"}, f
    assert not graph["engine"] & {"sizing", "cluster", "report", "plots", "cli"}
    # explain renders formula text for Plan.explain(): it sits under plan and imports no plan.
    assert not graph["explain"] & {"plan", "sweep", "sizing", "engine", "cluster", "report", "plots", "cli"}
    for low in ("plan", "resolve", "stages", "sweep", "engine", "sizing", "site", "cluster_load"):
        assert not graph[low] & {"report", "plots", "cli", "fio", "dlio"}, low
    # The Hugging Face config reader builds a Scenario from the transformer's rules (issue 40): it
    # sits with resolve and imports nothing that plans; the fio and DLIO writers are text formats.
    assert not graph["hf_config"] & {"resolve", "stages", "plan", "sweep", "sizing", "engine", "cluster", "cli"}
    assert {"scenario", "transformer"} <= graph["hf_config"]
    assert not (graph["fio"] | graph["dlio"]) & {"cli", "report", "plots", "cluster"}
    assert "calibrate" not in graph["resolve"] and "plan" in graph["calibrate"]


def test_no_calc_import_inside_a_function() -> None:
    found = [f for f in function_imports() if f.split(".")[0] not in FUNCTION_IMPORTS_ALLOWED]
    assert found == []


def test_no_function_over_80_lines() -> None:
    # No exception: the stages, the GPU probes and the sweep were split into named steps (issue 27).
    long = {k: n for k, n in function_lengths().items() if n > MAX_LINES}
    assert long == {}


def test_the_length_check_counts_a_function_s_lines() -> None:
    # An 81-line function (def, 79 assignments, return) and a nested 3-line one inside a class;
    # the decorator line is not counted.
    body = "".join(f"    x{i} = {i}\n" for i in range(79))
    src = f"@deco\ndef long():\n{body}    return 0\nclass C:\n    def m(self):\n        y = 1\n        return y\n"
    assert lengths(ast.parse(src), "mod") == {"mod.long": 81, "mod.m": 3}
