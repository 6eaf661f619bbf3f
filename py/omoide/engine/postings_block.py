"""A ``PostingsBlock`` as bytes: the persisted, derived form of some documents' BM25 postings.

The browser keeps one per record pack (web/store/db.js ``text_postings``) so that a restore
absorbs the pack's postings in array operations instead of parsing and analyzing every text
again. Derived data, checked before use: a block is taken only when its magic, its CRC-32,
its format, the analyzer's version (``analyzer.ANALYZER_VERSION``) and the postings' layout
(``bm25.LAYOUT_VERSION``) are this engine's and its ``source`` (the caller's identity of what
the block was made from: a pack's CRC-32 and size) is the one the caller holds; anything else
raises ``ValueError`` and the caller analyzes the texts as without a block.

Layout (little-endian)::

    0   8  magic b"OMOBM25\\0"
    8   4  u32 CRC-32 of every byte after these 4
    12  4  u32 H, length of the head
    16  H  head, JSON (UTF-8): {"format", "analyzer", "layout", "source", "ids", "terms",
           "counts": [documents, terms, postings ints, document-term ints]}
    ..     zero padding to a multiple of 4
    ..     int32 arrays: lengths, context_lengths (documents each), term_ends (terms),
           postings, doc_term_ends (documents), doc_terms
"""

from __future__ import annotations

import json
import struct
import sys
import zlib
from array import array
from typing import Any

from .analyzer import ANALYZER_VERSION
from .bm25 import LAYOUT_VERSION, PostingsBlock

MAGIC = b"OMOBM25\0"
FORMAT = 1
_ARRAYS = ("lengths", "context_lengths", "term_ends", "postings", "doc_term_ends",
           "doc_terms")


def _little(values: array) -> bytes:
    if sys.byteorder == "little":
        return values.tobytes()
    swapped = array(values.typecode, values)
    swapped.byteswap()
    return swapped.tobytes()


def to_bytes(block: PostingsBlock, source: Any) -> bytes:
    """``block`` as bytes, stamped with ``source`` (JSON-able: what it was made from)."""
    head = json.dumps({
        "format": FORMAT, "analyzer": ANALYZER_VERSION, "layout": LAYOUT_VERSION,
        "source": source, "ids": block.ids, "terms": block.terms,
        "counts": [len(block.ids), len(block.terms), len(block.postings),
                   len(block.doc_terms)]}, ensure_ascii=False).encode()
    pad = b"\0" * (-(16 + len(head)) % 4)
    body = b"".join([struct.pack("<I", len(head)), head, pad,
                     *(_little(getattr(block, name)) for name in _ARRAYS)])
    return MAGIC + struct.pack("<I", zlib.crc32(body)) + body


def from_bytes(data: bytes, source: Any) -> PostingsBlock:
    """The block of ``data``, made from ``source``; ``ValueError`` when it is not one this
    engine can use as it is (see the module)."""
    if data[:8] != MAGIC or len(data) < 16:
        raise ValueError("not a postings block")
    (crc,) = struct.unpack_from("<I", data, 8)
    view = memoryview(data)[12:]
    if zlib.crc32(view) != crc:
        raise ValueError("postings block damaged (CRC-32)")
    (size,) = struct.unpack_from("<I", data, 12)
    head = json.loads(bytes(view[4:4 + size]))
    if (head.get("format"), head.get("analyzer"), head.get("layout")) != (
            FORMAT, ANALYZER_VERSION, LAYOUT_VERSION):
        raise ValueError("postings block of another format, analyzer or layout")
    if head.get("source") != source:
        raise ValueError("postings block of another source")
    documents, terms, postings, doc_terms = head["counts"]
    ids, term_list = head["ids"], head["terms"]
    if len(ids) != documents or len(term_list) != terms:
        raise ValueError("postings block head does not match its counts")
    at = 16 + size + (-(16 + size) % 4)
    arrays = {}
    for name, count in zip(_ARRAYS, (documents, documents, terms, postings, documents,
                                     doc_terms), strict=True):
        values = array("i")
        end = at + 4 * count
        if end > len(data):
            raise ValueError("postings block truncated")
        values.frombytes(data[at:end])
        if sys.byteorder != "little":
            values.byteswap()
        arrays[name] = values
        at = end
    if at != len(data):
        raise ValueError("postings block has trailing bytes")
    if (arrays["term_ends"] and arrays["term_ends"][-1] != postings) or (
            arrays["doc_term_ends"] and arrays["doc_term_ends"][-1] != doc_terms):
        raise ValueError("postings block ends do not match its arrays")
    return PostingsBlock(ids=ids, terms=term_list, **arrays)
