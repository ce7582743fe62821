"""The package layering of docs/architecture.md, checked on the source.

Each package of ``harness`` (a directory such as ``harness.referee``, or a module at the
root such as ``harness.errors``) is named in exactly one layer. A module may import from
its own layer and the layers below it, never from a layer above; no two packages may
import each other, directly or round a longer loop, even within one layer; and only
``harness.protocol`` imports the generated code. Imports under ``if TYPE_CHECKING:``
count too: a type that points upwards is a dependency all the same.
"""

from __future__ import annotations

import ast
from collections.abc import Collection, Iterable, Mapping
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "harness"

# Lowest first. Each entry is a package (the first two dotted parts of a module's name)
# or the root package ``harness`` itself (its ``__init__`` only): nothing matches by prefix.
LAYERS: tuple[tuple[str, ...], ...] = (
    ("harness", "harness.errors"),
    ("harness.rules",),
    ("harness.protocol",),
    ("harness.referee", "harness.cluster", "harness.sdk", "harness.envs", "harness.sandbox",
     "harness.hosting"),
    ("harness.storage",),
    ("harness.results", "harness.web", "harness.analysis"),
    ("harness.competition",),
    ("harness.tournament", "harness.ladder"),
    ("harness.cli", "harness.__main__"),
)
SIBLINGS: tuple[frozenset[str], ...] = (frozenset({"harness.tournament", "harness.ladder"}),)
"""Packages of one layer that must not import each other in either direction: what they
share lives in a layer below both."""
GENERATED = "harness._generated"
LAYER_OF = {package: index for index, packages in enumerate(LAYERS) for package in packages}


def package_of(module: str) -> str:
    """``harness.referee.arena`` -> ``harness.referee``; ``harness`` -> ``harness``."""
    return ".".join(module.split(".")[:2])


def layer_of(module: str) -> int:
    """The layer of ``module``'s package, -1 if no layer names it."""
    return LAYER_OF.get(package_of(module), -1)


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


def unplaced(modules: Iterable[str]) -> list[str]:
    """The modules whose package no layer names."""
    return [name for name in modules if layer_of(name) < 0]


def package_graph(imports: Mapping[str, Iterable[str]]) -> dict[str, set[str]]:
    """Which packages each package imports, from each module's import targets (the
    generated code and a package's imports of itself left out). A target whose first
    two parts name no package of ``imports`` (``from harness import __version__``) is
    an import of the root package ``harness``."""
    packages = {package_of(name) for name in imports}
    graph: dict[str, set[str]] = {package: set() for package in packages}
    for name, targets in imports.items():
        for target in targets:
            if target.startswith(GENERATED):
                continue
            to = package_of(target) if package_of(target) in packages else "harness"
            if to != package_of(name) and to in packages:
                graph[package_of(name)].add(to)
    return graph


def module_graph(imports: Mapping[str, Iterable[str]]) -> dict[str, set[str]]:
    """Which modules of its own package each module imports, from each module's import
    targets: a target is the longest of the modules of ``imports`` it names
    (``harness.ladder.service.standings`` -> ``harness.ladder.service``), and ``from
    harness.ladder import service`` counts as an import of ``service`` only, not of the
    package's ``__init__``."""
    modules = set(imports)

    def resolve(target: str) -> str | None:
        parts = target.split(".")
        while parts and ".".join(parts) not in modules:
            parts.pop()
        return ".".join(parts) or None

    graph: dict[str, set[str]] = {}
    for name, targets in imports.items():
        found = {module for target in targets
                 if (module := resolve(target)) is not None and module != name
                 and package_of(module) == package_of(name)}
        graph[name] = {m for m in found if not any(o.startswith(m + ".") for o in found)}
    return graph


def sibling_imports(graph: Mapping[str, Collection[str]]) -> list[tuple[str, str]]:
    """Every ``(importer, imported)`` edge between two packages of :data:`SIBLINGS`."""
    return sorted((a, b) for a, targets in graph.items() for b in targets
                  if frozenset({a, b}) in SIBLINGS)


def cycles(graph: Mapping[str, Collection[str]]) -> list[list[str]]:
    """The packages that import each other, directly or round a longer loop: every
    strongly connected component of more than one package (Tarjan), each sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    found: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        for to in sorted(graph.get(node, ())):
            if to not in index:
                visit(to)
                low[node] = min(low[node], low[to])
            elif to in stack:
                low[node] = min(low[node], index[to])
        if low[node] == index[node]:
            component = []
            while True:
                member = stack.pop()
                component.append(member)
                if member == node:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return sorted(found)


SOURCES = sorted(p for p in PACKAGE.rglob("*.py") if GENERATED.split(".")[1] not in p.parts)


def test_every_module_has_a_layer() -> None:
    assert SOURCES, "no sources found"
    missing = unplaced(module_name(p) for p in SOURCES)
    assert missing == [], f"modules missing from LAYERS (and docs/architecture.md): {missing}"


def test_the_docs_show_every_package() -> None:
    """docs/architecture.md draws each package (``referee/``, ``errors.py``) and the README's
    layout table lists it (``harness/referee/``, ``harness/errors.py``)."""
    picture = (ROOT / "docs" / "architecture.md").read_text()
    layout = (ROOT / "README.md").read_text().partition("## Layout")[2]
    shapes = {package: ((PACKAGE / package.split(".")[1]).is_dir(), package.split(".")[1])
              for package in LAYER_OF if package != "harness"}
    missing = {package: where for package, (is_dir, leaf) in shapes.items()
               if (where := [doc for doc, text, prefix in (("architecture", picture, ""),
                                                           ("README", layout, "harness/"))
                             if f"{prefix}{leaf}{'/' if is_dir else '.py'}" not in text])}
    assert missing == {}, f"packages the docs do not show: {missing}"


def test_no_module_imports_from_a_layer_above_it() -> None:
    upward = {module_name(p): found for p in SOURCES
              if (found := upward_imports(p.read_text(), module_name(p),
                                          is_package=p.name == "__init__.py"))}
    assert upward == {}, f"imports from a layer above: {upward}"


def test_no_two_packages_import_each_other() -> None:
    graph = package_graph({module_name(p): [target for _, target in imports_of(p)]
                           for p in SOURCES})
    assert {"harness.tournament", "harness.ladder", "harness.referee"} <= graph.keys()
    assert "harness.competition" in graph["harness.ladder"]  # the graph sees real edges
    assert "harness.competition" in graph["harness.tournament"]
    assert cycles(graph) == [], f"packages importing each other: {cycles(graph)}"


def test_no_two_modules_of_a_package_import_each_other() -> None:
    """Within a package too, imports go one way (those only for type checking included):
    two modules that need each other are one concept split wrongly, or share a third."""
    graph = module_graph({module_name(p): [target for _, target in imports_of(p)]
                          for p in SOURCES})
    assert "harness.ladder.service" in graph["harness.ladder.runtime"]  # sees real edges
    assert cycles(graph) == [], f"modules importing each other: {cycles(graph)}"


def test_the_tournament_and_the_ladder_never_import_each_other() -> None:
    graph = package_graph({module_name(p): [target for _, target in imports_of(p)]
                           for p in SOURCES})
    assert sibling_imports(graph) == [], f"imports between siblings: {sibling_imports(graph)}"


def test_the_checker_catches_a_planted_module_cycle_within_a_package() -> None:
    planted = {
        "harness.ladder": "from harness.ladder import runtime\n",  # the package's own
        "harness.ladder.runtime": "from harness.ladder.service import Servicer\n",
        "harness.ladder.service": ("from typing import TYPE_CHECKING\n"
                                   "from harness.ladder import state\n"
                                   "if TYPE_CHECKING:\n"
                                   "    from .runtime import LadderRuntime\n"),
        "harness.ladder.state": "from harness.storage.results import ResultsStore\n",
        "harness.storage.results": "from harness.ladder.state import State\n",  # upward
    }
    graph = module_graph({name: [t for _, t in imports_in(source, name,
                                                          is_package=name == "harness.ladder")]
                          for name, source in planted.items()})
    assert graph == {"harness.ladder": {"harness.ladder.runtime"},
                     "harness.ladder.runtime": {"harness.ladder.service"},
                     "harness.ladder.service": {"harness.ladder.runtime",
                                                "harness.ladder.state"},
                     "harness.ladder.state": set(), "harness.storage.results": set()}
    assert cycles(graph) == [["harness.ladder.runtime", "harness.ladder.service"]]
    planted["harness.ladder.service"] = "from harness.ladder import state\n"
    graph = module_graph({name: [t for _, t in imports_in(source, name)]
                          for name, source in planted.items()})
    assert cycles(graph) == []


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


def graph_of(sources: Mapping[str, str]) -> dict[str, set[str]]:
    return package_graph({name: [target for _, target in imports_in(source, name)]
                          for name, source in sources.items()})


def test_the_checker_catches_a_planted_unplaced_module_upward_import_and_cycle() -> None:
    planted = {
        "harness": "",
        "harness.errors": "",
        "harness.rules.cards": "from harness.errors import RulesError\n",
        "harness.newthing.core": "from harness.rules import cards\n",  # in no layer
        "harness.protocol.convert": "from harness.referee.arena import Arena\n",  # upward
        # one layer, but each imports the other (one of them lazily, relatively)
        "harness.results.counting": "from harness.web.report import page\n",
        "harness.web.report": "def page():\n    from ..results import counting\n",
        # a longer loop through three packages of one layer
        "harness.referee.arena": "from harness.cluster.local import start\n",
        "harness.cluster.local": "from harness.envs.adapter import PolicyBot\n",
        "harness.envs.adapter": "from harness import referee, __version__\n",
        # one way only, but between the two siblings (only when type checking, too)
        "harness.ladder.playing": ("from typing import TYPE_CHECKING\n"
                                   "if TYPE_CHECKING:\n"
                                   "    from harness.tournament.schedule import Game\n"),
        "harness.tournament.runner": "from harness.competition import storing\n",
    }
    assert unplaced(planted) == ["harness.newthing.core"]
    upward = {name: found for name, source in planted.items()
              if layer_of(name) >= 0 and (found := upward_imports(source, name))}
    assert upward == {"harness.protocol.convert": ["line 1: harness.referee.arena",
                                                   "line 1: harness.referee.arena.Arena"]}
    graph = graph_of(planted)
    assert graph["harness.envs"] == {"harness", "harness.referee"}  # __version__: the root
    assert cycles(graph) == [["harness.cluster", "harness.envs", "harness.referee"],
                             ["harness.results", "harness.web"]]
    assert sibling_imports(graph) == [("harness.ladder", "harness.tournament")]
    assert cycles(module_graph({name: [t for _, t in imports_in(source, name)]
                                for name, source in planted.items()})) == []
    del planted["harness.web.report"], planted["harness.envs.adapter"]
    del planted["harness.ladder.playing"]
    graph = graph_of(planted)
    assert cycles(graph) == []
    assert sibling_imports(graph) == []
