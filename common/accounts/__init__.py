"""Accounts: which chat accounts are one person (docs/channels.md, "One person across channels").

:mod:`~common.accounts.store` keeps the links, the one-time codes and where each person last
talked (SQLite by default, Redis in distributed mode); :mod:`~common.accounts.linking` decides
(issue and redeem a code, unlink, list, route a notification to the person).
"""
