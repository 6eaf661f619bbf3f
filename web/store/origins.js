// The origins the user allowed to use Omoide through the JS client (web/client.js and the
// bridge page), with the characters each may see. Kept in IndexedDB (settings row
// "client_origins"); the bridge reads it on every request, so a removal takes effect at the
// very next call. Only the Omoide pages themselves can change it: the bridge never forwards
// these verbs.
import * as store from "./db.js";

export const CLIENT_ORIGINS = "client_origins";
const MAX_ORIGINS = 100;
const MAX_CHARACTERS = 1_000;

function invalid(name, reason) {
  return Object.assign(new Error(`Invalid ${name}: ${reason}.`), { name: "INVALID_ARGUMENT" });
}

// An origin as people copy or type it (a trailing slash, capitals, the default port, a
// Unicode host) is kept as the browser names it in a message's origin ("https://chat.example",
// "https://xn--bcher-kva.example"): the form the bridge compares with. A path, query,
// fragment or user is refused: a grant is for the whole origin, not the page it names.
export function checkOrigin(origin) {
  let url;
  try {
    url = new URL(String(origin ?? ""));
  } catch {
    throw invalid("origin", `${JSON.stringify(origin)} is not a URL`);
  }
  if (!["http:", "https:"].includes(url.protocol) || url.pathname !== "/" || url.search ||
      url.hash || url.username || url.password) {
    throw invalid("origin", `${JSON.stringify(origin)} must be an http(s) origin such as ` +
      "https://chat.example (no path, query or user)");
  }
  return url.origin;
}

function checkCharacters(characters) {
  if (characters === "*") return "*";
  if (!Array.isArray(characters) || characters.length > MAX_CHARACTERS ||
      !characters.every((c) => typeof c === "string" && c.trim() === c && c.length > 0 &&
        c.length <= 128)) {
    throw invalid("characters", 'a list of character ids, or "*" for every character');
  }
  return [...new Set(characters)];
}

// The grant of `origin` (null: not allowed): {origin, characters: "*" | ids, added_at}.
export async function grantOf(db, origin) {
  const list = await store.getSetting(db, CLIENT_ORIGINS, []);
  return list.find((g) => g.origin === origin) ?? null;
}

export function allows(grant, character) {
  return !!grant && (grant.characters === "*" || grant.characters.includes(character));
}

export function originVerbs(getDb) {
  const list = () => store.getSetting(getDb(), CLIENT_ORIGINS, []);
  return {
    client_origins: () => list(),
    async allow_origin({ origin, characters }) {
      const clean = checkOrigin(origin);
      const grant = { origin: clean, characters: checkCharacters(characters),
        added_at: Date.now() / 1000 };
      return getDb().transaction("rw", getDb().settings, async () => {
        const others = (await list()).filter((g) => g.origin !== clean);
        if (others.length >= MAX_ORIGINS) throw invalid("origin", "too many allowed origins");
        await store.setSetting(getDb(), CLIENT_ORIGINS, [...others, grant]);
        return grant;
      });
    },
    async revoke_origin({ origin }) {
      return getDb().transaction("rw", getDb().settings, async () => {
        const all = await list();
        const kept = all.filter((g) => g.origin !== origin);
        await store.setSetting(getDb(), CLIENT_ORIGINS, kept);
        return { revoked: kept.length !== all.length };
      });
    },
    origin_grant: ({ origin }) => grantOf(getDb(), origin),
  };
}
