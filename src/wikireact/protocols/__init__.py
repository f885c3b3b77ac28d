"""The two action protocols: the paper's text lines (`text`) and native tool calls (`tools`)."""
