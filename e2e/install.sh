#!/bin/sh
# install.sh installs the real clients the e2e tests drive (official SDKs,
# Claude Code, Codex CLI, Gemini CLI, OpenCode, Qwen Code, pi) from the
# committed package-lock.json. Idempotent: when node_modules already
# matches the lockfile it does nothing.
# Without node or npm it says so and exits 0, and the node tests skip.
set -eu
dir=$(cd "$(dirname "$0")" && pwd)
if ! command -v npm >/dev/null 2>&1; then
	echo "e2e/install.sh: npm not found; the node-based e2e tests will skip" >&2
	exit 0
fi
stamp="$dir/node_modules/.slipstream-lock"
if [ -f "$stamp" ] && cmp -s "$stamp" "$dir/package-lock.json"; then
	exit 0
fi
npm ci --prefix "$dir" --no-audit --no-fund
cp "$dir/package-lock.json" "$stamp"
