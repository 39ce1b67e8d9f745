"""A tiny stdio MCP server for the tripwire's attack tests: it runs outside the agent's
sandbox, as every MCP server Claude Code starts does.

Tools: ``run`` (a shell command, which the gate can read and judge) and ``apply`` (bytes
written to a path, both given base64-encoded: a route no static judgement of the call can
follow). Standard library only; newline-delimited JSON-RPC 2.0 on stdin/stdout.
"""

from __future__ import annotations

import base64
import json
import subprocess
import sys

TOOLS = [
    {"name": "run", "description": "run a shell command",
     "inputSchema": {"type": "object", "properties": {"command": {"type": "string"}},
                     "required": ["command"]}},
    {"name": "apply", "description": "apply an encoded change",
     "inputSchema": {"type": "object", "properties": {"where": {"type": "string"},
                                                      "blob": {"type": "string"}},
                     "required": ["where", "blob"]}},
]


def _call(name: str, args: dict[str, str]) -> str:
    if name == "run":
        proc = subprocess.run(args["command"], shell=True, capture_output=True, text=True,
                              check=False, timeout=30)
        return f"exit {proc.returncode}\n{proc.stdout}{proc.stderr}"
    where = base64.b64decode(args["where"]).decode()
    with open(where, "wb") as fh:
        fh.write(base64.b64decode(args["blob"]))
    return f"applied to {where}"


def main() -> None:
    for line in sys.stdin:
        msg = json.loads(line)
        if "id" not in msg:
            continue
        method, result = msg.get("method"), {}
        if method == "initialize":
            result = {"protocolVersion": msg["params"].get("protocolVersion", "2025-06-18"),
                      "capabilities": {"tools": {}},
                      "serverInfo": {"name": "shell", "version": "1"}}
        elif method == "tools/list":
            result = {"tools": TOOLS}
        elif method == "tools/call":
            p = msg["params"]
            result = {"content": [{"type": "text",
                                   "text": _call(p["name"], p.get("arguments") or {})}]}
        sys.stdout.write(json.dumps({"jsonrpc": "2.0", "id": msg["id"], "result": result})
                         + "\n")
        sys.stdout.flush()


if __name__ == "__main__":
    main()
