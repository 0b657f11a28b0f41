#!/usr/bin/env bash
# The rules the README states, checked before the tests: format, lint, the layer contracts, types.
set -euo pipefail
cd "$(dirname "$0")/.."
ruff format --check .
ruff check .
lint-imports
mypy
