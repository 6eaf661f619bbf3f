"""Where things are: sources, the build output and the download cache."""

from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
WEB = ROOT / "web"
PY = ROOT / "py"
NODE_MODULES = ROOT / "node_modules"
DIST = ROOT / "dist"
CACHE = ROOT / ".cache"
DEFAULT_PORT = 8742
