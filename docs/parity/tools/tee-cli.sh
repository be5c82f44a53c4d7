#!/bin/sh
# CLAUDE_CODE_EXECUTABLE stand-in: runs the real bundled CLI and copies its stdout (stream-json) to $TEE_CLI_LOG.
REAL=/tmp/ref/package/node_modules/@anthropic-ai/claude-agent-sdk-linux-x64/claude
"$REAL" "$@" | tee -a "$TEE_CLI_LOG"
