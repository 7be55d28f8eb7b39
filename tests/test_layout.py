"""The package's public surface and its weight: what `import memroute` gives and costs."""

from __future__ import annotations

import importlib
import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

import memroute

HEAVY = ("numpy", "httpx", "apsw", "fastapi", "onnxruntime", "click", "mcp", "sqlite_vec")


def _loaded_after(code: str) -> set[str]:
    """The top-level modules a fresh interpreter has loaded after running `code`."""
    probe = f"{code}\nimport json, sys\nprint(json.dumps(sorted({{m.split('.')[0] for m in sys.modules}})))"
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True).stdout
    return set(json.loads(out.splitlines()[-1]))


def test_every_public_name_resolves_and_star_import_gives_them() -> None:
    namespace: dict[str, object] = {}
    exec("from memroute import *", namespace)
    for name in memroute.__all__:
        assert getattr(memroute, name) is not None, name
        assert name in namespace, name
    assert set(memroute.__all__) <= set(dir(memroute))


def test_public_names_are_the_real_objects() -> None:
    from memroute.errors import MemrouteError
    from memroute.service.facade import Memory

    assert memroute.Memory is Memory
    assert issubclass(memroute.NotFound, MemrouteError)
    assert memroute.__version__ == importlib.metadata.version("memroute")


def test_an_unknown_name_is_an_attribute_error() -> None:
    with pytest.raises(AttributeError, match="no attribute 'Memroute'"):
        memroute.Memroute  # noqa: B018


@pytest.mark.parametrize("package", ["memroute.service", "memroute.cli"])
def test_subpackage_all_resolves(package: str) -> None:
    module = importlib.import_module(package)
    for name in module.__all__:
        assert hasattr(module, name), f"{package}.{name}"


def test_import_memroute_loads_nothing_heavy() -> None:
    assert not _loaded_after("import memroute") & set(HEAVY)


def test_cli_help_loads_no_storage_network_or_model_code() -> None:
    loaded = _loaded_after("import memroute.cli")
    assert not loaded & (set(HEAVY) - {"click"})


def test_using_a_public_name_loads_what_it_needs() -> None:
    assert "apsw" in _loaded_after("import memroute\nmemroute.Memory")


def test_all_lists_exactly_the_lazy_names() -> None:
    assert set(memroute.__all__) == {*memroute._HOMES, "__version__"}


ROOT = Path(__file__).resolve().parents[1]
ARCHITECTURE = (ROOT / "docs" / "architecture.md").read_text()


def test_every_path_the_architecture_names_exists() -> None:
    named = set(re.findall(r"memroute/[\w/]+(?:\.py)?", ARCHITECTURE))
    assert named, "docs/architecture.md names no file"
    missing = sorted(p for p in named if not (ROOT / p).exists())
    assert not missing, f"docs/architecture.md names what does not exist: {missing}"


def test_the_architecture_names_every_top_level_package_and_module() -> None:
    package = ROOT / "memroute"
    tops = {p.name for p in package.iterdir() if (p / "__init__.py").exists()}
    tops |= {p.stem for p in package.glob("*.py") if not p.name.startswith("__")}
    unnamed = sorted(t for t in tops if f"`{t}`" not in ARCHITECTURE and f"memroute/{t}" not in ARCHITECTURE)
    assert not unnamed, f"docs/architecture.md does not place: {unnamed}"
