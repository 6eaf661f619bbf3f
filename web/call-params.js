// Checks on a call's parameters before they are posted to the engine worker.
//
// A worker's stack is smaller than a page's: parameters nested a few thousand levels deep
// (a meta from a chat app) were cloned by the page and could not be read by the worker, so
// the call never answered. No verb takes more than a few levels (a meta is at most 16; an
// import's records sit 4 below the top): deeper is refused here, naming the parameters.
export const MAX_PARAMS_DEPTH = 64;

function tooDeep(value, depth) {
  if (value === null || typeof value !== "object" || ArrayBuffer.isView(value)) return false;
  if (depth >= MAX_PARAMS_DEPTH) return true;
  for (const key in value) if (tooDeep(value[key], depth + 1)) return true;
  return false;
}

export function checkParams(params) {
  if (tooDeep(params, 0)) {
    const error = new Error(`Invalid params: nested deeper than ${MAX_PARAMS_DEPTH} levels ` +
      "(a meta is at most 16).");
    error.name = "INVALID_ARGUMENT";
    throw error;
  }
  return params;
}
