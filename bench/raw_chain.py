"""The baseline: raw Thespian actors passing a dict along the same path a Flora task takes.

asker → front → agent → worker → agent → front → asker: six message hops over three
actors, like a keyword-routed request in Flora: InteractionActor → AgentActor (routes by
rules) → ExecutionActor (execute) → AgentActor → InteractionActor.
"""

from thespian.actors import Actor


class RawWorker(Actor):
    def receiveMessage(self, message, sender):
        if isinstance(message, dict):
            self.send(sender, {**message, "stage": message["stage"] + 1})


class RawAgent(Actor):
    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.worker = None
        self.front = {}

    def receiveMessage(self, message, sender):
        if not isinstance(message, dict):
            return
        if self.worker is None:
            self.worker = self.createActor(RawWorker)
        if message["stage"] == 0:  # from the front: execute
            self.front[message["id"]] = sender
            self.send(self.worker, {**message, "stage": 1})
        else:  # result back: reply to the front
            self.send(self.front.pop(message["id"]), message)


class RawFront(Actor):
    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.agent = None
        self.askers = {}

    def receiveMessage(self, message, sender):
        if not isinstance(message, dict):
            return
        if self.agent is None:
            self.agent = self.createActor(RawAgent)
        if "stage" in message:
            self.send(self.askers.pop(message["id"]), message)
        else:
            self.askers[message["id"]] = sender
            self.send(self.agent, {**message, "stage": 0})
