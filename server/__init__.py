"""Modus: a language-server backend for mode-aware coding agents."""

#: pyproject.toml's version, which is the one source: tests/test_release.py checks that this copy
#: (read without importlib.metadata, which start-up does not load) and the extension's agree.
__version__ = "0.1.0"
