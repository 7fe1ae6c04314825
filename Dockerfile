# Flora on its embedded default: the actors, the SQLite store and the packaged model.
FROM python:3.11-slim
RUN apt-get update && apt-get install -y --no-install-recommends build-essential cmake git bubblewrap \
    && rm -rf /var/lib/apt/lists/*
WORKDIR /app
COPY requirements.txt requirements-dev.txt ./
COPY scripts ./scripts
COPY capabilities/llm ./capabilities/llm
COPY capabilities/__init__.py ./capabilities/__init__.py
RUN python -m venv .venv && .venv/bin/pip install -r requirements.txt && bash scripts/install_llm.sh .venv/bin/python
COPY . .
VOLUME /app/state
ENTRYPOINT [".venv/bin/python", "main.py"]
