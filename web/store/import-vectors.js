// An import's vectors kept binary (ARCHITECTURE.md "Storage"): an export file's per-character
// ``vectors`` (id -> numbers) packed into one Float32Array, in the page before the call (the
// array's buffer is then transferred to the engine worker, not cloned number by number) or,
// for a caller that sent the file as it is, in the worker; each row at length 1. Only a file
// whose vectors all are finite float32 numbers of one length, none all zeros, is packed; any
// other goes on as it is, and Python's record validator names the bad field (nothing is
// written).

const FLOAT32_MAX = 3.4028234663852886e38;
// Every kernel scores by dot product: a row is stored at length 1, as Python's
// ``validate.unit_length`` does (a row within this of length 1 keeps its numbers, an all-zero
// row has no direction and is refused).
const UNIT_TOLERANCE = 1e-3;

// What a row of length ``norm`` is divided by to have length 1 (1 within the tolerance);
// 0 for an all-zero row.
const unitDivisor = (norm) => (norm === 0 || Math.abs(norm - 1) > UNIT_TOLERANCE ? norm : 1);

// The field a packed character carries instead of ``vectors`` between the page and the worker.
export const PACKED = "vectors_packed";

// ``vectors`` as {ids, dimension, flat: Float32Array}, or null when they cannot be packed.
export function packVectors(vectors) {
  if (!vectors || typeof vectors !== "object" || Array.isArray(vectors)) return null;
  const ids = Object.keys(vectors);
  const dimension = Array.isArray(vectors[ids[0]]) ? vectors[ids[0]].length : 0;
  if (!ids.length || !dimension) return null;
  const flat = new Float32Array(ids.length * dimension);
  for (let n = 0; n < ids.length; n++) {
    const row = vectors[ids[n]];
    if (!Array.isArray(row) || row.length !== dimension) return null;
    let squares = 0;
    for (let j = 0; j < dimension; j++) {
      const x = row[j];
      if (typeof x !== "number" || !(Math.abs(x) <= FLOAT32_MAX)) return null;
      squares += x * x; // float64: squares of float32 numbers cannot overflow it
    }
    const divisor = unitDivisor(Math.sqrt(squares));
    if (divisor === 0) return null; // all zeros: Python's validator names the field
    for (let j = 0; j < dimension; j++) flat[n * dimension + j] = row[j] / divisor;
  }
  return { ids, dimension, flat };
}

// The page's side: ``params`` of an ``import_data`` call with each character's vectors packed
// (a shallow copy: the caller's file is not changed) and the buffers to transfer.
export function packImportCall(params) {
  const data = params?.data;
  if (!data || typeof data !== "object" || !Array.isArray(data.characters)) {
    return { params, transfer: [] };
  }
  const transfer = [];
  const characters = data.characters.map((c) => {
    const packed = c && typeof c === "object" && !(PACKED in c) ? packVectors(c.vectors) : null;
    if (!packed) return c;
    transfer.push(packed.flat.buffer);
    const { vectors: _, ...rest } = c;
    return { ...rest, [PACKED]: packed };
  });
  return { params: { ...params, data: { ...data, characters } }, transfer };
}

// The worker's side: a character's packed vectors as the page sent them, checked (ids are
// distinct texts, the array holds exactly one finite row per id); null when ``c`` has none.
// Throws MALFORMED_IMPORT naming the field when they are malformed (never this app's page).
export function receivedVectors(c) {
  const packed = c[PACKED];
  if (packed === undefined) return null;
  const { ids, dimension, flat } = packed ?? {};
  const fail = (why) => {
    const error = new Error(`${PACKED} of ${c.id}: ${why}`);
    error.name = "MALFORMED_IMPORT";
    throw error;
  };
  if (!Array.isArray(ids) || !ids.length || !ids.every((i) => typeof i === "string")
      || new Set(ids).size !== ids.length) fail("ids must be distinct texts");
  if (!Number.isInteger(dimension) || dimension <= 0) fail("dimension must be a whole number");
  if (!(flat instanceof Float32Array) || flat.length !== ids.length * dimension) {
    fail("flat must be a Float32Array of one row per id");
  }
  for (let i = 0; i < flat.length; i++) {
    if (!Number.isFinite(flat[i])) fail("a number is not finite");
  }
  for (let n = 0; n < ids.length; n++) { // another caller's rows: at length 1 too
    const row = flat.subarray(n * dimension, (n + 1) * dimension);
    let squares = 0;
    for (let j = 0; j < dimension; j++) squares += row[j] * row[j];
    const divisor = unitDivisor(Math.sqrt(squares));
    if (divisor === 0) fail(`the vector of ${ids[n].slice(0, 64)} is all zeros`);
    if (divisor !== 1) for (let j = 0; j < dimension; j++) row[j] /= divisor;
  }
  return { ids, dimension, flat };
}
