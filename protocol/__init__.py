"""The wire contract of Modus (PROTOCOL.md): pydantic models and method names."""

from . import methods
from .methods import PROTOCOL_VERSION, REQUESTS, Command
from .models import *  # noqa: F401,F403
from .schema import json_schema

__all__ = ["methods", "PROTOCOL_VERSION", "REQUESTS", "Command", "json_schema"]
