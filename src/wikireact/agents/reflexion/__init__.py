"""Reflexion (Shinn et al. 2023): ReAct trials, an evaluator, and lessons kept between them.

Each trial is a whole ReAct episode (`wikireact.graph`, run by the `trial` node). A failed
trial gets one reflection call that writes a short lesson; the next trial's prompt shows
the lessons (`wikireact.prompting.lessons`). With `memory="question"` the lessons are also
kept in LangGraph's long-term store under the question (`memory.py`), so a later run on
the same question starts with them. The graph is in `graph.py`, its state in `state.py`.
"""
