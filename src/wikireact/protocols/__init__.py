"""The two action protocols: the paper's text lines (`text`) and native tool calls (`tools`).

`labels` holds FEVER's three labels and how a Finish is read as one.
"""
