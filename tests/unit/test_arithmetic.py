"""Calculations read from a message and worked out exactly, for chat to state."""

from __future__ import annotations

import pytest

from capabilities.cognition.arithmetic import worked
from capabilities.cognition.chat import chat_prompt


@pytest.mark.parametrize("said, value", [
    ("what's 38 * 41?", 1558),
    ("could you work out 999 + 1", 1000),
    ("how much is 7 times 8 times 9", 504),
    ("2024 divided by 8?", 253),
    ("what is 20 percent of 350", 70),
    ("what's 12.5% of 64", 8),
    ("11 squared", 121),
    ("4 cubed?", 64),
    ("what is 3 to the power of 4", 81),
    ("square root of 81?", 9),
    ("(12 + 8) * 3 = ?", 60),
    ("what's 2,500 minus 1,250", 1250),
    ("1000-1", 999),
    ("九十九乘以九十九等于多少", 9801),
    ("两千零二十四除以八", 253),
    ("帮我算算 66+34", 100),
    ("七的立方是多少", 343),
    ("3的5次方", 243),
    ("144的平方根是多少", 12),
    ("一万减去三千五百", 6500),
    ("原价480元的外套，打七五折多少钱？", 360),
    ("300的15%是多少", 45),
    ("1.5加2.25", 3.75),
])
def test_a_calculation_is_worked_out(said, value):
    calculation = worked(said)
    assert calculation is not None, said
    assert calculation.value == pytest.approx(value)


@pytest.mark.parametrize("said", [
    "thanks, that was helpful",
    "I ran 5-10 km today",              # a range
    "what happened on 2024-10-01?",     # a date
    "how much is 3/4 cup of flour in grams",
    "my number is 138-1234-5678",
    "一打鸡蛋12个，买5打一共多少个",       # a word problem: the model's
    "split a $96 bill between 4 people",
    "100减去百分之二十是多少",              # a percentage of what? left to the model
    "what's 3x + 5 = 20, solve for x",
    "价格从100增加到120",
    "我今年30岁，他比我大5岁",
    "what's 10 / 0",
    "what's 10 ** 100000",
    "今天一起吃饭吗",
])
def test_what_is_not_a_calculation_is_left_alone(said):
    assert worked(said) is None


def test_the_result_is_shown_plainly():
    assert worked("17乘以23等于多少").shown() == "17 × 23 = 391"
    assert worked("what's 7 / 2").shown() == "7 ÷ 2 = 3.5"


def test_the_chat_prompt_carries_the_worked_result_next_to_the_message():
    messages = chat_prompt("三百减去一百二十七", "zh", [])
    assert messages[-1] == {"role": "user", "content": "三百减去一百二十七"}
    assert messages[-2]["role"] == "system" and "300 - 127 = 173" in messages[-2]["content"]
    assert all("Worked out" not in m["content"] for m in chat_prompt("how was your day?", "en", []))


@pytest.mark.parametrize("text, value", [("2 的 100 次方是多少", 2 ** 100), ("what is 2 to the power of 100?", 2 ** 100),
                                         ("what is 12345678 * 87654321?", 12345678 * 87654321)])
def test_whole_numbers_are_exact_however_many_digits(text, value):
    # a chat model asked for 2^100 answers with a number it made up: the sum is worked out instead
    assert worked(text).value == value and str(value) in worked(text).shown()


@pytest.mark.parametrize("text", ["what is 10 ** 1000?", "9 的 999 次方是多少"])
def test_a_result_too_long_to_say_is_left_alone(text):
    assert worked(text) is None
