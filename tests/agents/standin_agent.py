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

With --chat it speaks OpenAI Chat Completions instead, for models that cannot be relied on to
call tools (a small local one): every answer is asked for as JSON that fits a strict schema,
{"command": "...", "done": false}, which servers that enforce `response_format` hold the model to
by grammar. A non-empty command is run (as above) and its result is the next user message; the
agent stops after a command marked done, or at an answer with no command (exit 0).

  standin_agent.py --base-url http://127.0.0.1:PORT/v1 [--chat] [--max-turns 100] PROMPT

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


#: What the model is told in --chat mode, and the form every answer takes.
CHAT_SYSTEM = (
    "You are a coding agent working in a Linux shell, in the user's project directory. "
    "Answer only with JSON: {\"command\": \"<one bash command line>\", \"done\": false}. "
    "You then see the command's exit status and output. When the task is finished, answer "
    "{\"command\": \"\", \"done\": true}."
)
CHAT_SCHEMA = {
    "type": "json_schema",
    "json_schema": {
        "name": "next_step",
        "strict": True,
        "schema": {
            "type": "object",
            "properties": {"command": {"type": "string"}, "done": {"type": "boolean"}},
            "required": ["command", "done"],
            "additionalProperties": False,
        },
    },
}
#: The most of a command's output sent back to the model.
CHAT_OUTPUT_LIMIT = 8000


def post(base_url, path, body):
    request = urllib.request.Request(base_url.rstrip("/") + path, data=json.dumps(body).encode(),
                                     headers={"content-type": "application/json",
                                              "authorization": "Bearer stand-in"})
    with urllib.request.urlopen(request, timeout=600) as response:
        return json.loads(response.read())


def chat(base_url, prompt, max_turns):
    """The --chat loop: ask for the next command as JSON, run it, say what happened."""
    messages = [{"role": "system", "content": CHAT_SYSTEM}, {"role": "user", "content": prompt}]
    for _ in range(max_turns):
        try:
            answer = post(base_url, "/chat/completions",
                          {"model": "stand-in", "messages": messages, "temperature": 0,
                           "max_tokens": 256, "response_format": CHAT_SCHEMA})
            content = answer["choices"][0]["message"]["content"]
        except (OSError, ValueError, KeyError, IndexError, TypeError, urllib.error.URLError) as e:
            print("stand-in: the model could not be asked: %s" % e, file=sys.stderr)
            return 2
        try:
            step = json.loads(content)
            command, done = step["command"], bool(step.get("done"))
            if not isinstance(command, str):
                raise TypeError("command is not a string")
        except (ValueError, KeyError, TypeError) as e:
            print("stand-in: the model's answer is not the JSON asked for (%s): %r" % (e, content),
                  file=sys.stderr)
            return 4
        if not command.strip():
            print(content)
            return 0
        messages.append({"role": "assistant", "content": content})
        messages.append({"role": "user", "content": run(command)[:CHAT_OUTPUT_LIMIT]})
        if done:
            print(content)
            return 0
    print("stand-in: still running commands after %d turns; stopped" % max_turns, file=sys.stderr)
    return 3


def ask(base_url, items):
    """One request to the model; its `output` items."""
    answer = post(base_url, "/responses",
                  {"model": "stand-in", "input": items, "tools": [SHELL_TOOL], "stream": False})
    return answer.get("output") or []


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
    parser.add_argument("--chat", action="store_true",
                        help="Chat Completions with a JSON answer instead of the Responses API")
    parser.add_argument("prompt")
    args = parser.parse_args()
    if args.chat:
        return chat(args.base_url, args.prompt, args.max_turns)
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
