"""Which of a processor's state variables a trial reads (`spark_impl/event_time/processor_state.variables`),
from the `_metadata/v2` files PySpark 4.3.0 wrote: no Spark runs here."""

from __future__ import annotations

import pytest

from frontier_harness.spark_impl.event_time import processor_state

# `_metadata/v2/0` as PySpark 4.3.0 wrote it for a processor with event-time timers (its only state variable
# is Spark's own `TimerState`) and for one with no timers, a map and a list state; the schema paths cut.
EVENT_TIME_TIMERS_ONLY = (
    '{"operatorInfo":{"operatorId":0,"operatorName":"transformWithStateInPandasExec"},"stateStoreInfo":[],'
    '"operatorPropertiesJson":"{\\"timeMode\\":\\"EventTime\\",\\"outputMode\\":\\"Append\\",'
    '\\"stateVariables\\":[{\\"stateName\\":\\"$eventTimers_keyToTimestamp\\",'
    '\\"stateVariableType\\":\\"TimerState\\",\\"ttlEnabled\\":false}]}"}'
)
NO_TIME_MAP_AND_LIST = (
    '{"operatorInfo":{"operatorId":0,"operatorName":"transformWithStateInPandasExec"},"stateStoreInfo":[],'
    '"operatorPropertiesJson":"{\\"timeMode\\":\\"NoTime\\",\\"outputMode\\":\\"Append\\",'
    '\\"stateVariables\\":[{\\"stateName\\":\\"times\\",\\"stateVariableType\\":\\"MapState\\",'
    '\\"ttlEnabled\\":false},{\\"stateName\\":\\"datas\\",\\"stateVariableType\\":\\"ListState\\",'
    '\\"ttlEnabled\\":false}]}"}'
)


@pytest.mark.parametrize(
    ("metadata", "expected"),
    [
        (EVENT_TIME_TIMERS_ONLY, ((processor_state.TIMERS, processor_state.TIMER),)),
        (NO_TIME_MAP_AND_LIST, (("times", processor_state.MAP), ("datas", processor_state.LIST))),
    ],
    ids=["timers-only", "no-time"],
)
def test_variables_name_the_users_states_and_the_timers_only_once_and_only_with_a_time_mode(
    tmp_path, metadata, expected
):
    """Spark's own `TimerState` variable is not read as a state (`readRegisteredTimers` reads the timers, once);
    a processor in the `NoTime` mode has no timers to read."""
    directory = tmp_path / "state" / "0" / "_metadata" / "v2"
    directory.mkdir(parents=True)
    (directory / "0").write_text(f"v2\n{metadata}")
    assert processor_state.variables(tmp_path, 0) == expected
