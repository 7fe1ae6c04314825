"""ExecutionActor: runs capabilities. It is the one place where blocking work (a model
call, an HTTP request, a query) is allowed, because it holds up nobody else: the
AgentActor keeps several of them. Its TaskExecutionService decides everything.

With several nodes, Thespian places each one on a node that accepts ExecutionActors
(``actors.execution``), the one named by ``actors.execution_node`` if set.

An ``analyze`` sent with ``stream`` runs beside the actor (``StreamedCall``) so that the
pieces of a chat reply go back as ``reply_chunk`` messages while it is written; the actor
collects them from its wakeups every ``STREAM_POLL_S``."""

from __future__ import annotations

from datetime import timedelta

from thespian.actors import WakeupMessage

from agents.base import FloraActor
from capability_actors.streamed_call import StreamedCall
from capability_actors.task_execution_service import TaskExecutionService
from common import messages as m

STREAM_POLL_S = 0.05
STREAM_WAKEUP = "flora-stream"


class ExecutionActor(FloraActor):
    role = "execution"

    @staticmethod
    def actorSystemCapabilityCheck(capabilities: dict, requirements: dict) -> bool:
        """Thespian asks each node whether it may host one: only nodes that accept
        ExecutionActors (``actors.execution``), and the one named in ``node`` if any."""
        if not capabilities.get("flora_execution", True):
            return False
        wanted = (requirements or {}).get("node")
        return not wanted or wanted == capabilities.get("flora_node")

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.service: TaskExecutionService | None = None
        self.streams: dict[str, tuple[StreamedCall, object]] = {}  # task_id -> (call, who asked)

    def handlers(self):
        return {"analyze": self.on_analyze, "execute": self.on_execute, "resume_execution": self.on_resume}

    def configured(self, message, sender):
        rt = self.runtime
        self.service = TaskExecutionService(store=rt.store, events=rt.events, registry=rt.registry,
                                            config=rt.config, llm=rt.llm, understanding_llm=rt.understanding_llm,
                                            persona_llms=_persona_llms(rt.config))

    def on_analyze(self, message, sender):
        msg = m.validate(message)
        if not msg.get("stream"):
            self.send(sender, self.service.analyze(msg))
            return
        call = StreamedCall(lambda on_text: self.service.analyze(msg, on_text=on_text))
        if not self.streams:
            self.wakeupAfter(timedelta(seconds=STREAM_POLL_S), payload=STREAM_WAKEUP)
        self.streams[msg["task_id"]] = (call, sender)

    def on_system_message(self, message, sender):
        if isinstance(message, WakeupMessage) and message.payload == STREAM_WAKEUP:
            self._flush_streams()
            if self.streams:
                self.wakeupAfter(timedelta(seconds=STREAM_POLL_S), payload=STREAM_WAKEUP)

    def _flush_streams(self) -> None:
        """Send on what each streamed analysis wrote since the last wakeup, and its result once done."""
        for task_id, (call, asker) in list(self.streams.items()):
            done = call.done  # read first: pieces written before it ended are all taken below
            text = call.pieces()
            if text:
                self.send(asker, m.reply_chunk(task_id=task_id, text=text, seq=call.seq))
                call.seq += 1
            if not done:
                continue
            del self.streams[task_id]
            if call.error is not None:
                self.log.error("analysis of task_id=%s failed: %r", task_id, call.error)
                self.send(asker, m.analysis_result(task_id=task_id, intent="chat",
                                                   message="Flora failed while answering (an internal error, "
                                                           "logged); please try again."))
            else:
                self.send(asker, call.result)

    def on_execute(self, message, sender):
        self.send(sender, self._reported(self.service.execute, m.validate(message)))

    def on_resume(self, message, sender):
        self.send(sender, self._reported(self.service.resume, m.validate(message)))

    def _reported(self, run, msg: dict) -> dict:
        """A bug in Flora while running a task is reported once, as the task's failure: the
        task may already be running, so Thespian's retry of the message would only find it so
        (and leave it running forever) instead of failing again."""
        try:
            return run(msg)
        except Exception as exc:
            self.log.exception("internal error running task_id=%s", msg.get("task_id"))
            return self.service.crashed(msg, exc)


def _persona_llms(config):
    """Personas' own models, each built once when first used."""
    import functools

    from capabilities.llm import persona_llm

    return functools.cache(lambda model: persona_llm(config.llm.model_dump(), model))


def create_execution_actor(parent, config: dict):
    """Create an ExecutionActor under ``parent`` (an actor) and configure it. Thespian places it
    on a node that accepts ExecutionActors, this one if it does; its ``configured`` reply says
    which (ExecutionPool.ready)."""
    wanted = parent.runtime.config.actors.execution_node
    address = parent.createActor(ExecutionActor, targetActorRequirements={"node": wanted} if wanted else None)
    parent.send(address, m.configure(config=config, role="execution"))
    return address
