#!/usr/bin/env bash
# The Debian packages the tests need beyond Python's: faketime, whose libfaketime sets a driver's clock back
# (tests/test_spark_state_clock.py restarts a stateful query under a clock set back). `.ci/run` calls this
# before the tests; a machine that has it already installs nothing.
set -euo pipefail
if command -v faketime >/dev/null 2>&1; then
    exit 0
fi
if [ "$(id -u)" -ne 0 ]; then
    echo "faketime is missing: run 'apt-get install -y faketime' as root" >&2
    exit 1
fi
apt-get install -y faketime >/dev/null 2>&1 || { apt-get update >/dev/null && apt-get install -y faketime >/dev/null; }
