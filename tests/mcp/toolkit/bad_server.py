"""A deliberately bad MCP server for `harness tools --check` (tests/mcp/toolkit/run.sh).

Newline-delimited JSON-RPC over stdio, written with the standard library
only, so that every definition is sent exactly as written below (the SDKs
refuse some of them, such as an input schema that is not an object): each
tool breaks one or more rules of the audit (docs/mcp.md, "Auditing tool
definitions"). It is a server under audit, not a stand-in for a real peer.
Every call answers "ok".
"""

import json
import sys

OBJECT = {"type": "object", "properties": {}}

TOOLS = [
    # Codex rewrites the dot; the name reads like a read, without readOnlyHint.
    {"name": "files.read", "description": "Reads a file.", "inputSchema": OBJECT},
    # Gemini CLI: a digit first.
    {"name": "9lives", "description": "Counts lives.", "inputSchema": OBJECT},
    # Gemini CLI (over 64) and Cursor (server + tool over 60).
    {"name": "make_" + "x" * 65, "description": "Makes.", "inputSchema": OBJECT},
    # Gemini CLI: $schema, propertyNames, object-valued additionalProperties.
    {
        "name": "make_map",
        "description": "Makes a map.",
        "inputSchema": {
            "$schema": "http://json-schema.org/draft-07/schema#",
            "type": "object",
            "properties": {
                "map": {
                    "type": "object",
                    "propertyNames": {"pattern": "^[a-z]+$"},
                    "additionalProperties": {"type": "string"},
                }
            },
        },
    },
    # Gemini CLI: a description over 1024 characters.
    {"name": "make_essay", "description": "Writes. " * 140, "inputSchema": OBJECT},
    # A property without a type.
    {
        "name": "make_any",
        "description": "Takes anything.",
        "inputSchema": {"type": "object", "properties": {"value": {"description": "Anything."}}},
    },
    # Not an object schema.
    {"name": "make_list", "description": "Takes a list.", "inputSchema": {"type": "array"}},
    # Results with structuredContent beside content.
    {
        "name": "make_report",
        "description": "Reports.",
        "inputSchema": OBJECT,
        "outputSchema": {"type": "object", "properties": {"ok": {"type": "boolean"}}},
        "annotations": {"readOnlyHint": False},
    },
]




def answer(request):
    method = request.get("method")
    if method == "initialize":
        version = request.get("params", {}).get("protocolVersion", "2025-11-25")
        return {
            "protocolVersion": version,
            "capabilities": {"tools": {}},
            "serverInfo": {"name": "bad-server", "version": "1.0.0"},
        }
    if method == "tools/list":
        return {"tools": TOOLS}
    if method == "tools/call":
        return {"content": [{"type": "text", "text": "ok"}], "isError": False}
    if method == "ping":
        return {}
    return None


for line in sys.stdin:
    try:
        request = json.loads(line)
    except ValueError:
        continue
    if not isinstance(request, dict) or "id" not in request or "method" not in request:
        continue
    result = answer(request)
    if result is None:
        reply = {"jsonrpc": "2.0", "id": request["id"], "error": {"code": -32601, "message": "Method not found"}}
    else:
        reply = {"jsonrpc": "2.0", "id": request["id"], "result": result}
    sys.stdout.write(json.dumps(reply) + "\n")
    sys.stdout.flush()
