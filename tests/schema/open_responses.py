"""The Open Responses spec beside OpenAI's.

Every Responses payload the bridge emits is validated against both
documents. They agree on almost everything; where they do not, the rule
applied here is written down (and repeated in
docs/mappings/responses-over-chat.md):

* Extensions. The Open Responses spec defines a small vocabulary (function
  tools; message, function_call, function_call_output, reasoning and
  compaction items; its own event names) and lets implementers add item
  types, tools and stream events beyond it, as long as items carry `id`,
  `type` and `status` and events carry `type` and `sequence_number`
  ("Extending Open Responses"). OpenAI's own additions (`custom_tool_call`
  items, `namespace` and hosted tools, `response.reasoning_text.*` events)
  are such extensions. The spec asks that extension types carry a vendor
  prefix (`openai:custom_tool_call`); the bridge keeps OpenAI's names,
  because the clients that send these shapes (Codex, the OpenAI SDKs) know
  only those. So the union schemas are widened with one branch each that
  accepts a type outside the standard vocabulary under those generic rules;
  the OpenAI check of the same payload still validates it in full.
* Standard shapes are never widened: a `function` tool, a `message` item or
  a `response.output_text.delta` event must satisfy the Open Responses
  schema exactly.
"""

from __future__ import annotations

from typing import Any

URI = "urn:wirebridge:spec:open-responses"

# OpenAI schema name -> its Open Responses counterpart.
COUNTERPARTS = {
    "Response": "ResponseResource",
    "CreateResponse": "CreateResponseBody",
}

EXTENSION_ITEM = "WirebridgeExtensionItem"
EXTENSION_TOOL = "WirebridgeExtensionTool"
EXTENSION_TOOL_CHOICE = "WirebridgeExtensionToolChoice"
EXTENSION_EVENT = "WirebridgeExtensionEvent"


def _branch_types(schemas: dict, union: dict) -> list[str]:
    """The `type` values a union's branches are discriminated by."""
    types: list[str] = []
    for branch in union.get("anyOf", union.get("oneOf", [])):
        ref = branch.get("$ref")
        if not ref:
            continue
        schema = schemas[ref.rsplit("/", 1)[-1]]
        tag = schema.get("properties", {}).get("type", {})
        types.extend(v for v in tag.get("enum", []) if isinstance(v, str))
    return types


def _not_one_of(types: list[str]) -> dict:
    return {"type": "string", "not": {"enum": sorted(set(types))}}


def _widen(union: dict, name: str) -> None:
    key = "anyOf" if "anyOf" in union else "oneOf"
    union[key] = list(union[key]) + [{"$ref": f"#/components/schemas/{name}"}]


def extend(doc: dict) -> dict:
    """Adds the extension branches to the unions of an (already
    oneOf-to-anyOf rewritten) Open Responses document, in place."""
    schemas = doc["components"]["schemas"]
    item_types = _branch_types(schemas, schemas["ItemField"]) + _branch_types(
        schemas, schemas["ItemParam"]
    )
    schemas[EXTENSION_ITEM] = {
        "type": "object",
        "description": "An item type outside the Open Responses vocabulary.",
        "required": ["type"],
        "properties": {"type": _not_one_of(item_types)},
    }
    # Output items additionally carry the fields every item must have.
    schemas[EXTENSION_ITEM + "Output"] = {
        "allOf": [
            {"$ref": f"#/components/schemas/{EXTENSION_ITEM}"},
            {
                "required": ["id", "status"],
                "properties": {"id": {"type": "string"}, "status": {"type": "string"}},
            },
        ]
    }
    _widen(schemas["ItemField"], EXTENSION_ITEM + "Output")
    _widen(schemas["ItemParam"], EXTENSION_ITEM)

    tool_types = _branch_types(schemas, schemas["Tool"]) + _branch_types(
        schemas, schemas["ResponsesToolParam"]
    )
    schemas[EXTENSION_TOOL] = {
        "type": "object",
        "description": "A tool type outside the Open Responses vocabulary.",
        "required": ["type"],
        "properties": {"type": _not_one_of(tool_types)},
    }
    _widen(schemas["Tool"], EXTENSION_TOOL)
    _widen(schemas["ResponsesToolParam"], EXTENSION_TOOL)

    schemas[EXTENSION_TOOL_CHOICE] = {
        "type": "object",
        "description": "A tool choice naming a tool type outside the Open Responses vocabulary.",
        "required": ["type"],
        "properties": {"type": _not_one_of(["function", "allowed_tools"])},
    }
    for union in (schemas["ToolChoiceParam"], schemas["ResponseResource"]["properties"]["tool_choice"]):
        _widen(union, EXTENSION_TOOL_CHOICE)

    schemas[EXTENSION_EVENT] = {
        "type": "object",
        "description": "A stream event type outside the Open Responses vocabulary.",
        "required": ["type", "sequence_number"],
        "properties": {"type": {"type": "string"}, "sequence_number": {"type": "integer"}},
    }
    return doc


def event_branches(doc: dict) -> dict[str, str]:
    """Event `type` -> the Open Responses schema of that event, from the
    `text/event-stream` union of `POST /responses`."""
    schemas = doc["components"]["schemas"]
    content = doc["paths"]["/responses"]["post"]["responses"]["200"]["content"]
    union = content["text/event-stream"]["schema"]
    branches: dict[str, str] = {}
    for ref in union.get("anyOf", union.get("oneOf", [])):
        name = ref["$ref"].rsplit("/", 1)[-1]
        for ty in schemas[name]["properties"]["type"]["enum"]:
            branches[ty] = name
    return branches


def event_schema(branches: dict[str, str], event: Any) -> str:
    """The schema an event is checked against: its standard one, else the
    generic rules for extension events."""
    ty = event.get("type") if isinstance(event, dict) else None
    return branches.get(ty, EXTENSION_EVENT) if isinstance(ty, str) else EXTENSION_EVENT
