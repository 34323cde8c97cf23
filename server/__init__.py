"""Modus: a language-server backend for mode-aware coding agents."""

__version__ = "0.1.0"

#: Environment variables this process set for itself (see cli.py); the commands it runs do
#: not inherit them.
ADDED_ENV: set[str] = set()
