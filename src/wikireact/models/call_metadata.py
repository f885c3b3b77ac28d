"""Keys of the metadata wikireact attaches to every model call.

Nodes and baselines put them in the call's `config["metadata"]`; the model cache and
the scripted test model read them. Defined here, below both, so that neither the core
nor the evaluation imports the test double.
"""

from __future__ import annotations

CALL_INDEX_KEY = "wikireact_call_index"
"""The call's index within its episode (its step number minus one, or a CoT-SC sample index)."""
CALL_OFFSET_KEY = "wikireact_call_offset"
"""Model calls an enclosing agent made before this episode (e.g. Plan-and-Execute's planner and
earlier sub-goals): `reason` adds it to the call index, so one script spans the whole run."""
TOKENS_OFFSET_KEY = "wikireact_tokens_offset"
"""Prompt and reply tokens an enclosing agent's calls used before this episode
(`{"input_tokens": n, "output_tokens": m}`): `observe` counts them in the token budgets, so
a nested episode (a Reflexion trial, a sub-goal) stops where the whole run reaches them."""
QUESTION_ID_KEY = "wikireact_question_id"
"""The evaluation question's id, when the call belongs to one."""
REPLY_FORM_KEY = "wikireact_reply_form"
"""The form the call's reply must take (`wikireact.models.reply_form`), for models that decode
under a grammar (local models); every other model ignores run metadata."""
