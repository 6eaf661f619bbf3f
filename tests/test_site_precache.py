"""The service worker precaches what the build wrote, never a stray file left in dist/."""

from __future__ import annotations

from buildtools import site


def layout(tmp_path, monkeypatch):
    web, dist = tmp_path / "web", tmp_path / "dist"
    for rel in ("index.html", "ui/list.js", "sw.js"):
        (web / rel).parent.mkdir(parents=True, exist_ok=True)
        (web / rel).write_text("x")
    built = ("index.html", "ui/list.js", "sw.js", "build-info.json", "wheels/omoide.whl",
             "kernel/topk.wasm", "vendor/dexie.mjs", "models/manifest.json",
             "models/omoide/e5/model.onnx", ".hashes.json")
    for rel in built:
        (dist / rel).parent.mkdir(parents=True, exist_ok=True)
        (dist / rel).write_text("x")
    monkeypatch.setattr(site, "WEB", web)
    monkeypatch.setattr(site, "DIST", dist)
    return dist


def precached(log=None) -> set[str]:
    return {p.relative_to(site.DIST).as_posix()
            for p in site.precache_list(log or (lambda _: None))}


def test_built_files_are_precached(tmp_path, monkeypatch):
    layout(tmp_path, monkeypatch)
    assert precached() == {"index.html", "ui/list.js", "build-info.json", "wheels/omoide.whl",
                           "kernel/topk.wasm", "vendor/dexie.mjs", "models/manifest.json"}


def test_stray_files_are_left_out_and_named(tmp_path, monkeypatch):
    dist = layout(tmp_path, monkeypatch)
    (dist / "probe").mkdir()
    (dist / "probe" / "big.bin").write_bytes(b"\0" * 1024)
    (dist / "ui" / "old-view.js").write_text("x")  # its source left web/
    lines: list[str] = []
    files = precached(lines.append)
    assert "probe/big.bin" not in files and "ui/old-view.js" not in files
    assert "ui/list.js" in files
    assert len(lines) == 1 and "probe/big.bin" in lines[0] and "ui/old-view.js" in lines[0]
