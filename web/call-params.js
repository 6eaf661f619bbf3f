// Checks on a call's parameters before they are posted to the engine worker (the page's
// own calls and the bridge's, from chat apps). The worker hands them to Python as JSON:
//
// - nested deeper than any verb takes (a meta is at most 16 levels; an import's records sit
//   4 below the top): a worker's stack is smaller than a page's, and a meta a few thousand
//   levels deep could not be read there, so the call never answered;
// - what JSON cannot say was changed on the way without a word: NaN and Infinity became
//   null (a turn of NaN was stored as the next turn, an `at` of NaN as now), a Map {}, a
//   Date its text. Each is refused, naming where it is.
export const MAX_PARAMS_DEPTH = 64;

function refused(path, reason) {
  const error = new Error(`Invalid ${path}: ${reason}.`);
  error.name = "INVALID_ARGUMENT";
  return error;
}

// The path and reason of the first value that cannot go, or null.
function firstBad(value, path, depth) {
  if (typeof value === "number") {
    return Number.isFinite(value) ? null : [path, "not a finite number"];
  }
  if (typeof value === "bigint") return [path, "a BigInt is not a JSON number"];
  if (value === null || typeof value !== "object" || ArrayBuffer.isView(value)) return null;
  if (depth >= MAX_PARAMS_DEPTH) {
    return [path, `nested deeper than ${MAX_PARAMS_DEPTH} levels (a meta is at most 16)`];
  }
  const proto = Object.getPrototypeOf(value);
  if (!Array.isArray(value) && proto !== Object.prototype && proto !== null) {
    return [path, `a ${proto?.constructor?.name ?? "special"} object is not JSON data`];
  }
  for (const key in value) {
    const bad = firstBad(value[key], Array.isArray(value) ? `${path}[${key}]` : `${path}.${key}`,
      depth + 1);
    if (bad) return bad;
  }
  return null;
}

export function checkParams(params) {
  const bad = firstBad(params, "params", 0);
  if (bad) throw refused(bad[0].replace(/^params\./, ""), bad[1]);
  return params;
}
