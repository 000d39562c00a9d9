# Sourced by scripts/run and scripts/test: creates .venv with Python 3.11 and installs the
# project with its development tools, again only when pyproject.toml or requirements.lock has
# changed.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

python_bin=""
for candidate in python3.11 python3 python; do
    if command -v "$candidate" >/dev/null 2>&1 &&
        "$candidate" -c 'import sys; sys.exit(sys.version_info[:2] != (3, 11))' 2>/dev/null; then
        python_bin=$candidate
        break
    fi
done
if [ -z "$python_bin" ]; then
    echo "TX needs Python 3.11 (python3.11 on PATH)." >&2
    exit 1
fi

if [ ! -x .venv/bin/python ]; then
    echo "==> Creating .venv with $python_bin"
    "$python_bin" -m venv .venv
fi
# Every machine installs the same versions: those pinned in requirements.lock (docs/dependencies.md
# says how to update it), then TX itself without resolving anything more.
stamp=.venv/.tx-installed
wanted=$(cat pyproject.toml requirements.lock | sha256sum | cut -d' ' -f1)
if [ ! -f "$stamp" ] || [ "$(cat "$stamp")" != "$wanted" ]; then
    echo "==> Installing TX and its dependencies into .venv (requirements.lock)"
    .venv/bin/python -m pip install --quiet --upgrade pip
    .venv/bin/python -m pip install --quiet -r requirements.lock
    .venv/bin/python -m pip install --quiet --no-deps -e .
    echo "$wanted" > "$stamp"
fi
