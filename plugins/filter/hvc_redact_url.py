# -*- coding: utf-8 -*-
# Apache-2.0
"""`hvc_redact_url`: an URL with the password (or a token-only userinfo) of its userinfo masked.

`https://user:pass@host/path` -> `https://user:****@host/path`; `https://token@host/` -> `https://****@host/`.
Plans, task labels and messages show an index URL through it; an URL without userinfo comes back unchanged.
"""
from __future__ import annotations

import re

# scheme://userinfo@ : the userinfo ends at the last @ before the host's first / ? or #
_USERINFO = re.compile(r"^([A-Za-z][A-Za-z0-9+.-]*://)([^/?#]*)@")


def has_credentials(url) -> bool:
    """Whether the URL carries a userinfo (a user, a password or a token) before its host."""
    return _USERINFO.match(str(url)) is not None


def redact_url(url) -> str:
    match = _USERINFO.match(str(url))
    if match is None:
        return str(url)
    user, colon, _ = match.group(2).partition(":")
    shown = f"{user}:****" if colon else "****"
    return match.group(1) + shown + "@" + str(url)[match.end():]


class FilterModule:
    """hvc_redact_url."""

    def filters(self):
        return {"hvc_redact_url": redact_url}
