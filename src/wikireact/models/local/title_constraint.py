"""Search only titles the snapshot holds: the step grammar plus a title check, token by token.

Gemma 3 270M searches titles a snapshot does not hold ("Could not find ...") and cannot
use the `Similar:` list the miss shows. Over a snapshot, a local model's `Search[...]`
argument is therefore decoded so that it always spells the start of a title the snapshot
holds, case and punctuation as stored, and `]` may close it only where a title ends.

The check is lazy, like the grammar's (`wikireact.models.local.lazy_grammar`): the token the
model prefers is checked first, its text against the titles (`wikireact.wiki.title_index`),
never a grammar alternation of a million titles. Only when the grammar or the titles refuse
it are the most likely tokens searched, preferring those that continue one of the latest
miss's `Similar:` titles, then those that continue any title. The step grammar's own guard
rails still hold (a Search may not start like a title searched already, unless suggested):
a title that starts so is not reachable either, so the two never disagree into a dead end.

A title the model does not mean is worse than a miss: held to the titles, "World Cup" became
`Search[World's fair]` and "Apple" `Search[Ancestral Puebloans]`. So when nothing is suggested,
the model gives its own next token more than `MEANT_ABOVE` (50%) and every token that
continues a title less than `LET_GO_BELOW` (1%), the check lets go of the rest of that
argument: the model spells the title it means, the Search misses, and the next Search prefers
the miss's `Similar:` titles (it never lets go of those). An unsure model stays held.
"""

from __future__ import annotations

import ctypes
import functools
import math
import re
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from wikireact.models.local.lazy_grammar import LazyGrammar
from wikireact.wiki.title_index import TitleIndex, minimal, title_index

_OPEN_SEARCH = re.compile(rb"Search\[([^\]\n]*)$")
"""A Search whose argument is still being written, at the end of the text."""
SUGGESTED, ANY_TITLE = 0, 1
"""How a token continues the Search argument: along a `Similar:` title, or along another title."""
LET_GO_BELOW = math.log(0.01)
"""The log-probability under which a token that continues a title is one the model does not mean."""
MEANT_ABOVE = math.log(0.5)
"""The log-probability over which the model's own (refused) token is one it means."""


class TitleCheck:
    """Which tokens keep the Search argument being written the start of a reachable title.

    `piece` gives a token's text as UTF-8 bytes. Outside a Search argument every token is
    fine. A title is reachable if it is one of `suggested`, or starts with none of
    `refused` (in any case).
    """

    def __init__(
        self,
        titles: TitleIndex,
        piece: Callable[[int], bytes],
        *,
        refused: Sequence[str] = (),
        suggested: Sequence[str] = (),
    ) -> None:
        """Check against `titles`; `piece(token) -> bytes` is the token's text."""
        self._titles, self._piece = titles, piece
        self._refused = minimal(refused)
        self._suggested = tuple(t.encode() for t in suggested if t.strip())
        self._text = b""
        self._argument: bytes | None = None
        self._let_go = False
        self.suggests = bool(self._suggested)
        """Whether some titles are suggested (`Similar:`), to be preferred."""
        self.usable = self.suggests or titles.reaches(b"", self._refused)
        """Whether any title is reachable at all (else the check is not applied)."""

    def follow(self, token: int) -> None:
        """Take the next token the decoding chose."""
        self._text += self._piece(token)
        found = _OPEN_SEARCH.search(self._text[-2 * 1024 :])
        self._argument = found.group(1) if found else None
        self._let_go = self._let_go and self._argument is not None

    @property
    def may_let_go(self) -> bool:
        """Whether the argument being written may leave the titles (nothing is suggested)."""
        return self._argument is not None and not self.suggests

    def let_go(self) -> None:
        """Allow any text for the rest of the argument being written (the model means no title)."""
        self._let_go = self.may_let_go

    def rank(self, token: int) -> int | None:
        """`SUGGESTED`, `ANY_TITLE`, or None when `token` leads to no reachable title."""
        if self._argument is None:
            return SUGGESTED
        if self._let_go:
            return ANY_TITLE
        text = self._piece(token)
        if not text:
            return None  # a control token, or one the grammar reads as other text
        end = text.find(b"]")
        if end == -1:
            return self._reaching(self._argument + text)
        return self._ending(self._argument + text[:end])

    def _reaching(self, prefix: bytes) -> int | None:
        if any(title.startswith(prefix) for title in self._suggested):
            return SUGGESTED
        return ANY_TITLE if self._titles.reaches(prefix, self._refused) else None

    def _ending(self, title: bytes) -> int | None:
        if title in self._suggested:
            return SUGGESTED
        return ANY_TITLE if self._titles.is_title(title, self._refused) else None


class TitleGrammar(LazyGrammar):
    """`LazyGrammar` whose chosen token must also pass a `TitleCheck`."""

    def __init__(self, client: Any, grammar: str, check: TitleCheck) -> None:
        """Decode under `grammar` (GBNF) and `check`."""
        super().__init__(client, grammar)
        self._check = check

    def _accept(self, token: int) -> None:
        super()._accept(token)
        self._check.follow(token)

    def _allows(self, token: int, logit: float) -> bool:
        return self._check.rank(token) is not None and super()._allows(token, logit)

    def _best_allowed(self, scores: npt.NDArray[np.single]) -> int:
        """Return the most likely token both allow, unless the model does not mean that title.

        When nothing is suggested, the model gives its own token more than `MEANT_ABOVE`
        and the best token that continues a title less than `LET_GO_BELOW`, the check lets
        go of the argument and the grammar alone chooses (the Search will miss, and its
        `Similar:` titles come next). An unsure model is still held to the titles.
        """
        best = self._best_title_token(scores)
        if not self._check.may_let_go:
            return best
        top = float(np.max(scores))  # the preferred token's logit
        log_total = top + math.log(float(np.sum(np.exp(scores - top))))
        if top - log_total > MEANT_ABOVE and float(scores[best]) - log_total < LET_GO_BELOW:
            self._check.let_go()
            return super()._best_allowed(scores)
        return best

    def _best_title_token(self, scores: npt.NDArray[np.single]) -> int:
        """Return the most likely token both allow, along a suggested title if one is short-listed.

        Over the whole vocabulary (nothing short-listed passed), or with nothing suggested,
        the first token by likelihood that passes both is taken.
        """
        for ids, logits in self._shortlists(scores):
            finite = np.flatnonzero(np.isfinite(logits))
            best: int | None = None
            for at in finite[np.argsort(-logits[finite], kind="stable")]:
                rank = self._check.rank(int(ids[at]))
                if rank == SUGGESTED:
                    return int(ids[at])
                if rank is not None and best is None:
                    best = int(ids[at])
                    if len(ids) == self._n_vocab or not self._check.suggests:
                        return best
            if best is not None:
                return best
        raise RuntimeError("the grammar and the snapshot's titles allow no token")


def title_check(client: Any, snapshot: str | None, form: Mapping[str, Any]) -> TitleCheck | None:
    """Return the title check of one step over the snapshot file `snapshot` (None: no check).

    `form` is the step grammar's (`wikireact.models.local.step_form`): its refused and
    suggested searches. The snapshot's index is built at its first use and shared.
    """
    if not snapshot:
        return None
    check = TitleCheck(
        title_index(Path(snapshot)),
        token_pieces(client),
        refused=tuple(form.get("not_searches", ())),
        suggested=tuple(form.get("suggested_searches", ())),
    )
    return check if check.usable else None


@functools.lru_cache(maxsize=4)
def token_pieces(client: Any) -> Callable[[int], bytes]:
    """Return `piece(token) -> bytes`: a token's text as llama.cpp's grammar reads it."""
    import llama_cpp

    vocab = client._model.vocab
    known: dict[int, bytes] = {}

    def piece(token: int) -> bytes:
        if token not in known:
            buffer = ctypes.create_string_buffer(64)
            size = llama_cpp.llama_token_to_piece(vocab, token, buffer, len(buffer), 0, True)
            if size < 0:  # a longer piece: -size is its length
                buffer = ctypes.create_string_buffer(-size)
                size = llama_cpp.llama_token_to_piece(vocab, token, buffer, -size, 0, True)
            known[token] = buffer.raw[: max(size, 0)]
        return known[token]

    return piece
