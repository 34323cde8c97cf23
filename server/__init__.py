"""Modus: a language-server backend for mode-aware coding agents."""

__version__ = "0.1.0"
