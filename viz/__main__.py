"""``python -m viz TRACE --graph OUT ...``: the same as ``glassgrad render``."""
import sys

from .cli import render_main

sys.exit(render_main(sys.argv[1:]))
