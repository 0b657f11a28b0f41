#!/usr/bin/env bash
# Debian's PostgreSQL server, whose binaries (initdb, pg_ctl, postgres) `pg_config --bindir` finds off PATH:
# the cdc tests and `check --suite cdc` start a throwaway cluster from them
# (frontier_harness/spark_impl/cdc/postgres.py), logical decoding through the server's own pgoutput plugin.
# `.ci/run` calls this before the tests; a machine that has a server already installs nothing.
set -euo pipefail
bindir=$(pg_config --bindir 2>/dev/null || true)
if [ -n "$bindir" ] && [ -x "$bindir/initdb" ] && [ -x "$bindir/pg_ctl" ]; then
    exit 0
fi
if ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1; then
    exit 0
fi
if [ "$(id -u)" -ne 0 ]; then
    echo "PostgreSQL is missing: run 'apt-get install -y postgresql' as root" >&2
    exit 1
fi
# The package's own cluster is not wanted (the tests start theirs): no `main` cluster is created.
mkdir -p /etc/postgresql-common/createcluster.d
echo "create_main_cluster = false" > /etc/postgresql-common/createcluster.d/frontier-harness.conf
export DEBIAN_FRONTEND=noninteractive
apt-get install -y postgresql >/dev/null 2>&1 || { apt-get update >/dev/null && apt-get install -y postgresql >/dev/null; }
