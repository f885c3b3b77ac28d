#!/usr/bin/env bash
# The installed package, not the checkout: build the wheel, install it with no extras into a
# fresh virtualenv (dependencies from pip's cache where it has them), run the smoke checks
# (.ci/wheel_smoke.py) from a directory outside the checkout, then the same wheel with
# [postgres] against a throwaway PostgreSQL cluster.
# Usage: bash .ci/wheel_smoke.sh [PYTHON]   (default: python3)
set -euo pipefail
repo="$(cd "$(dirname "$0")/.." && pwd)"
python="${1:-python3}"
work="$(mktemp -d /tmp/wikireact-wheel-XXXXXX)"
trap 'rm -rf "$work"' EXIT
chmod 755 "$work"  # the PostgreSQL cluster runs as the postgres user under root

"$python" -m venv "$work/venv"
pip=("$work/venv/bin/python" -m pip --quiet --disable-pip-version-check)
"${pip[@]}" wheel --no-deps --wheel-dir "$work/dist" "$repo"
wheel="$(ls "$work"/dist/wikireact-*.whl)"
"${pip[@]}" install "$wheel"

cd "$work"
"$work/venv/bin/python" "$repo/.ci/wheel_smoke.py" no-extras
"${pip[@]}" install "${wheel}[postgres]"
"$work/venv/bin/python" "$repo/.ci/wheel_smoke.py" postgres
