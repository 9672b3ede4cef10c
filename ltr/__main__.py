"""``python -m ltr train|grid|report|runs`` (see :mod:`ltr.cli`)."""
import sys

from ltr.cli import main

if __name__ == "__main__":
    sys.exit(main())
