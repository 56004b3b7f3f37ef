"""`python -m forensics ...` runs the CLI."""
from .cli import main

main()
