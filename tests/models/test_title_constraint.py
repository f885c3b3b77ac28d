"""A Search spells only titles the snapshot holds: the title check over multi-character token pieces."""

from __future__ import annotations

from pathlib import Path

import pytest
from support import write_snapshot

from wikireact.wiki.title_index import TitleIndex, title_index

pytest.importorskip("numpy")
import numpy as np  # noqa: E402

from wikireact.models.local.title_constraint import (  # noqa: E402
    ANY_TITLE,
    SUGGESTED,
    TitleCheck,
    TitleGrammar,
)

PIECES = [
    "Action 1: Search[",
    "Par",
    "is",
    "]",
    "Paris",
    " Hilton",
    "Pr",
    "ague",
    "is]",
    "par",
    " ",
    "Lookup[",
    "Hil",
    "x",
    "é",
    "e ",
    "Thought 1: I search Paris.\n",
]
TITLES = ["Paris", "Paris Hilton", "Prague", "Zoë Saldaña", "The Prague Cemetery", "Paris (band)"]


def _check(**rules: tuple[str, ...]) -> tuple[TitleCheck, dict[str, int]]:
    tokens = {piece: index for index, piece in enumerate(PIECES)}
    check = TitleCheck(TitleIndex(TITLES), lambda t: PIECES[t].encode(), **rules)
    return check, tokens


def _written(check: TitleCheck, tokens: dict[str, int], *pieces: str) -> None:
    for piece in pieces:
        assert check.rank(tokens[piece]) is not None, piece
        check.follow(tokens[piece])


def test_a_search_argument_may_only_spell_the_start_of_a_title_in_its_stored_case() -> None:
    check, tokens = _check()
    assert check.rank(tokens["x"]) == SUGGESTED  # outside an argument: anything
    _written(check, tokens, "Thought 1: I search Paris.\n", "Action 1: Search[")
    assert check.rank(tokens["Par"]) == ANY_TITLE
    assert check.rank(tokens["Paris"]) == ANY_TITLE
    assert check.rank(tokens["par"]) is None  # case as stored
    assert check.rank(tokens["x"]) is None
    assert check.rank(tokens[" "]) is None
    assert check.rank(tokens["]"]) is None  # an empty argument is no title
    _written(check, tokens, "Par")
    assert check.rank(tokens["is"]) == ANY_TITLE
    assert check.rank(tokens["is]"]) == ANY_TITLE  # "Paris" is a title: `]` may close it
    assert check.rank(tokens["ague"]) is None
    _written(check, tokens, "is")
    assert check.rank(tokens["]"]) == ANY_TITLE
    assert check.rank(tokens[" Hilton"]) == ANY_TITLE
    assert check.rank(tokens["Hil"]) is None  # no "ParisHil..."
    _written(check, tokens, " Hilton", "]")
    assert check.rank(tokens["x"]) == SUGGESTED  # the argument is closed


def test_the_closing_bracket_is_allowed_only_where_a_title_ends() -> None:
    check, tokens = _check()
    _written(check, tokens, "Action 1: Search[", "Pr")
    assert check.rank(tokens["]"]) is None
    assert check.rank(tokens["ague"]) == ANY_TITLE
    _written(check, tokens, "ague")
    assert check.rank(tokens["]"]) == ANY_TITLE


def test_titles_searched_already_stay_refused_unless_the_latest_miss_suggests_them() -> None:
    # the step grammar's guard rail: a new Search may not start like a searched title
    check, tokens = _check(refused=("pari", "the pari"), suggested=("Paris Hilton",))
    _written(check, tokens, "Action 1: Search[")
    assert check.rank(tokens["Par"]) == SUGGESTED  # only along the suggestion
    _written(check, tokens, "Par", "is")
    assert check.rank(tokens["]"]) is None  # "Paris" itself is refused
    assert check.rank(tokens[" Hilton"]) == SUGGESTED
    check, tokens = _check(refused=("prag", "the prag"))
    _written(check, tokens, "Action 1: Search[")
    assert check.rank(tokens["Pr"]) is None  # "Prague" is the only "Pr..." title, and refused
    assert check.rank(tokens["Par"]) == ANY_TITLE


def test_a_refused_start_in_any_case_leaves_the_other_titles_reachable() -> None:
    index = TitleIndex(["Paris", "PARIS", "Parma", "paris", "The Parisian"])
    assert index.reaches(b"Par", ("pari",))  # Parma
    assert not index.reaches(b"Pari", ("pari",))
    assert not index.reaches(b"PA", ("pari",))
    assert index.reaches(b"", ("pari", "the pari")) and not index.reaches(b"Th", ("the pari",))
    assert not index.reaches(b"", ("p", "the pari"))
    assert index.is_title(b"Parma", ("pari",)) and not index.is_title(b"paris", ("pari",))
    assert index.count(b"") == 5 and index.count(b"Pari") == 1 and b"Pari" not in index


def test_titles_no_search_can_spell_are_left_out_and_non_ascii_titles_stay_exact() -> None:
    index = TitleIndex(["Zoë Saldaña", "A [b]", "x" * 121, " Leading", "Line\nbreak"])
    assert len(index) == 1
    check = TitleCheck(index, lambda t: ["Search[", "Zo", "ë", "e", " Saldaña", "]"][t].encode())
    for token in (0, 1):
        check.follow(token)
    assert check.rank(3) is None and check.rank(2) == ANY_TITLE
    check.follow(2)
    check.follow(4)
    assert check.rank(5) == ANY_TITLE


def test_a_snapshot_s_index_holds_its_titles_as_stored_and_is_built_once(
    tmp_path: Path,
) -> None:
    snapshot = write_snapshot(tmp_path / "pages.db", {"Ed Wood": "Ed Wood was a filmmaker."})
    index = title_index(snapshot)
    assert b"Ed Wood" in index and b"ed wood" not in index
    assert title_index(snapshot) is index  # shared, not built per step


def _titles_only(check: TitleCheck) -> TitleGrammar:
    """`TitleGrammar` with a step grammar that allows every token: only the title check acts."""
    llama_cpp = pytest.importorskip("llama_cpp")  # its token array (the `offline` extra)

    grammar = object.__new__(TitleGrammar)
    grammar._llama_cpp = llama_cpp
    grammar._sampler = None
    grammar._n_vocab = len(PIECES)
    grammar._seen = None
    grammar._one = (llama_cpp.llama_token_data * 1)()
    grammar._check = check
    grammar._apply = lambda data, size: None  # type: ignore[method-assign]
    return grammar


def _choose(grammar: TitleGrammar, text: list[int], likely: dict[int, float]) -> int:
    """Append the token the grammar leaves after `text` (the model giving `likely` probabilities)."""
    scores = np.full(len(PIECES), np.log(1e-6), dtype=np.single)
    for token, probability in likely.items():
        scores[token] = np.log(probability)
    chosen = grammar(np.array(text, dtype=np.intc), scores)
    assert np.isfinite(chosen).sum() in (1, len(PIECES))
    text.append(int(np.argmax(chosen)))
    return text[-1]


def test_a_title_the_model_gives_under_one_percent_is_not_forced_on_it() -> None:
    """Held to the titles, "World Cup" was written `Search[World's fair]`: the model gave the
    forced continuation 0.5%. Such a Search now spells what the model means, and misses."""
    check, tokens = _check()
    search, paris, x = tokens["Action 1: Search["], tokens["Paris"], tokens["x"]
    grammar, text = _titles_only(check), list[int]()
    _choose(grammar, text, {search: 0.99})
    # "x" is no title; "Paris" continues one at 5%: a likely enough title is still forced
    assert _choose(grammar, text, {x: 0.9, paris: 0.05}) == paris
    check, tokens = _check()
    grammar, text = _titles_only(check), list[int]()
    _choose(grammar, text, {search: 0.99})
    # at 0.5% the model does not mean "Paris": it writes "x", and the rest of the argument too
    assert _choose(grammar, text, {x: 0.9, paris: 0.005}) == x
    assert _choose(grammar, text, {tokens["é"]: 0.9, paris: 0.05}) == tokens["é"]
    assert _choose(grammar, text, {tokens["]"]: 0.9}) == tokens["]"]
    # the next Search is held to the titles again
    _choose(grammar, text, {tokens["Thought 1: I search Paris.\n"]: 0.9})
    _choose(grammar, text, {search: 0.9})
    assert _choose(grammar, text, {x: 0.9, paris: 0.05}) == paris


def test_a_model_unsure_of_its_own_spelling_stays_held_to_the_titles() -> None:
    """A model that prefers no token much (the tiny test model, or a real one unsure) means no
    other title: it is held to the snapshot's, as before."""
    check, tokens = _check()
    search, paris, x = tokens["Action 1: Search["], tokens["Paris"], tokens["x"]
    grammar, text = _titles_only(check), list[int]()
    _choose(grammar, text, {search: 0.99})
    assert _choose(grammar, text, {x: 0.3, tokens["é"]: 0.3, paris: 0.005}) == paris


def test_the_titles_a_miss_suggests_are_never_let_go_of() -> None:
    check, tokens = _check(suggested=("Paris Hilton",))
    search, x = tokens["Action 1: Search["], tokens["x"]
    grammar, text = _titles_only(check), list[int]()
    _choose(grammar, text, {search: 0.99})
    assert _choose(grammar, text, {x: 0.99, tokens["Par"]: 1e-5}) == tokens["Par"]
