"""Intent accuracy of the embedded model: 20 mixed Chinese/English requests, each with the
capability (or chat/system) a person would expect, through IntentRouter (rules first, then
the model via the shared model host). Prints each decision, the accuracy and the time.

    .venv/bin/python bench/intent_accuracy.py
"""

import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from capabilities.llm import build_model_host
from capabilities.llm.openai_compat import OpenAICompatibleLLM
from capabilities.cognition.intent_router import IntentRouter
from capabilities.routing.task_router import TaskRouter
from config import load_config
from init_plugins import build_registry
reg = build_registry(load_config({'llm': {'backend': 'none'}, 'capabilities': {'plugin_modules': ['examples.my_tools']}}))
CASES = [
 ("what were the sales last month?", "data_query"), ("how many orders did we get yesterday", "data_query"),
 ("上个月的销售额是多少", "data_query"), ("show me the customers table", "data_query"),
 ("download https://example.com/report.json", "http_request"), ("call the weather API at http://api.local/w", "http_request"),
 ("帮我请求一下这个网址 http://a.b/c", "http_request"), ("post this json to our webhook", "http_request"),
 ("run my dify app", "dify_workflow"), ("触发一下工作流", "dify_workflow"), ("start the workflow for onboarding", "dify_workflow"),
 ("convert 30 degrees to fahrenheit", "convert_temperature"), ("把25摄氏度换成华氏", "convert_temperature"),
 ("tell me a joke", "chat"), ("how are you today?", "chat"), ("谢谢你的帮助", "chat"), ("what is the capital of France?", "chat"),
 ("写一首关于春天的诗", "chat"), ("what can you do?", "system"), ("你有哪些功能", "system"),
]
h = build_model_host({'backend':'local','model':'qwen2.5-coder-0.5b','data_dir': str(Path(__file__).resolve().parent.parent / 'data')}).start()
llm = OpenAICompatibleLLM(h.base_url, model='qwen2.5-coder-0.5b', schema_mode='json_object', timeout_s=120, max_retries=0)
ir = IntentRouter(TaskRouter(reg), llm)
ok = 0
t0 = time.time()
for text, want in CASES:
    r = ir.classify(text)
    got = r.capability or r.kind
    good = got == want or (want == 'chat' and r.kind == 'chat') or (want=='system' and r.kind=='system')
    ok += good
    print('OK ' if good else 'BAD', f'{text!r:45} -> {r.kind}/{r.capability} ({r.source})')
print(f'{ok}/{len(CASES)} right; {(time.time() - t0) / len(CASES):.2f} s per request')
h.stop()
