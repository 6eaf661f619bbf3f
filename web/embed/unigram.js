// A tokenizer whose Unigram vocabulary is installed without Transformers.js's character trie,
// and without a Map of its 250,000 pieces; and the compact form of that vocabulary that later
// set-ups read instead of tokenizer.json.
//
// Transformers.js 4.3.1 builds a CharTrie (a Map per node) over every piece of a Unigram model
// when the tokenizer is constructed: 1.7-1.9 s of one thread for e5's 250,002 pieces, as long as
// the model's session set-up, on the path of the first remember after a reload. The lattice only
// asks the trie one question: which pieces begin at this position (`common_prefix_search`).
// Pieces are short (e5's longest is 16 characters), so a lookup per prefix length answers it in
// the same order. The lookup is a hash table over the pieces' UTF-16 code units in one typed
// array (`PieceIds`): built in tens of ms where a Map of the pieces took ~0.2 s, and it stands
// in for the model's `tokens_to_ids` (get / has / set, as the library uses it).
//
// How: the tokenizer is constructed on a stub vocabulary (the pieces up to <unk>), then the
// model's fields are filled from the full vocabulary as Unigram's constructor fills them, the
// added tokens are applied again as the Tokenizer's constructor applies them, and the special
// token ids are looked up again. tests/test_embed_unigram.py checks ids equal the library's
// own tokenizer on mixed-script, emoji, long-word and random text, on both paths.
//
// The compact form (`compactTokenizer`): tokenizer.json's parse is ~0.25 s of e5's set-up and
// the vocabulary is most of it. A set-up that parsed it writes the vocabulary as typed arrays
// (web/embed-worker.js keeps them beside the model's files, tied to tokenizer.json's sha256);
// the next set-ups build the same tokenizer from those bytes (`tokenizerFromCompact`).

// Returns `new TokenizerClass(tokenizerJSON, tokenizerConfig)`, built fast when its model is
// Unigram.
export function buildTokenizer(TokenizerClass, tokenizerJSON, tokenizerConfig) {
  const model = tokenizerJSON.model;
  if (!isUnigram(model)) return new TokenizerClass(tokenizerJSON, tokenizerConfig);
  const pieces = piecesFromJson(model.vocab);
  return assemble(TokenizerClass, withStub(tokenizerJSON, pieces), tokenizerConfig, pieces);
}

// PreTrainedTokenizer's constructor looks these ids up in the model's vocabulary.
const SPECIAL_TOKENS = ["mask_token", "pad_token", "sep_token", "unk_token", "bos_token",
  "eos_token"];

function isUnigram(model) {
  return (model?.type === "Unigram" || (model?.type === undefined && Array.isArray(model?.vocab)))
    && Number.isInteger(model.unk_id) && model.unk_id >= 0 && model.unk_id < model.vocab.length;
}

// The vocabulary as {vocab: piece strings, scores: Float64Array, units, starts}: piece i is
// units[starts[i] .. starts[i + 1]).
function piecesFromJson(entries) {
  const size = entries.length;
  const vocab = new Array(size);
  const scores = new Float64Array(size);
  const starts = new Uint32Array(size + 1);
  for (let i = 0; i < size; ++i) {
    const [piece, score] = entries[i];
    vocab[i] = piece;
    scores[i] = score;
    starts[i + 1] = starts[i] + piece.length;
  }
  const units = new Uint16Array(starts[size]);
  for (let i = 0; i < size; ++i) {
    const piece = vocab[i];
    for (let k = 0, at = starts[i]; k < piece.length; ++k) units[at + k] = piece.charCodeAt(k);
  }
  return { vocab, scores, units, starts };
}

// tokenizer.json with its vocabulary cut to the pieces up to <unk>: the library's constructors
// run on that, the rest is installed after.
function withStub(tokenizerJSON, { vocab, scores }) {
  const model = tokenizerJSON.model;
  const stub = vocab.slice(0, model.unk_id + 1).map((piece, i) => [piece, scores[i]]);
  return { ...tokenizerJSON, model: { ...model, vocab: stub } };
}

function assemble(TokenizerClass, stubJSON, tokenizerConfig, pieces) {
  const tokenizer = new TokenizerClass(stubJSON, tokenizerConfig);
  installVocabulary(tokenizer._tokenizer, stubJSON.model.unk_id, pieces);
  for (const name of SPECIAL_TOKENS) {
    if (tokenizer[name] != null) {
      tokenizer[`${name}_id`] = tokenizer._tokenizer.token_to_id(tokenizer[name]);
    }
  }
  return tokenizer;
}

// The fields Unigram's constructor sets from the vocabulary, then the added tokens.
function installVocabulary(tokenizer, unkId, { vocab, scores, units, starts }) {
  const unigram = tokenizer.model;
  let minScore = Infinity;
  let longest = 0;
  for (let i = 0; i < scores.length; ++i) {
    if (scores[i] < minScore) minScore = scores[i];
    // UTF-16 length >= code points: a safe bound on how far a piece can reach.
    const length = starts[i + 1] - starts[i];
    if (length > longest) longest = length;
  }
  const ids = new PieceIds(units, starts, longest);
  unigram.vocab = vocab;
  unigram.scores = scores;
  unigram.tokens_to_ids = ids;
  unigram.unk_token_id = unkId;
  unigram.unk_token = vocab[unkId];
  unigram.bos_token_id = ids.get(unigram.bos_token);
  unigram.eos_token_id = ids.get(unigram.eos_token);
  unigram.min_score = minScore;
  unigram.unk_score = minScore - 10;
  scores[unkId] = unigram.unk_score;
  // An added token maps to its id (over a piece's, as the library's Map.set does); one that is
  // not a piece is never offered by the lattice (the trie held the vocabulary's pieces only).
  for (const token of tokenizer.added_tokens) {
    ids.set(token.content, token.id);
    vocab[token.id] = token.content;
  }
  unigram.trie = ids;
}

const EMPTY = -1;
const FNV_OFFSET = 0x811c9dc5;
const FNV_PRIME = 0x01000193;

// Piece -> id over the pieces' code units: an open-addressing table (linear probing, FNV-1a).
// `set` (added tokens) goes to a small Map that overrides the table, as a Map's set would.
// Also the lattice's trie: `common_prefix_search`.
class PieceIds {
  constructor(units, starts, longest) {
    this.units = units;
    this.starts = starts;
    this.longest = longest;
    this.count = starts.length - 1;
    let capacity = 1;
    while (capacity < this.count * 2) capacity *= 2;
    this.mask = capacity - 1;
    this.table = new Int32Array(capacity).fill(EMPTY);
    this.extra = new Map();
    for (let id = 0; id < this.count; ++id) {
      let h = FNV_OFFSET;
      for (let k = starts[id]; k < starts[id + 1]; ++k) h = Math.imul(h ^ units[k], FNV_PRIME);
      // A repeated piece maps to its last id, as the library's Map of the vocabulary does.
      this.table[this.slot(h, units, starts[id], starts[id + 1] - starts[id])] = id;
    }
  }

  // The slot of the piece whose code units equal key[from .. from + length), or the empty
  // slot where it would go.
  slot(hash, key, from, length) {
    const { table, units, starts, mask } = this;
    let slot = hash & mask;
    for (; table[slot] !== EMPTY; slot = (slot + 1) & mask) {
      const id = table[slot];
      const at = starts[id];
      if (starts[id + 1] - at !== length) continue;
      let k = 0;
      while (k < length && units[at + k] === key[from + k]) ++k;
      if (k === length) return slot;
    }
    return slot;
  }

  // The id of that piece, or EMPTY.
  find(hash, key, from, length) {
    return this.table[this.slot(hash, key, from, length)];
  }

  pieceId(token) {
    const key = new Uint16Array(token.length);
    let h = FNV_OFFSET;
    for (let k = 0; k < token.length; ++k) {
      key[k] = token.charCodeAt(k);
      h = Math.imul(h ^ key[k], FNV_PRIME);
    }
    return this.find(h, key, 0, key.length);
  }

  get(token) {
    if (this.extra.has(token)) return this.extra.get(token);
    if (typeof token !== "string") return undefined;
    const id = this.pieceId(token);
    return id === EMPTY ? undefined : id;
  }

  has(token) {
    return this.extra.has(token) || (typeof token === "string" && this.pieceId(token) !== EMPTY);
  }

  set(token, id) {
    this.extra.set(token, id);
    return this;
  }

  // Every vocabulary piece that is a prefix of chars[start...], shortest first (as the
  // library's CharTrie yields them); the hash grows with the prefix.
  *common_prefix_search(chars, start = 0) {
    const key = new Uint16Array(this.longest);
    let length = 0;
    let h = FNV_OFFSET;
    let prefix = "";
    for (let i = start; i < chars.length; ++i) {
      const char = chars[i];
      if (length + char.length > this.longest) return;
      for (let k = 0; k < char.length; ++k) {
        key[length] = char.charCodeAt(k);
        h = Math.imul(h ^ key[length++], FNV_PRIME);
      }
      prefix += char;
      if (this.find(h, key, 0, length) !== EMPTY) yield prefix;
    }
  }
}

// -- the compact form ------------------------------------------------------------------------
// "OTK1", u32 header length, the header (UTF-8 JSON: {source, size, units, json: tokenizer.json
// with the stub vocabulary}) padded to 8 bytes, then scores (f64 x size), starts (u32 x
// size + 1, padded to 8) and the pieces' code units (u16). Little-endian (every browser).
const MAGIC = "OTK1";
const pad8 = (n) => (n + 7) & ~7;

// The compact form of a Unigram tokenizer.json, tied to `source` (its sha256); null for
// another kind of model.
export function compactTokenizer(tokenizerJSON, source) {
  if (!isUnigram(tokenizerJSON.model)) return null;
  const pieces = piecesFromJson(tokenizerJSON.model.vocab);
  // The pieces are read back by one UTF-16 decode, which would replace a lone surrogate.
  if (!pieces.vocab.every((piece) => piece.isWellFormed())) return null;
  const header = new TextEncoder().encode(JSON.stringify({
    source, size: pieces.scores.length, units: pieces.units.length,
    json: withStub(tokenizerJSON, pieces),
  }));
  const headerEnd = pad8(8 + header.length);
  const startsAt = headerEnd + pieces.scores.byteLength;
  const unitsAt = pad8(startsAt + pieces.starts.byteLength);
  const bytes = new Uint8Array(unitsAt + pieces.units.byteLength);
  bytes.set(new TextEncoder().encode(MAGIC), 0);
  new DataView(bytes.buffer).setUint32(4, header.length, true);
  bytes.set(header, 8);
  bytes.set(new Uint8Array(pieces.scores.buffer), headerEnd);
  bytes.set(new Uint8Array(pieces.starts.buffer), startsAt);
  bytes.set(new Uint8Array(pieces.units.buffer), unitsAt);
  return bytes;
}

// The tokenizer from its compact form when that form was made from `source` (tokenizer.json's
// sha256); null when it was not (another build of the file) or the bytes are not one.
export function tokenizerFromCompact(TokenizerClass, bytes, tokenizerConfig, source) {
  if (bytes.length < 8 || new TextDecoder().decode(bytes.subarray(0, 4)) !== MAGIC) return null;
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const headerLength = view.getUint32(4, true);
  const header = JSON.parse(new TextDecoder().decode(bytes.subarray(8, 8 + headerLength)));
  if (header.source !== source) return null;
  const { size, units: unitCount } = header;
  const headerEnd = pad8(8 + headerLength);
  const startsAt = headerEnd + size * 8;
  const unitsAt = pad8(startsAt + (size + 1) * 4);
  if (bytes.length !== unitsAt + unitCount * 2) return null;
  // Copied out so every array is aligned whatever the buffer's offset (a few MB, ~1 ms).
  const copy = (at, length, Type) => new Type(bytes.slice(at, at + length * Type.BYTES_PER_ELEMENT)
    .buffer);
  const scores = copy(headerEnd, size, Float64Array);
  const starts = copy(startsAt, size + 1, Uint32Array);
  const units = copy(unitsAt, unitCount, Uint16Array);
  const text = new TextDecoder("utf-16le").decode(units);
  const vocab = new Array(size);
  for (let i = 0; i < size; ++i) vocab[i] = text.slice(starts[i], starts[i + 1]);
  return assemble(TokenizerClass, header.json, tokenizerConfig, { vocab, scores, units, starts });
}
