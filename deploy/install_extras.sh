#!/bin/sh
# Install wikireact's optional extras into the LangGraph server image, before the image
# installs wikireact itself (langgraph.json runs this from its dockerfile_lines):
#   langgraph build -t wikireact-server --build-arg WIKIREACT_EXTRAS=offline,postgres
# Without WIKIREACT_EXTRAS it installs nothing: the image serves the graph with no extras.
# Usage: install_extras.sh EXTRAS SOURCE_DIR   (EXTRAS comma-separated, may be empty)
set -eu
extras="$1"
source_dir="$2"
[ -n "$extras" ] || exit 0
case ",$extras," in
*,offline,*)
    # llama-cpp-python builds llama.cpp from source; these are the Makefile's portable flags
    # (a native build crashes on CPUs with AVX-512/AMX).
    apt-get update
    apt-get install -y --no-install-recommends build-essential cmake
    rm -rf /var/lib/apt/lists/*
    export CMAKE_ARGS="-DGGML_NATIVE=OFF -DGGML_AVX512=OFF -DGGML_AMX_TILE=OFF -DGGML_AMX_INT8=OFF -DGGML_OPENMP=OFF"
    ;;
esac
if command -v uv >/dev/null 2>&1; then
    set -- uv pip install --system
else
    set -- pip install
fi
PYTHONDONTWRITEBYTECODE=1 "$@" --no-cache-dir -c /api/constraints.txt "$source_dir[$extras]"
