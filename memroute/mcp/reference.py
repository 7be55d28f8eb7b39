"""The tool reference of docs/mcp.md, generated from the server's own registry:
`python -m memroute.mcp.reference` prints it, `--write docs/mcp.md` updates the file
between its markers (a test keeps the two in step)."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import anyio

from memroute.mcp.server import build_server

BEGIN, END = "<!-- tools:begin -->", "<!-- tools:end -->"


def _type(schema: dict[str, Any]) -> str:
    options = schema.get("anyOf", [schema])
    names = []
    for option in options:
        if "enum" in option:
            names.append(" \\| ".join(f"`{v}`" for v in option["enum"]))
        elif option.get("type") != "null":
            kind = str(option.get("type", "any"))
            bounds = [
                f"≥ {option['minimum']}" if "minimum" in option else "",
                f"≤ {option['maximum']}" if "maximum" in option else "",
            ]
            bounded = ", ".join(b for b in bounds if b)
            names.append(f"{kind} ({bounded})" if bounded else kind)
    return " \\| ".join(names)


def _default(value: Any) -> str:
    if value is None:
        return "—"
    return '`""`' if value == "" else f"`{value}`"


def reference() -> str:
    async def tools() -> list[Any]:
        return list(await build_server(lambda: None).list_tools())  # type: ignore[arg-type, return-value]

    lines: list[str] = []
    for tool in anyio.run(tools):
        schema = tool.input_schema
        required = set(schema.get("required", []))
        lines += [f"### `{tool.name}`", "", " ".join((tool.description or "").split()), ""]
        lines += ["| argument | type | default | meaning |", "|---|---|---|---|"]
        for name, prop in schema.get("properties", {}).items():
            default = "required" if name in required else _default(prop.get("default"))
            text = " ".join(str(prop.get("description", "")).split())
            lines.append(f"| `{name}` | {_type(prop)} | {default} | {text} |")
        lines.append("")
    return "\n".join(lines).rstrip() + "\n"


def write(path: Path) -> None:
    text = path.read_text(encoding="utf-8")
    head, _, rest = text.partition(BEGIN)
    _, _, tail = rest.partition(END)
    path.write_text(f"{head}{BEGIN}\n{reference()}{END}{tail}", encoding="utf-8")


if __name__ == "__main__":
    if len(sys.argv) == 3 and sys.argv[1] == "--write":
        write(Path(sys.argv[2]))
    else:
        sys.stdout.write(reference())
