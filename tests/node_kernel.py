"""A node process that loads the built kernel (dist/kernel) and answers one JSON request per
line: tests run the WebAssembly builds without a browser."""

from __future__ import annotations

import json
import shutil
import subprocess
from collections.abc import Callable, Iterator
from typing import Any

import pytest

from buildtools.paths import DIST


def serve(tmp_path_factory: Any, name: str, source: str
          ) -> Iterator[Callable[[dict], dict]]:
    """Run ``source`` (an ES module; ``%(vectors)s`` and ``%(kernel_dir)s`` become the URLs of
    dist/kernel/vectors.js and dist/kernel/) and yield ``ask(request) -> answer``."""
    node = shutil.which("node")
    kernel_dir = DIST / "kernel"
    if not node or not (kernel_dir / "topk.wasm").exists():
        pytest.skip("no node, or dist/ without the kernel (python3 build.py build)")
    script = tmp_path_factory.mktemp(name) / "serve.mjs"
    script.write_text(source % {
        "vectors": json.dumps((kernel_dir / "vectors.js").as_uri()),
        "kernel_dir": json.dumps(kernel_dir.as_uri() + "/"),
    }, encoding="utf-8")
    process = subprocess.Popen([node, str(script)], stdin=subprocess.PIPE,
                               stdout=subprocess.PIPE, text=True)

    def ask(request: dict) -> dict:
        assert process.stdin is not None and process.stdout is not None
        process.stdin.write(json.dumps(request) + "\n")
        process.stdin.flush()
        line = process.stdout.readline()
        assert line, f"the node process of {name} ended"
        return json.loads(line)

    yield ask
    assert process.stdin is not None
    process.stdin.close()
    process.wait(timeout=30)
