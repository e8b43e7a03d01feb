"""Runs fine the first time and exits with status 3 the second (a state file in argv[1]
counts runs): the cprofile pass, behind the sample pass, fails while the next pass's
interpreter waits, started ahead of its turn; that one is then discarded."""

import sys
from pathlib import Path

state = Path(sys.argv[1])
runs = int(state.read_text()) if state.exists() else 0
state.write_text(str(runs + 1))
if runs == 1:
    sys.exit(3)
