#!/bin/sh
# `lifecycle trace` of the committed HEAD tree (a git-archive copy in /tmp/parity/head), not the
# working tree others are editing: -S skips site (and the editable install's path hook).
cd /tmp && PYTHONPATH=/tmp/parity/head:.venv/lib/python3.11/site-packages exec .venv/bin/python -S -c 'import sys; from lifecycle.cli import main; sys.argv=["lifecycle"]+sys.argv[1:]; sys.exit(main())' trace "$@"
