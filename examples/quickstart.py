"""Start Flora from Python, run a plugin capability that asks for what is missing, stop.

    .venv/bin/python examples/quickstart.py
"""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import main  # noqa: E402

flora = main.start_flora({"capabilities": {"plugin_modules": ["examples.my_tools"]}})
try:
    def ask(text: str) -> dict:
        return flora.system.ask(flora.interaction, {"message_type": "user_input", "user_id": "user_001",
                                                     "content": text}, timeout=60)

    reply = ask("convert the temperature 21.5")   # `to` is missing: the task pauses
    print(reply["message_type"], "|", reply["message"])
    reply = ask("fahrenheit")                     # the answer resumes it
    print(reply["message_type"], "|", reply["result"])
    reply = ask("你好")                            # chat: no task is created
    print(reply["message_type"], "|", reply["message"])
finally:
    flora.shutdown()
