"""Every row lock of the project is taken in a module named `locks.py` (docs/design.md section 2;
the one order of the locks: docs/money.md, "Locking", and `accounts.locks`).

The source is read with `ast`, so a comment or a docstring that names `select_for_update` is
not a lock, and a lock is found however it is written: a queryset's `.select_for_update(...)`,
the bare name, `getattr(..., "select_for_update")`, or a locking clause (`FOR UPDATE`,
`FOR NO KEY UPDATE`, `FOR SHARE`, `FOR KEY SHARE`) in an SQL string. The posting functions'
locks are in SQL files (accounts/sql/), which are not Python modules: docs/money.md names them.
"""

import ast
import re
from pathlib import Path

from django.conf import settings

ROOT = Path(settings.BASE_DIR)
# Not the project's modules: the tests and benchmarks lock rows to stage races, the documents
# and the local data hold no code; migrations (below) are history.
SKIPPED = {"tests", "bench", "docs", "openapi", "node_modules"}
# Modules not named locks.py that may still lock a row, each with its reason. None today.
EXCEPTIONS: dict[str, str] = {}

LOCKING_CLAUSE = re.compile(r"\bFOR\s+(?:NO\s+KEY\s+UPDATE|UPDATE|KEY\s+SHARE|SHARE)\b")


def project_modules() -> list[Path]:
    """Every Python module of the project, migrations and the folders of SKIPPED left out."""
    paths = list(ROOT.glob("*.py"))
    for folder in ROOT.iterdir():
        if folder.is_dir() and folder.name not in SKIPPED and not folder.name.startswith("."):
            paths.extend(path for path in folder.rglob("*.py") if "migrations" not in path.parts)
    return sorted(paths)


def lock_lines(source: str) -> list[int]:
    """The lines of `source` that take (or name, to take) a row lock."""
    tree = ast.parse(source)
    # A string alone in a statement is a docstring or a comment: it locks nothing.
    prose = {
        id(node.value)
        for node in ast.walk(tree)
        if isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant)
    }
    lines = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and node.attr == "select_for_update":
            lines.add(node.lineno)
        elif isinstance(node, ast.Name) and node.id == "select_for_update":
            lines.add(node.lineno)
        elif isinstance(node, ast.Constant) and isinstance(node.value, str):
            if node.value == "select_for_update":  # getattr(queryset, "select_for_update")
                lines.add(node.lineno)
            elif id(node) not in prose and LOCKING_CLAUSE.search(node.value):
                lines.add(node.lineno)
    return sorted(lines)


def test_every_row_lock_is_taken_in_a_locks_module():
    offenders = []
    for path in project_modules():
        name = str(path.relative_to(ROOT))
        if path.name == "locks.py" or name in EXCEPTIONS:
            continue
        offenders += [f"{name}:{line}" for line in lock_lines(path.read_text())]
    assert offenders == []


def test_the_locks_modules_are_read():
    """The walk above finds the modules that do lock (a walk that found nothing would pass)."""
    locking = {
        str(path.relative_to(ROOT))
        for path in project_modules()
        if path.name == "locks.py" and lock_lines(path.read_text())
    }
    assert {"accounts/locks.py", "cards/locks.py", "core/locks.py"} <= locking
    assert not any(name.startswith(("tests/", "bench/")) for name in locking)


def test_a_lock_is_found_however_it_is_written():
    assert lock_lines("Card.objects.select_for_update().get(pk=1)") == [1]
    assert lock_lines("x = 1\nrows = cards.select_for_update\n") == [2]
    assert lock_lines("from django.db.models import QuerySet\nselect_for_update(q)") == [2]
    assert lock_lines("lock = getattr(cards, 'select_for_update')") == [1]
    assert lock_lines("cursor.execute('SELECT 1 FROM t WHERE id = %s FOR UPDATE', [1])") == [1]
    assert lock_lines("sql = '''SELECT id FROM t\n  FOR NO KEY UPDATE'''") == [1]


def test_prose_is_not_a_lock():
    source = '"""Locked with select_for_update: SELECT ... FOR UPDATE."""\n# select_for_update\n'
    source += 'def f():\n    """FOR UPDATE SKIP LOCKED."""\n    return "for update"\n'
    assert lock_lines(source) == []
