// IndexedDB layout of Omoide, through Dexie (see ARCHITECTURE.md "Storage").
//
// Invariants:
// - Every write of one engine change is one Dexie transaction: it is applied whole or not at
//   all (a QuotaExceededError aborts it and leaves the database as it was).
// - A memory's vector lives in exactly one row ("slot") of one segment of its character's
//   current model stamp; the memory record names that slot.
// - Segments hold SEGMENT_ROWS rows; adding a memory rewrites one segment (O(1) data), never
//   the whole index. Purged rows become holes (id null) that compaction removes.
// - Every segment carries a CRC-32 of its ids and rows; a damaged one is never trusted.
import Dexie from "../vendor/dexie/dexie.mjs";
import { crc32 } from "./crc32.js";

export const SEGMENT_ROWS = 256;
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
  return db;
}

export function segmentChecksum(ids, data, dimension) {
  const rows = ids.length;
  const bytes = new Uint8Array(data.buffer, data.byteOffset, rows * dimension * 4);
  return crc32(bytes, crc32(encoder.encode(ids.map((id) => id ?? "").join("\n"))));
}

function emptySegment(character, stamp, seg) {
  return { character, stamp, seg, ids: [], data: new Float32Array(0), checksum: 0 };
}

function withRow(segment, row, id, vector, dimension) {
  const rows = Math.max(segment.ids.length, row + 1);
  const data = new Float32Array(rows * dimension);
  data.set(new Float32Array(segment.data).subarray(0, segment.ids.length * dimension));
  data.set(vector, row * dimension);
  const ids = segment.ids.slice();
  while (ids.length < rows) ids.push(null);
  ids[row] = id;
  return { ...segment, ids, data, checksum: segmentChecksum(ids, data, dimension) };
}

function seal(segment, dimension) {
  return { ...segment, checksum: segmentChecksum(segment.ids, segment.data, dimension) };
}

// The slot of a new vector: the first free row of the last segment, or a new segment.
async function allocateSlot(db, character, stamp) {
  const segments = await db.segments.where("[character+stamp]").equals([character, stamp])
    .toArray();
  const last = segments.reduce((a, s) => (a === null || s.seg > a.seg ? s : a), null);
  if (last && last.ids.length < SEGMENT_ROWS) return { seg: last.seg, row: last.ids.length };
  return { seg: last ? last.seg + 1 : 0, row: 0 };
}

async function writeVector(db, character, stamp, slot, id, vector, dimension) {
  const key = [character, stamp, slot.seg];
  const segment = (await db.segments.get(key)) ?? emptySegment(character, stamp, slot.seg);
  await db.segments.put(withRow(segment, slot.row, id, vector, dimension));
}

async function clearSlot(db, record, dimension) {
  if (!record?.slot) return;
  const key = [record.character, record.stamp, record.slot.seg];
  const segment = await db.segments.get(key);
  if (!segment || segment.ids[record.slot.row] !== record.id) return;
  const ids = segment.ids.slice();
  ids[record.slot.row] = null;
  await db.segments.put(seal({ ...segment, ids }, dimension));
}

// Apply one engine change (see omoide/engine/listener.py) in one transaction.
export async function persistChange(db, change) {
  const { op, character } = change;
  const tables = [db.memories, db.segments, db.stamps, db.characters];
  return db.transaction("rw", tables, async () => {
    if (op === "put") return putMemory(db, change);
    const record = await db.memories.get([character, change.memory_id]);
    if (!record) throw new Error(`no stored memory ${change.memory_id} of ${character}`);
    if (op === "trash") {
      await db.memories.put({ ...record, trashed_at: change.at });
    } else if (op === "restore") {
      await db.memories.put({ ...record, trashed_at: null });
    } else if (op === "purge") {
      await clearSlot(db, record, change.dimension ?? record.dimension);
      await db.memories.delete([character, change.memory_id]);
    } else {
      throw new Error(`unknown change ${op}`);
    }
  });
}

async function putMemory(db, change) {
  const { character, memory, stamp, dimension } = change;
  await ensureStamp(db, character, stamp, change.model_id, dimension);
  const old = await db.memories.get([character, memory.id]);
  let slot = old && old.stamp === stamp ? old.slot : null;
  if (change.vector) {
    slot ??= await allocateSlot(db, character, stamp);
    await writeVector(db, character, stamp, slot, memory.id, change.vector, dimension);
  } else if (!slot) {
    throw new Error(`memory ${memory.id} has no stored vector`);
  }
  await db.memories.put({
    character, id: memory.id, record: memory, trashed_at: old?.trashed_at ?? null,
    stamp, dimension, slot,
  });
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
// segments and the staging rows are gone.
export async function swapIndex(db, { character, stamp, model_id, dimension, ids, vectors }) {
  const tables = [db.memories, db.segments, db.stamps, db.staging];
  return db.transaction("rw", tables, async () => {
    const old = await db.stamps.get(character);
    const records = await db.memories.where("character").equals(character).toArray();
    const byId = new Map(records.map((r) => [r.id, r]));
    const slots = new Map();
    for (let start = 0, seg = 0; start < ids.length; start += SEGMENT_ROWS, seg++) {
      const segIds = ids.slice(start, start + SEGMENT_ROWS);
      const data = vectors.slice(start * dimension, (start + segIds.length) * dimension);
      segIds.forEach((id, row) => slots.set(id, { seg, row }));
      await db.segments.put(seal({ character, stamp, seg, ids: segIds, data }, dimension));
    }
    for (const [id, record] of byId) {
      if (!slots.has(id)) throw new Error(`swap misses the vector of ${id}`);
      await db.memories.put({ ...record, stamp, dimension, slot: slots.get(id) });
    }
    if (old && old.stamp !== stamp) {
      await db.segments.where("[character+stamp]").equals([character, old.stamp]).delete();
    }
    await db.staging.where("[stamp+character]").equals([stamp, character]).delete();
    await db.stamps.put({ character, stamp, model_id, dimension });
  });
}

// Everything needed to rebuild one character in the engine: records (with trash state),
// vectors by id from every segment whose checksum holds, and what could not be trusted.
export async function loadCharacter(db, character) {
  const stamp = await db.stamps.get(character);
  if (!stamp) return null;
  const records = await db.memories.where("character").equals(character).toArray();
  const segments = await db.segments.where("[character+stamp]")
    .equals([character, stamp.stamp]).toArray();
  const { dimension } = stamp;
  const rows = new Map();
  let corrupt = 0;
  for (const segment of segments) {
    const data = new Float32Array(segment.data);
    if (segmentChecksum(segment.ids, data, dimension) !== segment.checksum) {
      corrupt += 1;
      continue;
    }
    segment.ids.forEach((id, row) => {
      if (id !== null) rows.set(`${segment.seg}:${row}:${id}`, data.subarray(row * dimension,
        (row + 1) * dimension));
    });
  }
  const ids = [];
  const missing = [];
  const vectors = new Float32Array(records.length * dimension);
  for (const r of records) {
    const v = r.slot && r.stamp === stamp.stamp && rows.get(`${r.slot.seg}:${r.slot.row}:${r.id}`);
    if (v) {
      vectors.set(v, ids.length * dimension);
      ids.push(r.id);
    } else {
      missing.push(r.id);
    }
  }
  return {
    character, stamp: stamp.stamp, model_id: stamp.model_id, dimension,
    records: records.map((r) => ({ ...r.record, trashed_at: r.trashed_at })),
    ids, vectors: vectors.subarray(0, ids.length * dimension), missing, corrupt_segments: corrupt,
  };
}

export async function listCharacters(db) {
  return db.characters.toArray();
}

export async function putCharacter(db, character) {
  return db.characters.put(character);
}

export async function deleteCharacterData(db, character) {
  const tables = [db.memories, db.segments, db.stamps, db.staging, db.characters];
  return db.transaction("rw", tables, async () => {
    await db.memories.where("character").equals(character).delete();
    await db.segments.where("[character+stamp]").between([character, Dexie.minKey],
      [character, Dexie.maxKey]).delete();
    await db.stamps.delete(character);
    await db.characters.delete(character);
  });
}

// Re-vectorization stages its new vectors here so that a reload resumes instead of restarting.
export async function stageVectors(db, stamp, character, items, dimension) {
  await db.staging.bulkPut(items.map(({ id, text_hash, vector }) => ({
    stamp, character, id, text_hash, dimension, vector: new Float32Array(vector),
  })));
}

export async function loadStaged(db, stamp) {
  return db.staging.where("[stamp+character]").between([stamp, Dexie.minKey],
    [stamp, Dexie.maxKey]).toArray();
}

export async function getSetting(db, key, fallback = null) {
  return (await db.settings.get(key))?.value ?? fallback;
}

export async function setSetting(db, key, value) {
  return db.settings.put({ key, value });
}
