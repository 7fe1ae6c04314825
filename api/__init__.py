"""Flora over HTTP: the REST API, the OpenAI-compatible chat endpoint and the browser client
(``python main.py --api``; see docs/http_api.md)."""
