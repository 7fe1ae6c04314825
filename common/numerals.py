"""Numbers written in Chinese numerals, read as numbers: "一百二十七" → 127, "两万零五" → 20005,
"十二" → 12, "二零二六" → 2026, "三点五" → 3.5. Shared by every reader of Chinese numbers
(schedules, step references in plans, calculations in chat)."""

from __future__ import annotations

import re

ZH_DIGITS = {"零": 0, "〇": 0, "一": 1, "二": 2, "两": 2, "兩": 2, "三": 3, "四": 4, "五": 5, "六": 6, "七": 7, "八": 8, "九": 9}
_ZH_UNITS = {"十": 10, "百": 100, "千": 1000}
_ZH_BIG = {"万": 10_000, "亿": 100_000_000}
ZH_NUMBER = re.compile(r"[零〇一二两兩三四五六七八九十百千万亿]+(?:点[零〇一二三四五六七八九]+)?")


def zh_number(text: str) -> float | int | None:
    """"一百二十七" → 127, "两万零五" → 20005, "十二" → 12, "二零二六" → 2026, "三点五" → 3.5;
    None if it is not a number."""
    whole, _, fraction = text.partition("点")
    if not whole:
        return None
    if all(c in ZH_DIGITS for c in whole):  # digit by digit: 二零二六
        value = int("".join(str(ZH_DIGITS[c]) for c in whole))
    else:
        total = section = 0
        digit: int | None = None
        for char in whole:
            if char in ZH_DIGITS:
                digit = ZH_DIGITS[char]
            elif char in _ZH_UNITS:  # 十 alone is ten: 十二
                section += (1 if digit is None else digit) * _ZH_UNITS[char]
                digit = None
            elif char in _ZH_BIG:
                total += ((section + (digit or 0)) or 1) * _ZH_BIG[char]
                section, digit = 0, None
            else:
                return None
        value = total + section + (digit or 0)
    if not fraction:
        return value
    if not all(c in ZH_DIGITS for c in fraction):
        return None
    return float(f"{value}." + "".join(str(ZH_DIGITS[c]) for c in fraction))
