"""`python -m cli`: the `memory` command without its console script."""

import sys

from cli.main import main

sys.exit(main())
