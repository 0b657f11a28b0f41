"""`python -m frontier_harness.properties.cli`: the `frontier-harness` command."""

import sys

from frontier_harness.properties.cli.main import main

sys.exit(main())
