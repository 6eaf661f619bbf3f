"""``python -m omoide``: the command-line interface (see ``omoide.cli``)."""

from omoide.cli import run

if __name__ == "__main__":
    run()
