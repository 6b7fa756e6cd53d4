"""``python -m web.cli COMMAND ...``: the ``tiplu`` command without its console script."""

import sys

from web.cli import main

sys.exit(main())
