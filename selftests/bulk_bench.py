#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""The pfifo_bulk benchmark (bulk_bench.py --help): the package pfb_bench/
beside this file holds it, one module per concern; this is its command."""

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from pfb_bench.cli import main  # noqa: E402 (after the path it needs)

if __name__ == "__main__":
    sys.exit(main())
