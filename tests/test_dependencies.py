"""requirements.lock (docs/dependencies.md) pins every dependency pyproject.toml names, each
inside the range pyproject.toml allows: a dependency added or moved in pyproject.toml without
a new lock fails here, before a machine installs something else than CI tested."""

import tomllib
from pathlib import Path

from django.conf import settings
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

ROOT = Path(settings.BASE_DIR)


def pinned() -> dict[str, str]:
    pins = {}
    for line in (ROOT / "requirements.lock").read_text().splitlines():
        line = line.strip()
        if line and not line.startswith(("#", "-")) and "==" in line:
            name, version = line.split("==", 1)
            pins[canonicalize_name(name)] = version.split()[0]
    return pins


def declared() -> list[Requirement]:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    extras = project.get("optional-dependencies", {})
    return [Requirement(text) for text in project["dependencies"] + extras.get("dev", [])]


def test_every_dependency_is_pinned_inside_its_range():
    pins = pinned()
    for requirement in declared():
        name = canonicalize_name(requirement.name)
        assert name in pins, f"{requirement.name} is not in requirements.lock: recompile it"
        assert requirement.specifier.contains(pins[name], prereleases=True), (
            f"requirements.lock pins {requirement.name}=={pins[name]}, outside {requirement}"
        )
