"""Every exception wikireact raises, in one place, grouped by what a caller does about it.

A user-facing error is a `WikireactError` whose message is one line written for the user.
Catch it by meaning:

- `ConfigurationError` (also a `ValueError`): a setting, file or input cannot be used;
  nothing ran. Fix the input and run again.
- `EpisodeStoppedError`: an outside service (the model, Wikipedia, the database holding the
  run locks) stayed down mid-episode; the thread's checkpoint can be resumed later.
- `BusyError`: someone else is running it right now; wait, then resume.

The last group are internal: raised and caught inside wikireact to say where a file is
malformed; they never reach a user as such.
"""

from __future__ import annotations


class WikireactError(Exception):
    """Base of wikireact's errors; `str(error)` is the one-line message for the user.

    Advice names the settings of the surface the user meets: `str(error)` names the library's
    (`Context(model="local", wiki="offline")`); an error whose advice differs on the command
    line also carries the CLI's wording (`cli`, naming `--offline`), which the CLI shows
    (`cli_message`). Both survive pickling.
    """

    def __init__(self, *args: object, cli: str | None = None) -> None:
        """Keep the library's message (`args`, as any exception) and the CLI's, if it differs."""
        super().__init__(*args)
        self.cli = cli


# --- Configuration: nothing ran ------------------------------------------------------------


class ConfigurationError(WikireactError, ValueError):
    """A setting, file or input cannot be used (unknown name, unreadable file, bad value); nothing ran."""


class ModelConfigurationError(ConfigurationError):
    """The model string cannot be turned into a model (bad form, unknown provider, no key)."""


class MissingApiKeyError(ModelConfigurationError):
    """The chosen provider needs an API key that is not set."""


class GgufError(ModelConfigurationError):
    """The file is not a usable GGUF model (missing, not GGUF, truncated, no chat template)."""


class MissingExtraError(ConfigurationError):
    """A feature was asked for whose optional extra is not installed."""


class WikiConfigurationError(ConfigurationError):
    """The wiki setting names no usable source (unknown name, unreadable snapshot)."""


class SnapshotError(ConfigurationError):
    """The file is missing, unreadable, not a snapshot, or from a newer wikireact."""


class ForeignFileError(ConfigurationError):
    """The file is not wikireact's to write: its message says why, in one line."""


class ModelCacheError(ConfigurationError):
    """The model cache file cannot be used (unreadable, or another program's database)."""


class PromptFileError(ConfigurationError):
    """The prompt file cannot be read, or holds no usable exemplar for the method."""


class DatasetError(ConfigurationError):
    """The dataset file is missing, not UTF-8, malformed, or has invalid items."""


class EvalError(ConfigurationError):
    """The evaluation cannot start or continue (bad output dir, settings mismatch)."""


class ThreadsError(ConfigurationError):
    """The checkpoint database cannot be used, or a thread is unknown."""


class StoredTypeError(ThreadsError):
    """A stored checkpoint holds a value of a type wikireact does not load: refused, nothing imported.

    Checkpoints are data: only the types `wikireact.storage.serde.ALLOWED_TYPES` lists are
    decoded. The message names where (`location`) and, once a saver adds it, the thread.
    """

    def __init__(self, location: str, what: str, thread_id: str | None = None) -> None:
        """Say that `location` (thread `thread_id` there, when known) holds `what`."""
        self.location, self.what, self.thread_id = location, what, thread_id
        where = location if thread_id is None else f"thread {thread_id!r} in {location}"
        super().__init__(
            f"{where} holds {what}, which wikireact does not load (nothing was imported or run)"
        )

    def in_thread(self, thread_id: str | None) -> StoredTypeError:
        """Return this refusal naming `thread_id` (unchanged when it names one already)."""
        if self.thread_id is not None or thread_id is None:
            return self
        return StoredTypeError(self.location, self.what, thread_id)


# --- Episode stopped: resumable ------------------------------------------------------------


class EpisodeStoppedError(WikireactError):
    """An outside service stayed down mid-episode; the thread's checkpoint can be resumed."""


class ModelCallError(EpisodeStoppedError):
    """The model did not answer (after its client's own retries)."""


class WikiOutageError(EpisodeStoppedError):
    """Wikipedia could not be reached (after the source's own retries); nothing was observed.

    A source raises it (network, timeout, bad reply, unreadable file) with a message written
    for the model and the user, e.g. `Wikipedia is unavailable right now (timeout after 10 s).`
    """


WikiUnavailableError = WikiOutageError
"""The name sources used before 0.3; the same class."""


class LockLostError(EpisodeStoppedError):
    """The connection holding this process's run locks ended: its episodes stopped unsaved.

    Another process may have taken the threads over; they continue from their last
    checkpoint there, or in a new run of the same command.
    """

    @classmethod
    def explain(cls, location: str, exc: BaseException) -> str:
        """Say in one line that the run locks held on `location` are gone, and why (`exc`)."""
        return (
            f"lost the connection to {location} that holds this process's run locks "
            f"({first_line(exc)})"
        )


class ContextExhaustedError(EpisodeStoppedError):
    """The next prompt does not fit the model's context window, even fitted (or the provider said so).

    A ReAct episode ends with status `context_exhausted` instead (resumable with a larger
    window, `--context-tokens`, or another model), as does every agent whose own prompt cannot fit.
    """

    def __init__(self, tokens: int | None, limit: int | None, window: int | None) -> None:
        """Record the prompt's tokens, the prompt limit and the window (None: not known)."""
        self.tokens, self.limit, self.window = tokens, limit, window
        if tokens is None:
            text = "the model refused the prompt as longer than its context window"
        else:
            text = (
                f"the prompt needs {tokens} tokens even with old observations cleared; "
                f"the model's window of {window} tokens leaves {limit} for it"
            )
        super().__init__(text)


class ProviderError(WikireactError):
    """A model of wikireact's own could not answer (e.g. a script ran out of replies).

    Like a provider's own errors, it stops the episode resumably (`ModelCallError`).
    """


class ScriptExhaustedError(ProviderError, RuntimeError):
    """Raised when a script is asked for more outputs than it holds."""


# --- Busy: someone else has it -------------------------------------------------------------


class BusyError(WikireactError):
    """Another process holds what was asked for right now; wait, then try again."""


class ThreadBusyError(BusyError):
    """Another process is running the thread right now."""


# --- Not an outage, not a configuration problem ----------------------------------------------


class WikiPageUnreadableError(WikireactError):
    """The source answered, but a page it holds cannot be read (e.g. a corrupt snapshot page).

    Unlike an outage it does not pass with time (resuming would meet it again), so `search`
    makes its message the observation and the episode goes on.
    """


class PgUnavailableError(WikireactError, RuntimeError):
    """No PostgreSQL server binaries here, or the throwaway test cluster did not start."""


# --- Internal: raised and caught inside wikireact --------------------------------------------


class JsonTextError(ValueError):
    """The text is not JSON wikireact can read; `str()` says why (and where) in a few words."""

    def __init__(self, reason: str, line: int | None = None, column: int | None = None) -> None:
        """Record why the text was refused, and where when the parser knows."""
        self.reason, self.line = reason, line
        where = f"line {line} column {column}: " if line is not None else ""
        super().__init__(where + reason)


class JsonValueError(ValueError):
    """A JSON value that cannot be read: its message is one line without the location."""


class BadLineError(ValueError):
    """A line that is not an abstracts record: the message says why, in one line."""


class MalformedRowError(WikireactError, ValueError):
    """A row holds a value of the wrong type (e.g. a BLOB where text belongs): read like a corrupt page.

    Not a `sqlite3.DatabaseError`, so that this module does not import sqlite3 (`--help` stays
    light); readers catch it beside `sqlite3.Error`.
    """


def first_line(exc: BaseException) -> str:
    """Return the first line of an exception's message (its type's name if it has none)."""
    return (str(exc).strip().splitlines() or [type(exc).__name__])[0]


def cli_message(exc: BaseException) -> str:
    """Return `exc`'s message as the CLI says it: its CLI wording, else `str(exc)`."""
    return getattr(exc, "cli", None) or str(exc)
