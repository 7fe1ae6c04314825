"""The documented way to run a channel: ``main.py --config flora.yaml --api`` in a process of
its own, with the token in the environment, answers a Telegram message and stops on SIGTERM."""

from __future__ import annotations

import re
import signal
import subprocess
import sys
from pathlib import Path

import yaml

from agents.actor_system import free_port
from tests.support.flora_process import end_marked, marked_env
from tests.support.telegram_server import TOKEN, BotAPI

ROOT = Path(__file__).resolve().parents[2]


def test_main_with_a_telegram_config_answers_in_the_chat(tmp_path):
    documented = re.search(r"```yaml\n(channels:\n  telegram:.*?)```", (ROOT / "docs/channels.md").read_text(),
                           re.S).group(1)
    with BotAPI() as bot:
        config = yaml.safe_load(documented)
        config["channels"]["telegram"].update(api_base=bot.url, poll_timeout_s=1)
        config.update(data_dir=str(tmp_path / "data"), memory={"enabled": False},
                      llm={"backend": "function", "function": "tests.support.fake_llm:respond"})
        path = tmp_path / "flora.yaml"
        path.write_text(yaml.safe_dump(config))
        env, mark = marked_env()
        env["TELEGRAM_BOT_TOKEN"] = TOKEN
        process = subprocess.Popen([sys.executable, "main.py", "--config", str(path), "--api",
                                    "--port", str(free_port())], cwd=ROOT, env=env,
                                   stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        try:
            bot.add_message("hello from the command line", chat_id=31, user_id=123456789)
            sent = bot.wait_sent(1, chat_id=31, timeout=60)
            assert "hello from the command line" in re.sub(r"\\(.)", r"\1", sent[0]["text"])
            process.send_signal(signal.SIGTERM)
            assert process.wait(timeout=30) == 0, process.stdout.read()
        finally:
            if process.poll() is None:
                process.kill()
                process.wait()
            end_marked(mark)
