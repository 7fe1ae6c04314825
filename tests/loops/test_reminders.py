"""The reminder body as ExecutionActor runs it: parameters checked against its schema, then invoked."""

from __future__ import annotations

from capabilities.base import ExecutionContext
from capabilities.loop import reminders
from capabilities.params import check_parameters
from capabilities.registry import CapabilityRegistry


def test_a_reminder_stored_with_its_asked_time_still_reminds():
    registry = CapabilityRegistry()
    registry.register_module(reminders)
    spec = registry.get_executable("remind")
    check = check_parameters(spec, {"content": "call Li", "time": "in 1 minutes"})
    assert check.complete and check.values == {"content": "call Li"}
    result = spec.invoke(check.values, ExecutionContext(task_id="t", user_id="u", registry=registry))
    assert result == {"message": "⏰ Reminder: call Li"}
