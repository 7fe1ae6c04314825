"""ExecutionActor: runs capabilities. It is the one place where blocking work (a model
call, an HTTP request, a query) is allowed, because it holds up nobody else: the
AgentActor keeps several of them. Its TaskExecutionService decides everything."""

from __future__ import annotations

from agents.base import FloraActor
from capability_actors.task_execution_service import TaskExecutionService
from common import messages as m


class ExecutionActor(FloraActor):
    role = "execution"

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.service: TaskExecutionService | None = None

    def handlers(self):
        return {"analyze": self.on_analyze, "execute": self.on_execute, "resume_execution": self.on_resume}

    def configured(self, message, sender):
        rt = self.runtime
        self.service = TaskExecutionService(store=rt.store, events=rt.events, registry=rt.registry,
                                            config=rt.config, llm=rt.llm)

    def on_analyze(self, message, sender):
        self.send(sender, self.service.analyze(m.validate(message)))

    def on_execute(self, message, sender):
        self.send(sender, self.service.execute(m.validate(message)))

    def on_resume(self, message, sender):
        self.send(sender, self.service.resume(m.validate(message)))
