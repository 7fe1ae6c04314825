"""Chinese numerals read as numbers, for every reader that meets them."""

from __future__ import annotations

import pytest

from common.numerals import zh_number


@pytest.mark.parametrize("text, value", [("一百二十七", 127), ("十二", 12), ("二十", 20), ("两万零五", 20005),
                                         ("一千零一", 1001), ("二零二六", 2026), ("三点五", 3.5), ("十万", 100000),
                                         ("五百", 500), ("兩", 2), ("十", 10)])
def test_chinese_numerals(text, value):
    assert zh_number(text) == value


@pytest.mark.parametrize("text", ["", "点五", "十二个", "三点十"])
def test_what_is_not_a_numeral(text):
    assert zh_number(text) is None
