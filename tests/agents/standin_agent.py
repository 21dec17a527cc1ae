#!/usr/bin/env python3
"""The scripted stand-in agent: the smallest coding agent there is, for `shellgate eval --sessions`
and the tests. It speaks the OpenAI Responses API (plain JSON, no streaming) to a model, offers it
one shell tool (`exec_command {"cmd"}`), and runs every call with `/bin/bash -c CMD` by absolute
path in the current directory, as Codex does. The tool result is the line's exit status and its
output (standard output, then standard error), as Codex reports them:

  Process exited with code N
  Output:
  ...

It stops at the model's first answer without a tool call, printing that text, and exits 0; after
--max-turns calls it stops with exit status 3; a model it cannot reach or understand is exit 2.

  standin_agent.py --base-url http://127.0.0.1:PORT/v1 [--max-turns 100] PROMPT

Only the standard library; Python 3.9 or newer.
"""

import argparse
import json
import subprocess
import sys
import urllib.error
import urllib.request

SHELL_TOOL = {
    "type": "function",
    "name": "exec_command",
    "description": "Run a shell command in the workspace with /bin/bash -c and return its output.",
    "parameters": {
        "type": "object",
        "properties": {"cmd": {"type": "string", "description": "the shell command"}},
        "required": ["cmd"],
        "additionalProperties": False,
    },
    "strict": True,
}


def ask(base_url, items):
    """One request to the model; its `output` items."""
    body = json.dumps({"model": "stand-in", "input": items, "tools": [SHELL_TOOL],
                       "stream": False}).encode()
    request = urllib.request.Request(base_url.rstrip("/") + "/responses", data=body,
                                     headers={"content-type": "application/json",
                                              "authorization": "Bearer stand-in"})
    with urllib.request.urlopen(request, timeout=600) as response:
        return json.loads(response.read()).get("output") or []


def run(cmd):
    """Runs one line as Codex does, and reports it as Codex does."""
    done = subprocess.run(["/bin/bash", "-c", cmd], stdin=subprocess.DEVNULL,
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    output = (done.stdout + done.stderr).decode("utf-8", "replace")
    return "Process exited with code %d\nOutput:\n%s" % (done.returncode, output)


def main():
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--base-url", required=True)
    parser.add_argument("--max-turns", type=int, default=100)
    parser.add_argument("prompt")
    args = parser.parse_args()
    items = [{"role": "user", "content": args.prompt}]
    for _ in range(args.max_turns):
        try:
            output = ask(args.base_url, items)
        except (OSError, ValueError, urllib.error.URLError) as e:
            print("stand-in: the model could not be asked: %s" % e, file=sys.stderr)
            return 2
        calls = [o for o in output if isinstance(o, dict) and o.get("type") == "function_call"]
        if not calls:
            texts = [c.get("text", "") for o in output if isinstance(o, dict)
                     for c in o.get("content") or [] if isinstance(c, dict)]
            print("\n".join(t for t in texts if t))
            return 0
        for call in calls:
            try:
                cmd = json.loads(call.get("arguments") or "{}")["cmd"]
            except (ValueError, KeyError, TypeError):
                print("stand-in: a tool call without a command: %r" % call, file=sys.stderr)
                return 2
            items.append(call)
            items.append({"type": "function_call_output", "call_id": call.get("call_id"),
                          "output": run(cmd)})
    print("stand-in: still calling tools after %d turns; stopped" % args.max_turns,
          file=sys.stderr)
    return 3


if __name__ == "__main__":
    sys.exit(main())
