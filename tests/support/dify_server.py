"""A local server speaking Dify's workflow-run API (POST /v1/workflows/run), over real HTTP."""

from __future__ import annotations

import time

from tests.tools.local_http import LocalHTTPServer, Reply, Request

GOOD_KEY_PREFIX = "sk-"


def dify_app(request: Request) -> Reply:
    if request.method != "POST" or request.path != "/v1/workflows/run":
        return Reply.json({"code": "not_found", "message": "no such route"}, 404)
    key = request.headers.get("authorization", "").removeprefix("Bearer ")
    if not key.startswith(GOOD_KEY_PREFIX) or key == "sk-bad":
        return Reply.json({"code": "unauthorized", "message": "Access token is invalid", "status": 401}, 401)
    body = request.json()
    outputs = {"echo": body.get("inputs", {}), "user": body.get("user")}
    return Reply.json({"workflow_run_id": "run-1", "task_id": "dify-task-1",
                       "data": {"id": "run-1", "workflow_id": "wf-1", "status": "succeeded", "outputs": outputs,
                                "error": None, "elapsed_time": 0.01, "total_tokens": 3, "total_steps": 2,
                                "created_at": int(time.time()), "finished_at": int(time.time())}})


def dify_server() -> LocalHTTPServer:
    return LocalHTTPServer(dify_app)
