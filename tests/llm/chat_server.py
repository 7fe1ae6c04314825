"""A small, real OpenAI-style chat server for testing OpenAICompatibleLLM.

It listens on a free 127.0.0.1 port and answers each POST to
``/v1/chat/completions`` with the next scripted `Answer`, recording every
request body, so the client is exercised over real sockets and real HTTP
rather than a mocked transport.
"""

from __future__ import annotations

import json
import threading
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


@dataclass
class Answer:
    """One scripted HTTP answer: a JSON body, or SSE `events` when given."""

    status: int = 200
    body: dict | None = None
    events: list[str] = field(default_factory=list)


def completion(text: str, *, model: str = "test-model") -> Answer:
    """A 200 answer in the shape of OpenAI's chat completion."""
    return Answer(body={
        "model": model,
        "choices": [{"index": 0, "message": {"role": "assistant", "content": text}, "finish_reason": "stop"}],
        "usage": {"prompt_tokens": 7, "completion_tokens": 3, "total_tokens": 10},
    })


def streamed(*deltas: str) -> Answer:
    """A 200 SSE answer sending `deltas` as chunks, with a ping comment, then [DONE]."""
    events = [": ping"]
    events += [json.dumps({"choices": [{"index": 0, "delta": {"content": d}}]}) for d in deltas]
    events.append("[DONE]")
    return Answer(events=events)


class ChatServer:
    def __init__(self) -> None:
        self.answers: list[Answer] = []
        self.requests: list[dict] = []
        self.headers: list[dict[str, str]] = []
        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self._thread = threading.Thread(target=self._httpd.serve_forever, args=(0.05,), daemon=True)

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self._httpd.server_address[1]}/v1"

    def start(self) -> None:
        self._thread.start()

    def stop(self) -> None:
        self._httpd.shutdown()
        self._httpd.server_close()

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        server = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                server.requests.append(json.loads(self.rfile.read(length) or b"{}"))
                server.headers.append(dict(self.headers))
                if self.path != "/v1/chat/completions":
                    return self._send(Answer(404, {"error": {"message": f"no route {self.path}"}}))
                if not server.answers:
                    return self._send(Answer(500, {"error": {"message": "test server script is empty"}}))
                self._send(server.answers.pop(0))

            def _send(self, answer: Answer) -> None:
                if answer.events:
                    payload = "".join(
                        (e if e.startswith(":") else f"data: {e}") + "\n\n" for e in answer.events
                    ).encode()
                    content_type = "text/event-stream"
                else:
                    payload = json.dumps(answer.body or {}).encode()
                    content_type = "application/json"
                self.send_response(answer.status)
                self.send_header("Content-Type", content_type)
                self.send_header("Content-Length", str(len(payload)))
                self.end_headers()
                self.wfile.write(payload)

            def log_message(self, format: str, *args: object) -> None:
                pass  # keep pytest output clean; requests are recorded instead

        return Handler
