"""Which exceptions from a model call are outages (resume later) and which are bugs.

An outage is the outside world failing: the network or the disk (`OSError`, which covers
timeouts and `requests`' errors), an HTTP client's or a provider SDK's error (httpx,
urllib3, aiohttp, groq, openai, anthropic, Google, AWS), or a model of wikireact's own that
cannot answer (`ProviderError`). `reason` turns these, and a setting the model stack finds
unusable only mid-episode (a `ConfigurationError`: an unreadable model-cache row, the API key
needed at the cache's first miss), into a resumable `ModelCallError`: fix it, or wait, then
resume. Anything else (a `TypeError` in a model wrapper, a `KeyError` in a reply parser) is a bug:
resuming would meet it again, so it keeps its type and traceback.
"""

from __future__ import annotations

import http.client
import sys

from wikireact.errors import ConfigurationError, ProviderError

BUILTIN_OUTAGES: tuple[type[BaseException], ...] = (
    OSError,
    http.client.HTTPException,
    ProviderError,
)
"""Outages any model can raise (`TimeoutError` and `ConnectionError` are `OSError`s)."""
SDK_OUTAGES: tuple[tuple[str, str], ...] = (
    ("httpx", "HTTPError"),
    ("urllib3.exceptions", "HTTPError"),
    ("aiohttp", "ClientError"),
    ("groq", "APIError"),
    ("openai", "APIError"),
    ("anthropic", "APIError"),
    ("google.api_core.exceptions", "GoogleAPIError"),
    ("botocore.exceptions", "BotoCoreError"),
    ("botocore.exceptions", "ClientError"),
)
"""(module, class) of the base of each HTTP client's and provider SDK's own errors."""


def outage_types() -> tuple[type[BaseException], ...]:
    """Return the exception types that mean an outage, among the SDKs this process has loaded.

    An SDK that raised an error has been imported, so looking only at `sys.modules` costs
    no import and misses nothing.
    """
    found = [
        getattr(sys.modules[module], name, None)
        for module, name in SDK_OUTAGES
        if module in sys.modules
    ]
    return BUILTIN_OUTAGES + tuple(t for t in found if isinstance(t, type))


def is_outage(exc: BaseException) -> bool:
    """Return whether `exc` (or an error it was raised from) is an outage, not a bug."""
    kinds = outage_types()
    seen: set[int] = set()
    current: BaseException | None = exc
    while current is not None and id(current) not in seen:
        if isinstance(current, kinds):
            return True
        seen.add(id(current))
        current = current.__cause__
    return False


def stops_episode(exc: BaseException) -> bool:
    """Return whether a model call's `exc` stops the episode resumably (an outage, or a setting).

    A `ConfigurationError` raised by the model stack mid-episode is fixed by the user, then
    the thread resumes; anything else that is no outage is a bug and keeps its type.
    """
    return isinstance(exc, ConfigurationError) or is_outage(exc)
