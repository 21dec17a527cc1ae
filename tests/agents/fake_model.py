#!/usr/bin/env python3
"""A scripted model provider for driving a real coding agent in shellgate's tests.

The "model" knows nothing: it is given the shell lines to ask for, one per turn. While the agent
has sent back fewer tool results than there are lines, each answer is one call to the agent's own
shell tool with the next line; after that it answers a short final text. Everything is recorded,
so a test can see what the agent was asked to run and what its shell tool gave back.

Two wire formats, each with SSE streaming (and plain JSON when a request does not stream):

  anthropic   POST /v1/messages (Anthropic Messages API; Claude Code). Side calls without a shell
              tool (a session title, asked for as JSON) get a text that fits the asked-for schema.
              Also POST /v1/messages/count_tokens, GET /v1/models, HEAD /.
  openai      POST /v1/responses (OpenAI Responses API; Codex CLI). The call's arguments fit the
              shell tool's schema: exec_command {"cmd"}, shell {"command": argv},
              shell_command {"command"}, or a local_shell_call.

A third endpoint plays shellgate's reviewer (`shellgate eval --sessions`):

  reviewer    POST /v1/chat/completions (OpenAI Chat Completions, as shellgate's reviewer with
              provider "openai" asks): a verdict for the line between the prompt's command-line
              markers, from the first of the script's reviewer rules whose `line_contains` it
              holds (a rule with `times` stops applying after that many), else allow, risk low.
              A prompt that says a person approved the line once (`One-shot approval: `) is
              allowed, as a reviewer that respects the person's word would.

A fourth relays to a real model (`shellgate eval --sessions --model-url`, a case driven by a prompt):

  model       anything under /agent/v1/ (the stand-in's --chat mode: /chat/completions; Claude
              Code: /messages; Codex: /responses): sent on, with the configured model's name and
              key, to URL + the rest of the path, the answer streamed back. The namespace reaches
              no other machine, so the request goes out through a unix socket that a forwarder
              outside it (`forward`, started before the namespace is entered) connects on to the
              endpoint's host and port; TLS, for https, is spoken from inside, end to end. The
              agent never sees the key. Every command the model asks for is recorded as a
              scripted line, every command result the agent sends back as a tool result, and
              the token counts the endpoint reports in usage.jsonl.

A line may name the server's own port as `{model_port}` (a local address for network cases). The
script may also hold steps a person takes between turns (`person`): `after` N tool results, before
the next answer, `shellgate ARGS --session ID` runs on a pseudo-terminal of its own, as a person
at a terminal would run it, in the session of the agent's `shellgate wrap`.

Files written in the log directory (one JSON object per line):

  requests.jsonl      every request: method, path, a few headers (never a key), body, how answered
  scripted.jsonl      every shell call handed out, with its line (`{model_port}` filled in)
  tool_results.jsonl  every tool result received, once each: id, is_error, exit_code, content
  reviews.jsonl       every verdict the reviewer endpoint gave: the line, the verdict, the rule
  person.jsonl        every person step: its arguments, exit status and what the terminal showed
  usage.jsonl         every answer of the real model: its status and the tokens it counted

Only the standard library. Serves 127.0.0.1 by default, and is meant to run inside a network
namespace that has nothing but loopback (run_agent.py). Standalone:

  python3 fake_model.py --api anthropic --log-dir DIR --line 'ls -a' [--line ...] [--port 0]
      [--port-file F] [--delay 2]
"""

import argparse
import http.client
import http.server
import json
import os
import pty
import re
import select
import socket
import ssl
import threading
import time
import urllib.parse
import uuid

#: Tool names an agent's shell tool goes by, most specific first.
SHELL_TOOLS = ("Bash", "exec_command", "shell_command", "shell", "local_shell", "bash")
#: Headers worth keeping in the log; anything that may carry a key is left out.
LOGGED_HEADERS = ("user-agent", "content-type", "anthropic-version", "anthropic-beta", "x-app",
                  "accept", "openai-beta", "originator", "session_id")


#: The markers around the line in shellgate's review prompt (src/review/prompt.rs), and what the
#: prompt says when a person approved the line once after a denial.
LINE_START = "<<<UNTRUSTED COMMAND LINE START>>>"
LINE_END = "<<<UNTRUSTED COMMAND LINE END>>>"
ONE_SHOT_APPROVAL = "One-shot approval: "


class Script:
    """The lines to hand out, and the record of the conversation."""

    def __init__(self, lines, log_dir, delay=0.0, reviewer=None, person=None, person_env=None,
                 upstream=None):
        self.lines = list(lines)
        #: The real model the agent's requests are relayed to (an Upstream), or None.
        self.upstream = upstream
        self.log_dir = log_dir
        self.delay = delay
        self.lock = threading.Lock()
        self.seen_results = set()
        self.counter = 0
        #: The server's port, for `{model_port}` in lines (set once it listens).
        self.port = 0
        #: Reviewer rules: line_contains, decision, risk, reason, optional times.
        self.reviewer = [dict(rule) for rule in reviewer or []]
        #: Person steps: after (tool results), args (shellgate's); run once each.
        self.person = [dict(step) for step in person or []]
        #: (shellgate binary, environment, state directory) for the person's steps.
        self.person_env = person_env
        self.person_done = set()
        os.makedirs(log_dir, exist_ok=True)

    def new_id(self, prefix):
        with self.lock:
            self.counter += 1
            return "%s_%04d%s" % (prefix, self.counter, uuid.uuid4().hex[:16])

    def log(self, name, record):
        record = dict(record, t=round(time.time(), 3))
        with self.lock, open(os.path.join(self.log_dir, name), "a", encoding="utf-8") as f:
            f.write(json.dumps(record, ensure_ascii=False) + "\n")

    def next_line(self, results_so_far):
        """The line for the turn after `results_so_far` tool results, or None when all ran. The
        person's steps due after that many results are taken first."""
        self.take_person_steps(results_so_far)
        if results_so_far >= len(self.lines):
            return None
        return self.lines[results_so_far].replace("{model_port}", str(self.port))

    def take_person_steps(self, results_so_far):
        for index, step in enumerate(self.person):
            with self.lock:
                if step.get("after") != results_so_far or index in self.person_done:
                    continue
                self.person_done.add(index)
            self.log("person.jsonl", dict(run_person_step(step, self.person_env), after=step["after"]))

    def verdict(self, line):
        """(decision, risk, reason, rule index or None) for a reviewed line."""
        with self.lock:
            for index, rule in enumerate(self.reviewer):
                if rule.get("line_contains", "") not in line:
                    continue
                if rule.get("times") is not None:
                    if rule["times"] <= 0:
                        continue
                    rule["times"] -= 1
                return (rule.get("decision", "deny"), rule.get("risk", "high"),
                        rule.get("reason", "the scripted reviewer denies this line"), index)
        return "allow", "low", "the scripted reviewer allows what no rule of the case names", None

    def record_result(self, result_id, content, is_error=None, exit_code=None):
        """Records a tool result the first time it is seen (agents resend the whole history)."""
        with self.lock:
            if result_id in self.seen_results:
                return
            self.seen_results.add(result_id)
        self.log("tool_results.jsonl", {"id": result_id, "is_error": is_error,
                                        "exit_code": exit_code, "content": content})


def run_person_step(step, person_env):
    """Runs `shellgate ARGS --session ID` on a pseudo-terminal of its own (its controlling
    terminal), as a person at a terminal would; what it showed and its status."""
    record = {"args": list(step.get("args") or [])}
    if not person_env:
        return dict(record, error="no shellgate to run the person's step with")
    shellgate, env, state = person_env
    sessions = os.path.join(state, "shellgate", "sessions")
    try:
        logs = sorted(f for f in os.listdir(sessions) if f.endswith(".jsonl"))
    except OSError as e:
        return dict(record, error="no session log yet: %s" % e)
    if len(logs) != 1:
        return dict(record, error="expected one session log, found %s" % logs)
    argv = [shellgate] + record["args"] + ["--session", logs[0][:-len(".jsonl")]]
    pid, fd = pty.fork()
    if pid == 0:
        try:
            os.execve(shellgate, argv, env)
        finally:
            os._exit(127)
    shown = b""
    while True:
        ready, _, _ = select.select([fd], [], [], 1.0)
        if not ready:
            continue
        try:
            chunk = os.read(fd, 4096)
        except OSError:
            break
        if not chunk:
            break
        shown += chunk
    os.close(fd)
    _, status = os.waitpid(pid, 0)
    return dict(record, status=os.waitstatus_to_exitcode(status),
                shown=shown.decode("utf-8", "replace"))


class ChatCompletionsReviewer:
    """POST /v1/chat/completions: shellgate's reviewer asks; the script's rules answer."""

    def __init__(self, script):
        self.script = script

    def answer(self, request):
        messages = request.get("messages") or []
        users = [m for m in messages if isinstance(m, dict) and m.get("role") == "user"]
        prompt = text_of(users[-1].get("content")) if users else ""
        start, end = prompt.rfind(LINE_START), prompt.rfind(LINE_END)
        line = prompt[start + len(LINE_START):end].strip("\n") if 0 <= start < end else ""
        if ONE_SHOT_APPROVAL in prompt[:max(start, 0)]:
            # As a reviewer that respects the person: allowed, once.
            decision, risk, rule = "allow", "low", None
            reason = "a person at the terminal approved this line once"
        else:
            decision, risk, reason, rule = self.script.verdict(line)
        self.script.log("reviews.jsonl", {"line": line, "decision": decision, "risk": risk,
                                          "reason": reason, "rule": rule})
        content = json.dumps({"answer": {"decision": decision, "riskLevel": risk,
                                         "reason": reason}})
        return "review", {
            "id": self.script.new_id("chatcmpl"), "object": "chat.completion",
            "created": int(time.time()), "model": request.get("model") or "fake-reviewer",
            "choices": [{"index": 0, "finish_reason": "stop", "logprobs": None,
                         "message": {"role": "assistant", "content": content,
                                     "refusal": None}}],
            "usage": {"prompt_tokens": len(prompt) // 4 + 1, "completion_tokens": 30,
                      "total_tokens": len(prompt) // 4 + 31}}


def text_of(content):
    """The text of a content value: a string, or a list of blocks."""
    if isinstance(content, str):
        return content
    if isinstance(content, dict):
        return content.get("text") or json.dumps(content)
    parts = []
    for block in content or []:
        if isinstance(block, dict) and isinstance(block.get("text"), str):
            parts.append(block["text"])
        else:
            parts.append(json.dumps(block))
    return "\n".join(parts)


def value_for(schema, key=""):
    """A small value that satisfies a JSON schema (for side calls that ask for structured output)."""
    if not isinstance(schema, dict):
        return "Scripted run"
    if schema.get("enum"):
        return schema["enum"][0]
    if "const" in schema:
        return schema["const"]
    for choice in ("anyOf", "oneOf", "allOf"):
        if schema.get(choice):
            return value_for(schema[choice][0], key)
    kind = schema.get("type")
    if isinstance(kind, list):
        kind = next((k for k in kind if k != "null"), "string")
    if kind == "object" or "properties" in schema:
        return {k: value_for(v, k) for k, v in (schema.get("properties") or {}).items()}
    return {"array": [], "integer": 0, "number": 0, "boolean": False, "null": None}.get(
        kind, "Scripted run")


def record_anthropic_results(script, request):
    """Records the tool results of a Messages request; returns them."""
    results = [b for m in request.get("messages") or [] if isinstance(m, dict)
               and isinstance(m.get("content"), list)
               for b in m["content"] if isinstance(b, dict) and b.get("type") == "tool_result"]
    for r in results:
        script.record_result(r.get("tool_use_id"), text_of(r.get("content")),
                             is_error=bool(r.get("is_error")))
    return results


def exit_code_in(text):
    """The status an agent reports in a tool result's text ("Process exited with code N")."""
    found = re.search(r"(?:exited with code|Exit code:?) (-?\d+)", text or "")
    return int(found.group(1)) if found else None


def record_responses_results(script, request):
    """Records the tool outputs of a Responses request; returns them."""
    items = request.get("input") if isinstance(request.get("input"), list) else []
    outputs = [i for i in items if isinstance(i, dict) and i.get("type") in
               ("function_call_output", "local_shell_call_output", "custom_tool_call_output")]
    for o in outputs:
        output = o.get("output")
        text = output if isinstance(output, str) else text_of(
            output.get("content") if isinstance(output, dict) else output)
        code = exit_code_in(text)
        script.record_result(o.get("call_id"), text,
                             is_error=None if code is None else code != 0, exit_code=code)
    return outputs


def record_chat_results(script, request):
    """Records the command results of the stand-in's --chat request: the user messages after
    the first (the task)."""
    messages = [m for m in request.get("messages") or [] if isinstance(m, dict)]
    users = [i for i, m in enumerate(messages) if m.get("role") == "user"]
    for i in users[1:]:
        text = text_of(messages[i].get("content"))
        code = exit_code_in(text)
        script.record_result("message-%d" % i, text,
                             is_error=None if code is None else code != 0, exit_code=code)


class AnthropicMessages:
    """POST /v1/messages: a `tool_use` for the shell tool, then `end_turn`."""

    def __init__(self, script):
        self.script = script

    def shell_tool(self, request):
        tools = [t for t in request.get("tools") or [] if isinstance(t, dict)]
        by_name = {t.get("name"): t for t in tools}
        for name in SHELL_TOOLS:
            if name in by_name:
                return by_name[name]
        return next((t for t in tools
                     if "command" in ((t.get("input_schema") or {}).get("properties") or {})), None)

    def answer(self, request):
        """(kind, response message) for one request."""
        results = record_anthropic_results(self.script, request)
        tool = self.shell_tool(request)
        line = self.script.next_line(len(results)) if tool else None
        if line is not None:
            call = {"type": "tool_use", "id": self.script.new_id("toolu"), "name": tool["name"],
                    "input": {"command": line, "description": "Run the scripted command"}}
            self.script.log("scripted.jsonl", {"tool": tool["name"], "line": line, "call": call})
            kind, content, stop = "turn%d" % (len(results) + 1), [call], "tool_use"
        elif results:
            kind, stop = "final", "end_turn"
            content = [{"type": "text", "text": "Done: the scripted command has run."}]
        else:
            kind, stop = "side", "end_turn"
            content = [{"type": "text", "text": self.side_text(request)}]
        message = {"id": self.script.new_id("msg"), "type": "message", "role": "assistant",
                   "model": request.get("model") or "fake", "content": content,
                   "stop_reason": stop, "stop_sequence": None,
                   "usage": {"input_tokens": 100, "output_tokens": 20,
                             "cache_creation_input_tokens": 0, "cache_read_input_tokens": 0}}
        return kind, message

    @staticmethod
    def side_text(request):
        fmt = (request.get("output_config") or {}).get("format") or {}
        if fmt.get("type") == "json_schema" and isinstance(fmt.get("schema"), dict):
            return json.dumps(value_for(fmt["schema"]))
        return "OK."

    @staticmethod
    def events(message):
        """The message as Anthropic's stream: (event name, data) pairs."""
        head = dict(message, content=[], stop_reason=None,
                    usage=dict(message["usage"], output_tokens=1))
        yield "message_start", {"type": "message_start", "message": head}
        yield "ping", {"type": "ping"}
        for index, block in enumerate(message["content"]):
            if block["type"] == "text":
                start, pieces = {"type": "text", "text": ""}, block["text"]
                delta = lambda piece: {"type": "text_delta", "text": piece}
            else:
                start, pieces = dict(block, input={}), json.dumps(block["input"])
                delta = lambda piece: {"type": "input_json_delta", "partial_json": piece}
            yield "content_block_start", {"type": "content_block_start", "index": index,
                                          "content_block": start}
            for i in range(0, len(pieces), 20):
                yield "content_block_delta", {"type": "content_block_delta", "index": index,
                                              "delta": delta(pieces[i:i + 20])}
            yield "content_block_stop", {"type": "content_block_stop", "index": index}
        yield "message_delta", {"type": "message_delta",
                                "delta": {"stop_reason": message["stop_reason"], "stop_sequence": None},
                                "usage": {"output_tokens": message["usage"]["output_tokens"]}}
        yield "message_stop", {"type": "message_stop"}


class OpenAIResponses:
    """POST /v1/responses: a `function_call` to the shell tool, then a final message."""

    def __init__(self, script):
        self.script = script

    @staticmethod
    def name_of(tool):
        return tool.get("name") or (tool.get("function") or {}).get("name") or tool.get("type")

    @staticmethod
    def properties(tool):
        params = tool.get("parameters") or (tool.get("function") or {}).get("parameters") or {}
        return params.get("properties") or {}

    def shell_tool(self, request):
        tools = [t for t in request.get("tools") or [] if isinstance(t, dict)]
        by_name = {self.name_of(t): t for t in tools}
        for name in SHELL_TOOLS:
            if name in by_name:
                return by_name[name]
        return next((t for t in tools if {"cmd", "command"} & set(self.properties(t))), None)

    def call(self, tool, line):
        call_id = self.script.new_id("call")
        if tool.get("type") == "local_shell":
            return {"type": "local_shell_call", "id": self.script.new_id("lsh"), "call_id": call_id,
                    "status": "completed",
                    "action": {"type": "exec", "command": ["bash", "-lc", line], "env": {}}}
        props = self.properties(tool)
        if "cmd" in props:
            arguments = {"cmd": line}
        elif (props.get("command") or {}).get("type") == "array":
            arguments = {"command": ["bash", "-lc", line]}
        else:
            arguments = {"command": line}
        return {"type": "function_call", "id": self.script.new_id("fc"), "call_id": call_id,
                "name": self.name_of(tool), "arguments": json.dumps(arguments),
                "status": "completed"}

    def answer(self, request):
        outputs = record_responses_results(self.script, request)
        tool = self.shell_tool(request)
        line = self.script.next_line(len(outputs)) if tool else None
        if line is not None:
            item = self.call(tool, line)
            self.script.log("scripted.jsonl", {"tool": self.name_of(tool), "line": line,
                                               "call": item})
            kind = "turn%d" % (len(outputs) + 1)
        else:
            kind = "final" if outputs else "side"
            item = {"type": "message", "id": self.script.new_id("msg"), "role": "assistant",
                    "status": "completed",
                    "content": [{"type": "output_text", "annotations": [],
                                 "text": "Done: the scripted command has run."}]}
        response = {"id": self.script.new_id("resp"), "object": "response",
                    "created_at": int(time.time()), "status": "completed",
                    "model": request.get("model") or "fake", "output": [item],
                    "usage": {"input_tokens": 100, "input_tokens_details": {"cached_tokens": 0},
                              "output_tokens": 20, "output_tokens_details": {"reasoning_tokens": 0},
                              "total_tokens": 120}}
        return kind, response

    @staticmethod
    def events(response):
        """The response as the Responses API's stream: (event name, data) pairs."""
        sequence = iter(range(1 << 30))

        def event(data):
            data["sequence_number"] = next(sequence)
            return data["type"], data

        yield event({"type": "response.created",
                     "response": dict(response, status="in_progress", output=[])})
        for index, item in enumerate(response["output"]):
            yield event({"type": "response.output_item.added", "output_index": index, "item": item})
            if item["type"] == "message":
                yield event({"type": "response.output_text.delta", "output_index": index,
                             "item_id": item["id"], "content_index": 0,
                             "delta": item["content"][0]["text"]})
            elif item["type"] == "function_call":
                for name, key in (("delta", "delta"), ("done", "arguments")):
                    yield event({"type": "response.function_call_arguments." + name,
                                 "output_index": index, "item_id": item["id"],
                                 key: item["arguments"]})
            yield event({"type": "response.output_item.done", "output_index": index, "item": item})
        yield event({"type": "response.completed", "response": response})


class Upstream:
    """A configured model endpoint (OpenAI Chat Completions), reached through the unix socket
    at `socket_path` whose other end connects to the endpoint's host and port."""

    def __init__(self, url, model, key, socket_path):
        parts = urllib.parse.urlsplit(url)
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise ValueError("the model URL is not http(s)://HOST[:PORT]/PATH: %r" % url)
        self.https = parts.scheme == "https"
        self.host = parts.hostname
        self.port = parts.port or (443 if self.https else 80)
        self.path = parts.path.rstrip("/")
        self.model, self.key, self.socket_path = model, key, socket_path

    def open(self, method, path, body, headers):
        """Sends one request to the endpoint's `path`; (connection, response), the response not
        yet read. `headers` are the agent's; its keys are replaced by the configured one."""
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        sock.settimeout(600)
        sock.connect(self.socket_path)
        if self.https:
            sock = ssl.create_default_context().wrap_socket(sock, server_hostname=self.host)
        connection = http.client.HTTPConnection(self.host, self.port, timeout=600)
        connection.sock = sock
        sent = {k: v for k, v in headers.items() if k.lower() not in UNRELAYED_HEADERS}
        sent["connection"] = "close"
        if self.key and path.split("?")[0].endswith(("/messages", "/messages/count_tokens")):
            sent["x-api-key"] = self.key  # Anthropic's Messages API
        elif self.key:
            sent["authorization"] = "Bearer " + self.key
        connection.request(method, self.path + path, body=body, headers=sent)
        return connection, connection.getresponse()


#: Headers of the agent's request that are not sent on: its keys (the relay adds the configured
#: one), and those of the hop between the agent and the relay.
UNRELAYED_HEADERS = ("authorization", "x-api-key", "host", "content-length", "connection",
                     "transfer-encoding", "keep-alive", "proxy-authorization", "accept-encoding")


def forward(socket_path, host, port, ready):
    """The forwarder, outside the namespace: each connection to the unix socket at
    `socket_path` is joined to a new TCP connection to host:port. Writes a byte to the
    descriptor `ready` once it listens; runs until killed."""
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    listener.bind(socket_path)
    os.chmod(socket_path, 0o600)
    listener.listen(16)
    os.write(ready, b"1")
    os.close(ready)

    def pump(source, sink):
        try:
            while True:
                data = source.recv(65536)
                if not data:
                    break
                sink.sendall(data)
        except OSError:
            pass
        finally:
            for s in (source, sink):
                try:
                    s.shutdown(socket.SHUT_RDWR)
                except OSError:
                    pass

    def join(inside):
        try:
            outside = socket.create_connection((host, port), timeout=30)
            outside.settimeout(None)
        except OSError:
            inside.close()
            return
        threading.Thread(target=pump, args=(outside, inside), daemon=True).start()
        pump(inside, outside)

    while True:
        inside, _ = listener.accept()
        threading.Thread(target=join, args=(inside,), daemon=True).start()


def json_objects(data):
    """The JSON objects of a response body: the body itself, or each `data:` of an event
    stream."""
    text = data.decode("utf-8", "replace")
    try:
        return [json.loads(text)]
    except ValueError:
        pass
    found = []
    for line in text.splitlines():
        if line.startswith("data:"):
            try:
                found.append(json.loads(line[5:].strip()))
            except ValueError:
                continue
    return [o for o in found if isinstance(o, dict)]


def usage_of(objects):
    """(input tokens, output tokens) a response reports, in any of the three formats (the most
    each count reaches: a stream repeats and grows them)."""
    counts = {"in": 0, "out": 0}

    def walk(value):
        if isinstance(value, dict):
            for key, item in value.items():
                if key in ("input_tokens", "prompt_tokens") and isinstance(item, int):
                    counts["in"] = max(counts["in"], item)
                elif key in ("output_tokens", "completion_tokens") and isinstance(item, int):
                    counts["out"] = max(counts["out"], item)
                else:
                    walk(item)
        elif isinstance(value, list):
            for item in value:
                walk(item)

    walk(objects)
    return counts["in"], counts["out"]


def shell_line(value):
    """The line of a shell tool's arguments: a string, or the last word of an argv such as
    ["bash", "-lc", LINE]."""
    if isinstance(value, str):
        return value
    if isinstance(value, list) and value and all(isinstance(v, str) for v in value):
        return value[-1]
    return None


def commands_of(objects):
    """The shell lines a model's answer asks the agent to run: the stand-in's JSON step (Chat
    Completions), shell calls of the Responses API, `tool_use` blocks of the Messages API —
    whole or streamed."""
    lines = []
    partial = {}  # Messages stream: tool_use blocks by index, their input in pieces
    for o in objects:
        for choice in o.get("choices") or []:
            try:
                step = json.loads((choice.get("message") or {}).get("content") or "")
                line = shell_line(step.get("command"))
            except (ValueError, AttributeError):
                line = None
            if line and line.strip():
                lines.append(line)
        items = list(o.get("output") or []) if o.get("object") == "response" else []
        if o.get("type") == "response.output_item.done":
            items.append(o.get("item") or {})
        for item in items:
            if item.get("type") == "function_call":
                try:
                    arguments = json.loads(item.get("arguments") or "{}")
                except ValueError:
                    continue
                line = shell_line(arguments.get("cmd", arguments.get("command")))
            elif item.get("type") == "local_shell_call":
                line = shell_line((item.get("action") or {}).get("command"))
            else:
                continue
            if line:
                lines.append(line)
        blocks = o.get("content") if o.get("type") == "message" else None
        for block in blocks or []:
            if isinstance(block, dict) and block.get("type") == "tool_use":
                line = shell_line((block.get("input") or {}).get("command"))
                if line:
                    lines.append(line)
        if o.get("type") == "content_block_start" and \
                (o.get("content_block") or {}).get("type") == "tool_use":
            partial[o.get("index")] = []
        elif o.get("type") == "content_block_delta" and o.get("index") in partial:
            partial[o["index"]].append((o.get("delta") or {}).get("partial_json") or "")
        elif o.get("type") == "content_block_stop" and o.get("index") in partial:
            try:
                line = shell_line(json.loads("".join(partial.pop(o["index"])) or "{}")
                                  .get("command"))
            except (ValueError, AttributeError):
                line = None
            if line:
                lines.append(line)
    return lines


class ModelRelay:
    """Any request under /agent/v1/: the agent's, sent on to the real model at URL + the rest of
    the path, its answer streamed back as it comes. Records the tool results the request carries,
    the shell lines the answer asks for, and the tokens it counted."""

    def __init__(self, script):
        self.script = script

    def record_request(self, path, request):
        if not isinstance(request, dict):
            return
        if path.endswith("/messages"):
            record_anthropic_results(self.script, request)
        elif path.endswith("/responses"):
            record_responses_results(self.script, request)
        elif path.endswith("/chat/completions"):
            record_chat_results(self.script, request)

    def relay(self, handler, rest, raw):
        """Relays one request for `handler`; (kind, body as parsed or text) for the log."""
        try:
            request = json.loads(raw) if raw else None
        except ValueError:
            request = None
        upstream = self.script.upstream
        if isinstance(request, dict) and "model" in request and upstream.model:
            raw = json.dumps(dict(request, model=upstream.model)).encode()
        self.record_request(rest.split("?")[0], request)
        try:
            connection, response = upstream.open(handler.command, rest, raw or None,
                                                 dict(handler.headers.items()))
        except (OSError, http.client.HTTPException) as e:
            self.script.log("usage.jsonl", {"status": None, "error": str(e)})
            handler.send_json(502, {"error": {"message":
                                              "the model endpoint could not be reached: %s" % e}})
            return "model-error", None
        data = b""
        try:
            handler.send_response(response.status)
            for name in ("content-type", "cache-control", "request-id", "x-request-id"):
                if response.getheader(name):
                    handler.send_header(name, response.getheader(name))
            handler.send_header("transfer-encoding", "chunked")
            handler.end_headers()
            while True:
                chunk = response.read1(65536)
                if not chunk:
                    break
                data += chunk
                handler.wfile.write(b"%x\r\n%s\r\n" % (len(chunk), chunk))
                handler.wfile.flush()
            handler.wfile.write(b"0\r\n\r\n")
            handler.wfile.flush()
        except (OSError, http.client.HTTPException) as e:
            self.script.log("usage.jsonl", {"status": None, "error": "cut short: %s" % e})
            return "model-error", None
        finally:
            connection.close()
        objects = json_objects(data)
        if handler.command == "POST" and rest.split("?")[0].endswith(
                ("/messages", "/responses", "/chat/completions")):
            tokens_in, tokens_out = usage_of(objects)
            self.script.log("usage.jsonl", {"status": response.status, "path": rest,
                                            "prompt_tokens": tokens_in,
                                            "completion_tokens": tokens_out})
            for line in commands_of(objects) if response.status == 200 else []:
                self.script.log("scripted.jsonl", {"tool": "relayed", "line": line})
        answer = objects[0] if len(objects) == 1 else data.decode("utf-8", "replace")
        return ("model" if response.status == 200 else "model-error"), answer


#: Where the agent's requests go when a real model drives it: the rest of the path follows URL.
RELAYED_PREFIX = "/agent/v1"


class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server_version = "shellgate-fake-model/1"
    api = None  # set on the subclass made by make_server
    script = None

    def log_message(self, *args):
        pass

    def record(self, kind, body=None, answer=None):
        headers = {k: v for k, v in self.headers.items() if k.lower() in LOGGED_HEADERS}
        entry = {"method": self.command, "path": self.path, "kind": kind, "headers": headers}
        if body is not None:
            entry["body"] = body
        if answer is not None:
            entry["answer"] = answer
        self.script.log("requests.jsonl", entry)

    def send_json(self, status, value):
        data = json.dumps(value).encode()
        self.send_response(status)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def send_events(self, events):
        self.send_response(200)
        self.send_header("content-type", "text/event-stream")
        self.send_header("cache-control", "no-cache")
        self.send_header("transfer-encoding", "chunked")
        self.end_headers()
        for name, data in events:
            chunk = ("event: %s\ndata: %s\n\n" % (name, json.dumps(data))).encode()
            self.wfile.write(b"%x\r\n%s\r\n" % (len(chunk), chunk))
            self.wfile.flush()
        self.wfile.write(b"0\r\n\r\n")
        self.wfile.flush()

    def not_found(self, body=None):
        self.record("unknown", body)
        self.send_json(404, {"type": "error", "error": {"type": "not_found_error",
                                                        "message": "no such path: " + self.path}})

    def relayed(self, raw=b"", body=None):
        """Relays a request under /agent/v1/ to the real model, when there is one; whether it
        did."""
        if not self.script.upstream or not self.path.startswith(RELAYED_PREFIX):
            return False
        kind, answer = ModelRelay(self.script).relay(self, self.path[len(RELAYED_PREFIX):], raw)
        self.record(kind, body, answer)
        return True

    def do_HEAD(self):
        self.record("head")
        self.send_response(200)
        self.send_header("content-length", "0")
        self.end_headers()

    def do_GET(self):
        if self.relayed():
            return None
        if self.path.split("?")[0].rstrip("/").endswith("/models"):
            self.record("models")
            return self.send_json(200, {"object": "list", "has_more": False, "data": [
                {"id": "fake", "type": "model", "object": "model", "display_name": "Fake",
                 "created_at": "2025-01-01T00:00:00Z", "created": 0, "owned_by": "shellgate"}]})
        self.not_found()

    def do_POST(self):
        length = int(self.headers.get("content-length") or 0)
        raw = self.rfile.read(length) if length else b""
        try:
            body = json.loads(raw) if raw else None
        except ValueError:
            body = None
        path = self.path.split("?")[0].rstrip("/")
        if self.relayed(raw, body):
            return None
        if path.endswith("/chat/completions") and isinstance(body, dict):
            kind, answer = ChatCompletionsReviewer(self.script).answer(body)
            self.record(kind, body, answer)
            return self.send_json(200, answer)
        if self.api is AnthropicMessages and path.endswith("/messages/count_tokens"):
            self.record("count_tokens", body)
            return self.send_json(200, {"input_tokens": len(raw) // 4 + 1})
        wanted = "/messages" if self.api is AnthropicMessages else "/responses"
        if not path.endswith(wanted) or not isinstance(body, dict):
            return self.not_found(body)
        # A real model takes its time, and agents do work in the background meanwhile.
        time.sleep(self.script.delay)
        kind, answer = self.api(self.script).answer(body)
        self.record(kind, body, answer)
        if body.get("stream"):
            self.send_events(self.api.events(answer))
        else:
            self.send_json(200, answer)


APIS = {"anthropic": AnthropicMessages, "openai": OpenAIResponses}


def make_server(api, script, host="127.0.0.1", port=0):
    """A threading HTTP server for `api` ("anthropic" or "openai"); not yet serving."""
    handler = type("ScriptedHandler", (Handler,), {"api": APIS[api], "script": script})
    server = http.server.ThreadingHTTPServer((host, port), handler)
    server.daemon_threads = True
    script.port = server.server_address[1]
    return server


def main():
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--api", choices=sorted(APIS), required=True)
    parser.add_argument("--log-dir", required=True)
    parser.add_argument("--line", action="append", required=True,
                        help="a shell line for the agent's shell tool; repeat for more turns")
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--port-file", help="where to write the port (useful with --port 0)")
    parser.add_argument("--delay", type=float, default=0.0, help="seconds before each answer")
    args = parser.parse_args()
    server = make_server(args.api, Script(args.line, args.log_dir, args.delay), args.host, args.port)
    port = server.server_address[1]
    if args.port_file:
        with open(args.port_file + ".part", "w") as f:
            f.write("%d\n" % port)
        os.replace(args.port_file + ".part", args.port_file)
    print("fake %s model on http://%s:%d" % (args.api, args.host, port), flush=True)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass


if __name__ == "__main__":
    main()
