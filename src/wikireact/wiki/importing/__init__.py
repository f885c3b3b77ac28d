"""Building snapshots: importing HotpotQA files, JSONL and the 2017 abstracts dump."""
