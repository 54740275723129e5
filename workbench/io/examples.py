"""The example sessions shipped with the package."""

from __future__ import annotations

from pathlib import Path

__all__ = ["examples_dir", "list_examples", "DEFAULT_EXAMPLE"]

DEFAULT_EXAMPLE = "llama_ffn.yaml"


def examples_dir() -> Path:
    return Path(__file__).resolve().parent.parent / "examples"


def list_examples() -> list[tuple[str, Path]]:
    """``(title, path)`` for each example, read from the file's ``title:`` line (cheaply)."""
    out = []
    for path in sorted(examples_dir().glob("*.yaml")):
        title = path.stem.replace("_", " ")
        with path.open(encoding="utf-8") as handle:
            for line in handle:
                if line.startswith("title:"):
                    title = line.split(":", 1)[1].strip()
                    break
        out.append((title, path))
    return out
