"""The package's one error root: every error a user can meet is a `WikireactError`.

Its message is one line written for the user (and, for outside-world failures met
mid-episode, it says the thread can be resumed).
"""

from __future__ import annotations


class WikireactError(Exception):
    """Base of wikireact's errors; `str(error)` is the one-line message for the user."""


class EpisodeStoppedError(WikireactError):
    """An outside service stayed down mid-episode; the thread's checkpoint can be resumed."""


class ModelCallError(EpisodeStoppedError):
    """The model did not answer (after its client's own retries)."""


class WikiOutageError(EpisodeStoppedError):
    """Wikipedia could not be reached (after the source's own retries); nothing was observed."""


class ConfigurationError(WikireactError, ValueError):
    """A setting, file or input cannot be used (unknown name, unreadable file, bad value); nothing ran."""


class ModelConfigurationError(ConfigurationError):
    """The model string cannot be turned into a model (bad form, unknown provider, no key)."""


class MissingApiKeyError(ModelConfigurationError):
    """The chosen provider needs an API key that is not set."""


def first_line(exc: BaseException) -> str:
    """Return the first line of an exception's message (its type's name if it has none)."""
    return (str(exc).strip().splitlines() or [type(exc).__name__])[0]
