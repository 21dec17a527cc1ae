"""Serve a GGUF model with llama.cpp's own HTTP server (xllamacpp): the OpenAI-compatible API at
/v1/chat/completions, the Anthropic Messages API at /v1/messages, and /health.

usage: python serve.py MODEL.gguf PORT [CONTEXT]
env:   LLM_THREADS (default 1)

Listens on 127.0.0.1 only, and runs until SIGTERM or SIGINT. Started by tests/llm/setup.sh.
"""

import os
import signal
import sys

import xllamacpp


def main():
    model, port = sys.argv[1], int(sys.argv[2])
    threads = int(os.environ.get("LLM_THREADS", "1"))
    params = xllamacpp.CommonParams()
    params.model.path = model
    params.n_ctx = int(sys.argv[3]) if len(sys.argv) > 3 else 4096
    params.n_parallel = 1
    params.port = port
    params.hostnames = ["127.0.0.1"]
    params.use_jinja = True  # the model's own chat template
    params.cpuparams.n_threads = threads
    params.cpuparams_batch.n_threads = threads
    # Returns once the model is loaded and the port listens; the server runs in its own threads.
    _server = xllamacpp.Server(params)  # held until the process ends
    print("serving %s on http://127.0.0.1:%d/v1 with %d thread(s)" % (model, port, threads),
          flush=True)
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
    signal.signal(signal.SIGINT, lambda *_: sys.exit(0))
    signal.pause()


if __name__ == "__main__":
    main()
