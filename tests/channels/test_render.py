"""Per-channel rendering: MarkdownV2 escaping, Discord and Feishu shapes, splitting at the
channels' limits, code fences repaired across splits, tables as aligned text."""

from __future__ import annotations

import json
import re

import pytest

from capabilities.channels import render
from capabilities.channels.discord.adapter import DISCORD_LIMIT
from capabilities.channels.feishu.render import FEISHU_LIMIT, feishu
from capabilities.channels.render import repair_fences, split_text, tables_to_text
from capabilities.channels.telegram.render import TELEGRAM_LIMIT, telegram, tg_escape


def discord(text: str) -> list[str]:
    return render.plain(text, DISCORD_LIMIT)

SPECIAL = "_*[]()~`>#+-=|{}.!"


def unescaped_specials(v2: str) -> list[str]:
    """MarkdownV2 special characters outside code that are neither escaped nor entity marks."""
    outside = re.sub(r"```.*?```|`[^`]*`", "", v2, flags=re.S)
    outside = re.sub(r"\[((?:[^\]\\]|\\.)*)\]\((?:[^)\\]|\\.)*\)", r"\1", outside)  # a link: its text
    bare = re.sub(r"\\.", "", outside)
    return [c for c in bare if c in "[]()>#+-=|{}.!"]


def fences_balanced(text: str) -> bool:
    return sum(1 for line in text.split("\n") if render.FENCE.match(line)) % 2 == 0


# -- Telegram MarkdownV2 ----------------------------------------------------------------
@pytest.mark.parametrize("char", list(SPECIAL) + ["\\"])
def test_every_special_character_in_plain_text_is_escaped(char):
    assert tg_escape(f"a{char}b") == f"a\\{char}b"


def test_plain_punctuation_is_escaped_and_nothing_else_changes():
    assert telegram("Price: 3.50 (net) - ok!") == ["Price: 3\\.50 \\(net\\) \\- ok\\!"]


def test_bold_italic_strike_and_inline_code_become_v2_entities():
    assert telegram("**bold** and *it* and _it2_ and ~~gone~~ and `a_b*c`") == [
        "*bold* and _it_ and _it2_ and ~gone~ and `a_b*c`"]


def test_inside_code_only_backticks_and_backslashes_are_escaped():
    out = telegram("```python\nprint('a.b', \"\\\\\") # x_y `z`\n```")[0]
    assert out == "```python\nprint('a.b', \"\\\\\\\\\") # x_y \\`z\\`\n```"


def test_a_link_keeps_its_url_with_closing_parens_escaped():
    assert telegram("see [the docs](https://x.org/a_(b)) now.") == [
        "see [the docs](https://x.org/a_(b\\)) now\\."]


def test_headings_become_bold_and_bullets_dots():
    assert telegram("# Title.\n- one\n* two\n1. three") == ["*Title\\.*\n• one\n• two\n1\\. three"]


def test_a_quote_keeps_its_mark():
    assert telegram("> quoted!") == [">quoted\\!"]


def test_an_unmatched_star_or_underscore_is_text():
    out = telegram("2 * 3 = 6 and snake_case_name")[0]
    assert out == "2 \\* 3 \\= 6 and snake\\_case\\_name"
    assert unescaped_specials(out) == []


@pytest.mark.parametrize("text", [
    "a (b) [c] {d} <e> f.g!h #i +j -k =l |m ~n",
    "**bold (with parens).** then `code.` then [l](http://x.y/z?a=b&c=d)",
    "| a | b |\n|---|---|\n| 1.5 | 2! |",
    "```\nunterminated (code.",
])
def test_nothing_special_is_left_bare(text):
    for piece in telegram(text):
        assert unescaped_specials(piece) == [], piece


def test_an_empty_reply_renders_to_nothing():
    assert telegram("") == [] and discord("\n\n") == [] and feishu("") == []


# -- splitting --------------------------------------------------------------------------
def test_a_long_reply_is_split_at_paragraphs_within_telegrams_limit():
    text = "\n\n".join(f"Paragraph {i}. " + "word " * 150 for i in range(20))
    pieces = telegram(text)
    assert len(pieces) > 1 and all(len(p) <= TELEGRAM_LIMIT for p in pieces)
    assert all(p.startswith("Paragraph") for p in pieces)  # cut between paragraphs, not inside one
    assert "".join(pieces).count("Paragraph") == 20


def test_escaping_that_outgrows_the_limit_is_split_again():
    text = "." * 3000 + "\n" + "!" * 3000  # every character doubles when escaped
    pieces = telegram(text)
    assert all(len(p) <= TELEGRAM_LIMIT for p in pieces)
    assert sum(p.count("\\.") for p in pieces) == 3000 and sum(p.count("\\!") for p in pieces) == 3000


def test_lines_are_kept_whole_when_there_are_no_paragraphs():
    text = "\n".join(f"line {i:04d} " + "x" * 40 for i in range(200))
    pieces = split_text(text, 1000)
    assert all(len(p) <= 1000 for p in pieces)
    assert all(re.fullmatch(r"line \d{4} x{40}", line) for p in pieces for line in p.split("\n"))


def test_a_word_longer_than_the_limit_is_cut_hard():
    pieces = split_text("y" * 5000, 2000)
    assert [len(p) for p in pieces] == [1996, 1996, 1008] and "".join(pieces) == "y" * 5000


def test_a_code_block_cut_in_two_is_closed_and_reopened_with_its_language():
    code = "\n".join(f"print({i})" for i in range(600))
    pieces = discord(f"Here:\n```python\n{code}\n```\nDone.")
    assert len(pieces) > 1 and all(len(p) <= DISCORD_LIMIT for p in pieces)
    assert all(fences_balanced(p) for p in pieces)
    assert all(p.startswith("```python\n") for p in pieces[1:])
    lines = [line for p in pieces for line in p.split("\n") if line.startswith("print(")]
    assert lines == [f"print({i})" for i in range(600)]


def test_telegram_pieces_of_a_long_code_block_each_render_as_pre():
    code = "\n".join(f"x_{i} = {i}." for i in range(900))
    pieces = telegram(f"```\n{code}\n```")
    assert len(pieces) > 1 and all(p.startswith("```") and p.endswith("```") for p in pieces)
    assert all(len(p) <= TELEGRAM_LIMIT for p in pieces)


def test_split_refuses_a_uselessly_small_limit():
    with pytest.raises(ValueError):
        split_text("abc", 5)


# -- fences and tables --------------------------------------------------------------------
def test_an_open_fence_is_closed():
    assert repair_fences("text\n```js\nlet a = 1;") == "text\n```js\nlet a = 1;\n```"


def test_balanced_fences_are_left_alone():
    text = "```\na\n```\nmid\n~~~\nb\n~~~"
    assert repair_fences(text) == text


def test_a_table_becomes_aligned_columns_in_a_code_block():
    table = "| name | qty |\n|:-----|----:|\n| apple | 3 |\n| kiwi | 12 |"
    assert tables_to_text(f"Stock:\n{table}\nend") == (
        "Stock:\n```\nname   qty\n-----  ---\napple  3\nkiwi   12\n```\nend")


def test_a_table_inside_a_code_block_is_left_as_it_is():
    text = "```\n| a | b |\n|---|---|\n```"
    assert tables_to_text(text) == text


def test_a_row_with_fewer_cells_is_padded():
    assert tables_to_text("a | b | c\n---|---|---\n1 | 2") == "```\na  b  c\n-  -  -\n1  2\n```"


def test_pipes_without_a_rule_line_are_not_a_table():
    assert tables_to_text("a | b\nc | d") == "a | b\nc | d"


# -- Discord ------------------------------------------------------------------------------
def test_discord_keeps_markdown_and_turns_tables_into_code():
    out = discord("**Hi** _there_\n| a | b |\n|---|---|\n| 1 | 2 |")
    assert out == ["**Hi** _there_\n```\na  b\n-  -\n1  2\n```"]


# -- Feishu -------------------------------------------------------------------------------
def test_feishu_post_has_a_paragraph_per_line_with_styles_and_links():
    post = feishu("# Report\n**Total**: 5 see [here](https://x.cn)\n- item")[0]
    assert post["zh_cn"]["content"] == [
        [{"tag": "text", "text": "Report", "style": ["bold"]}],
        [{"tag": "text", "text": "Total", "style": ["bold"]}, {"tag": "text", "text": ": 5 see "},
         {"tag": "a", "text": "here", "href": "https://x.cn"}],
        [{"tag": "text", "text": "• item"}],
    ]


def test_feishu_code_becomes_a_code_block_with_its_language():
    post = feishu("```python\nprint(1)\n```")[0]
    assert post["zh_cn"]["content"] == [[{"tag": "code_block", "text": "print(1)", "language": "PYTHON"}]]


def test_feishu_long_text_is_split_under_its_character_and_byte_limits():
    text = "\n\n".join("段落" * 900 for _ in range(6))  # 1800 CJK characters each: 3 bytes apiece in UTF-8
    posts = feishu(text)
    assert len(posts) >= 3
    for post in posts:
        chars = sum(len(e.get("text", "")) for para in post["zh_cn"]["content"] for e in para)
        assert chars <= FEISHU_LIMIT and len(json.dumps(post, ensure_ascii=False).encode()) <= 30_000
