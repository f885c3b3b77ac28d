"""Wikipedia sources (live API, SQLite snapshots, memory) and the Search/Lookup environment over them."""
