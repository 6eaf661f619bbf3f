// bench/restore_profile.py under Pyodide in node: the browser's Python interpreter (wasm),
// without a browser, so the Python side of a restore and an import check is timed as the
// engine worker runs it (not run by the tests).
//   node bench/restore_profile_pyodide.mjs [TREE] [--rows 100000] [--profile]
// TREE (default: this checkout) is mounted read-only-by-convention at /src; pytest and
// hypothesis (imported by the test helpers the bench borrows) are stubbed.
import { fileURLToPath } from "node:url";
import path from "node:path";
import { loadPyodide } from "pyodide";

const here = path.dirname(fileURLToPath(import.meta.url));
const args = process.argv.slice(2);
const tree = args[0] && !args[0].startsWith("--") ? path.resolve(args.shift())
  : path.resolve(here, "..");
const pyodide = await loadPyodide();
pyodide.FS.mkdirTree("/src");
pyodide.FS.mount(pyodide.FS.filesystems.NODEFS, { root: tree }, "/src");
pyodide.globals.set("ARGS", pyodide.toPy(args));
pyodide.runPython(`
import os, runpy, sys
from unittest import mock
for name in ("pytest", "hypothesis", "hypothesis.strategies"):
    sys.modules[name] = mock.MagicMock()
sys.path[:0] = ["/src", "/src/py"]
os.chdir("/src")
sys.argv = ["restore_profile.py", *ARGS]
runpy.run_path("/src/bench/restore_profile.py", run_name="__main__")
`);
