#!/usr/bin/env bash
# demo.sh - install what is missing, build, and run the demo review loop on
# the embedded default: the local engine, scripted stand-in agents, no
# Docker, no AI service. See examples/README.md.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh build
exec bash examples/run-demo.sh build
