"""``python -m pycupel``: the same command line as ``pycupel``."""

from pycupel.cli import main

main()
