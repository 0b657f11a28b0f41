#!/usr/bin/env bash
# The script a CI job runs: the README's test command (kept in one place, .ci/run).
exec bash "$(dirname "$0")/../.ci/run" "$@"
