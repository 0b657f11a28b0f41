#!/usr/bin/env bash
# The mutation score of the trial suites' oracle and law modules (issue 50): `streaming`, `stateful`
# (with joins and processors), `ttl_spark_state` and the checkpoint's state half, each mutant judged by the
# fast tests that feed those modules written observations (and the modules' own doctests).
# Usage: bash ci/oracle_mutants.sh [--json FILE] [other mutate flags]. Exit: as `frontier-harness mutate`.
set -euo pipefail
cd "$(dirname "$0")/.."
modules=(
    properties/checks/event_time/oracles
    properties/checks/event_time/stateful.py
    properties/checks/event_time/join.py
    properties/checks/event_time/reached.py
    properties/checks/event_time/processor_reached.py
    properties/checks/streaming/streaming.py
    properties/checks/streaming/committed.py
    properties/checks/streaming/checkpoint_log/state_laws.py
    properties/checks/ttl/spark_state.py
)
tests=(
    tests/test_suite_stateful.py tests/test_processor_suite.py tests/test_suite_join.py tests/test_promise.py
    tests/test_stateful_rows.py tests/test_reached.py tests/test_suite_streaming.py tests/test_streaming_job.py
    tests/test_checkpoint_stateful.py tests/test_checkpoint_file_sink.py tests/test_state_laws.py
    tests/test_suite_ttl_spark_state.py tests/test_oracle_verdicts.py tests/test_committed.py tests/test_join_reached.py
    tests/test_join_rows.py
)
targets=()
doctests=()
for m in "${modules[@]}"; do
    dotted=${m%.py}
    targets+=(--target "frontier_harness.${dotted//\//.}")
    doctests+=("frontier_harness/$m")
done
# tests/test_oracle_verdicts.py's mutate run judges `mutate` itself, not the oracles: left out.
judges_mutate=tests/test_oracle_verdicts.py::test_mutate_judges_the_ttl_oracle_through_its_recording
exec frontier-harness mutate "${targets[@]}" --equivalent ci/equivalent_mutants.toml \
    --tests "-m 'not spark' --deselect ${judges_mutate} ${tests[*]} ${doctests[*]}" "$@"
