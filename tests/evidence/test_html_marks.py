"""The trajectory browser's marks: where cited sentences sit in observations, in the page's offsets."""

from __future__ import annotations

from wikireact.eval.html_report import cited_marks


def test_marks_are_utf16_offsets_of_the_cited_sentence_in_its_step() -> None:
    steps = [{"observation": "😀 Intro. Wood was born in Poughkeepsie."}, {"observation": ""}]
    citation = {"step": 1, "sentence": "Wood was born in Poughkeepsie.", "start": 17, "end": 28}
    # the emoji is two UTF-16 code units: the sentence starts at 10, not 9
    assert cited_marks(steps, [citation]) == {0: [[10, 40]]}


def test_malformed_citations_mark_nothing() -> None:
    steps = [{"observation": "Wood was born in Poughkeepsie."}]
    bad = [None, {"step": "1"}, {"step": 5, "sentence": "x"}, {"step": 1, "sentence": "absent"}]
    assert cited_marks(steps, bad) == {} and cited_marks(steps, "nope") == {}
