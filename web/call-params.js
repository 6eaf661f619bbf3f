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

// Why a leaf value cannot go, or null.
function leafProblem(value) {
  if (typeof value === "number") return Number.isFinite(value) ? null : "not a finite number";
  return typeof value === "bigint" ? "a BigInt is not a JSON number" : null;
}

// The first value that cannot go, as [reason, ...keys from the innermost out], or null. No
// path is built unless something is refused (an import's 100,000 records are walked).
function firstBad(value, depth) {
  if (depth >= MAX_PARAMS_DEPTH) {
    return [`nested deeper than ${MAX_PARAMS_DEPTH} levels (a meta is at most 16)`];
  }
  const proto = Object.getPrototypeOf(value);
  if (!Array.isArray(value) && proto !== Object.prototype && proto !== null) {
    return [`a ${proto?.constructor?.name ?? "special"} object is not JSON data`];
  }
  for (const key in value) {
    const v = value[key];
    let bad = null;
    if (v === null || typeof v !== "object") {
      const problem = leafProblem(v);
      if (problem) bad = [problem];
    } else if (!ArrayBuffer.isView(v)) {
      bad = firstBad(v, depth + 1);
    }
    if (bad) {
      bad.push(Array.isArray(value) ? `[${key}]` : `.${key}`);
      return bad;
    }
  }
  return null;
}

export function checkParams(params) {
  if (params === null || typeof params !== "object") return params;
  const bad = firstBad(params, 0);
  if (bad) {
    const [reason, ...keys] = bad;
    const path = keys.reverse().join("").replace(/^\./, "") || "params";
    throw refused(path, reason);
  }
  return params;
}
