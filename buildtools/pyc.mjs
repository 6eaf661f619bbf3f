// Compile a package's sources to bytecode with Pyodide's own Python (node), so the wheel the
// browser loads carries .pyc of the exact interpreter version: importing from source costs
// Pyodide a compile of every module at every boot.
//   node buildtools/pyc.mjs NODE_MODULES/pyodide/ SRC_DIR
// writes SRC_DIR/**/__pycache__/*.pyc (unchecked-hash: the loader never stats the source)
// named as if the files lived in Pyodide's site-packages (tracebacks show those paths), and
// prints Pyodide's cache tag.
import { loadPyodide } from "pyodide";

const [, , indexURL, src] = process.argv;
const pyodide = await loadPyodide({ indexURL });
pyodide.FS.mkdirTree("/build");
pyodide.FS.mount(pyodide.FS.filesystems.NODEFS, { root: src }, "/build");
const tag = pyodide.runPython(`
import compileall, py_compile, sys, sysconfig
ok = compileall.compile_dir("/build", ddir=sysconfig.get_paths()["purelib"], quiet=1,
    invalidation_mode=py_compile.PycInvalidationMode.UNCHECKED_HASH)
if not ok:
    raise SystemExit("compileall failed")
sys.implementation.cache_tag
`);
console.log(tag);
