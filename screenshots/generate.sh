#!/usr/bin/env bash
# Regenerates the PNGs in this directory from real runs: an in-process
# sandtop daemon, the TUI's real backend adapter, and vt/'s PNG renderer.
set -euo pipefail
cd "$(dirname "$0")/.."
SANDTOP_SCREENSHOTS=1 go test ./screenshots -run TestScreenshots -count=1 -v "$@"
