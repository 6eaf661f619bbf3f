"""The embedding worker's fast Unigram tokenizer (web/embed/unigram.js) gives the same ids as
Transformers.js's own, on the shipped library and the shipped e5 tokenizer, under node."""

import json
import shutil
import subprocess
from pathlib import Path

import pytest

DIST = Path(__file__).resolve().parent.parent / "dist"
E5 = DIST / "models" / "omoide" / "multilingual-e5-small"
MINILM = DIST / "models" / "omoide" / "all-MiniLM-L6-v2"

TEXTS = [
    "query: 私は辛いラーメンが大好きです。 I love spicy ramen!",
    "passage: My sister's name is Yuki and she lives in Osaka.",
    "もう辛いラーメンは好きじゃない。",
    "毎晩寝る前に本を読むのが習慣です",
    "TypeScript が好みです。",
    "",
    " ",
    "   leading and trailing spaces   ",
    "Pneumonoultramicroscopicsilicovolcanoconiosis antidisestablishmentarianism",
    "emoji 🍜🍣👩‍👩‍👧 and flags 🇯🇵 and ZWJ",
    "ｆｕｌｌｗｉｄｔｈ ＡＢＣ １２３ ｶﾀｶﾅ",
    "combining: e\u0301 a\u0308 \u1100\u1161\u11a8",
    "한국어 문장도 섞여 있습니다. Ελληνικά. Русский текст. العربية.",
    "rare CJK: 𠮷野家 𩸽 and unassigned \U000e01ef\U0010fffd",
    "<s> </s> <mask> <pad> <unk> special tokens written as text",
    "tabs\tand\nnewlines\r\nand\u3000ideographic spaces",
    "x" * 600,
    "日本語" * 200,
]

# Random text over a mix of scripts, seeded: pieces, unknown characters and long runs.
NODE_SCRIPT = r"""
import { readFileSync } from "node:fs";
const T = await import(%(library)s);
const { buildTokenizer, compactTokenizer, tokenizerFromCompact } = await import(%(unigram)s);
const texts = JSON.parse(readFileSync(%(texts)s, "utf8"));
let seed = 20261202;
const random = () => (seed = (seed * 1103515245 + 12345) %% 2147483648) / 2147483648;
const ranges = [[0x20, 0x7e], [0x3041, 0x3096], [0x30a1, 0x30fa], [0x4e00, 0x4fff],
  [0xac00, 0xad00], [0x1f300, 0x1f64f], [0x0300, 0x036f], [0xff01, 0xff5e], [0x20000, 0x20100]];
for (let n = 0; n < 200; n++) {
  let s = "";
  const length = 1 + Math.floor(random() * 60);
  for (let i = 0; i < length; i++) {
    const [lo, hi] = ranges[Math.floor(random() * ranges.length)];
    s += String.fromCodePoint(lo + Math.floor(random() * (hi - lo + 1)));
  }
  texts.push(s);
}
const out = {};
for (const dir of %(models)s) {
  const json = () => JSON.parse(readFileSync(dir + "/tokenizer.json", "utf8"));
  const config = JSON.parse(readFileSync(dir + "/tokenizer_config.json", "utf8"));
  const cls = T[config.tokenizer_class.replace(/Fast$/, "")];
  let t = performance.now();
  const slow = new cls(json(), config);
  const slowMs = performance.now() - t;
  t = performance.now();
  const fast = buildTokenizer(cls, json(), config);
  const fastMs = performance.now() - t;
  // The compact form, written once from tokenizer.json and read back at later set-ups.
  const compact = compactTokenizer(json(), "sha-of-this-file");
  t = performance.now();
  const fromCompact = compact && tokenizerFromCompact(cls, compact, config, "sha-of-this-file");
  const compactMs = performance.now() - t;
  const otherSource = compact && tokenizerFromCompact(cls, compact, config, "sha-of-another");
  const mismatches = [];
  const compactMismatches = [];
  for (const text of texts) {
    const a = slow.encode(text);
    const b = fast.encode(text);
    if (a.join() !== b.join()) mismatches.push(text);
    if (fromCompact && fromCompact.encode(text).join() !== a.join()) compactMismatches.push(text);
  }
  // The pipeline's call: padded and truncated (arrays here: the web build's tensors need
  // onnxruntime-web, which node does not load).
  const batch = (tok) => JSON.stringify(tok(texts.slice(0, 40),
    { padding: true, truncation: true, return_tensor: false }));
  const fields = ["mask_token_id", "pad_token_id", "sep_token_id", "unk_token_id", "bos_token_id",
    "eos_token_id", "all_special_ids", "model_max_length"];
  out[dir] = {
    texts: texts.length, mismatches, batchEqual: batch(slow) === batch(fast),
    fields: fields.filter((f) => JSON.stringify(slow[f]) !== JSON.stringify(fast[f])),
    vocab: slow._tokenizer.model.vocab.length === fast._tokenizer.model.vocab.length,
    decode: slow.decode(slow.encode(texts[0])) === fast.decode(fast.encode(texts[0])),
    kind: fast._tokenizer.model.constructor.name, slowMs, fastMs,
    compact: compact ? {
      bytes: compact.length, ms: compactMs, mismatches: compactMismatches,
      batchEqual: batch(slow) === batch(fromCompact), otherSource,
      fields: fields.filter((f) => JSON.stringify(slow[f]) !== JSON.stringify(fromCompact[f])),
      decode: slow.decode(slow.encode(texts[0]))
        === fromCompact.decode(fromCompact.encode(texts[0])),
    } : null,
  };
}
console.log(JSON.stringify(out));
"""


def longest_pieces_texts() -> list[str]:
    """Texts made of e5's longest pieces: the lookup must reach as far as a piece can."""
    vocab = json.loads((E5 / "tokenizer.json").read_text(encoding="utf-8"))["model"]["vocab"]
    longest = sorted((piece for piece, _ in vocab), key=len, reverse=True)[:40]
    words = [piece.replace("\u2581", " ") for piece in longest]
    return [" ".join(words[i:i + 4]) for i in range(0, len(words), 4)] + ["".join(words)]


@pytest.fixture(scope="module")
def compared(tmp_path_factory):
    node = shutil.which("node")
    library = DIST / "vendor" / "transformers" / "transformers.js"
    if not node or not library.exists() or not (E5 / "tokenizer.json").exists():
        pytest.skip("no node, or dist/ without the library or the e5 model")
    tmp = tmp_path_factory.mktemp("unigram")
    texts = TEXTS + longest_pieces_texts()
    (tmp / "texts.json").write_text(json.dumps(texts, ensure_ascii=False), encoding="utf-8")
    script = tmp / "compare.mjs"
    script.write_text(NODE_SCRIPT % {
        "library": json.dumps(library.as_uri()),
        "unigram": json.dumps((DIST / "embed" / "unigram.js").as_uri()),
        "texts": json.dumps(str(tmp / "texts.json")),
        "models": json.dumps([str(E5), str(MINILM)]),
    }, encoding="utf-8")
    out = subprocess.run([node, str(script)], capture_output=True, text=True, timeout=600)
    assert out.returncode == 0, out.stderr[-3000:]
    return json.loads(out.stdout.strip().splitlines()[-1])


def test_e5_ids_equal_the_library_tokenizer(compared):
    e5 = compared[str(E5)]
    assert e5["kind"] == "Unigram"
    assert e5["texts"] == len(TEXTS) + len(longest_pieces_texts()) + 200
    assert e5["mismatches"] == []
    assert e5["batchEqual"] and e5["vocab"] and e5["decode"]
    assert e5["fields"] == []


def test_e5_from_its_compact_form_equals_the_library_tokenizer(compared):
    compact = compared[str(E5)]["compact"]
    assert compact["mismatches"] == []
    assert compact["batchEqual"] and compact["decode"] and compact["fields"] == []
    # The form names the tokenizer.json it was made from: another file's is not used.
    assert compact["otherSource"] is None
    print(f"e5 tokenizer from its compact form ({compact['bytes'] / 1e6:.1f} MB): "
          f"{compact['ms']:.0f} ms")


def test_a_wordpiece_tokenizer_is_built_as_the_library_builds_it(compared):
    minilm = compared[str(MINILM)]
    assert minilm["kind"] == "WordPieceTokenizer"
    assert minilm["mismatches"] == [] and minilm["batchEqual"] and minilm["fields"] == []
    assert minilm["compact"] is None  # only a Unigram vocabulary has a compact form
