"""``python -m omoide``: the memory engine from the command line, on a SQLite workspace.

``main(argv) -> int`` runs one command in-process (what tests call); ``run()`` is the
console entry point. Each verb lives in its own module; ``main`` wires them to argparse.
"""

from omoide.cli.main import main, run

__all__ = ["main", "run"]
