"""Where threads live: checkpoint databases (SQLite, PostgreSQL), the thread registry, run locks, history."""
