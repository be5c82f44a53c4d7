"""``python -m lifecycle.agent``: the reference Claude ACP agent over stdio (same as ``lifecycle acp``)."""

import sys

from . import cli_main

sys.exit(cli_main(sys.argv[1:]))
