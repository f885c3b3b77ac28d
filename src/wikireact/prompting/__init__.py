"""Prompts: the ReAct/Act prompt, the tools-protocol prompt, the small-model variant, few-shot exemplars."""
