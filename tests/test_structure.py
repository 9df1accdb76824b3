"""The package's shape (docs/model.md section 1.0): imports point down, none hides in a function,
functions stay short, and the buying modules name each thing once.

Read from the source with ``ast``: every import of a calc module outside a function is an edge of
the import graph, type-only ones (under ``if TYPE_CHECKING:``) included, since a type from above is
an import from above; the graph must have no cycle, every edge must point to the same row of the
layer table in docs/model.md section 1.0 or below it, and no model module may import the
presentation. Each check is shown to fail on a case planted in the real sources.
"""

from __future__ import annotations

import ast
import functools
import re
from collections.abc import Mapping
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


PRESENTATION = {"plots", "report", "card", "display", "cli"}
"""The modules that write text, tables and charts: no model module imports them."""

PACKAGE = {"__init__", "__main__"}
"""The package's entry points, above everything (the public API re-exports the presentation)."""

BUYING = (
    "engine",
    "storage",
    "sizing",
    "design",
    "lever",
    "answers",
    "cluster",
    "cluster_input",
    "cluster_load",
    "site",
)
"""The modules that decide what to buy, and checkpoint (whose rates and stalls they read): a
top-level name defined in two of them means two things (issue 37: size, house, per_node, ...)."""


def _edges(tree: ast.Module) -> set[str]:
    """The calc modules a module's source imports outside its functions (``if TYPE_CHECKING:`` too)."""
    edges: set[str] = set()
    stack: list[ast.AST] = list(tree.body)
    while stack:
        node = stack.pop()
        if isinstance(node, ast.Import | ast.ImportFrom):
            edges |= _calc_targets(node)
        elif isinstance(node, ast.If | ast.Try):  # TYPE_CHECKING blocks, guarded imports
            stack += [*node.body, *node.orelse, *getattr(node, "handlers", []), *getattr(node, "finalbody", [])]
        elif isinstance(node, ast.ExceptHandler):
            stack += node.body
    return edges


def graph_of(sources: Mapping[str, str]) -> dict[str, set[str]]:
    """Module -> the calc modules it imports, from each module's source text."""
    return {name: _edges(ast.parse(text)) - {name} for name, text in sources.items()}


def import_graph() -> dict[str, set[str]]:
    """Module -> the calc modules it imports (run time and type-only)."""
    return {name: _edges(_tree(path)) - {name} for name, path in MODULES.items()}


def sources() -> dict[str, str]:
    """Every calc module's source text (to plant a case in)."""
    return {name: path.read_text() for name, path in MODULES.items()}


def layers(text: str) -> dict[str, int]:
    """Module -> its row in the layer table of docs/model.md 1.0, counted from the bottom (0)."""
    section = text[text.index("### 1.0 Module layers") : text.index("### 1.1 ")]
    rows = [line for line in section.splitlines() if line.startswith("| ") and not line.startswith("| Layer")]
    out: dict[str, int] = {}
    for i, line in enumerate(reversed(rows)):
        cells = line.split("|")
        modules = re.sub(r"\([^)]*\)", "", cells[2])  # the names, not what each holds
        for name in re.findall(r"`([\w.]+)`", modules):
            assert name not in out, f"{name} is on two rows of the layer table"
            out[name] = i
    return out


def upward(graph: Mapping[str, set[str]], row: Mapping[str, int]) -> list[str]:
    """``a -> b`` for every import of a module on a higher row than the importer's."""
    return sorted(f"{a} -> {b}" for a, edges in graph.items() for b in edges if row[b] > row[a])


def presentation_imports(graph: Mapping[str, set[str]]) -> list[str]:
    """``a -> b`` for every model module that imports the presentation."""
    model = set(graph) - PRESENTATION - PACKAGE
    return sorted(f"{a} -> {b}" for a in model for b in graph[a] & PRESENTATION)


def defined_names(tree: ast.Module) -> set[str]:
    """The names a module defines at its top level: functions, classes and assignments (not imports)."""
    out: set[str] = set()
    for node in tree.body:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            out.add(node.name)
        elif isinstance(node, ast.Assign):
            out |= {t.id for t in node.targets if isinstance(t, ast.Name)}
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            out.add(node.target.id)
    return out - {"__all__"}


def twice_defined(trees: Mapping[str, ast.Module]) -> dict[str, list[str]]:
    """Name -> the modules that define it, for names defined in more than one."""
    where: dict[str, list[str]] = {}
    for name, tree in trees.items():
        for n in defined_names(tree):
            where.setdefault(n, []).append(name)
    return {n: sorted(ms) for n, ms in where.items() if len(ms) > 1}


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


def test_every_module_is_on_one_row_of_the_layer_table() -> None:
    row = layers((ROOT / "docs" / "model.md").read_text())
    assert set(MODULES) <= set(row), sorted(set(MODULES) - set(row))
    assert set(row) - set(MODULES) == {"app.py"}  # the dashboard, outside calc/, on the presentation row


def test_the_layers_point_down() -> None:
    # docs/model.md 1.0 is the picture; the imports (type-only ones too) must match it.
    row = layers((ROOT / "docs" / "model.md").read_text())
    assert upward(import_graph(), row) == []
    # Formulas read no catalog, scenario or plan; the engine nothing that sizes or answers.
    assert row["engine"] < row["sizing"] < row["design"] < row["answers"] < row["cluster"] < row["cli"]
    assert row["checkpoint"] < row["storage"] < row["scenario"] < row["resolve"] < row["stages"] < row["plan"]


def test_no_model_module_imports_the_presentation() -> None:
    assert presentation_imports(import_graph()) == []


def test_the_layer_checks_fail_on_a_planted_upward_import() -> None:
    # A model module that imports the report, at run time or for a type only, is caught, and so is
    # an import from a lower row to a higher one; a cycle through a type-only import is a cycle.
    row = layers((ROOT / "docs" / "model.md").read_text())
    src = sources()
    planted = dict(src, sizing=src["sizing"] + "\nfrom calc import report\n")
    assert presentation_imports(graph_of(planted)) == ["sizing -> report"]
    assert "sizing -> report" in upward(graph_of(planted), row)
    typed = dict(src, engine=src["engine"] + "\nif TYPE_CHECKING:\n    from calc.answers import Answer\n")
    assert upward(graph_of(typed), row) == ["engine -> answers"]
    assert cycles(graph_of(typed)) == [["answers", "design", "engine", "sizing"]]
    assert presentation_imports(graph_of(src)) == [] and upward(graph_of(src), row) == []


def test_no_name_means_two_things_in_the_buying_modules() -> None:
    trees = {m: _tree(MODULES[m]) for m in (*BUYING, "checkpoint")}
    assert twice_defined(trees) == {}
    # The check finds a planted second meaning (engine.size beside storage.size, as before issue 37).
    planted = dict(trees, engine=ast.parse("def size(o, d):\n    return o\n"))
    assert twice_defined(planted) == {"size": ["engine", "storage"]}


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
