"""Which part of an observation is page text: the only words a local model may copy into a Finish.

The conversation fences every observation between « and », wikireact's own messages too, so
an extractive answer could copy them: Gemma 3 270M answered `Finish[S. Similar]` out of
`Could not find S. Similar: [...]`. Page text is what a Search opened (the page's first
sentences) and the sentence a Lookup found (after its `(Result k / N)` counter); a repeat
shown with its earlier result (the small-model prompt) is that result. Everything else the
environment or the graph says has a fixed form, recognised here: misses, disambiguations,
empty or unreadable pages, `No more results.`, invalid, repeated, rejected or cleared steps.
"""

from __future__ import annotations

import re

from wikireact.wiki.environment import NO_PAGE_OPEN

_REPEATED = re.compile(r"You did .+? already\. Its result was: ", re.DOTALL)
"""How the small-model prompt shows a repeated action with its earlier result."""
_RESULT = re.compile(r"\(Result \d+ / \d+\) ")
_TRUNCATED = re.compile(r" \[… truncated, \d+ more characters\]$")
_MESSAGES = re.compile(
    "|".join(
        (
            r"Could not find .*Similar: \[",  # wiki.environment: a miss
            r".*? may refer to several pages\. Similar: \[",  # a disambiguation page
            r"The page .* (has no text\.$|is already open \(since step )",
            r"No more results\.$",
            re.escape(NO_PAGE_OPEN),
            r"The snapshot could not be read here \(",
            r"Wikipedia (is unavailable right now|answered with an error)",
            r"(Invalid action|Invalid answer|Invalid plan): ",  # the graph's own steps
            r"You already did .* at step \d+ ",
            r"No action to execute\.$",
            r"(The reviewer's |A human reviewer rejected )",
            r"\[(cleared to fit the context: |steps \d+-\d+ cleared to fit the context)",
        )
    ),
    re.DOTALL,
)


def page_text(observation: str) -> str:
    """Return the page text `observation` shows ("" for the environment's own messages)."""
    text = observation.strip()
    while repeated := _REPEATED.match(text):
        text = text[repeated.end() :]
    if result := _RESULT.match(text):
        text = text[result.end() :]
    elif _MESSAGES.match(text):
        return ""
    return _TRUNCATED.sub("", text)
