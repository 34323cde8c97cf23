"""The JSON Schema of every wire model, for clients that generate their types from it.

What the server sends is described as it is serialised: every key is required except the
optional (`Opt`) ones, which are left out when empty. What clients send is described as it is
validated: keys with a default may be left out.
"""

from __future__ import annotations

from typing import Any

from pydantic import TypeAdapter
from pydantic.json_schema import models_json_schema

from . import messages, methods, models

REF = "#/$defs/{model}"


def wire_models() -> list[type[models.Wire]]:
    """Every model of the contract, in the order the modules define them."""
    found: dict[str, type[models.Wire]] = {}
    for module in (models, messages):
        for value in vars(module).values():
            if (
                isinstance(value, type)
                and issubclass(value, models.Wire)
                and value not in (models.Wire, models.Input)
                and not value.__name__.startswith("_")
            ):
                found.setdefault(value.__name__, value)
    return list(found.values())


def _sent_by_server(cls: type[models.Wire], schema: dict[str, Any]) -> None:
    optional = {cls.model_fields[name].alias or name for name in models.omittable(cls)}
    schema["required"] = sorted(k for k in schema.get("properties", {}) if k not in optional)
    for key in optional:
        prop = schema["properties"][key]
        if "anyOf" in prop:  # an optional key is absent, never null
            prop["anyOf"] = [s for s in prop["anyOf"] if s.get("type") != "null"]
            if len(prop["anyOf"]) == 1:
                prop.update(prop.pop("anyOf")[0])
        prop.pop("default", None)


def json_schema() -> dict[str, Any]:
    """One schema document: every model under `$defs`, plus the method tables."""
    classes = wire_models()
    _, top = models_json_schema(
        [(cls, "validation" if cls.client_sent else "serialization") for cls in classes],
        by_alias=True,
        ref_template=REF,
    )
    defs = top["$defs"]
    for cls in classes:
        if not cls.client_sent and cls.__name__ in defs:
            _sent_by_server(cls, defs[cls.__name__])
    update = TypeAdapter(messages.Update).json_schema(mode="serialization", by_alias=True, ref_template=REF)
    update.pop("$defs", None)
    defs["Update"] = update
    return {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "title": "ModusProtocol",
        "description": "The wire contract between the Modus server and its editor clients.",
        "type": "object",
        "properties": {name: {"$ref": REF.format(model=name)} for name in sorted(defs)},
        "x-protocolVersion": methods.PROTOCOL_VERSION,
        "x-requests": {
            name: {"params": req.params_name, "result": req.result_name}
            for name, req in methods.REQUESTS.items()
        },
        "x-notifications": {methods.UPDATE: "Update"},
        "x-serverRequests": {
            methods.APPROVAL: {"params": "ApprovalRequest", "result": "ApprovalResponse"},
            methods.CLIENT_DIAGNOSTICS: {"params": "ClientDiagnosticsParams", "result": "ClientDiagnosticsResult"},
        },
        "x-commands": {k: v for k, v in vars(methods.Command).items() if not k.startswith("_")},
        "$defs": defs,
    }
