"""Fixtures for the llm capability tests (the `real_model` marker is in pytest.ini)."""

from __future__ import annotations

import pytest

from .chat_server import ChatServer


@pytest.fixture
def chat_server():
    """A real HTTP server on 127.0.0.1 that answers /v1/chat/completions from a script."""
    server = ChatServer()
    server.start()
    yield server
    server.stop()
