"""Entry point of ``python -m core.jobs`` (see :mod:`core.jobs.cli`)."""
import sys

from core.jobs.cli import main

sys.exit(main())
