"""An import's vectors leave the page as one Float32Array per character, transferred to the
engine worker (web/store/import-vectors.js ``packImportCall``), not cloned number by number;
the caller's file is not changed, the vectors arrive bit for bit, and a malformed packed call
(never this page's) is refused naming the field, with nothing written."""

from __future__ import annotations

import pytest

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
                 f"new Array({4 * dim}).fill(0)",
                 f"new Float32Array({4 * dim})"):  # rows of zeros: no direction
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


def test_rows_of_another_length_arrive_at_length_1_and_a_zero_row_is_named(launch, app_url,
                                                                           tmp_path):
    """Every kernel scores by dot product (Python's validate.unit_length, the same rule in
    import-vectors.js): a row of another length is stored in its direction at length 1, as the
    page packs it and as the worker packs a file sent as it is; an all-zero row is refused by
    the record validator, naming the memory, and nothing is written."""
    page, stamp, dim = open_app(launch, app_url, tmp_path / "profile")
    page.evaluate(MAKE, [6, 0, stamp, dim])
    scaled = page.evaluate("""() => {
      const f = window.__file.characters[0];
      const unit = structuredClone(f.vectors);
      f.vectors.i0001 = f.vectors.i0001.map((x) => x * 1e30);
      f.vectors.i0002 = f.vectors.i0002.map((x) => x * 0.25);
      return unit;
    }""")
    sent_as_is = """() => window.omoide.engine.call("import_data", { data: window.__file })"""
    page.evaluate("(d) => { window.__file.characters[0].vectors.i0003 = new Array(d).fill(0); }",
                  dim)
    for call in (IMPORT, sent_as_is):  # packed by the page, or by the worker
        message = page.evaluate(f"() => ({call})().then(() => null, (e) => e.message)")
        assert message and "all zeros" in message and "i0003" in message, message
    assert page.evaluate(RAW)["memories"] == [] and page.evaluate(RAW)["record_packs"] == []
    page.evaluate("""(row) => { window.__file.characters[0].vectors.i0003 = row; }""",
                  scaled["i0003"])
    assert page.evaluate(IMPORT)["imported"] == 6
    stored = exported_vectors(page)
    for memory_id, unit in scaled.items():
        assert stored[memory_id] == pytest.approx(unit, abs=1e-6), memory_id
