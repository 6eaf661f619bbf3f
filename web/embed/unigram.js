// A tokenizer whose Unigram vocabulary is installed without Transformers.js's character trie.
//
// Transformers.js 4.3.1 builds a CharTrie (a Map per node) over every piece of a Unigram model
// when the tokenizer is constructed: 1.7-1.9 s of one thread for e5's 250,002 pieces, as long as
// the model's session set-up, on the path of the first remember after a reload. The lattice only
// asks the trie one question: which pieces begin at this position (`common_prefix_search`).
// Pieces are short (e5's longest is 16 characters), so a lookup per prefix length in the
// vocabulary map the model keeps anyway answers it in the same order, and costs nothing to build.
//
// How: the tokenizer is constructed on a stub vocabulary (the pieces up to <unk>), then the
// model's fields are filled from the full vocabulary as Unigram's constructor fills them, the
// added tokens are applied again as the Tokenizer's constructor applies them, and the special
// token ids are looked up again. tests/test_embed_unigram.py checks ids equal the library's
// own tokenizer on mixed-script, emoji, long-word and random text.

// Returns `new TokenizerClass(tokenizerJSON, tokenizerConfig)`, built fast when its model is
// Unigram.
export function buildTokenizer(TokenizerClass, tokenizerJSON, tokenizerConfig) {
  const model = tokenizerJSON.model;
  if (!isUnigram(model)) return new TokenizerClass(tokenizerJSON, tokenizerConfig);
  const stub = { ...model, vocab: model.vocab.slice(0, model.unk_id + 1) };
  const tokenizer = new TokenizerClass({ ...tokenizerJSON, model: stub }, tokenizerConfig);
  installVocabulary(tokenizer._tokenizer, model);
  for (const name of SPECIAL_TOKENS) {
    if (tokenizer[name] != null) {
      tokenizer[`${name}_id`] = tokenizer._tokenizer.token_to_id(tokenizer[name]);
    }
  }
  return tokenizer;
}

// PreTrainedTokenizer's constructor looks these ids up in the model's vocabulary.
const SPECIAL_TOKENS = ["mask_token", "pad_token", "sep_token", "unk_token", "bos_token",
  "eos_token"];

function isUnigram(model) {
  return (model?.type === "Unigram" || (model?.type === undefined && Array.isArray(model?.vocab)))
    && Number.isInteger(model.unk_id) && model.unk_id >= 0 && model.unk_id < model.vocab.length;
}

// The fields Unigram's constructor sets from the vocabulary, then the added tokens.
function installVocabulary(tokenizer, config) {
  const unigram = tokenizer.model;
  const size = config.vocab.length;
  const vocab = new Array(size);
  const scores = new Array(size);
  let minScore = Infinity;
  let longest = 0;
  for (let i = 0; i < size; ++i) {
    const [piece, score] = config.vocab[i];
    vocab[i] = piece;
    scores[i] = score;
    if (score < minScore) minScore = score;
    // UTF-16 length >= code points: a safe bound on how far a piece can reach.
    if (piece.length > longest) longest = piece.length;
  }
  const ids = new Map(vocab.map((piece, i) => [piece, i]));
  unigram.vocab = vocab;
  unigram.scores = scores;
  unigram.tokens_to_ids = ids;
  unigram.unk_token_id = config.unk_id;
  unigram.unk_token = vocab[config.unk_id];
  unigram.bos_token_id = ids.get(unigram.bos_token);
  unigram.eos_token_id = ids.get(unigram.eos_token);
  unigram.min_score = minScore;
  unigram.unk_score = minScore - 10;
  scores[config.unk_id] = unigram.unk_score;
  // The trie held the vocabulary's pieces only; an added token outside it is not a piece.
  const notPieces = new Set();
  for (const token of tokenizer.added_tokens) {
    if (!ids.has(token.content)) notPieces.add(token.content);
    ids.set(token.content, token.id);
    vocab[token.id] = token.content;
  }
  unigram.trie = new PieceLookup(ids, longest, notPieces);
}

// The one query the lattice makes of the trie, answered from the vocabulary map.
class PieceLookup {
  constructor(ids, longest, notPieces) {
    this.ids = ids;
    this.longest = longest;
    this.notPieces = notPieces;
  }

  // Every piece that is a prefix of chars[start...], shortest first (as CharTrie yields them).
  *common_prefix_search(chars, start = 0) {
    const end = Math.min(chars.length, start + this.longest);
    let prefix = "";
    for (let i = start; i < end; ++i) {
      prefix += chars[i];
      if (this.ids.has(prefix) && !this.notPieces.has(prefix)) yield prefix;
    }
  }
}
