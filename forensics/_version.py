"""The version of forensics, in one place: the package, the CLI and the reports read it here."""
__version__ = "0.1.0"
