// IndexedDB layout of Omoide, through Dexie (see ARCHITECTURE.md "Storage").
//
// Invariants:
// - Every write of one engine change is one Dexie transaction: it is applied whole or not at
//   all (a QuotaExceededError aborts it and leaves the database as it was).
// - A memory's vector lives either inline in its record (written with it: adding a memory
//   writes O(1) data, never the index) or in one row ("slot") of one segment of its
//   character's current model stamp, never both.
// - Compaction packs inline vectors into full segments of SEGMENT_ROWS rows once there are
//   enough of them, in one transaction. Purged rows become holes (id null).
// - Every segment carries a CRC-32 of its ids and rows; a damaged one is never trusted.
import Dexie from "../vendor/dexie/dexie.mjs";
import { crc32 } from "./crc32.js";
import { CHECKED, erasePacked, eraseStale, lineRecord, makeLinePack, makePack, packOverrides,
  packSize, packsHolding, PACK_ROWS, storedRows, textChecksum, winners, writePacks, unpack }
  from "./packs.js";

export { PACK_ROWS };

export const SEGMENT_ROWS = 256;
// A bulk write (an import, a re-vectorization's swap) cuts its rows into segments of this
// many while they last, then of SEGMENT_ROWS: boot reads fewer, larger values (102,400 rows
// of 384 floats read back in 0.64-0.73 s instead of 0.94-1.09 s in 256-row segments:
// bench/results/s30_segment_read.md), and a purge's rewrite of one segment stays 1.5 MB.
export const BULK_SEGMENT_ROWS = 1024;

// The [start, rows] of each segment a bulk write of ``n`` rows makes; the rows past the last
// (fewer than SEGMENT_ROWS) are left to the tail unless ``all``.
export function bulkCuts(n, all = false) {
  const cuts = [];
  let start = 0;
  for (const size of [BULK_SEGMENT_ROWS, SEGMENT_ROWS]) {
    for (; n - start >= size; start += size) cuts.push([start, size]);
  }
  if (all && start < n) cuts.push([start, n - start]);
  return cuts;
}
// settings key of the queue of changes waiting to be mirrored to the backup server
export const MIRROR_QUEUE = "mirror_queue";
// settings keys ``forgotten:<memory id>``: a memory purged here (forgotten for good), its
// character and when; the id only, no text. A restore from any backup server skips these ids
// and "Back up now" deletes the server's copy (omoide/browser/session.py).
export const FORGOTTEN = "forgotten:";
const encoder = new TextEncoder();

export function openDatabase(name = "omoide") {
  const db = new Dexie(name);
  db.version(1).stores({
    characters: "id",
    memories: "[character+id], character",
    segments: "[character+stamp+seg], [character+stamp]",
    stamps: "character",
    staging: "[stamp+character+id], [stamp+character]",
    settings: "key",
  });
  // v2: a generation per character (written with each change, so another tab reloads only
  // what changed) and the recall counts, kept apart from the records (a recall writes no
  // record). The single "generation" setting of v1 is gone.
  // The tail (memories whose vector is still inline, not yet in a segment) is indexed
  // (``tail: 1``; absent on every other record, so the index holds the tail only):
  // compaction reads the tail, never all of a character's records.
  db.version(2).stores({
    memories: "[character+id], character, [character+tail]",
    generations: "character",
    recalls: "[character+id], character",
  }).upgrade(async (tx) => {
    await tx.table("settings").delete("generation");
    await tx.table("memories").toCollection().modify((r) => {
      if (r.vector) r.tail = 1;
    });
  });
  // v3: records packed (web/store/packs.js). The upgrade packs, per character, every record
  // whose vector is in a segment of its current stamp; the tail and records without a vector
  // of the current stamp stay rows.
  db.version(3).stores({
    record_packs: "[character+pack], character, *ids",
  }).upgrade(async (tx) => {
    for (const { character, stamp } of await tx.table("stamps").toArray()) {
      const rows = (await tx.table("memories").where("character").equals(character).toArray())
        .filter((r) => !r.vector && r.slot && r.stamp === stamp);
      const packs = [];
      for (let start = 0, n = 0; start < rows.length; start += PACK_ROWS, n++) {
        packs.push(makePack(character, n, stamp, rows.slice(start, start + PACK_ROWS)));
      }
      await tx.table("record_packs").bulkPut(packs);
      await tx.table("memories").bulkDelete(rows.map((r) => [character, r.id]));
    }
  });
  // v4: the full-text postings of each record pack (``text_postings``, derived data: see
  // ``writeTextBlocks``). Nothing to upgrade: a pack without a block is analyzed after boot
  // as before, and its block is written then.
  db.version(4).stores({
    text_postings: "[character+pack], character",
  });
  return db;
}

// Generation row of changes that are not one character's (settings, the selected model):
// a tab that sees it move reloads everything.
export const GLOBAL = "*";

export async function generations(db) {
  return new Map((await db.generations.toArray()).map((g) => [g.character, g.generation]));
}

// Bump the generation of each character (call inside the transaction of the change itself).
// ``known`` (character -> generation, optional): the generations as the caller read them
// under the engine lock it still holds, so they need no second read.
async function bumpGenerations(db, characters, known = null) {
  const keys = [...characters];
  const rows = known ? keys.map((c) => ({ generation: known.get(c) ?? 0 }))
    : await db.generations.bulkGet(keys);
  const next = keys.map((character, i) => ({ character,
    generation: (rows[i]?.generation ?? 0) + 1 }));
  await db.generations.bulkPut(next);
  return new Map(next.map((g) => [g.character, g.generation]));
}

export async function bumpGeneration(db, character) {
  return db.transaction("rw", db.generations, () => bumpGenerations(db, [character]));
}

// settings keys of the recall counts a page going away wrote in one blind put
// (``journalRecalls``); ``addRecalls`` folds them into the recalls table.
export const RECALL_JOURNAL = "recall_journal:";

// Recall counts ({character, id, count, last}) a page going away still held, as ONE put of a
// settings row of its own (``key``: unique) in a native transaction committed at once: no
// read, no lock, nothing to wait for, as its worker may be ended any moment (an additive
// write, which reads first, behind a lock a closing page's worker is never granted, was lost).
export function journalRecalls(db, key, counts) {
  return new Promise((resolve, reject) => {
    const tx = db.backendDB().transaction("settings", "readwrite");
    tx.objectStore("settings").put({ key: RECALL_JOURNAL + key, value: counts });
    tx.oncomplete = () => resolve();
    tx.onerror = () => reject(tx.error);
    tx.onabort = () => reject(tx.error);
    tx.commit?.();
  });
}

// Add counted recalls ({character, id, count, last}) to the recalls table, in one transaction
// (additive: two tabs counting at once both count), with every journal of recall counts
// (``journalRecalls``), which it deletes. The caller holds the engine lock.
export async function addRecalls(db, counts) {
  const journal = () => db.settings.where("key").startsWith(RECALL_JOURNAL);
  const touched = new Set();
  if (!counts.length && !(await journal().count())) return touched;
  await db.transaction("rw", db.recalls, db.memories, db.record_packs, db.settings, async () => {
    const journals = await journal().toArray();
    const journaled = journals.flatMap((j) => (Array.isArray(j.value) ? j.value : []))
      .filter((c) => typeof c?.character === "string" && typeof c.id === "string"
        && Number.isFinite(c.count) && Number.isFinite(c.last));
    const merged = new Map();
    for (const c of [...counts, ...journaled]) {
      const key = `${c.character}\n${c.id}`;
      const seen = merged.get(key);
      merged.set(key, seen ? { ...seen, count: seen.count + c.count,
        last: Math.max(seen.last, c.last) } : c);
    }
    counts = [...merged.values()];
    if (journals.length) await db.settings.bulkDelete(journals.map((j) => j.key));
    const keys = counts.map((c) => [c.character, c.id]);
    const [rows, records] = await Promise.all([db.recalls.bulkGet(keys),
      db.memories.bulkGet(keys)]);
    // a memory purged since its recall leaves no trace (packed ones: index keys only)
    const packed = new Set();
    const byCharacter = new Map();
    counts.forEach((c, i) => {
      if (records[i]) return;
      if (!byCharacter.has(c.character)) byCharacter.set(c.character, []);
      byCharacter.get(c.character).push(c.id);
    });
    for (const [character, ids] of byCharacter) {
      for (const id of (await packsHolding(db, character, ids)).keys()) {
        packed.add(`${character}\n${id}`);
      }
    }
    const stored = (c, i) => records[i] || packed.has(`${c.character}\n${c.id}`);
    await db.recalls.bulkPut(counts.flatMap((c, i) => (stored(c, i) ? [{
      character: c.character, id: c.id, count: (rows[i]?.count ?? 0) + c.count,
      last: Math.max(rows[i]?.last ?? 0, c.last) }] : [])));
    counts.forEach((c, i) => { if (stored(c, i)) touched.add(c.character); });
  });
  return touched;
}

export function segmentChecksum(ids, data, dimension) {
  const rows = ids.length;
  const bytes = new Uint8Array(data.buffer, data.byteOffset, rows * dimension * 4);
  return crc32(bytes, crc32(encoder.encode(ids.map((id) => id ?? "").join("\n"))));
}

function seal(segment, dimension) {
  return { ...segment, checksum: segmentChecksum(segment.ids, segment.data, dimension) };
}

// The next free segment number of a character's index.
async function allocateSlot(db, character, stamp) {
  const keys = await db.segments.where("[character+stamp]").equals([character, stamp])
    .primaryKeys();
  const last = keys.reduce((a, k) => Math.max(a, k[2]), -1);
  return { seg: last + 1, row: 0 };
}

// A segment whose holes pass this share is dissolved: its remaining rows go back to the tail
// (compaction packs them again), so dead rows never pile up.
export const HOLES_MAX = 0.5;

// Tombstone a memory's row: its id is gone and its bytes are zeroed (a purge really erases).
async function clearSlot(db, record, dimension) {
  if (!record?.slot) return;
  const key = [record.character, record.stamp, record.slot.seg];
  const segment = await db.segments.get(key);
  if (!segment || segment.ids[record.slot.row] !== record.id) return;
  const ids = segment.ids.slice();
  const { row } = record.slot;
  ids[row] = null;
  const data = new Float32Array(segment.data);
  data.fill(0, row * dimension, (row + 1) * dimension);
  const holes = ids.filter((id) => id === null).length;
  if (holes <= HOLES_MAX * ids.length) {
    await db.segments.put(seal({ ...segment, ids, data }, dimension));
    return;
  }
  const keys = [];
  const rows = [];
  ids.forEach((id, r) => {
    if (id !== null) {
      keys.push([record.character, id]);
      rows.push(r);
    }
  });
  const survivors = await storedRows(db, keys, async () => dimension);
  await db.memories.bulkPut(survivors.map((r, n) => ({ ...r, slot: null, tail: 1,
    vector: data.slice(rows[n] * dimension, (rows[n] + 1) * dimension) })));
  await db.segments.delete(key);
}

const ALL_TABLES = (db) => [db.memories, db.record_packs, db.text_postings, db.segments,
  db.stamps, db.characters, db.staging, db.generations, db.recalls, db.settings];

const dimensionOf = (db) => async (character) => (await db.stamps.get(character))?.dimension;

// Apply the changes of one engine call (see omoide/engine/listener.py) in one transaction;
// vectors come in one flat Float32Array, each change names its offset.
// Returns, per character, how many vectors were written inline (compaction's trigger), the
// new generation of every character changed (bumped in the same transaction), and the record
// packs the imports wrote (``[character, pack, crc, size, ids]``: text_blocks.group_written).
// ``queue`` (the backup mirror queue, optional) is written in the same transaction.
// ``blocks`` (character -> Float32Array) holds the vectors of ``import`` changes (new
// memories added in bulk, their vectors in block order).
// ``known``: the generations as read under the engine lock the caller holds (see
// ``bumpGenerations``).
export async function persistMany(db, changes, flat, queue = undefined, blocks = new Map(),
  known = null) {
  const inline = new Map();
  let bumped = new Map();
  const packs = [];
  await db.transaction("rw", ALL_TABLES(db), async () => {
    // The generation bump and the queue run beside the changes (other tables); with
    // ``known`` and a fresh id, a remember's transaction reads nothing but its stamp (beside
    // the writes): one round trip of requests, then the commit.
    // (a character's row alone moves no generation: no tab reloads its memories for a name)
    let bumping = bumpGenerations(db, new Set(changes.filter((c) => c.op !== "character")
      .map((c) => c.character)), known);
    const queueing = queue !== undefined ? db.settings.put({ key: MIRROR_QUEUE, value: queue })
      : null;
    // A change that reads packed records runs a longer chain of awaits: the bump and the
    // queue finish first (Dexie follows one chain of native awaits; two in parallel made it
    // commit early). A remember (fresh puts only) keeps them beside its writes.
    if (!changes.every((c) => c.op === "put" && c.fresh)) {
      bumping = await bumping;
      await queueing;
    }
    for (let i = 0; i < changes.length;) {
      const change = changes[i];
      const d = change.dimension;
      if (change.op === "character") { // a character's row: new, renamed, (un)deleted
        await db.characters.put(change.row);
        i += 1;
        continue;
      }
      if (change.op === "name") { // an import's display name: one already here is kept
        if (!(await db.characters.get(change.character))) { // a restore's: deleted or not
          await db.characters.put({ id: change.character, name: change.name,
            created_at: Date.now() / 1000, deleted_at: change.deleted_at ?? null });
        }
        i += 1;
        continue;
      }
      if (change.op === "import") {
        const block = blocks.get(change.character);
        if (!block) throw new Error(`no vectors for the import of ${change.character}`);
        const { loose, written } = await insertRows(db, change, block);
        inline.set(change.character, (inline.get(change.character) ?? 0) + loose);
        for (const p of written) {
          if (p.crc !== undefined) packs.push([p.character, p.pack, p.crc, packSize(p), p.ids]);
        }
        i += 1;
        continue;
      }
      if (change.op === "swap") {
        const n = change.ids.length;
        await swapIndex(db, { ...change, vectors: flat.subarray(change.vectors_at,
          change.vectors_at + n * d) });
        i += 1;
        continue;
      }
      // a run of puts (an import, remember_many) is read and written in bulk requests
      let end = i;
      while (end < changes.length && changes[end].op === "put") end++;
      const run = changes.slice(i, Math.max(end, i + 1));
      for (const c of run) {
        if (c.vector_at !== undefined) {
          c.vector = flat.subarray(c.vector_at, c.vector_at + c.dimension);
          inline.set(c.character, (inline.get(c.character) ?? 0) + 1);
        }
      }
      if (change.op === "put") await putMemories(db, run);
      else await applyChange(db, change);
      i += run.length;
    }
    [bumped] = await Promise.all([bumping, queueing]);
  });
  return { inline, generations: bumped, packs };
}

// Apply one engine change in one transaction.
export async function persistChange(db, change) {
  return db.transaction("rw", ALL_TABLES(db), async () => applyChange(db, change));
}

// Apply one engine change in the caller's transaction (never a nested one: Dexie's nested
// transactions lose track of a chain of awaits and commit early).
async function applyChange(db, change) {
  const { op, character } = change;
  if (op === "put") return putMemory(db, change);
  const [record] = await storedRows(db, [[character, change.memory_id]], dimensionOf(db));
  if (!record) throw new Error(`no stored memory ${change.memory_id} of ${character}`);
  if (op === "trash") {
    await db.memories.put({ ...record, trashed_at: change.at });
  } else if (op === "restore") {
    await db.memories.put({ ...record, trashed_at: null });
  } else if (op === "purge") {
    // gone from disk: record, vector bytes, recall counts and any staged re-embedding
    await clearSlot(db, record, change.dimension ?? record.dimension);
    await db.memories.delete([character, change.memory_id]);
    await erasePacked(db, character, [change.memory_id]);
    const successor = record.record?.meta?.superseded_by;  // an edit's (or a merge's) history
    if (typeof successor === "string" && successor !== change.memory_id) {
      await eraseStale(db, character, successor);
    }
    await db.recalls.delete([character, change.memory_id]);
    await eraseStaged(db, character, [change.memory_id]);
    // its id (never its text) is kept: a backup server that still holds the memory (one
    // set when its delete was sent elsewhere) never brings it back (``forgottenIds``)
    await db.settings.put({ key: FORGOTTEN + change.memory_id,
      value: { character, at: change.at ?? Date.now() / 1000 } });
  } else {
    throw new Error(`unknown change ${op}`);
  }
}

async function putMemory(db, change) {
  return putMemories(db, [change]);
}

// A re-vectorization's staged rows hold the text they embedded, under each model it ran for
// (one cancelled, another finished: both stay). A purge, or a new text, erases the id's rows
// of every model: the purged or replaced words are gone from disk (the staged stamps of a
// character are few; ``uniqueKeys`` reads the index, not the rows).
async function eraseStaged(db, character, ids) {
  const stamps = (await db.staging.orderBy("[stamp+character]").uniqueKeys())
    .filter(([, c]) => c === character).map(([stamp]) => stamp);
  if (!stamps.length || !ids.length) return;
  await db.staging.bulkDelete(stamps.flatMap((stamp) => ids.map((id) => [stamp, character, id])));
}

// Insert or replace records: one bulk read of the old ones (none when every id is new:
// ``fresh``), one bulk write. A new vector goes to the tail (inline, ``tail: 1``); the old
// row of a replaced one is tombstoned. The stamp checks run beside the writes: a wrong stamp
// throws and aborts the whole transaction, so nothing of it is kept.
async function putMemories(db, changes) {
  const stamps = new Map();
  for (const c of changes) {
    const key = `${c.character}\n${c.stamp}`;
    if (!stamps.has(key)) stamps.set(key, c);
  }
  const checking = Promise.all([...stamps.values()].map((c) => ensureStamp(db, c.character,
    c.stamp, c.model_id, c.dimension)));
  const fresh = changes.every((c) => c.fresh);
  if (!fresh) await checking; // one chain of awaits at a time (see persistMany)
  const olds = fresh ? []
    : await storedRows(db, changes.map((c) => [c.character, c.memory.id]), dimensionOf(db));
  const rows = new Map(); // the last change of an id wins
  for (let n = 0; n < changes.length; n++) {
    const { character, memory, stamp, dimension } = changes[n];
    const prior = rows.get(`${character}\n${memory.id}`);
    const old = prior ?? olds[n];
    let slot = old && old.stamp === stamp ? old.slot : null;
    let vector = old && old.stamp === stamp ? old.vector ?? null : null;
    if (changes[n].vector) {
      if (slot) await clearSlot(db, old, dimension);
      slot = null;
      vector = new Float32Array(changes[n].vector);
    } else if (!slot && !vector) {
      throw new Error(`memory ${memory.id} has no stored vector`);
    }
    // the engine's record, checked before it reached the engine: packable as checked
    const row = { character, id: memory.id, record: memory,
      trashed_at: old?.trashed_at ?? null, stamp, dimension, slot, vector, checked: CHECKED };
    if (vector) row.tail = 1;
    rows.set(`${character}\n${memory.id}`, row);
  }
  await Promise.all([db.memories.bulkPut([...rows.values()]), checking]);
  // new words of a stored memory: what a re-vectorization staged of the old ones goes
  const renewed = changes.filter((c, n) => c.vector && olds[n]);
  for (const character of new Set(renewed.map((c) => c.character))) {
    await eraseStaged(db, character, renewed.filter((c) => c.character === character)
      .map((c) => c.memory.id));
  }
}

// Add memories new to the store with their vectors in one block (an import): the full
// segments are written directly (no tail write, no compaction pass after), the rest of the
// block goes to the tail. No old record is read: the ids are new (omoide.engine.exchange
// refuses ids the engine holds). Returns how many vectors went to the tail (``loose``) and
// the record packs written (``written``).
async function insertRows(db, change, block) {
  // the records arrive as their COLUMNS lines (omoide.browser.packed.column_lines)
  const { character, stamp, model_id: modelId, dimension: d, ids, keys, kinds,
    created_at: times, lines, trashed_at: at } = change;
  await ensureStamp(db, character, stamp, modelId, d);
  let { seg } = await allocateSlot(db, character, stamp);
  const n = ids.length;
  if ([keys, kinds, times, lines, at].some((column) => column.length !== n)) {
    throw new Error(`import of ${character}: its columns differ in length`);
  }
  if (block.length !== n * d) throw new Error(`import of ${character}: ${block.length} ` +
    `floats for ${n} vectors of ${d}`);
  const cuts = bulkCuts(n);
  const full = cuts.reduce((sum, [, size]) => sum + size, 0);
  const segments = [];
  const rows = new Array(n);
  for (const [start, size] of cuts) {
    for (let row = 0; row < size; row++) {
      const i = start + row;
      rows[i] = { id: ids[i], key: keys[i], kind: kinds[i], created_at: times[i],
        line: lines[i], trashed_at: at[i], slot: { seg, row } };
    }
    const data = block.slice(start * d, (start + size) * d);
    segments.push(seal({ character, stamp, seg, ids: ids.slice(start, start + size), data },
      d));
    seg++;
  }
  for (let i = full; i < n; i++) {
    rows[i] = { character, id: ids[i], record: lineRecord(lines[i]), trashed_at: at[i], stamp,
      dimension: d, slot: null, vector: block.slice(i * d, (i + 1) * d), tail: 1,
      checked: CHECKED };
  }
  // the records of the full segments go to packs (their lines as they are), the tail to rows
  const [, written] = await Promise.all([db.segments.bulkPut(segments),
    writePacks(db, character, stamp, rows.slice(0, full), makeLinePack),
    db.memories.bulkPut(rows.slice(full))]);
  return { loose: n - full, written };
}

// Pack inline vectors into new full segments (all of them when ``force``), then the rows
// whose vectors are in segments into a record pack once there are PACK_ROWS of them
// (``packOverrides``; all of them when ``force``).
export async function compact(db, character, { force = false } = {}) {
  return db.transaction("rw", [db.memories, db.segments, db.stamps, db.record_packs,
    db.text_postings], async () => {
      const moved = await compactTail(db, character, force);
      const stamp = await db.stamps.get(character);
      if (stamp) await packOverrides(db, character, stamp.stamp, { force });
      return moved;
    });
}

async function compactTail(db, character, force) {
  const stamp = await db.stamps.get(character);
  if (!stamp) return 0;
  const loose = (await db.memories.where("[character+tail]").equals([character, 1])
    .toArray()).filter((r) => r.vector && r.stamp === stamp.stamp);
  const count = force ? loose.length : loose.length - (loose.length % SEGMENT_ROWS);
  if (count === 0) return 0;
  const { dimension } = stamp;
  let { seg } = await allocateSlot(db, character, stamp.stamp);
  for (let start = 0; start < count; start += SEGMENT_ROWS, seg++) {
    const rows = loose.slice(start, Math.min(start + SEGMENT_ROWS, count));
    const data = new Float32Array(rows.length * dimension);
    rows.forEach((r, row) => data.set(r.vector, row * dimension));
    const ids = rows.map((r) => r.id);
    await db.segments.put(seal({ character, stamp: stamp.stamp, seg, ids, data }, dimension));
    await db.memories.bulkPut(rows.map((r, row) => {
      const { tail, ...packed } = r;
      return { ...packed, vector: null, slot: { seg, row } };
    }));
  }
  return count;
}

async function ensureStamp(db, character, stamp, modelId, dimension) {
  const current = await db.stamps.get(character);
  if (!current) {
    await db.stamps.put({ character, stamp, model_id: modelId, dimension });
    if (!(await db.characters.get(character))) {
      await db.characters.put({ id: character, name: character, created_at: Date.now() / 1000 });
    }
  } else if (current.stamp !== stamp) {
    throw new Error(`index of ${character} is stamped ${current.stamp}, not ${stamp}`);
  }
}

// Replace a character's whole index by vectors of another model, atomically: the new
// segments, the new slots of every memory and the new stamp commit together, then the old
// segments and the staging rows are gone. ``kept``: the ids of the character's quarantined
// records (invalid, not in the engine: no new vector). Each stays an override row with its
// record as stored, without a vector (one is made from its text once it is valid again).
export async function swapIndex(db, { character, stamp, model_id, dimension, ids, vectors,
  kept = [] }) {
  return db.transaction("rw", ALL_TABLES(db), async () => {
    const old = await db.stamps.get(character);
    const byId = await allRows(db, character, old?.dimension);
    const slots = new Map();
    for (const [seg, [start, size]] of bulkCuts(ids.length, true).entries()) {
      const segIds = ids.slice(start, start + size);
      const data = vectors.slice(start * dimension, (start + segIds.length) * dimension);
      segIds.forEach((id, row) => slots.set(id, { seg, row }));
      await db.segments.put(seal({ character, stamp, seg, ids: segIds, data }, dimension));
    }
    const moved = [];
    const quarantined = new Set(kept);
    const unmoved = [];
    for (const [id, record] of byId) {
      if (slots.has(id)) {
        moved.push({ ...record, slot: slots.get(id), record: stamped(record.record, stamp) });
      } else if (quarantined.has(id)) {
        // its old stamp: never taken for a row of the new index
        const { tail, ...row } = record;
        unmoved.push({ ...row, slot: null, vector: null, checked: 0 });
      } else {
        throw new Error(`swap misses the vector of ${id}`);
      }
    }
    // every other record now has its vector in a segment: all of them packed anew
    await db.record_packs.where("character").equals(character).delete();
    await db.text_postings.where("character").equals(character).delete();
    await db.memories.where("character").equals(character).delete();
    await writePacks(db, character, stamp, moved);
    if (unmoved.length) await db.memories.bulkPut(unmoved);
    if (old && old.stamp !== stamp) {
      await db.segments.where("[character+stamp]").equals([character, old.stamp]).delete();
    }
    await db.staging.where("[stamp+character]").equals([stamp, character]).delete();
    await db.stamps.put({ character, stamp, model_id, dimension });
  });
}

// A record's model names the index its vector is in (the engine's ``swap_index``); a stored
// value that is no record object stays as it is, for the validator to name at the restore.
function stamped(record, stamp) {
  const object = record !== null && typeof record === "object" && !Array.isArray(record);
  return object ? { ...record, model: stamp } : record;
}

// Every stored row of a character, the latest copy of each id (packs, then override rows).
async function allRows(db, character, dimension) {
  const packs = await db.record_packs.where("character").equals(character).sortBy("pack");
  const byId = new Map();
  for (const pack of packs) for (const row of unpack(pack, dimension)) byId.set(row.id, row);
  for (const row of await db.memories.where("character").equals(character).toArray()) {
    byId.set(row.id, row);
  }
  return byId;
}

// What boot reads of one character (null: it has no index): its stamp, override rows, record
// packs, segments of its current stamp and recall counts. Run inside a transaction of the
// caller's (``readEverything``) or each read in its own; ``recordsOf`` resolved.
export async function readCharacter(db, character) {
  const started = performance.now();
  const stamp = await db.stamps.get(character);
  if (!stamp) return null;
  const [rows, packs, segments, recallRows] = await Promise.all([
    db.memories.where("character").equals(character).toArray(),
    db.record_packs.where("character").equals(character).toArray(),
    db.segments.where("[character+stamp]").equals([character, stamp.stamp]).toArray(),
    db.recalls.where("character").equals(character).toArray(),
  ]);
  return recordsOf({ character, stamp, rows, packs, segments, recallRows,
    indexeddb_ms: performance.now() - started });
}

// A read's records resolved: which copy of each record wins (its override row, else the latest
// pack holding it: ``winners``), the ids a later copy overrides per pack (``skips``), and the
// ids the records call trashed.
function recordsOf(read) {
  const byId = new Map();
  for (const r of read.rows) byId.set(r.id, r);
  const { skips, at, trashed } = winners(read.packs, byId.keys());
  for (const r of read.rows) if (r.trashed_at != null) trashed.add(r.id);
  return Object.assign(read, { byId, skips, at, trashed });
}

// What Python's ``restore.begin`` takes of a read (records part): the stamp, the ids its
// records call trashed (their records are made at once) and the recall counts to fold in.
export function recordsHeader(read) {
  const { character, stamp } = read;
  return { character, stamp: stamp.stamp, model_id: stamp.model_id,
    dimension: stamp.dimension, trash_ids: [...read.trashed], ...recallCounts(read.recallRows) };
}

// Everything boot loads, read in ONE read-only transaction while Python boots (the engine
// worker reads ahead without the engine lock): the generations, the characters and each
// character's ``readCharacter``. A consistent state: every change of a character bumps its
// generation in its own transaction, so under the lock the caller keeps a character's read
// only while its generation (and the global one) is still the one read here.
export async function readEverything(db) {
  const tables = [db.generations, db.characters, db.stamps, db.memories, db.record_packs,
    db.segments, db.recalls];
  return db.transaction("r", tables, async () => {
    const known = await generations(db);
    const reads = new Map();
    for (const { id } of await listCharacters(db)) reads.set(id, await readCharacter(db, id));
    return { generations: known, reads };
  });
}

// Everything needed to rebuild one character in the engine, its vectors already in two
// kernel stores (``createStore(dimension)`` of kernel/vectors.js): every segment whose
// checksum holds is appended to them in runs of consecutive rows (the bytes go from
// IndexedDB straight into WebAssembly memory), then the tail (inline vectors). Returns the
// record packs and override rows (read in slices with ``recordSlices``), the ids of the rows
// of each store in order, the memories whose vector could not be trusted (``missing``:
// re-embedded), the recall counts and the per-step times.
export async function loadCharacter(db, character, createStore) {
  const read = await readCharacter(db, character);
  return read && settleCharacter(db, placeCharacter(read, createStore));
}

// The writes and fresh reads a placed character needs under the engine lock: its damaged
// segments deleted (never trusted again: their memories are re-embedded from their text),
// and, when it was read ahead, its recall counts read again (``recalls`` moves without a
// generation: another tab's flush may have landed since).
export async function settleCharacter(db, data, { ahead = false } = {}) {
  if (data.corrupt.length) await db.segments.bulkDelete(data.corrupt);
  if (ahead) {
    data.recallRows = await db.recalls.where("character").equals(data.character).toArray();
  }
  data.placement.corrupt_segments = data.corrupt.length;
  return data;
}

function recallCounts(rows) {
  const recalls = {};
  const recallsLast = {};
  for (const row of rows) {
    recalls[row.id] = row.count;
    recallsLast[row.id] = row.last;
  }
  return { recalls, recalls_last: recallsLast };
}

// The kernel part of a load (no IndexedDB access): the vectors of ``read`` placed in two new
// kernel stores (``live``, ``trash``), added to ``read`` with ``placement`` (the ids of the
// stores' rows in order; ``missing``: the memories whose vector could not be trusted, to be
// re-embedded) and ``corrupt`` (the keys of the segments whose checksum failed).
export function placeCharacter(read, createStore) {
  const { stamp, rows, packs, segments, byId, at, trashed } = read;
  const started = performance.now();
  const { dimension: d } = stamp;
  const live = createStore(d);
  const trash = createStore(d);
  live.reserve?.(rows.length + at.size);
  const liveIds = [];
  const trashIds = [];
  const placed = new Set();
  const corrupt = [];
  // Is row ``row`` of segment ``seg`` the vector of ``id`` (as its winning copy says)?
  // 0: no, 1: yes and live, 2: yes and trashed.
  const owner = (id, seg, row) => {
    const r = byId.get(id);
    if (r) {
      const mine = r.stamp === stamp.stamp && !r.vector && r.slot?.seg === seg
        && r.slot.row === row;
      return mine ? (r.trashed_at == null ? 1 : 2) : 0;
    }
    const where = at.get(id);
    if (where === undefined) return 0;
    const pack = packs[where >> 16];
    const i = where & 0xffff;
    const mine = pack.stamp === stamp.stamp && pack.slots[2 * i] === seg
      && pack.slots[2 * i + 1] === row;
    return mine ? (trashed.has(id) ? 2 : 1) : 0;
  };
  for (const segment of segments) {
    const data = new Float32Array(segment.data.buffer ?? segment.data, segment.data.byteOffset,
      segment.ids.length * d);
    if (segmentChecksum(segment.ids, data, d) !== segment.checksum) {
      corrupt.push([segment.character, segment.stamp, segment.seg]);
      continue;
    }
    let run = -1; // first row of the current run of live rows
    const flush = (end) => {
      if (run >= 0) live.append(data.subarray(run * d, end * d));
      run = -1;
    };
    segment.ids.forEach((id, row) => {
      const state = id === null ? 0 : owner(id, segment.seg, row);
      if (state === 1) {
        if (run < 0) run = row;
        liveIds.push(id);
        placed.add(id);
        return;
      }
      flush(row);
      if (state === 2) {
        trash.append(data.subarray(row * d, (row + 1) * d));
        trashIds.push(id);
        placed.add(id);
      }
    });
    flush(segment.ids.length);
  }
  let loose = 0;
  const missing = [];
  for (const r of rows) {
    if (placed.has(r.id)) continue;
    if (r.vector && r.stamp === stamp.stamp) {
      loose += 1;
      const v = r.vector instanceof Float32Array ? r.vector : new Float32Array(r.vector);
      if (r.trashed_at == null) {
        live.append(v);
        liveIds.push(r.id);
      } else {
        trash.append(v);
        trashIds.push(r.id);
      }
    } else {
      missing.push(r.id);
    }
  }
  for (const id of at.keys()) if (!placed.has(id)) missing.push(id);
  return Object.assign(read, {
    segments: null, // their rows are in the stores now
    loose, live, trash, corrupt, placement: { live_ids: liveIds, trash_ids: trashIds, missing },
    timing: { indexeddb_ms: read.indexeddb_ms, kernel_ms: performance.now() - started },
  });
}

// Override rows per slice handed to Python at boot (``omoide.browser.restore``): the JSON
// text and the parsed rows of one slice are alive at a time, never those of every record.
export const RECORD_SLICE = 4000;

// The slices of a ``loadCharacter`` answer for Python's ``restore.add_records``, as
// ``[json, skip, format, crc]``: each pack's JSON text as stored with the ids a later copy
// overrides (``skip``) and its format and CRC (Python checks the CRC: a checked pack's
// records then skip the validator), then the override rows, RECORD_SLICE at a time (trash
// state folded in; always validated). Python folds in the counted recalls.
// Each text goes as its UTF-8 bytes (a Uint8Array: Python takes a copy of the bytes, ~10x
// cheaper under Pyodide than the conversion of a JS string of 1.7 MB to a Python str).
export function* recordSlices({ rows, packs, skips }) {
  for (let p = 0; p < packs.length; p++) {
    yield [encoder.encode(packs[p].json), skips[p], packs[p].format ?? 0, packs[p].crc ?? 0,
      packs[p].pack];
  }
  for (let start = 0; start < rows.length; start += RECORD_SLICE) {
    const out = [];
    for (let i = start; i < Math.min(start + RECORD_SLICE, rows.length); i++) {
      out.push({ ...rows[i].record, trashed_at: rows[i].trashed_at });
    }
    yield [encoder.encode(JSON.stringify(out)), [], 0, 0, -1];
  }
}

// -- full-text postings blocks (``text_postings``: omoide/browser/text_blocks.py) ------------
// One row per record pack, ``{character, pack, crc, data: Uint8Array}``: the BM25 postings
// Python made from that pack's text (``crc``: the CRC-32 of the text it was made from).
// Derived data: boot reads them after ready (``readTextBlocks``) and Python takes a block only
// when it was made from the very pack text it restored (and its own CRC holds); every write
// that rewrites or deletes a pack deletes its block in the same transaction (``keepOnly``,
// ``writePacks``, ``swapIndex``, ``deleteCharacterData``), so a purged text leaves no term
// on disk, and a block is written only while its pack is still the text it was made from.

// The character's stored blocks, in one read-only transaction.
export async function readTextBlocks(db, character) {
  return db.text_postings.where("character").equals(character).toArray();
}

// Write blocks (``[character, pack, crc, data]``) whose pack still holds the text they were
// made from (checked in the same transaction: a pack rewritten since, by this tab or another,
// gets no block of its old text). Returns how many were written.
export async function writeTextBlocks(db, blocks) {
  let written = 0;
  await db.transaction("rw", [db.record_packs, db.text_postings], async () => {
    for (const [character, pack, crc, data] of blocks) {
      const stored = await db.record_packs.get([character, pack]);
      if (!stored || (stored.crc ?? textChecksum(stored.json)) !== crc) continue;
      await db.text_postings.put({ character, pack, crc, data });
      written += 1;
    }
  });
  return written;
}

export async function listCharacters(db) {
  return db.characters.toArray();
}

export async function deleteCharacterData(db, character) {
  const tables = [db.memories, db.record_packs, db.text_postings, db.segments, db.stamps,
    db.staging, db.characters, db.recalls, db.generations];
  return db.transaction("rw", tables, async () => {
    await db.memories.where("character").equals(character).delete();
    await db.record_packs.where("character").equals(character).delete();
    await db.text_postings.where("character").equals(character).delete();
    await db.recalls.where("character").equals(character).delete();
    await bumpGenerations(db, [character]);
    await db.segments.where("[character+stamp]").between([character, Dexie.minKey],
      [character, Dexie.maxKey]).delete();
    await db.stamps.delete(character);
    await db.characters.delete(character);
  });
}

// The ids of the memories purged here (``FORGOTTEN``): its keys only, read when a backup
// or restore starts, never at boot.
export async function forgottenIds(db) {
  const keys = await db.settings.where("key").startsWith(FORGOTTEN).primaryKeys();
  return keys.map((key) => key.slice(FORGOTTEN.length));
}

// The selected model (settings ``model``), in one transaction with what selecting it
// abandons: the staged vectors of a re-vectorization to any other model (``stamp``: the
// selected model's) and, when it was for another model, the resume target.
export async function selectModel(db, model, dtype, stamp) {
  return db.transaction("rw", db.settings, db.staging, async () => {
    await db.settings.put({ key: "model", value: { model, dtype } });
    const target = (await db.settings.get("revectorize_target"))?.value;
    if (target && `${target.model}@${target.dtype}#${target.dimension}` !== stamp) {
      await db.settings.put({ key: "revectorize_target", value: null });
    }
    const others = () => db.staging.where("[stamp+character]");  // stamps below, then above
    await others().below([stamp, Dexie.minKey]).delete();
    await others().above([stamp, Dexie.maxKey]).delete();
  });
}

export async function getSetting(db, key, fallback = null) {
  return (await db.settings.get(key))?.value ?? fallback;
}

export async function setSetting(db, key, value) {
  return db.settings.put({ key, value });
}
