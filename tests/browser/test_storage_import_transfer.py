"""An import's vectors leave the page as one Float32Array per character, transferred to the
engine worker (web/store/import-vectors.js ``packImportCall``), not cloned number by number;
the caller's file is not changed, the vectors arrive bit for bit, and a malformed packed call
(never this page's) is refused naming the field, with nothing written."""

from __future__ import annotations

from .conftest import engine_call
from .test_storage_import import IMPORT, MAKE, exported_vectors, open_app
from .test_storage_purge import RAW

PACK = """async () => {
  const { packImportCall } = await import("./store/import-vectors.js");
  const before = JSON.stringify(window.__file);
  const { params, transfer } = packImportCall({ data: window.__file });
  const [c] = params.data.characters;
  const packed = c.vectors_packed;
  const same = packed.ids.every((id, n) => window.__f32[id].every((x, j) =>
    Object.is(x, packed.flat[n * packed.dimension + j])));
  return { transfer: transfer.length, buffer: transfer[0] === packed.flat.buffer,
    vectors: "vectors" in c, same, unchanged: JSON.stringify(window.__file) === before,
    memories: c.memories.length };
}"""


def test_the_page_packs_the_vectors_and_they_arrive_exactly(launch, app_url, tmp_path):
    page, stamp, dim = open_app(launch, app_url, tmp_path / "profile")
    page.evaluate(MAKE, [300, 20, stamp, dim])
    assert page.evaluate(PACK) == {"transfer": 1, "buffer": True, "vectors": False,
                                   "same": True, "unchanged": True, "memories": 280}
    before = page.evaluate("() => JSON.stringify(window.__file)")
    assert page.evaluate(IMPORT)["imported"] == 300
    assert page.evaluate("() => JSON.stringify(window.__file)") == before
    assert exported_vectors(page) == page.evaluate("() => window.__f32")


def test_a_malformed_packed_call_is_refused_and_writes_nothing(launch, app_url, tmp_path):
    page, stamp, dim = open_app(launch, app_url, tmp_path / "profile")
    page.evaluate(MAKE, [4, 0, stamp, dim])
    for flat in (f"new Float32Array({4 * dim}).fill(NaN)", f"new Float32Array({3 * dim})",
                 f"new Array({4 * dim}).fill(0)"):
        code, message = page.evaluate(f"""() => {{
          const {{ vectors, ...c }} = window.__file.characters[0];
          const data = {{ ...window.__file, characters: [{{ ...c, vectors_packed: {{
            ids: Object.keys(vectors), dimension: {dim}, flat: {flat} }} }}] }};
          return window.omoide.engine.call("import_data", {{ data }})
            .then(() => null, (e) => [e.name, e.message]);
        }}""")
        assert code == "MALFORMED_IMPORT" and "vectors_packed of umi" in message, message
    assert engine_call(page, "memories", {"character": "umi"}) == []
    assert page.evaluate(RAW)["memories"] == [] and page.evaluate(RAW)["record_packs"] == []
