#!/bin/sh
# Run one parity probe inside a private network namespace that has only loopback.
exec timeout 240 unshare -n sh -c 'ip link set lo up && exec python3 /tmp/parity/acp_run.py "$@"' sh "$@"
