"""The import graph of the first-party code: which app imports which (docs/events.md).

Every module is parsed with `ast` (imports inside functions too: a lazy import is still a
dependency), so the rules hold however an import is written. `app_edges()` is the graph the
rules read; a rule added later (layers, say) reads the same graph.
"""

import ast
from collections import defaultdict
from pathlib import Path

from django.conf import settings

ROOT = Path(settings.BASE_DIR)
SKIPPED = {"tests", "bench", "scripts", "config", ".venv", ".data", "docs", "openapi"}


def first_party_apps() -> set[str]:
    """Top-level packages of the project (a folder with an `__init__.py`)."""
    return {
        path.parent.name
        for path in ROOT.glob("*/__init__.py")
        if path.parent.name not in SKIPPED and not path.parent.name.startswith(".")
    }


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _imported(tree: ast.AST, module: str, is_package: bool) -> set[str]:
    """Absolute names of every module `module` imports, anywhere in it."""
    names = set()
    package = module if is_package else module.rpartition(".")[0]
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")
                base = base[: len(base) - (node.level - 1)]
                target = ".".join(base + ([node.module] if node.module else []))
            else:
                target = node.module or ""
            names.add(target)
            # `from package import module` imports that module too.
            names.update(f"{target}.{alias.name}" for alias in node.names)
    return names


def module_imports() -> dict[str, set[str]]:
    """First-party module -> the first-party names it imports (migrations left out)."""
    apps = first_party_apps()
    graph = {}
    for app in apps:
        for path in (ROOT / app).rglob("*.py"):
            if "migrations" in path.parts:
                continue
            module = _module_name(path)
            tree = ast.parse(path.read_text(), filename=str(path))
            imported = _imported(tree, module, path.name == "__init__.py")
            graph[module] = {name for name in imported if name.split(".")[0] in apps}
    return graph


def app_edges() -> dict[str, set[str]]:
    """App -> the other apps it imports (an app is a top-level package)."""
    edges = defaultdict(set)
    for module, imported in module_imports().items():
        app = module.split(".")[0]
        edges[app].update(name.split(".")[0] for name in imported if name.split(".")[0] != app)
    return dict(edges)


def test_the_graph_is_found():
    edges = app_edges()
    assert {"events", "webhooks", "api", "cards"} <= first_party_apps()
    assert "events" in edges["webhooks"]  # the webhooks subscribe to events


def test_events_know_nothing_of_webhooks():
    offenders = sorted(
        f"{module} imports {name}"
        for module, imported in module_imports().items()
        if module.split(".")[0] == "events"
        for name in imported
        if name.split(".")[0] == "webhooks"
    )
    assert offenders == []


def cycles_among(edges: dict[str, set[str]], apps: set[str]) -> list[list[str]]:
    """The import cycles of the graph restricted to `apps` (each as a path back to its start)."""
    found = []

    def walk(path):
        for nxt in sorted(edges.get(path[-1], set()) & apps):
            if nxt == path[0]:
                found.append([*path, nxt])
            elif nxt not in path:
                walk([*path, nxt])

    for app in sorted(apps):
        walk([app])
    return found


def test_no_import_cycle_between_events_and_webhooks():
    # Between the two apps themselves. (The longer loop events -> api -> webhooks, through
    # core.reencryption, is api/ knowing every app: it goes with the move to core/.)
    assert cycles_among(app_edges(), {"events", "webhooks"}) == []
    # The helper does find a cycle when there is one.
    assert cycles_among({"a": {"b"}, "b": {"a"}}, {"a", "b"}) == [["a", "b", "a"], ["b", "a", "b"]]
