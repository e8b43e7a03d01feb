"""``python -m bottleneck_lsp script.py [args]``: drop-in for ``python -m torch.utils.bottleneck``."""

import sys

from .entry import dropin_main

if __name__ == "__main__":
    sys.exit(dropin_main())
