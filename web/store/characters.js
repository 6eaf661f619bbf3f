// Character verbs: names and the character trash live in IndexedDB beside the memories; the
// counts and model stamps come from the engine.
import * as store from "./db.js";

const MAX_NAME = 80;

// The rule of Python's validate.character_name (an export's names are checked by it):
// no control characters, line or paragraph separators or lone surrogates; the length in
// code points. A name accepted here and refused there made a backup that would not import.
const NOT_IN_A_NAME = /[\p{Cc}\u2028\u2029\p{Cs}]/u;

function checkName(name) {
  const clean = String(name ?? "").trim();
  if (!clean) throw Object.assign(new Error("A character needs a name."), { name: "EMPTY_TEXT" });
  if ([...clean].length > MAX_NAME) {
    throw Object.assign(new Error(`A character name is at most ${MAX_NAME} characters.`),
      { name: "TEXT_TOO_LONG" });
  }
  if (NOT_IN_A_NAME.test(clean)) {
    throw Object.assign(new Error("A character name cannot hold control characters, line "
      + "breaks or broken characters (lone surrogates)."), { name: "INVALID_ARGUMENT" });
  }
  return clean;
}

function unknown(id) {
  return Object.assign(new Error(`No character with id '${id}'.`), { name: "UNKNOWN_CHARACTER" });
}

// An id that is stable, readable in exports, and never collides with an existing one.
function newId(name, taken) {
  const slug = name.normalize("NFKC").toLowerCase().replace(/[^\p{L}\p{N}]+/gu, "-")
    .replace(/^-+|-+$/g, "").match(/^.{0,40}/u)[0] || "character"; // 40 code points
  let id = slug;
  for (let n = 2; taken.has(id); n++) id = `${slug}-${n}`;
  return id;
}

// A character row that is deleted: ``deleted_at`` is a time (0 is one: 1970), null when live.
export const isDeleted = (row) => row?.deleted_at != null;

export function characterVerbs(getDb, callPython, locked) {
  // A character's row (new, renamed, deleted, restored) goes through the engine: its commit
  // writes the row and the backup server's ``name`` op in ONE transaction, both or neither
  // (the op was queued after the row was stored, and only logged when the queue could not
  // take it: the server kept the old name or the live state for good).
  async function putRow(row) {
    await callPython("put_character", { row });
  }
  async function find(id) {
    const found = await getDb().characters.get(id);
    if (!found) throw unknown(id);
    return found;
  }
  return {
    async characters({ include_deleted = false } = {}) {
      return locked(async () => {
        const stats = new Map((await callPython("engine_characters", {}))
          .map((s) => [s.character_id, s]));
        const rows = await store.listCharacters(getDb());
        return rows.filter((c) => include_deleted || !isDeleted(c)).map((c) => ({
          id: c.id, name: c.name, created_at: c.created_at, deleted_at: c.deleted_at ?? null,
          count: stats.get(c.id)?.memories ?? 0, trashed: stats.get(c.id)?.trashed ?? 0,
          stamp: stats.get(c.id)?.model ?? null, mismatch: !!stats.get(c.id)?.model_mismatch,
        }));
      });
    },
    async create_character({ name, id = null }) {
      const clean = checkName(name);
      return locked(async () => {
        const taken = new Set((await store.listCharacters(getDb())).map((c) => c.id));
        const character = { id: id ?? newId(clean, taken), name: clean,
          created_at: Date.now() / 1000, deleted_at: null };
        if (taken.has(character.id)) {
          throw Object.assign(new Error(`A character with id '${character.id}' exists.`),
            { name: "INVALID_ARGUMENT" });
        }
        await putRow(character);
        return character;
      });
    },
    async rename_character({ character, name }) {
      const clean = checkName(name);
      return locked(async () => {
        const row = { ...(await find(character)), name: clean };
        await putRow(row);
        return row;
      });
    },
    // Deleted or restored, the backup server is told like a rename (its ``name`` op
    // carries deleted_at): a restore from it brings a deleted character back deleted.
    async delete_character({ character }) {
      return locked(async () => {
        const row = { ...(await find(character)), deleted_at: Date.now() / 1000 };
        await putRow(row);
        return row;
      });
    },
    async restore_character({ character }) {
      return locked(async () => {
        const row = { ...(await find(character)), deleted_at: null };
        await putRow(row);
        return row;
      });
    },
  };
}
