"""``python -m redelay worker module:function --queue NAME``: see :mod:`redelay._worker`."""

import sys

from ._worker import main

if __name__ == "__main__":
    sys.exit(main())
