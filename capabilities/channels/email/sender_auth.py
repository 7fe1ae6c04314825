"""Whether an e-mail's ``From:`` is its sender's: read from the receiving server's
``Authentication-Results`` header (RFC 8601).

The threat: anyone can write ``From: alice@people.test`` on a mail. Without this check a
forged mail from an allow-listed address is taken as Alice's, runs her tasks, reads and changes
her memories. The receiving mail server checks SPF, DKIM and DMARC and writes what it found in
an ``Authentication-Results`` header, starting with its own name (its ``authserv-id``). A mail
is taken as its From's only when the first such header from a server the channel trusts
(``trusted_authserv_ids``) says one of:

- ``dmarc=pass`` (for the From domain, ``header.from``);
- ``dkim=pass`` with a signing domain (``header.d``) aligned with the From domain;
- ``spf=pass`` with an envelope domain (``smtp.mailfrom``) aligned with the From domain.

Aligned: the same domain, or one a sub-domain of the other (DMARC's relaxed alignment,
approximated without the public-suffix list; a parent of at least two labels). Only the
*first* header from a trusted server counts: the receiving server adds its header above every
header the mail arrived with, so a header the sender wrote, naming the trusted server, sits
below it. The server must add one to every mail (RFC 8601 has it remove look-alikes bearing its
own name); a mail with none from a trusted server is refused. A mail with more than one From
address is refused too.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from email.message import Message
from email.utils import getaddresses

_RESULT = re.compile(r'([A-Za-z0-9_.-]+(?:/[0-9]+)?)\s*=\s*("(?:[^"\\]|\\.)*"|[^\s;]+)')
PASSING = {"dmarc": "header.from", "dkim": "header.d", "spf": "smtp.mailfrom"}


@dataclass(frozen=True)
class Verdict:
    ok: bool
    reason: str


def without_comments(value: str) -> str:
    """``value`` with its (possibly nested) parenthesised comments removed, quoted strings kept."""
    out, depth, quoted, escaped = [], 0, False, False
    for char in value:
        if escaped:
            escaped = False
            if depth == 0:
                out.append(char)
            continue
        if char == "\\":
            escaped = True
            if depth == 0:
                out.append(char)
            continue
        if quoted:
            quoted = char != '"'
            out.append(char)
        elif char == "(":
            depth += 1
        elif char == ")" and depth:
            depth -= 1
        elif depth == 0:
            quoted = char == '"'
            out.append(char)
    return "".join(out)


def parse(value: str) -> tuple[str, list[dict[str, str]]]:
    """``(authserv-id, results)``: each result ``{"method": "dkim", "result": "pass",
    "header.d": "example.com", ...}``; names lower-cased, values unquoted."""
    parts, current, quoted = [], [], False
    for char in without_comments(value):
        if char == '"':
            quoted = not quoted
        if char == ";" and not quoted:
            parts.append("".join(current))
            current = []
        else:
            current.append(char)
    parts.append("".join(current))
    head = parts[0].split()
    authserv = head[0].lower() if head else ""
    results = []
    for part in parts[1:]:
        pairs = _RESULT.findall(part)
        if not pairs:
            continue  # "none", or an empty part
        method, result = pairs[0]
        found = {"method": method.split("/", 1)[0].lower(), "result": result.strip('"').lower()}
        for name, item in pairs[1:]:
            found.setdefault(name.lower(), item.strip('"'))
        results.append(found)
    return authserv, results


def _domain(value: str) -> str:
    return value.rpartition("@")[2].strip().strip(".").lower()


def aligned(domain: str, other: str) -> bool:
    if not domain or not other:
        return False
    if domain == other:
        return True
    shorter, longer = sorted((domain, other), key=len)
    return shorter.count(".") >= 1 and longer.endswith("." + shorter)


def verdict(mail: Message, trusted_authserv_ids: list[str]) -> Verdict:
    """Whether ``mail``'s From is shown to be its sender's (see the module's docstring)."""
    senders = [address for _, address in getaddresses([str(v) for v in mail.get_all("From", [])]) if address]
    if len(senders) != 1:
        return Verdict(False, f"the mail has {len(senders)} From addresses; exactly one is needed")
    from_domain = _domain(senders[0])
    trusted = {t.lower() for t in trusted_authserv_ids}
    for header in mail.get_all("Authentication-Results", []):
        authserv, results = parse(str(header))
        if authserv not in trusted:
            continue
        for found in results:
            key = PASSING.get(found["method"])
            if key is None or found["result"] != "pass":
                continue
            checked = found.get(key) or (from_domain if found["method"] == "dmarc" else "")
            if aligned(_domain(checked), from_domain):
                return Verdict(True, f"{authserv}: {found['method']}=pass for {_domain(checked)}")
        said = " ".join(f"{r['method']}={r['result']}" for r in results) or "no results"
        return Verdict(False, f"{authserv} found no passing check aligned with {from_domain} ({said})")
    return Verdict(False, f"no Authentication-Results header from a trusted server ({', '.join(sorted(trusted)) or 'none configured'})")
