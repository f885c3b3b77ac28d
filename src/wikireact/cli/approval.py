"""The terminal approval prompt of `--approve`: a human decides every Search and Lookup.

The prompt never guesses. It shows the step number, the open page, the Thought and the
proposed action, then asks until it gets `y`, `n` or `e`; an edited action is checked
before it is sent, and asked again if it is not a valid action. Everything is written to
stderr, so `--json` output on stdout stays one JSON object. Ctrl-C or Ctrl-D (end of
input) at the prompt raises `KeyboardInterrupt`/`EOFError`: the thread stays paused at
this action and `wikireact resume` asks again.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from typing import Any

from rich.console import Console
from rich.text import Text

from wikireact.cli.display import clean, labelled
from wikireact.protocols.text import FormatError, parse_action, valid_unicode

APPROVE = frozenset({"y", "yes"})
REJECT = frozenset({"n", "no"})
EDIT = frozenset({"e", "edit"})
QUESTION = "Run it? y = yes, n = no (reject), e = edit the action: "
GATED = "Search and Lookup actions are shown for approval before they run; Finish is not."


def read_line() -> str:
    """Read one line from stdin without its newline; raise EOFError at end of input."""
    line = sys.stdin.readline()
    if not line:
        raise EOFError
    return line.rstrip("\r\n")


class ApprovalPrompt:
    """Ask a person at the terminal to approve, edit or reject a proposed action."""

    def __init__(
        self, console: Console, read: Callable[[], str] = read_line, echo: bool | None = None
    ) -> None:
        """Show the dialog on `console` (stderr in the CLI) and read answers with `read`.

        `echo`: end each answered prompt with a newline, as a terminal does when the user
        presses Enter (default: when stdin is not a terminal, e.g. answers piped in).
        """
        self.console = console
        self.read = read
        self.echo = not sys.stdin.isatty() if echo is None else echo

    def ask(self, prompt: str) -> str:
        """Show `prompt` literally and return the answer, stripped."""
        self.console.print(Text(prompt, style="bold"), end="")
        self.console.file.flush()
        answer = self.read()
        if self.echo:
            self.console.print()
        return valid_unicode(answer).strip()  # a terminal may deliver lone surrogates

    def show_proposal(self, proposal: dict[str, Any], step: int, thought: str) -> None:
        """Print what is being decided: step number, open page, Thought and proposed action."""
        page = proposal.get("page_title")
        self.console.print(
            Text.assemble(
                (f"Step {step}", "bold"), " · open page: ", clean(page) if page else "(none)"
            )
        )
        if thought:
            self.console.print(labelled(f"Thought {step}:", "bold magenta", thought))
        self.console.print(
            labelled(f"Proposed action {step}:", "bold yellow", proposal["proposed_action"])
        )

    def decide(self, proposal: dict[str, Any], step: int, thought: str = "") -> Any:
        """Return the resume value for the `act` interrupt: True, `{"action"}` or `{"reject"}`."""
        self.show_proposal(proposal, step, thought)
        while True:
            answer = self.ask(QUESTION).lower()
            if answer in APPROVE:
                return True
            if answer in REJECT:
                note = self.ask("Why? (shown to the model; Enter for no reason): ")
                return {"reject": note or "not approved"}
            if answer in EDIT:
                edited = self.edit()
                if edited is not None:
                    return {"action": edited}
                continue
            self.console.print(Text(f"Not understood: {clean(answer)!r}. Answer y, n or e."))

    def edit(self) -> str | None:
        """Ask for a replacement action until it is valid; None (Enter) goes back."""
        while True:
            text = self.ask("Replacement action, e.g. Search[Ed Wood] (Enter to go back): ")
            if not text:
                return None
            parsed = parse_action(text)
            if isinstance(parsed, FormatError):
                self.console.print(Text(f"Not a valid action: {clean(parsed.message)}"))
                continue
            return str(parsed)
