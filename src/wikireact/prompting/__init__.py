"""Prompts: the ReAct/Act prompt, the tools-protocol prompt, the small-model variant, few-shot exemplars.

`tasks` holds what differs between a HotpotQA question's prompts and a FEVER claim's.
"""
