"""Arithmetic said in a message, worked out exactly, for chat to state.

A small model gets sums wrong ("三百减去一百二十七" → 15), and a wrong number said warmly is
still wrong. When a chat message asks for a calculation written out in numbers and
operators — in digits or Chinese numerals, with symbols or words ("17 times 23", "15% of
80", "1000除以8", "12的平方", "原价200，打八折") — :func:`worked` reads it and computes it
with a small evaluator of its own (numbers, + - × ÷, powers, square roots, brackets; no names,
no calls but ``sqrt``, bounded powers), and the chat prompt carries the result. Word problems
("split a $96 bill between 4 people") are left to the model: only what is written as a
calculation is computed.

A message is read as a calculation when, after the numbers and operators are found, it has
an operator between numbers (or a power / root of a number) and either asks for a result
("what's", "how much", "calculate", "是多少", "等于", "算一下", "?", "=") or is nothing but
the calculation. A dash or slash between digits without spaces (dates, ranges, "3/4 cup")
counts only in a message that asks for a result. The words that ask, and those that say nothing
besides, are in the table ``tables/arithmetic.json`` (rule_tables.py).
"""

from __future__ import annotations

import ast
import math
import re
from dataclasses import dataclass

from capabilities.cognition.rule_tables import table
from common.numerals import ZH_DIGITS, ZH_NUMBER, zh_number

_WORDS = table("arithmetic")  # the words that ask for a result, and those that say nothing besides

# ----------------------------------------------------------------------------- Chinese numerals
def _zh_digits(text: str) -> str:
    """Chinese numerals written as digits, except inside words where they are not numbers
    (一下, 一共, 一点 as "a little", 一个 keeps its 1: it is a count)."""
    def number(match: re.Match) -> str:
        run = match.group(0)
        before = match.string[max(0, match.start() - 1):match.start()]
        after = match.string[match.end():match.end() + 1]
        if run == "一" and after in "下共些起样直定般点会":
            return run
        if before == "打" and after == "折":  # a discount: 八折, 七五折 — read by _DISCOUNT
            return run
        value = zh_number(run)
        return run if value is None else _number_text(value)

    return ZH_NUMBER.sub(number, text)


# ----------------------------------------------------------------------------- words to operators
_NUM = r"\d+(?:\.\d+)?"
_DISCOUNT = re.compile(rf"({_NUM})[^\d+\-*/×÷=?？]{{0,6}}?打\s*([一二三四五六七八九\d]{{1,2}}(?:\.\d)?)\s*折")
_REWRITES: list[tuple[re.Pattern, str]] = [(re.compile(p, re.IGNORECASE), r) for p, r in [
    (rf"({_NUM})\s*(?:%|percent|per cent)\s+of\s+({_NUM})", r"(\1/100*\2)"),
    (rf"({_NUM})\s*的\s*({_NUM})\s*%", r"(\1*\2/100)"),
    (rf"({_NUM})\s*的\s*平方根", r"sqrt(\1)"),
    (rf"(?:the\s+)?(?:square\s+root|sqrt)\s+of\s+({_NUM})", r"sqrt(\1)"),
    (rf"(?:sqrt|√|根号|开根号)\s*\(?\s*({_NUM})\s*\)?", r"sqrt(\1)"),
    (rf"({_NUM})\s*的\s*平方", r"(\1)**2"),
    (rf"({_NUM})\s*的\s*立方", r"(\1)**3"),
    (rf"({_NUM})\s*的\s*({_NUM})\s*次方", r"(\1)**\2"),
    (rf"({_NUM})\s*squared", r"(\1)**2"),
    (rf"({_NUM})\s*cubed", r"(\1)**3"),
    (rf"({_NUM})\s*(?:to the power of|to the|\^)\s*({_NUM})(?:st|nd|rd|th)?(?:\s+power)?", r"(\1)**\2"),
    (r"\bmultiplied\s+by\b|\btimes\b|×|✕|乘以|乘上|乘", "*"),
    (r"\bdivided\s+by\b|÷|除以", "/"),
    (r"\bplus\b|加上|加", "+"),
    (r"\bminus\b|减去|减掉|减", "-"),
    (rf"(?<=\d)\s*[x]\s*(?=\d)", "*"),
    (r"（", "("), (r"）", ")"),
]]
_SPAN = re.compile(r"(?:sqrt\(|[\d.()+\-*/])(?:sqrt\(|[\d.()+\-*/\s])*")
_ASKS = _WORDS["asks_result"]
_TIGHT = re.compile(r"\d[-/]\d")  # 2026-11-25, 5-10 km, 3/4 cup: a calculation only when nothing else is said
_FILLER = _WORDS["filler"]  # what a message holds besides the calculation and still asks only for its result


@dataclass(frozen=True)
class Worked:
    expression: str  # as computed: "17*23"
    value: float | int

    def shown(self) -> str:
        """"17 × 23 = 391"."""
        readable = (self.expression.replace("**", "^").replace("*", " × ").replace("/", " ÷ ")
                    .replace("+", " + ").replace("-", " - "))
        return f"{' '.join(readable.split())} = {_number_text(self.value)}"


def worked(text: str) -> Worked | None:
    """The calculation the message asks for, computed; None when it asks for none."""
    if not text or len(text) > 300:
        return None
    normal = _zh_digits(text.replace("百分之", "%之"))  # 百 of 百分之 is not a hundred
    normal = re.sub(r"%之\s*(\d+(?:\.\d+)?)", r"\1%", normal)
    tight = bool(_TIGHT.search(normal))
    normal = _DISCOUNT.sub(lambda m: f"({m.group(1)}*{_discount(m.group(2))})", normal)
    asks = bool(_ASKS.search(normal))
    for pattern, replacement in _REWRITES:
        normal = pattern.sub(replacement, normal)
    normal = re.sub(r"(?<=\d),(?=\d{3}\b)", "", normal)  # 1,000
    if re.search(r"\d\s*%", normal):  # a percentage not "of" something: 100 minus 20% — leave it to the model
        return None
    best: Worked | None = None
    for match in _SPAN.finditer(normal):
        span = match.group(0).strip().rstrip("+-*/. (").lstrip("+*/. )")
        if not _is_calculation(span):
            continue
        rest = _FILLER.sub("", normal.replace(match.group(0), " ", 1))
        if rest and (not asks or tight):
            continue
        value = _evaluate(span)
        if value is not None and (best is None or len(span) > len(best.expression)):
            best = Worked("".join(span.split()), value)
    return best


def _discount(said: str) -> float:
    digits = "".join(str(ZH_DIGITS[c]) if c in ZH_DIGITS else c for c in said)
    if "." in digits:
        return float(digits) / 10
    return int(digits) / (10 if len(digits) == 1 else 100)


def _is_calculation(span: str) -> bool:
    compact = "".join(span.split())
    return bool(re.search(r"[\d)][+\-*/]+[\d(s]|sqrt\(", compact))


# ----------------------------------------------------------------------------- the evaluator
_MAX_EXPONENT = 64  # of a power that is not of whole numbers
_MAX_MAGNITUDE = 1e30  # of a result that is not a whole number
_MAX_DIGITS = 400  # of a whole-number result: 2 的 100 次方 is exact, 10 ** 10 ** 10 is never tried


def _evaluate(expression: str) -> float | int | None:
    try:
        tree = ast.parse("".join(expression.split()), mode="eval")
        value = _value(tree.body)
    except (SyntaxError, ValueError, ZeroDivisionError, OverflowError, RecursionError):
        return None
    if isinstance(value, float):
        if not math.isfinite(value):
            return None
        if value.is_integer() and abs(value) < 1e15:
            return int(value)
    return value


def _value(node: ast.AST) -> float | int:
    if isinstance(node, ast.Constant) and type(node.value) in (int, float):
        return node.value
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.UAdd, ast.USub)):
        inner = _value(node.operand)
        return inner if isinstance(node.op, ast.UAdd) else -inner
    if isinstance(node, ast.BinOp):
        left, right = _value(node.left), _value(node.right)
        if isinstance(node.op, ast.Pow):
            whole = isinstance(left, int) and isinstance(right, int) and right >= 0
            if whole and abs(left) > 1 and right * math.log10(abs(left)) > _MAX_DIGITS:
                raise ValueError("too large")
            if not whole and (abs(right) > _MAX_EXPONENT or abs(left) > _MAX_MAGNITUDE):
                raise ValueError("too large")
            result = left ** right
        elif isinstance(node.op, ast.Add):
            result = left + right
        elif isinstance(node.op, ast.Sub):
            result = left - right
        elif isinstance(node.op, ast.Mult):
            result = left * right
        elif isinstance(node.op, ast.Div):
            result = left / right
        else:
            raise ValueError("operator")
        if isinstance(result, complex):
            raise ValueError("out of range")
        if isinstance(result, int) and not isinstance(result, bool):
            if len(str(abs(result))) > _MAX_DIGITS:
                raise ValueError("out of range")
        elif abs(result) > _MAX_MAGNITUDE:
            raise ValueError("out of range")
        return result
    if (isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "sqrt"
            and len(node.args) == 1 and not node.keywords):
        inner = _value(node.args[0])
        if inner < 0:
            raise ValueError("negative root")
        return math.sqrt(inner)
    raise ValueError(f"not arithmetic: {type(node).__name__}")


def _number_text(value: float | int) -> str:
    if isinstance(value, float):
        if value.is_integer() and abs(value) < 1e15:
            return str(int(value))
        return f"{value:.6g}"
    return str(value)
