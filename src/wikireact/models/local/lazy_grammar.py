"""Greedy decoding under a GBNF grammar that checks the model's preferred token first.

llama-cpp-python applies a grammar to every token of the vocabulary at every decoding step:
for Gemma's 262,144 tokens that took about 35 ms per generated token here, more than the
model itself. llama.cpp's own sampling code first checks only the token the model prefers and
applies the grammar to the whole vocabulary only when that token is not allowed. This is
that fast path, as a llama-cpp-python logits processor over llama.cpp's own grammar sampler:
the same grammar engine and the same greedy choice (the most likely allowed token).
"""

from __future__ import annotations

import ctypes
import math
from collections.abc import Iterator
from typing import Any

import numpy as np
import numpy.typing as npt

_SHORTLISTS = (64, 4096)


class LazyGrammar:
    """A logits processor that leaves only the most likely token the grammar allows.

    Use it for one greedy decoding (`temperature=0`), then `close()` it. It follows the
    decoding through the token ids it is shown: each call first feeds the grammar the
    tokens chosen since the previous call.
    """

    def __init__(self, client: Any, grammar: str) -> None:
        """Build llama.cpp's grammar sampler for `grammar` (GBNF, root rule `root`)."""
        import llama_cpp

        self._llama_cpp = llama_cpp
        self._sampler = llama_cpp.llama_sampler_init_grammar(
            client._model.vocab, grammar.encode(), b"root"
        )
        if not self._sampler:
            raise ValueError("llama.cpp refused the grammar")
        self._n_vocab = int(client.n_vocab())
        self._seen: int | None = None
        self._one = (llama_cpp.llama_token_data * 1)()

    def __call__(
        self, input_ids: npt.NDArray[np.intc], scores: npt.NDArray[np.single]
    ) -> npt.NDArray[np.single]:
        """Return `scores` with every token but the chosen one at minus infinity."""
        if self._seen is not None:
            for token in input_ids[self._seen :]:
                self._accept(int(token))
        self._seen = len(input_ids)
        best = int(np.argmax(scores))
        if self._allows(best, float(scores[best])):
            return scores  # greedy decoding takes the most likely token: this one
        best = self._best_allowed(scores)
        chosen = np.full_like(scores, -np.inf)
        chosen[best] = scores[best]
        return chosen

    def close(self) -> None:
        """Free the native grammar sampler."""
        if self._sampler:
            self._llama_cpp.llama_sampler_free(self._sampler)
            self._sampler = None

    def _accept(self, token: int) -> None:
        """Feed the grammar a token the decoding chose."""
        self._llama_cpp.llama_sampler_accept(self._sampler, token)

    def _allows(self, token: int, logit: float) -> bool:
        """Whether the grammar allows `token` next."""
        self._one[0] = self._llama_cpp.llama_token_data(token, logit, 0.0)
        self._apply(self._one, 1)
        return math.isfinite(self._one[0].logit)

    def _best_allowed(self, scores: npt.NDArray[np.single]) -> int:
        """Return the most likely token the grammar allows.

        The grammar looks at the 64 most likely tokens, then the 4,096 most likely, and
        only then at the whole vocabulary: the best allowed token among the most likely
        ones is the best allowed token of all.
        """
        for ids, logits in self._shortlists(scores):
            if np.isfinite(logits).any():
                return int(ids[int(np.argmax(logits))])
        raise RuntimeError(
            "the grammar allows no token"
        )  # llama.cpp ends a complete grammar with EOS

    def _shortlists(
        self, scores: npt.NDArray[np.single]
    ) -> Iterator[tuple[npt.NDArray[np.intc], npt.NDArray[np.single]]]:
        """Yield the shortlists' token ids and their logits under the grammar (-inf: refused)."""
        for size in (*(k for k in _SHORTLISTS if k < self._n_vocab), self._n_vocab):
            if size < self._n_vocab:
                ids = np.argpartition(-scores, size - 1)[:size].astype(np.intc)
            else:
                ids = np.arange(self._n_vocab, dtype=np.intc)
            data = (self._llama_cpp.llama_token_data * size)()
            view = np.ctypeslib.as_array(data)
            view["id"], view["logit"] = ids, scores[ids]
            self._apply(data, size)
            yield ids, view["logit"]

    def _apply(self, data: Any, size: int) -> None:
        """Run the grammar sampler over `size` candidates in `data`."""
        candidates = self._llama_cpp.llama_token_data_array(
            data=ctypes.cast(data, self._llama_cpp.llama_token_data_p),
            size=size,
            selected=-1,
            sorted=False,
        )
        self._llama_cpp.llama_sampler_apply(self._sampler, ctypes.byref(candidates))
