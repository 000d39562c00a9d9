"""The project states what it relies on in its own docs/ (docs/design.md is the design contract
as this project holds it) and cites those: no file of the repository points into the workplace's
shared folder, which a clone of the repository does not have."""

from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
# The shared contract's and examples' names, as a citation would spell them.
OUTSIDE = ("DESIGN.md", "STYLE.md", "../shared")
TEXT = {".py", ".md", ".html", ".txt", ".toml", ".yaml", ".yml", ".sh", ".cfg", ".ini", ""}


def _files():
    """The repository's text files: hidden folders (.git, .venv, .data...) and caches left out."""
    for path in ROOT.rglob("*"):
        parts = path.relative_to(ROOT).parts
        if any(
            part.startswith(".")
            or part in ("__pycache__", "node_modules", "build", "test-artifacts")
            for part in parts
        ):
            continue
        if path.is_file() and path.suffix in TEXT and not path.name.endswith(".egg-info"):
            yield path


def test_no_file_cites_what_a_clone_does_not_have():
    citing = []
    for path in _files():
        if path == Path(__file__).resolve():
            continue
        try:
            text = path.read_text()
        except UnicodeDecodeError:
            continue
        citing += [f"{path.relative_to(ROOT)}: {each}" for each in OUTSIDE if each in text]
    assert citing == []
