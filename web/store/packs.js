// Record packs (Dexie schema 3, see ARCHITECTURE.md "Storage"): a character's records whose
// vectors sit in segments persist in packs of up to PACK_ROWS records, one IndexedDB row per
// pack, ``{character, pack, stamp, ids, slots, trashed, json}``:
// - ``json``: the records as the engine holds them (``trashed_at`` folded in), one JSON text
//   that boot hands to Python's ``restore.add_records`` as it is (no structured clone of one
//   object per record, no stringify per slice);
// - ``ids`` (indexed, multiEntry: which packs hold an id), ``slots`` (Int32Array: segment and
//   row of each record's vector), ``trashed`` (the ids in the trash): what boot needs to place
//   the vectors without parsing ``json``.
// A ``memories`` row (a single write: remember, update, trash, restore, a tail vector)
// overrides every packed copy of its id, and a later pack overrides an earlier one: packs are
// never rewritten for a single write (O(1) per write). Compaction packs the override rows once
// there are PACK_ROWS of them and rewrites an older pack whose entries are more than half
// stale; a purge rewrites every pack that held the memory (its text is gone from disk).
// A pack whose records were all checked by the record validator before they were written
// (rows marked ``checked: CHECKED``: the engine's own records, never a migrated row) carries
// ``format: CHECKED`` and ``crc`` (CRC-32 of ``json``'s UTF-8 bytes): boot makes its records
// without the validator when the CRC holds (omoide.browser.restore), and validates every
// record of any other pack.

import { crc32 } from "./crc32.js";

export const PACK_ROWS = 4096;
// The format of records the engine wrote after checking them (``PACK_FORMAT`` of
// omoide/browser/restore.py: a later record schema bumps both, and older packs are then
// validated at boot again).
export const CHECKED = 1;
// Pack formats: 0, one JSON text of records not all checked (a migration's); CHECKED, one
// JSON text of checked records (packs written before LINES); LINES, checked records one JSON
// text per line after a head line ``[ids, keys, kinds, created_at]`` (``[ids, keys]`` before
// the head columns; ``PACK_LINES`` of restore.py: boot keeps
// each line unparsed and Python makes the Memory on use, omoide/browser/packed.py). JSON
// never writes a raw line break inside a text, so a line is exactly one record.
export const LINES = 2;
// COLUMNS: as LINES, but each line is a JSON array of the record's values in the order of
// RECORD_FIELDS (``PACK_COLUMNS`` and ``RECORD_FIELDS`` of restore.py, the same list): the
// field names are not repeated on every line (~180 bytes a record on disk and in the engine
// worker's memory until the record is used). Written only when every record of the pack has
// exactly these fields, none undefined; any other pack of checked records is written as LINES.
export const COLUMNS = 3;
export const RECORD_FIELDS = ["id", "character_id", "text", "kind", "type", "key",
  "importance", "created_at", "updated_at", "last_recalled_at", "recall_count", "model",
  "meta", "context", "conversation", "turn", "trashed_at"];
const inColumns = (record) => Object.keys(record).length === RECORD_FIELDS.length
  && RECORD_FIELDS.every((f) => record[f] !== undefined);
const encoder = new TextEncoder();

// The CRC of a pack's JSON text, as Python's ``zlib.crc32(json.encode())`` computes it.
export const textChecksum = (text) => crc32(encoder.encode(text));

// The UTF-8 size of the text of a pack made by ``makePack`` in this worker (counted with its
// CRC): with the CRC, the identity Python stamps a full-text block with (text_blocks.py).
// Kept beside the pack, not in it: the stored row stays as it was.
const packSizes = new WeakMap();
export const packSize = (pack) => packSizes.get(pack);

// Is ``pack`` a checked pack whose text is as written? (Its records may skip the validator.)
export const packTrusted = (pack) => (pack.format === CHECKED || pack.format === LINES
  || pack.format === COLUMNS) && pack.crc === textChecksum(pack.json);

// The records of a pack's text (its head line left out), whatever its format.
export function packRecords(pack) {
  if (pack.format !== LINES && pack.format !== COLUMNS) return JSON.parse(pack.json);
  const lines = pack.json.split("\n");
  lines.shift();
  if (pack.format === LINES) return lines.map((line) => JSON.parse(line));
  return lines.map((line) => {
    const values = JSON.parse(line);
    return Object.fromEntries(RECORD_FIELDS.map((f, i) => [f, values[i]]));
  });
}

// What every pack keeps beside its text: each row's id, its vector's place (segment, row),
// and the ids in the trash.
function placed(rows) {
  const ids = new Array(rows.length);
  const slots = new Int32Array(rows.length * 2);
  const trashed = [];
  rows.forEach((r, i) => {
    ids[i] = r.id;
    slots[2 * i] = r.slot.seg;
    slots[2 * i + 1] = r.slot.row;
    if (r.trashed_at != null) trashed.push(r.id);
  });
  return { ids, slots, trashed };
}

// A checked pack: its head line ``[ids, keys, kinds, created_at]``, then ``lines``, under one
// CRC (its UTF-8 size kept beside it: ``packSize``).
function checkedPack(character, pack, stamp, place, [keys, kinds, times], lines, format) {
  const json = `${JSON.stringify([place.ids, keys, kinds, times])}\n${lines.join("\n")}`;
  const bytes = encoder.encode(json);
  const made = { character, pack, stamp, ...place, json, format, crc: crc32(bytes) };
  packSizes.set(made, bytes.length);
  return made;
}

// Build a pack from stored rows ({id, record, trashed_at, slot, checked}).
export function makePack(character, pack, stamp, rows) {
  const place = placed(rows);
  const records = rows.map((r) => ({ ...r.record, trashed_at: r.trashed_at ?? null }));
  if (!rows.every((r) => r.checked === CHECKED)) {
    return { character, pack, stamp, ...place, json: JSON.stringify(records), format: 0 };
  }
  const head = ["key", "kind", "created_at"].map((f) => records.map((r) => r[f] ?? null));
  const columns = records.every(inColumns);
  const line = columns ? (r) => JSON.stringify(RECORD_FIELDS.map((f) => r[f]))
    : (r) => JSON.stringify(r);
  return checkedPack(character, pack, stamp, place, head, records.map(line),
    columns ? COLUMNS : LINES);
}

// Build a COLUMNS pack from rows whose records arrive as their lines ({id, key, kind,
// created_at, line, trashed_at, slot}: an import, whose checked records Python wrote as
// ``packed.column_lines``, each a JSON array in RECORD_FIELDS order with ``trashed_at``
// last): the lines are stored as they are, no object made per record.
export function makeLinePack(character, pack, stamp, rows) {
  const head = ["key", "kind", "created_at"].map((f) => rows.map((r) => r[f]));
  return checkedPack(character, pack, stamp, placed(rows), head, rows.map((r) => r.line),
    COLUMNS);
}

// The record of a COLUMNS line without its ``trashed_at`` (the last column), as a
// ``memories`` row holds it.
export function lineRecord(line) {
  const values = JSON.parse(line);
  return Object.fromEntries(RECORD_FIELDS.slice(0, -1).map((f, i) => [f, values[i]]));
}

// Stored rows of a pack, shaped like ``memories`` rows (for the rare write that needs one);
// they stay ``checked`` only when the pack's CRC holds, so a rewrite never vouches for a text
// changed on disk.
export function unpack(pack, dimension) {
  const checked = packTrusted(pack) ? CHECKED : 0;
  return packRecords(pack).map((entry, i) => {
    const { trashed_at: trashedAt, ...record } = entry;
    return { character: pack.character, id: pack.ids[i], record, trashed_at: trashedAt ?? null,
      stamp: pack.stamp, dimension, slot: { seg: pack.slots[2 * i], row: pack.slots[2 * i + 1] },
      vector: null, checked };
  });
}

// The next free pack number of a character.
export async function nextPack(db, character) {
  const keys = await db.record_packs.where("character").equals(character).primaryKeys();
  return keys.reduce((a, k) => Math.max(a, k[1]), -1) + 1;
}

// Per id of ``ids``: the numbers of the character's packs that hold it (index keys only).
export async function packsHolding(db, character, ids) {
  const held = new Map();
  if (!ids.length) return held;
  await db.record_packs.where("ids").anyOf([...new Set(ids)]).eachKey((id, cursor) => {
    const [owner, pack] = cursor.primaryKey;
    if (owner !== character) return;
    if (!held.has(id)) held.set(id, []);
    held.get(id).push(pack);
  });
  return held;
}

// The stored rows of ``keys`` ([character, id]): the override row when there is one, else the
// copy in the latest pack that holds it (undefined when neither: the memory is not stored).
export async function storedRows(db, keys, dimensionOf) {
  const rows = await db.memories.bulkGet(keys);
  const misses = new Map(); // character -> ids
  keys.forEach(([character, id], n) => {
    if (rows[n]) return;
    if (!misses.has(character)) misses.set(character, []);
    misses.get(character).push(id);
  });
  const found = new Map();
  for (const [character, ids] of misses) {
    const held = await packsHolding(db, character, ids);
    const latest = new Map();
    for (const [id, packs] of held) latest.set(id, Math.max(...packs));
    const wanted = [...new Set(latest.values())];
    const packs = await db.record_packs.bulkGet(wanted.map((p) => [character, p]));
    const dimension = await dimensionOf(character);
    for (const pack of packs) {
      if (!pack) continue;
      unpack(pack, dimension).forEach((row) => {
        if (latest.get(row.id) === pack.pack) found.set(`${character}\n${row.id}`, row);
      });
    }
  }
  return keys.map(([character, id], n) => rows[n] ?? found.get(`${character}\n${id}`));
}

// Remove ``ids`` from every pack of the character that holds them (a purge: the text leaves
// the disk); a pack left empty is deleted.
export async function erasePacked(db, character, ids) {
  const held = await packsHolding(db, character, ids);
  const gone = new Set(ids);
  const packs = new Set([...held.values()].flat());
  for (const number of packs) {
    const pack = await db.record_packs.get([character, number]);
    if (pack) await keepOnly(db, pack, (id) => !gone.has(id));
  }
}

// Remove ``id``'s stale copies from the packs that hold it: every copy when it has an
// override row, else all but the latest (its current record stays). The purge of an edit's
// history copy calls it for the memory the copy was edited into: that memory's old line in a
// pack holds the same old text (and its pack's postings its terms), which must leave the disk
// with the copy. An edit itself rewrites no pack (cost follows the work); the purge, which
// rewrites packs anyway, does.
export async function eraseStale(db, character, id) {
  const numbers = (await packsHolding(db, character, [id])).get(id) ?? [];
  if (!numbers.length) return;
  const row = await db.memories.get([character, id]);
  const latest = Math.max(...numbers);
  for (const number of numbers) {
    if (!row && number === latest) continue;
    const pack = await db.record_packs.get([character, number]);
    if (pack) await keepOnly(db, pack, (other) => other !== id);
  }
}

// Rewrite a pack with the entries ``keep(id)`` accepts (deleted when none is left); its
// full-text postings block goes with its old text (db.js ``text_postings``).
async function keepOnly(db, pack, keep) {
  const rows = unpack(pack, null).filter((row) => keep(row.id));
  await db.text_postings.delete([pack.character, pack.pack]);
  if (!rows.length) {
    await db.record_packs.delete([pack.character, pack.pack]);
    return;
  }
  await db.record_packs.put(makePack(pack.character, pack.pack, pack.stamp, rows));
}

// Write ``rows`` (stored rows whose vectors are in segments of ``stamp``) as new packs
// (``make``: ``makeLinePack`` for rows that hold their records' lines).
export async function writePacks(db, character, stamp, rows, make = makePack) {
  let number = await nextPack(db, character);
  const packs = [];
  for (let start = 0; start < rows.length; start += PACK_ROWS) {
    packs.push(make(character, number++, stamp, rows.slice(start, start + PACK_ROWS)));
  }
  // no block of an earlier pack of the same number can outlive it
  await db.text_postings.bulkDelete(packs.map((p) => [character, p.pack]));
  await db.record_packs.bulkPut(packs);
  return packs;
}

// A pack with more than this share of stale entries (held by a later pack or a row) is
// rewritten without them.
export const STALE_MAX = 0.5;

// Pack the character's override rows whose vectors are in segments of ``stamp`` once there
// are PACK_ROWS of them (``force``: any number), then rewrite the older packs they made more
// than half stale. Returns how many rows were packed.
export async function packOverrides(db, character, stamp, { force = false } = {}) {
  const count = await db.memories.where("character").equals(character).count();
  if (!force && count < PACK_ROWS) return 0;
  const rows = (await db.memories.where("character").equals(character).toArray())
    .filter((r) => !r.vector && r.slot && r.stamp === stamp);
  if (!rows.length || (!force && rows.length < PACK_ROWS)) return 0;
  const ids = rows.map((r) => r.id);
  const touched = new Set([...(await packsHolding(db, character, ids)).values()].flat());
  const written = await writePacks(db, character, stamp, rows);
  await db.memories.bulkDelete(rows.map((r) => [character, r.id]));
  for (const number of touched) {
    if (number >= written[0].pack) continue;
    const pack = await db.record_packs.get([character, number]);
    if (!pack) continue;
    const held = await packsHolding(db, character, pack.ids);
    const overridden = await db.memories.bulkGet(pack.ids.map((id) => [character, id]));
    const stale = new Set(pack.ids.filter((id, i) => overridden[i]
      || (held.get(id) ?? []).some((p) => p > number)));
    if (stale.size > STALE_MAX * pack.ids.length) {
      await keepOnly(db, pack, (id) => !stale.has(id));
    }
  }
  return rows.length;
}

// Which copy of each id boot takes: override rows first, then packs from the latest down.
// Returns per pack the ids it must skip (held by a later source) and, per id it provides,
// [pack index, entry]; ``trashed``: the ids in the trash as their winning copy says.
export function winners(packs, rowIds) {
  const order = packs.map((_, p) => p).sort((a, b) => packs[b].pack - packs[a].pack);
  const seen = new Set(rowIds);
  const skips = packs.map(() => []);
  const at = new Map();
  const trashed = new Set();
  for (const p of order) {
    const pack = packs[p];
    const packTrash = new Set(pack.trashed);
    pack.ids.forEach((id, i) => {
      if (seen.has(id)) {
        skips[p].push(id);
        return;
      }
      seen.add(id);
      at.set(id, (p << 16) | i);
      if (packTrash.has(id)) trashed.add(id);
    });
  }
  return { skips, at, trashed };
}
