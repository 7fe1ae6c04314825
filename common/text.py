"""Plain text as Flora shows it: what the readers of pages and of mail tidy alike."""

from __future__ import annotations

import re

_BLANK_LINES = re.compile(r"\n{3,}")


def one_blank_line(text: str) -> str:
    """``text`` with every run of blank lines cut to one (paragraphs kept, gaps closed)."""
    return _BLANK_LINES.sub("\n\n", text)
