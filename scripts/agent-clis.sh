#!/usr/bin/env bash
# Installs the real coding-agent CLIs the approval tests drive (Claude Code and Codex), and Deno
# (the TypeScript SDK's third runtime), pinned, from the npm registry into the project's own
# cache, .cache/agent-clis in the checkout (about 860 MB): never part of `npm install` of the
# product, never in ~/.cache. Run by `npm run test:e2e` (scripts/test.ts) when a test file needs
# them; it says what and where before it downloads. Fast when already there. Claude Code
# 2.1.330 or later is required: earlier builds never call PermissionRequest hooks in `-p` mode.
set -uo pipefail

CLAUDE_CODE_VERSION=2.1.330
CODEX_VERSION=0.169.0
DENO_VERSION=2.9.6
cache="${HARK_AGENT_CLIS:-$(cd "$(dirname "$0")/.." && pwd)/.cache/agent-clis}"
stamp="$cache/.versions"
want="claude-code@$CLAUDE_CODE_VERSION codex@$CODEX_VERSION deno@$DENO_VERSION"

if [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$want" ] &&
  [ -x "$cache/node_modules/.bin/claude" ] && [ -x "$cache/node_modules/.bin/codex" ] &&
  [ -x "$cache/node_modules/.bin/deno" ]; then
  exit 0
fi

mkdir -p "$cache"
echo "agent-clis: installing $want from the npm registry into $cache (about 860 MB, once)"
# --force: Claude Code declares node >= 22 but ships a native binary that does not run on Node.
if (cd "$cache" && [ -f package.json ] || echo '{"private":true}' >package.json) &&
  npm install --prefix "$cache" --no-audit --no-fund --no-save --force \
    "@anthropic-ai/claude-code@$CLAUDE_CODE_VERSION" "@openai/codex@$CODEX_VERSION" \
    "deno@$DENO_VERSION" >/dev/null; then
  echo "$want" >"$stamp"
  exit 0
fi
echo "agent-clis: npm install of $want failed" >&2
[ "${CI:-}" = "true" ] && exit 1
exit 0
