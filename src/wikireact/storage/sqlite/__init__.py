"""Threads in one SQLite file: wikireact's compact checkpointer and its helpers."""
