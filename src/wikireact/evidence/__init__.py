"""Answers with their evidence: the sentences the environment showed that a final answer rests on.

- `wikireact.protocols.citations`: what is kept (`ShownSentence` per step, `Citation` per cited sentence).
- `shown`: which sentences of a page a Search or Lookup observation showed (recorded by `act`).
- `spans`: where an answer (official HotpotQA normalisation) or a quoted phrase sits in a sentence.
- `cite`: the citations of a final answer over a trajectory, and `answer_evidence`, the state
  update every agent writes when its episode ends (one call: `update |= answer_evidence(...)`).
- `verify`: the `verify_finish` check (a Finish whose answer no observation showed).
"""

from __future__ import annotations

from wikireact.evidence.cite import answer_evidence, cite
from wikireact.protocols.citations import Citation, ShownSentence

__all__ = ["Citation", "ShownSentence", "answer_evidence", "cite"]
