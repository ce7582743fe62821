"""The package layering of docs/architecture.md, checked on the source.

Each module of ``harness`` belongs to one layer. A module may import from its own layer
and the layers below it, never from a layer above; and only ``harness.protocol`` imports
the generated code. Imports under ``if TYPE_CHECKING:`` count too: a type that points
upwards is a dependency all the same.
"""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "harness"

# Lowest first. A module belongs to the layer of its longest matching prefix.
LAYERS: tuple[tuple[str, ...], ...] = (
    ("harness", "harness.errors", "harness.progress"),
    ("harness.rules",),
    ("harness.protocol",),
    ("harness.referee", "harness.cluster", "harness.sdk", "harness.human", "harness.search",
     "harness.envs", "harness.sandbox", "harness.hosting"),
    ("harness.ratings", "harness.sprt", "harness.store", "harness.results", "harness.web",
     "harness.analysis"),
    ("harness.tournament", "harness.ladder"),
    ("harness.cli", "harness.__main__"),
)
GENERATED = "harness._generated"


def layer_of(module: str) -> int:
    best, best_len = -1, -1
    for index, prefixes in enumerate(LAYERS):
        for prefix in prefixes:
            if (module == prefix or module.startswith(prefix + ".")) and len(prefix) > best_len:
                best, best_len = index, len(prefix)
    return best


def module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def imports_of(path: Path) -> list[tuple[int, str]]:
    return imports_in(path.read_text(), module_name(path), is_package=path.name == "__init__.py")


def imports_in(source: str, name: str, *, is_package: bool = False) -> list[tuple[int, str]]:
    """``(line, module)`` for every ``harness`` import in ``source``, the source of module
    ``name``; relative imports are resolved, and ``from a import b`` gives both ``a`` and
    ``a.b`` (``b`` may be a module)."""
    tree = ast.parse(source)
    package = name if is_package else name.rpartition(".")[0]
    found: list[tuple[int, str]] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found += [(node.lineno, alias.name) for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")
                base = base[: len(base) - (node.level - 1)]
                target = ".".join([*base, node.module] if node.module else base)
            else:
                target = node.module or ""
            found.append((node.lineno, target))
            found += [(node.lineno, f"{target}.{alias.name}") for alias in node.names]
    return [(line, target) for line, target in found if target.split(".")[0] == "harness"]


def upward_imports(source: str, name: str, *, is_package: bool = False) -> list[str]:
    me = layer_of(name)
    return [f"line {line}: {target}"
            for line, target in imports_in(source, name, is_package=is_package)
            if not target.startswith(GENERATED) and layer_of(target) > me]


SOURCES = sorted(p for p in PACKAGE.rglob("*.py") if GENERATED.split(".")[1] not in p.parts)


def test_every_module_has_a_layer() -> None:
    assert SOURCES, "no sources found"
    unplaced = [module_name(p) for p in SOURCES if layer_of(module_name(p)) < 0]
    assert unplaced == [], f"modules missing from LAYERS (and docs/architecture.md): {unplaced}"


def test_no_module_imports_from_a_layer_above_it() -> None:
    upward = {module_name(p): found for p in SOURCES
              if (found := upward_imports(p.read_text(), module_name(p),
                                          is_package=p.name == "__init__.py"))}
    assert upward == {}, f"imports from a layer above: {upward}"


def test_only_the_protocol_package_imports_generated_code() -> None:
    generated = {module_name(p): found for p in SOURCES
                 if not module_name(p).startswith("harness.protocol")
                 and (found := [f"line {line}: {target}" for line, target in imports_of(p)
                                if target.startswith(GENERATED)])}
    assert generated == {}, f"generated code imported outside harness.protocol: {generated}"


def test_the_checker_catches_upward_imports_absolute_relative_and_deferred() -> None:
    source = ("import harness.rules.cards\n"
              "from harness.referee.arena import Arena\n"
              "from ..cli import main\n"
              "def f():\n"
              "    from harness.tournament import runner\n")
    found = upward_imports(source, "harness.rules.fake")
    assert found == ["line 2: harness.referee.arena", "line 2: harness.referee.arena.Arena",
                     "line 3: harness.cli", "line 3: harness.cli.main",
                     "line 5: harness.tournament", "line 5: harness.tournament.runner"]
    assert upward_imports("from harness.rules import cards\n", "harness.cli.run") == []
