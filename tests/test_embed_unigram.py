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
const { buildTokenizer } = await import(%(unigram)s);
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
  const mismatches = [];
  for (const text of texts) {
    const a = slow.encode(text);
    const b = fast.encode(text);
    if (a.join() !== b.join()) mismatches.push(text);
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
  };
}
console.log(JSON.stringify(out));
"""


@pytest.fixture(scope="module")
def compared(tmp_path_factory):
    node = shutil.which("node")
    library = DIST / "vendor" / "transformers" / "transformers.js"
    if not node or not library.exists() or not (E5 / "tokenizer.json").exists():
        pytest.skip("no node, or dist/ without the library or the e5 model")
    tmp = tmp_path_factory.mktemp("unigram")
    (tmp / "texts.json").write_text(json.dumps(TEXTS, ensure_ascii=False), encoding="utf-8")
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
    assert e5["texts"] == len(TEXTS) + 200
    assert e5["mismatches"] == []
    assert e5["batchEqual"] and e5["vocab"] and e5["decode"]
    assert e5["fields"] == []


def test_a_wordpiece_tokenizer_is_built_as_the_library_builds_it(compared):
    minilm = compared[str(MINILM)]
    assert minilm["kind"] == "WordPieceTokenizer"
    assert minilm["mismatches"] == [] and minilm["batchEqual"] and minilm["fields"] == []
