"""The `wikireact` command line."""
