"""PostgreSQL URLs in messages and hints, never with their password.

A password can sit in a URL's user info (`postgresql://user:PASSWORD@host/db`) or in a
`password=` parameter. libpq quotes the text it cannot parse in its errors (the password
included), so messages about a URL go through `hide_password`, and a command printed for
the user (a resume hint) carries `without_password(url)`: libpq then takes the password
from PGPASSWORD, a password file (~/.pgpass, PGPASSFILE) or a service file, as
`PASSWORD_SOURCES` tells the reader. Plain text operations: nothing here needs psycopg.
"""

from __future__ import annotations

import re
from urllib.parse import unquote

PASSWORD_SOURCES = "give the password in PGPASSWORD, ~/.pgpass or a service file"
_QUERY_PASSWORD = re.compile(r"([?&])password=[^&#]*&?")
_QUOTED = re.compile(r'"([^"]*)"')
_SHORTEST_MASKED = 3
"""Unquoted text is masked only from this length on (a one-letter password would mask every such letter)."""


def _authority_end(rest: str) -> int:
    """Where the host part of a URL (after `scheme://`) ends."""
    return min((i for i in (rest.find(c) for c in "/?#") if i != -1), default=len(rest))


def _parts(url: str) -> tuple[str, str, str]:
    """Return (`scheme://`, user info, the rest), splitting at the host part's last `@`."""
    scheme, sep, rest = url.partition("://")
    userinfo, at, _ = rest[: _authority_end(rest)].rpartition("@")
    if not sep or not at:
        return scheme + sep, "", rest if sep else url
    return scheme + sep, userinfo, rest[len(userinfo) + 1 :]


def _secrets(url: str) -> list[str]:
    """Every text libpq or a reader could take for the password, longest first."""
    rest = url.partition("://")[2]
    authority = rest[: _authority_end(rest)]
    userinfos = {
        authority.rpartition("@")[0],
        authority.partition("@")[0] if "@" in authority else "",  # libpq splits at the first
        rest.partition("?")[0].rpartition("@")[0],  # a password with a raw `/` in it
    }
    found = {info.partition(":")[2] for info in userinfos}
    found |= set(re.findall(r"[?&]password=([^&#]*)", url))
    found |= {unquote(s) for s in found}
    return sorted((s for s in found if s), key=len, reverse=True)


def has_password(url: str) -> bool:
    """Whether `url` holds a password (in its user info or a `password=` parameter)."""
    return bool(_secrets(url))


def without_password(url: str) -> str:
    """Return `url` with its password left out (libpq then looks for it elsewhere)."""
    scheme, userinfo, rest = _parts(url)
    user = userinfo.partition(":")[0]
    rest = _QUERY_PASSWORD.sub(r"\1", rest).replace("?#", "#").replace("&#", "#").rstrip("?&")
    return f"{scheme}{user}@{rest}" if user else f"{scheme}{rest}"


def redacted(url: str) -> str:
    """Return `url` for a message: its password, if any, shown as `***`."""
    scheme, userinfo, rest = _parts(url)
    user, colon, password = userinfo.partition(":")
    shown = f"{scheme}{user}{':***' if colon and password else ''}{'@' if userinfo else ''}{rest}"
    return _mask(re.sub(r"([?&]password=)[^&#]*", r"\1***", shown), _secrets(url))


def _mask(text: str, secrets: list[str]) -> str:
    for secret in secrets:
        if len(secret) >= _SHORTEST_MASKED:
            text = text.replace(secret, "***")
    return text


def hide_password(text: str, url: str) -> str:
    """Return `text` (e.g. libpq's error about `url`) with every trace of the password masked."""
    text = text.replace(url, redacted(url))
    secrets = _secrets(url)
    text = _QUOTED.sub(
        lambda m: '"***"' if m.group(1) and any(m.group(1) in s for s in secrets) else m.group(0),
        text,
    )
    return _mask(text, secrets)
