"""`python -m wikireact` runs the command line."""

from wikireact.cli.app import main

main()
