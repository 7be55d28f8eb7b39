"""The Python examples in README.md and docs/*.md run as written.

```python blocks run here; ```py blocks talk to a running server and are only shown."""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
DOCS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
BLOCK = re.compile(r"```python\n(.*?)```", re.S)

EXAMPLES = [
    pytest.param(block, id=f"{doc.name}#{n}")
    for doc in DOCS
    for n, block in enumerate(BLOCK.findall(doc.read_text(encoding="utf-8")), start=1)
]


@pytest.mark.parametrize("code", EXAMPLES)
def test_documented_example_runs(code: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    cwd = os.getcwd()
    os.chdir(tmp_path)
    try:
        exec(compile(code, "<doc example>", "exec"), {"__name__": "__doc_example__"})
    finally:
        os.chdir(cwd)
    printed = capsys.readouterr().out
    expected = [line[2:] for line in code.splitlines() if line.startswith("# ")]
    # Lines after a print() written as "# …" comments show its output: check them.
    if expected and "print(" in code:
        for line in expected:
            assert line in printed


def test_every_doc_has_examples_or_tables() -> None:
    assert EXAMPLES, "README and docs should carry runnable examples"
