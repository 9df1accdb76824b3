"""The README runs: every Python and shell block of README.md and docs/*.md is executed and its
documented outputs compared, so a changed answer, count or command fails here, not in a reader's
notebook (issue 30).

Conventions (README.md, "How the examples are checked"):

* ```python blocks run in order, one namespace per document, in a temporary directory that holds
  the document's ```yaml blocks whose first line is ``# file: NAME`` and a ``data/`` folder of
  small files (for the storage probe).
* A statement whose last line ends in ``# -> EXPECTED`` is evaluated and compared: a Python
  literal with ``==`` (each number to the last digit written: ``5885.06`` is 5885.06 +- 0.005), or
  text with ``...`` wildcards matched against ``str(value)``.
* ```sh blocks: each ``python -m calc ...`` line runs (in this process through ``calc.cli.main``;
  a line with a pipe in a subprocess, as a shell runs it) and must exit 0; ``# -> TEXT`` after the
  command: its output contains TEXT (``...`` wildcards). Other commands (make, benchmarks) run only
  where the block is preceded by ``<!-- doc-test: skip REASON -->``, which must give the reason.
* Counts the README states about the presets ("21 models") are compared with the presets, every
  ``docs/model.md N.N`` reference names an existing section, and the layout names every preset
  file and folder and every module.
"""

from __future__ import annotations

import ast
import contextlib
import io
import math
import numbers
import os
import re
import shlex
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

import calc
import calc.cli
from calc import catalog
from calc import storage as st

ROOT = Path(__file__).resolve().parent.parent
DOCUMENTS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
ARROW = re.compile(r"#\s*->\s*(.*?)\s*$")
SKIP = re.compile(r"<!--\s*doc-test:\s*skip\s*(.*?)\s*-->")


@dataclass(frozen=True)
class Block:
    document: Path
    line: int
    language: str
    text: str
    skip: str | None  # the reason, where the block is marked skipped


def blocks(path: Path) -> list[Block]:
    """The fenced blocks of a Markdown file with their language and skip marker."""
    out: list[Block] = []
    lines = path.read_text(encoding="utf-8").splitlines()
    i = 0
    while i < len(lines):
        m = re.match(r"^```(\w*)\s*$", lines[i])
        if not m:
            i += 1
            continue
        start, body = i, []
        i += 1
        while i < len(lines) and not lines[i].startswith("```"):
            body.append(lines[i])
            i += 1
        before = next((x for x in reversed(lines[:start]) if x.strip()), "")
        skip = SKIP.search(before)
        out.append(Block(path, start + 1, m.group(1), "\n".join(body) + "\n", skip.group(1) if skip else None))
        i += 1
    return out


def _code(document: Path, language: str) -> list[Block]:
    return [b for b in blocks(document) if b.language == language]


# ------------------------------------------------------------------ comparing a documented value


def _number_matches(value: Any, written: str) -> bool:
    number = float(written.replace("_", ""))
    if not isinstance(value, numbers.Real) or isinstance(value, bool):
        return False
    if "." in written or "e" in written.lower():
        decimals = len(written.split(".")[1].lower().split("e")[0]) if "." in written else 0
        tol = 0.5 * 10.0**-decimals * (10.0 ** int(written.lower().split("e")[1]) if "e" in written.lower() else 1)
        return math.isclose(float(value), number, abs_tol=tol * (1 + 1e-9))
    if isinstance(value, numbers.Integral):
        return int(value) == number
    return math.isclose(float(value), number, abs_tol=0.5)  # a float written to the unit


def _literal_matches(node: ast.expr, value: Any, source: str) -> bool:
    if isinstance(node, ast.Constant) and isinstance(node.value, int | float) and not isinstance(node.value, bool):
        return _number_matches(value, ast.get_source_segment(source, node) or repr(node.value))
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
        return _literal_matches(node.operand, -value, source)
    if isinstance(node, ast.Tuple | ast.List):
        items = list(value) if isinstance(value, tuple | list) else None
        return (
            items is not None
            and len(items) == len(node.elts)
            and all(_literal_matches(n, v, source) for n, v in zip(node.elts, items, strict=True))
        )
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return _text_matches(value, node.value) if "..." in node.value else value == node.value
    return bool(ast.literal_eval(node) == value)


def _text_matches(value: Any, expected: str) -> bool:
    pattern = ".*".join(re.escape(part) for part in expected.split("..."))
    return re.fullmatch(pattern, str(value), flags=re.S) is not None


def matches(value: Any, expected: str) -> bool:
    """A value against the text after ``# ->``: a literal (numbers to the digits written) or text."""
    try:
        node = ast.parse(expected, mode="eval").body
        ast.literal_eval(node)
    except (SyntaxError, ValueError):
        return _text_matches(value, expected)
    return _literal_matches(node, value, expected)


# ------------------------------------------------------------------ running the blocks


@contextlib.contextmanager
def workspace(tmp: Path, document: Path) -> Iterator[Path]:
    """A temporary working directory with the document's ``# file:`` YAML blocks and ``data/``."""
    for b in _code(document, "yaml"):
        first = b.text.partition("\n")[0]
        if first.startswith("# file:"):
            (tmp / first.split(":", 1)[1].strip()).write_text(b.text, encoding="utf-8")
    data = tmp / "data"
    data.mkdir(exist_ok=True)
    for i in range(4):
        (data / f"shard-{i}.bin").write_bytes(os.urandom(256 * 1024))
    before = Path.cwd()
    os.chdir(tmp)
    try:
        yield tmp
    finally:
        os.chdir(before)
        st.OWN.clear()  # storage options of your own loaded by the examples


def run_python(block: Block, namespace: dict[str, Any]) -> int:
    """Run one Python block statement by statement; compare each ``# ->``; return how many."""
    tree = ast.parse(block.text)
    lines = block.text.splitlines()
    compared = 0
    for stmt in tree.body:
        where = f"{block.document.name}:{block.line + stmt.lineno}"
        m = ARROW.search(lines[(stmt.end_lineno or stmt.lineno) - 1])
        if m and isinstance(stmt, ast.Expr):
            value = eval(compile(ast.Expression(stmt.value), where, "eval"), namespace)
            assert matches(value, m.group(1)), f"{where}: got {value!r}, the document says {m.group(1)}"
            compared += 1
        else:
            assert not m, f"{where}: '# ->' after a statement that has no value"
            exec(compile(ast.Module([stmt], type_ignores=[]), where, "exec"), namespace)
    return compared


def run_shell_line(line: str, where: str) -> None:
    """One ``python -m calc`` line: exit 0, and its output contains the ``# ->`` text."""
    m = ARROW.search(line)
    command = line[: m.start()] if m else line.split(" #", maxsplit=1)[0]
    if "|" in command:
        r = subprocess.run(
            command.replace("python ", f"{shlex.quote(sys.executable)} ", 1),
            shell=True,
            capture_output=True,
            text=True,
            check=False,
            env={**os.environ, "PYTHONPATH": str(ROOT)},
        )
        assert r.returncode == 0 and not r.stderr, f"{where}: {r.returncode} {r.stderr}"
        out = r.stdout
    else:
        argv = shlex.split(command)[3:]
        buf, err = io.StringIO(), io.StringIO()
        with contextlib.redirect_stdout(buf), contextlib.redirect_stderr(err):
            rc = calc.cli.main(argv)
        assert rc == 0, f"{where}: exit {rc}: {err.getvalue()}"
        out = buf.getvalue()
    if m:
        assert _text_matches(out, f"...{m.group(1)}..."), f"{where}: output lacks {m.group(1)!r}:\n{out[:2000]}"


@pytest.mark.parametrize("document", DOCUMENTS, ids=lambda p: p.name)
def test_python_blocks_run_and_match(document: Path, tmp_path: Path) -> None:
    namespace: dict[str, Any] = {"__name__": "__doc__"}
    with workspace(tmp_path, document):
        for block in _code(document, "python"):
            if block.skip is None:
                run_python(block, namespace)


@pytest.mark.parametrize("document", DOCUMENTS, ids=lambda p: p.name)
def test_shell_blocks_run_and_match(document: Path, tmp_path: Path) -> None:
    with workspace(tmp_path, document):
        for block in _code(document, "sh"):
            if block.skip is not None:
                continue
            for i, raw in enumerate(block.text.splitlines()):
                line = raw.strip()
                if not line or line.startswith("#"):
                    continue
                where = f"{document.name}:{block.line + i + 1}"
                assert line.startswith("python -m calc"), f"{where}: not a calc command; mark the block skipped"
                run_shell_line(line, where)


def test_every_code_block_is_run_or_skipped_with_a_reason() -> None:
    """Only Python, shell and data blocks are code; a skip names its reason; few are skipped."""
    all_blocks = [b for d in DOCUMENTS for b in blocks(d)]
    code = [b for b in all_blocks if b.language in ("python", "sh")]
    assert len(code) >= 7
    skipped = [b for b in code if b.skip is not None]
    assert all(len(b.skip or "") > 10 for b in skipped), skipped
    assert len(skipped) <= 2, [f"{b.document.name}:{b.line}" for b in skipped]
    assert {b.language for b in all_blocks} <= {"", "python", "sh", "yaml"}
    compared = sum(len(re.findall(r"#\s*->", b.text)) for b in code)
    assert compared >= 20  # the examples state what they print


# ------------------------------------------------------------------ facts the README states


def _readme() -> str:
    return (ROOT / "README.md").read_text(encoding="utf-8")


COUNTS = {
    r"`presets/gpus.yaml`: (\d+) GPUs": lambda: len(catalog.gpus()),
    r"`presets/models.yaml`: (\d+) models": lambda: len(catalog.models()),
    r"`presets/storage.yaml`: (\d+) storage options": lambda: len(st.catalog_options()),
    r"\); (\d+) carry a public price": lambda: sum(o.priced for o in st.catalog_options().values()),
    r"the other (\d+) say why they have none": lambda: sum(not o.priced for o in st.catalog_options().values()),
    r"`presets/servers.yaml`: (\d+) GPU servers": lambda: len(catalog.servers()),
    r"`presets/calibration.yaml`: (\d+) measured": lambda: len(catalog.measurements()),
    r"`presets/scenarios/\*\.yaml`: (\d+) workloads": lambda: len(calc.scenarios()),
}


@pytest.mark.parametrize("pattern", list(COUNTS))
def test_counts_the_readme_states_match_the_presets(pattern: str) -> None:
    found = re.findall(pattern, _readme())
    assert found, f"the README no longer states {pattern!r}"
    assert {int(x) for x in found} == {COUNTS[pattern]()}, pattern


def test_section_references_name_existing_sections() -> None:
    """Every "docs/model.md N.N" (or "section N.N") points at a heading of docs/model.md."""
    model = (ROOT / "docs" / "model.md").read_text(encoding="utf-8")
    sections = set(re.findall(r"^(?:#+ |\*\*)(\d+(?:\.\d+)*)\.? ", model, flags=re.M))
    text = _readme()
    refs = re.findall(r"docs/model\.md(?: section)? (\d+(?:\.\d+)*)", text)
    refs += re.findall(r"section (\d+(?:\.\d+)+)", text)
    assert refs and set(refs) <= sections, set(refs) - sections


def test_the_single_attach_rule_points_at_what_is_bought() -> None:
    """Issue 30: the README sent the single-attach rule to 7.5 (inverse sizing); it is in 7.6."""
    text = _readme()
    sentence = text[text.index("never offers a single-attach volume") :][:200]
    assert "docs/model.md 7.6" in sentence


def test_layout_names_every_preset_file_and_module() -> None:
    layout = _readme().split("## Layout", 1)[1]
    presets = {p.stem for p in (ROOT / "presets").glob("*.yaml")} | {
        f"{p.name}/" for p in (ROOT / "presets").iterdir() if p.is_dir() and not p.name.startswith("_")
    }
    missing = [p for p in presets if p not in layout]
    assert not missing, missing
    modules = {p.stem for p in (ROOT / "calc").glob("*.py") if not p.stem.startswith("_")}
    assert not [m for m in modules if re.search(rf"\b{m}\b", layout) is None]


# ------------------------------------------------------------------ the harness itself


@pytest.mark.parametrize(
    ("value", "expected", "ok"),
    [
        (5885.0625, "5885.06", True),
        (5885.0625, "5885.07", False),
        (34, "34", True),
        (35, "34", False),
        (385683126.43, "385683126", True),
        (385683127.5, "385683126", False),
        ((5885.0625, 385683456.0), "(5885.06, 385683456)", True),
        ("385.7 MB/s", "'385.7 MB/s'", True),
        ("Buy: 4 drives of nvme-gen4", "'Buy: 4 drives...'", True),
        ("Buy: 4 drives of nvme-gen4", "'Buy: 5 drives...'", False),
        (0.97, "0.97", True),
    ],
)
def test_the_comparison_reads_numbers_to_the_digits_written(value: Any, expected: str, ok: bool) -> None:
    assert matches(value, expected) is ok
