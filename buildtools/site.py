"""Lay out the app in dist/: our web files, build-info.json and the service worker.

The service worker precaches every app asset under a cache named after a hash of all their
contents, so a new build gets a new cache and the old one is deleted on activate. Model
weights are not precached (hundreds of MB): the embedding worker caches them at first use.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

from .files import copy_if_changed, sha256_file, write_if_changed
from .paths import DIST, WEB

# Not precached: the worker script itself, the model weights (the embedding worker caches
# them at first use; the small models/manifest.json and registry.json are precached), and the
# benchmark pages with what only they load (Orama, the raw ORT bundle, the kernel lab page).
NOT_PRECACHED = {"sw.js", "vendor/ort/ort.webgpu.bundle.min.mjs", "kernel/lab.html"}
RUNTIME_CACHED_DIRS = ("models/omoide/", "bench/", "vendor/orama/")
# What the build writes besides the copy of web/: a file under dist/ from nowhere else (a
# probe left by hand, an old build's output) is never precached, so it never reaches users.
BUILT_DIRS = ("vendor/", "wheels/", "kernel/", "models/")
BUILT_FILES = {"build-info.json"}


def copy_web(log=print) -> None:
    copied = 0
    for src in sorted(WEB.rglob("*")):
        if src.is_file() and src.name != "sw.js":
            copied += copy_if_changed(src, DIST / src.relative_to(WEB))
    log(f"web: {copied} file(s) copied")


def is_built(rel: str) -> bool:
    return rel in BUILT_FILES or rel.startswith(BUILT_DIRS) or (WEB / rel).is_file()


def precache_list(log=print) -> list[Path]:
    files, strays = [], []
    for path in sorted(DIST.rglob("*")):
        rel = path.relative_to(DIST).as_posix()
        if not path.is_file() or rel in NOT_PRECACHED or rel.endswith(".tmp"):
            continue
        if rel.startswith(RUNTIME_CACHED_DIRS) or rel.startswith("."):
            continue
        if not is_built(rel):
            strays.append(rel)
            continue
        files.append(path)
    if strays:
        log(f"service worker: {len(strays)} file(s) in dist/ not from the build, not precached: "
            + ", ".join(strays[:5]) + (" ..." if len(strays) > 5 else ""))
    return files


def cached_sha256(path: Path, memo: dict[str, list]) -> str:
    """sha256 of a file, remembered by (size, mtime) so big vendored files hash once."""
    st = path.stat()
    key = path.relative_to(DIST).as_posix()
    hit = memo.get(key)
    if hit and hit[0] == st.st_size and hit[1] == st.st_mtime_ns:
        return hit[2]
    digest = sha256_file(path)
    memo[key] = [st.st_size, st.st_mtime_ns, digest]
    return digest


def write_build_info(info: dict) -> None:
    data = json.dumps(info, indent=2, sort_keys=True, ensure_ascii=False).encode()
    write_if_changed(DIST / "build-info.json", data + b"\n")


def write_service_worker(log=print) -> str:
    memo_path = DIST / ".hashes.json"
    memo = json.loads(memo_path.read_text()) if memo_path.exists() else {}
    files = precache_list(log)
    hashes = {p.relative_to(DIST).as_posix(): cached_sha256(p, memo) for p in files}
    memo_path.write_text(json.dumps(memo))
    version = hashlib.sha256(json.dumps(hashes, sort_keys=True).encode()).hexdigest()[:16]
    template = (WEB / "sw.js").read_text()
    source = template.replace("__VERSION__", version).replace(
        "__PRECACHE__", json.dumps(["./", *sorted(hashes)], indent=1)
    )
    write_if_changed(DIST / "sw.js", source.encode())
    log(f"service worker: {len(hashes)} assets precached, version {version}")
    return version
