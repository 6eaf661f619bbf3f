"""Persisted full-text postings (``engine.postings_block``, ``CharacterStore`` text groups,
``browser.text_blocks``): whatever the history of writes, lazy steps and absorbed blocks, the
completed index is the one a full build of the live records makes (the same search results,
the same doubles); a block made from another source, damaged, or of another analyzer version
is refused and the texts are analyzed instead (never a wrong result). "The same": the same
hits, the same score doubles; the moments of all scores (mean, std) sum in document order,
which differs with the order documents were indexed in, so they agree to the last bits."""

from __future__ import annotations

import dataclasses
import json
import sys
import zlib

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from omoide.browser import restore, session, text_blocks
from omoide.engine import MemoryEngine, analyzer, postings_block
from omoide.engine.analyzer import analyze
from omoide.engine.bm25 import BM25Index
from omoide.engine.memory import Memory
from omoide.engine.store import CharacterStore, TextGroup
from omoide.kernels.pure_kernel import PureKernel
from tests.test_browser_restore import FakeStore, stored, worker  # noqa: F401
from tests.test_engine_embedder import HashingEmbedder

WORDS = ["tea", "violin", "osaka", "river", "chess", "sunday", "bread", "train", "cat", "fuji",
         "東京", "緑茶", "大阪の川", "満員電車", "the"]
texts = st.lists(st.sampled_from(WORDS), min_size=1, max_size=6).map(" ".join)
contexts = st.one_of(st.none(), texts)
QUERIES = (["tea"], analyze("東京 緑茶"), ["river", "cat", "fuji"], analyze("大阪の川 train"))
# a step of a session: (verb, which memory, new text)
VERBS = ["remember", "update", "same_text", "forget", "restore", "step", "absorb"]
plans = st.lists(st.tuples(st.sampled_from(VERBS), st.integers(0, 10_000), texts), max_size=25)


def full_build(store: CharacterStore) -> BM25Index:
    index = store._text_index
    built = BM25Index(k1=index.k1, b=index.b, context_weight=index.context_weight,
                      context_b=index.context_b)
    for memory in store.records.values():
        built.add(memory.id, *store.index_terms(memory))
    return built


def assert_as_full_build(store: CharacterStore) -> None:
    index = store.text_index  # completes the build
    built = full_build(store)
    ids = sorted(store.records)
    assert len(index) == len(built) == len(ids) and all(i in index for i in ids)
    assert index.term_count == built.term_count
    for memory_id in ids:
        assert index.term_frequencies(memory_id) == built.term_frequencies(memory_id)
        assert index.document_length(memory_id) == built.document_length(memory_id)
    for query in QUERIES:
        got, want = index.search(query, 50), built.search(query, 50)
        assert (got.ids, got.scores, got.count) == (want.ids, want.scores, want.count)
        # the moments sum every matched score in ordinal order: equal but for the last bits
        assert got.mean == pytest.approx(want.mean, rel=1e-12, abs=1e-12)
        assert got.std == pytest.approx(want.std, rel=1e-9, abs=1e-9)
        assert index.scores(query, ids) == built.scores(query, ids)


def adopted(engine: MemoryEngine, full: CharacterStore, cuts: list[int],
            overridden: frozenset[int] = frozenset()) -> CharacterStore:
    """A store filled like a restore: fresh copies of ``full``'s records, grouped per "pack"
    at ``cuts`` (the last group's end onwards: ungrouped, like override rows); the records
    at the positions of ``overridden`` have another text, in no group (a later copy
    overrides the pack's)."""
    records = [dataclasses.replace(m) for m in full.records.values()]
    for n in overridden:
        if n < len(records):
            records[n] = dataclasses.replace(records[n], text=f"river {records[n].text}")
    store = engine.new_store("mika", stamp=full.stamp, model_id=full.model_id,
                             dimension=full.dimension)
    kernel = PureKernel(full.dimension)
    kernel.add([m.id for m in records], [full.kernel.vector(m.id) for m in records])
    groups, start = [], 0
    loose = [m.id for n, m in enumerate(records) if n in overridden]
    for n, end in enumerate(sorted(set(c % (len(records) + 1) for c in cuts))):
        members = [m for k, m in enumerate(records[start:end], start) if k not in overridden]
        groups.append(TextGroup(n, [n, end - start], members))
        start = end
    store.adopt(kernel, PureKernel(full.dimension), records, [], text_groups=groups,
                ungrouped=loose + [m.id for m in records[start:]])
    engine.stores["mika"] = store
    return store


def play(engine: MemoryEngine, store: CharacterStore, plan, blocks: dict) -> None:
    for verb, pick, text in plan:
        live, trashed = sorted(store.records), sorted(store.trash)
        if verb == "step":
            store.index_text(3)
        elif verb == "absorb" and blocks:
            key = sorted(blocks)[pick % len(blocks)]
            data, source = blocks.pop(key)
            group = store.text_group(key)
            if group is not None:
                store.absorb_text_block(key, group.source,
                                        postings_block.from_bytes(data, group.source))
        elif verb == "remember":
            engine.remember("mika", text)
        elif verb == "update" and live:
            engine.update("mika", live[pick % len(live)], text=text)
        elif verb == "same_text" and live:  # a new record, same text: its write indexes nothing
            old = store.records[live[pick % len(live)]]
            store.put(dataclasses.replace(old, importance=0.9), None)
        elif verb == "forget" and live:
            engine.forget("mika", live[pick % len(live)])
        elif verb == "restore" and trashed:
            engine.restore("mika", trashed[pick % len(trashed)])


@settings(max_examples=100, deadline=None)
@given(st.lists(st.tuples(texts, contexts), min_size=1, max_size=30),
       st.lists(st.integers(0, 40), max_size=4), plans, plans,
       st.frozensets(st.integers(0, 30), max_size=6), st.frozensets(st.integers(0, 30)),
       st.sampled_from([1, 4, 1024]))
def test_blocks_and_writes_in_any_order_complete_to_a_full_build(start, cuts, first, second,
                                                                 before, after, floor):
    # ``floor``: removed documents tolerated before renumbering (1: nearly every removal)
    default, BM25Index.renumber_floor = BM25Index.renumber_floor, floor
    try:
        run_sessions(start, cuts, first, second, before, after)
    finally:
        BM25Index.renumber_floor = default


def run_sessions(start, cuts, first, second, before, after) -> None:
    source = MemoryEngine(HashingEmbedder(16), kernel=PureKernel)
    source.remember_many("mika", [{"text": t, "context": c} for t, c in start])
    full = source.stores["mika"]
    # session 1: no blocks yet; the lazy build makes one per group
    engine = MemoryEngine(HashingEmbedder(16), kernel=PureKernel)
    store = adopted(engine, full, cuts, before)
    play(engine, store, [p for p in first if p[0] != "absorb"], {})
    assert_as_full_build(store)
    blocks = {b.key: (postings_block.to_bytes(b.block, b.source), b.source)
              for b in store.built_blocks}
    # session 2: the same packs, other copies overriding some of them (``after``), the
    # blocks absorbed among other writes and steps
    engine = MemoryEngine(HashingEmbedder(16), kernel=PureKernel)
    store = adopted(engine, full, cuts, after)
    play(engine, store, second, blocks)
    assert_as_full_build(store)


def imported(engine: MemoryEngine, full: CharacterStore) -> CharacterStore:
    """A store filled like the browser's import: fresh copies of ``full``'s records added
    in bulk (``add_loaded``), every text waiting to be analyzed one by one."""
    records = [dataclasses.replace(m) for m in full.records.values()]
    store = engine.new_store("mika", stamp=full.stamp, model_id=full.model_id,
                             dimension=full.dimension)
    kernel = PureKernel(full.dimension)
    kernel.add([m.id for m in records], [full.kernel.vector(m.id) for m in records])
    store.adopt(kernel, PureKernel(full.dimension), records, [])
    engine.stores["mika"] = store
    return store


def pack_cuts(ids: list[str], cuts: list[int]) -> list[tuple[int, list[int], list[str]]]:
    """The import's "packs": ``ids`` cut at ``cuts``, the rest after the last cut left out
    (the tail rows, not packed); each pack's source ``[key, size]``."""
    packs, start = [], 0
    for n, end in enumerate(sorted(set(c % (len(ids) + 1) for c in cuts))):
        packs.append((n, [n, end - start], ids[start:end]))
        start = end
    return packs


@settings(max_examples=100, deadline=None)
@given(st.lists(st.tuples(texts, contexts), min_size=1, max_size=30),
       st.lists(st.integers(0, 40), max_size=4), st.integers(0, 12), plans, plans)
def test_an_imports_packs_make_blocks_that_its_restore_absorbs(start, cuts, analyzed_first,
                                                               before, plan):
    source = MemoryEngine(HashingEmbedder(16), kernel=PureKernel)
    source.remember_many("mika", [{"text": t, "context": c} for t, c in start])
    full = source.stores["mika"]
    ids = list(full.records)
    packs = pack_cuts(ids, cuts)
    engine = MemoryEngine(HashingEmbedder(16), kernel=PureKernel)
    store = imported(engine, full)
    store.index_text(analyzed_first)  # the lazy pass began before the packs were known
    # writes before the packs are grouped (another call came first): indexed at write
    before = [p for p in before if p[0] not in ("absorb", "step")]
    play(engine, store, before, {})
    first = set(ids[:analyzed_first])
    made = store.group_unindexed(packs)
    assert store.group_unindexed(packs) == 0  # each pack grouped once
    if not before:
        # a pack with a memory analyzed already stays as it was; the others become groups
        expect = [p for p in packs if p[2] and not first.intersection(p[2])]
        assert made == len(expect)
        assert store.unindexed_count() == len(ids) - len(first)
    play(engine, store, [p for p in plan if p[0] != "absorb"], {})
    assert_as_full_build(store)
    assert len(store.built_blocks) == made
    if before or plan:
        return
    assert sorted(b.key for b in store.built_blocks) == [key for key, _, _ in expect]
    # no write since: the next start absorbs every block and analyzes no text of its packs
    blocks = {b.key: b for b in store.built_blocks}
    engine = MemoryEngine(HashingEmbedder(16), kernel=PureKernel)
    restored = adopted(engine, full, cuts)
    for key, b in blocks.items():
        block = postings_block.from_bytes(postings_block.to_bytes(b.block, b.source), b.source)
        assert restored.absorb_text_block(key, b.source, block)
    left = sum(len(m) for k, _, m in packs if k not in blocks) + len(ids) - sum(
        len(m) for _, _, m in packs)
    assert restored.unindexed_count() == left
    assert_as_full_build(restored)


def test_absorbed_blocks_analyze_no_text_of_their_group(monkeypatch):
    source = MemoryEngine(HashingEmbedder(16), kernel=PureKernel)
    source.remember_many("mika", [f"note {i} about tea and 東京" for i in range(50)])
    full = source.stores["mika"]
    engine = MemoryEngine(HashingEmbedder(16), kernel=PureKernel)
    store = adopted(engine, full, [20, 45])
    store.text_index  # noqa: B018 - the first session's complete build
    blocks = {b.key: postings_block.to_bytes(b.block, b.source) for b in store.built_blocks}
    assert sorted(blocks) == [0, 1]
    engine = MemoryEngine(HashingEmbedder(16), kernel=PureKernel)
    store = adopted(engine, full, [20, 45])
    analyzed = []
    monkeypatch.setattr(store, "analyzer", lambda text: analyzed.append(text) or analyze(text))
    for key, data in blocks.items():
        assert store.absorb_text_block(key, [key, 20 if key == 0 else 25],
                                       postings_block.from_bytes(data, [key, 20 if key == 0
                                                                        else 25]))
    assert store.unindexed_count() == 5
    # the index holds the records' own id strings, not the copies parsed from the blocks
    own = {id(memory_id) for memory_id in store.records}
    assert all(id(memory_id) in own for memory_id in store._text_index._ordinal)
    store.text_index  # noqa: B018
    assert analyzed == [f"note {i} about tea and 東京" for i in range(45, 50)]  # ungrouped only
    assert_as_full_build(store)
    assert store.built_blocks == []  # nothing new to persist


def test_a_block_leaves_out_what_was_forgotten_or_changed_before_it_came():
    source = MemoryEngine(HashingEmbedder(16), kernel=PureKernel)
    source.remember_many("mika", [f"note {i} about tea" for i in range(20)])
    full = source.stores["mika"]
    engine = MemoryEngine(HashingEmbedder(16), kernel=PureKernel)
    store = adopted(engine, full, [20])
    store.text_index  # noqa: B018
    [built] = store.built_blocks
    engine = MemoryEngine(HashingEmbedder(16), kernel=PureKernel)
    store = adopted(engine, full, [20], overridden=frozenset({5, 6}))  # later copies of two
    order = [m.id for m in store.records.values()]  # the packs' order
    forgotten, changed, overridden = order[0], order[1], order[5:7]
    engine.forget("mika", forgotten)
    engine.update("mika", changed, text="a violin on sunday")
    engine.forget("mika", overridden[0])
    assert store.absorb_text_block(0, [0, 20], built.block)
    assert forgotten not in store.text_index and changed in store.text_index
    assert overridden[0] not in store.text_index
    assert store.text_index.term_frequencies(overridden[1])["river"] == (1, 0)  # its own copy
    assert len(store.text_index.search(["tea"], 50).ids) == 17
    assert store.text_index.search(["violin"], 5).ids == [changed]
    assert_as_full_build(store)


def test_a_group_with_nothing_left_is_finished_at_any_limit():
    # a pack whose every record a later copy overrides restores as a group of no members:
    # ``text_index`` asks for ``unindexed_count()`` (0 for it) and looped forever
    source = MemoryEngine(HashingEmbedder(16), kernel=PureKernel)
    source.remember_many("mika", [f"note {i} about tea" for i in range(6)])
    engine = MemoryEngine(HashingEmbedder(16), kernel=PureKernel)
    store = adopted(engine, source.stores["mika"], [0, 3])  # groups [] and the first three
    assert store.unindexed_count() == 6
    assert store.index_text(0) == 6 and len(store.built_blocks) == 1  # the empty one, done
    assert len(store.text_index.search(["tea"], 10).ids) == 6
    assert_as_full_build(store)


def test_removals_past_the_renumbering_after_absorbing_keep_a_full_build(monkeypatch):
    monkeypatch.setattr(BM25Index, "renumber_floor", 1)
    source = MemoryEngine(HashingEmbedder(16), kernel=PureKernel)
    source.remember_many("mika", [f"note {i} about tea {WORDS[i % 14]}" for i in range(20)])
    full = source.stores["mika"]
    engine = MemoryEngine(HashingEmbedder(16), kernel=PureKernel)
    store = adopted(engine, full, [10, 20])
    store.text_index  # noqa: B018
    blocks = store.built_blocks
    engine = MemoryEngine(HashingEmbedder(16), kernel=PureKernel)
    store = adopted(engine, full, [10, 20])
    for b in blocks:
        assert store.absorb_text_block(b.key, b.source, b.block)
    for memory_id in sorted(store.records)[:14]:  # removed outnumber the live: renumbered
        engine.forget("mika", memory_id)
    assert store._text_index._blocks == []  # term lists taken out of the blocks
    assert_as_full_build(store)
    ids = sorted(store.records)
    assert store.text_index.matched_words([("tea",), ("東京",)], ids) == \
        full_build(store).matched_words([("tea",), ("東京",)], ids)


def test_a_block_of_another_source_version_or_damaged_is_refused(monkeypatch):
    index = BM25Index()
    index.add("a", analyze("tea in osaka"))
    data = postings_block.to_bytes(index.block(), [7, 12])
    assert postings_block.from_bytes(data, [7, 12]).ids == ["a"]
    with pytest.raises(ValueError, match="source"):
        postings_block.from_bytes(data, [8, 12])
    damaged = bytearray(data)
    damaged[-3] ^= 1
    with pytest.raises(ValueError, match="CRC"):
        postings_block.from_bytes(bytes(damaged), [7, 12])
    with pytest.raises(ValueError):
        postings_block.from_bytes(data[:-4], [7, 12])
    monkeypatch.setattr(postings_block, "ANALYZER_VERSION", analyzer.ANALYZER_VERSION + 1)
    with pytest.raises(ValueError, match="analyzer"):
        postings_block.from_bytes(data, [7, 12])


# -- the browser's restore: packs as the worker hands them over ---------------------------------

def lines_pack(records: list[dict]) -> bytes:
    head = json.dumps([[r["id"] for r in records], [r["key"] for r in records]])
    return "\n".join([head, *map(json.dumps, records)]).encode()


def restore_packs(packs: list[bytes], rows: list[dict], skips: list[list[str]]) -> None:
    ids = [r["id"] for r in rows]
    for data, skip in zip(packs, skips, strict=True):
        ids += [i for i in json.loads(data.split(b"\n")[0])[0] if i not in skip]
    header = {"character": "aoi", "stamp": "omoide/all-MiniLM-L6-v2@q8#4",
              "model_id": "omoide/all-MiniLM-L6-v2", "dimension": 4, "live_ids": ids,
              "trash_ids": [], "missing": [], "recalls": {}, "corrupt_segments": 0, "loose": 0}
    restore.begin(json.dumps(header))
    for n, (data, skip) in enumerate(zip(packs, skips, strict=True)):
        restore.add_records("aoi", data, json.dumps(skip) if skip else "", restore.PACK_LINES,
                            zlib.crc32(data), n)
    if rows:
        restore.add_records("aoi", json.dumps(rows))
    restore.finish("aoi", FakeStore(4, [[1.0, 0, 0, 0]] * len(ids)), FakeStore(4))


def test_a_restore_absorbs_the_blocks_its_last_session_made(monkeypatch):
    # the kernel of a plain-JavaScript build: full-text scored by PureScorer
    monkeypatch.setattr(sys.modules["omoide_vectors"], "createTextScorer", lambda: None,
                        raising=False)
    records = stored(30)
    for r in records:
        r["text"] = f"{r['text']} {WORDS[int(r['id'][1:]) % len(WORDS)]}"
    packs = [lines_pack(records[:12]), lines_pack(records[12:25])]
    override = [dict(records[3], text="violin lesson on sunday")]  # a later row wins
    restore_packs(packs, override + records[25:], [["m0003"], []])
    store = session.session().engine.stores["aoi"]
    expected = {i: store.records[i].text for i in store.records}
    assert text_blocks.take() == []
    session.index_text_step(batch=1_000)
    made = text_blocks.take()
    assert [(c, p, crc) for c, p, crc, _ in made] == [
        ("aoi", 0, zlib.crc32(packs[0])), ("aoi", 1, zlib.crc32(packs[1]))]
    before = {q: store.text_index.search(q, 50) for q in map(tuple, QUERIES)}
    # the next restore: each pack's block absorbed, only the override rows analyzed
    restore_packs(packs, override + records[25:], [["m0003"], []])
    store = session.session().engine.stores["aoi"]
    analyzed = []
    monkeypatch.setattr(store, "analyzer", lambda text: analyzed.append(text) or analyze(text))
    assert not text_blocks.absorb("aoi", 0, made[1][3])  # another pack's block: refused
    assert all(text_blocks.absorb("aoi", p, data) for _, p, _, data in made)
    assert not text_blocks.absorb("aoi", 0, made[0][3])  # absorbed already
    assert {q: store.text_index.search(q, 50) for q in map(tuple, QUERIES)} == before
    assert sorted(analyzed) == sorted([expected["m0003"]] + [r["text"] for r in records[25:]])
    assert_as_full_build(store)
    # a pack whose text changed since its block was made: the block is refused
    changed = [lines_pack([dict(records[0], text="croissant")] + records[1:12]), packs[1]]
    restore_packs(changed, [], [[], []])
    assert not text_blocks.absorb("aoi", 0, made[0][3])
    assert text_blocks.absorb("aoi", 1, made[1][3])
    store = session.session().engine.stores["aoi"]
    assert_as_full_build(store)
    assert store.text_index.search(["croissant"], 5).ids == ["m0000"]


def test_restore_groups_carry_each_packs_memories(worker):  # noqa: F811
    records = stored(10)
    packs = [lines_pack(records[:6])]
    restore_packs(packs, records[6:], [[]])
    store = session.session().engine.stores["aoi"]
    group = store.text_group(0)
    assert [m.id for m in group.members] == [r["id"] for r in records[:6]]
    assert group.source == [zlib.crc32(packs[0]), len(packs[0])]
    assert isinstance(group.members[0], Memory)
