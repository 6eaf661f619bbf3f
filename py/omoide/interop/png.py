"""The tEXt chunks of a PNG file (character cards keep their JSON there, base64-encoded)."""

from __future__ import annotations

import struct
import zlib

SIGNATURE = b"\x89PNG\r\n\x1a\n"


def is_png(data: bytes) -> bool:
    return data[:8] == SIGNATURE


def text_chunks(data: bytes) -> dict[str, bytes]:
    """keyword -> text of every tEXt chunk; ``ValueError`` on a truncated or damaged file."""
    if not is_png(data):
        raise ValueError("not a PNG file")
    found: dict[str, bytes] = {}
    at = len(SIGNATURE)
    while at < len(data):
        if at + 8 > len(data):
            raise ValueError("truncated chunk header")
        length, kind = struct.unpack(">I4s", data[at:at + 8])
        end = at + 8 + length + 4
        if end > len(data):
            raise ValueError(f"chunk {kind.decode('latin-1')!r} is truncated")
        body = data[at + 8:at + 8 + length]
        (crc,) = struct.unpack(">I", data[end - 4:end])
        if zlib.crc32(kind + body) != crc:
            raise ValueError(f"chunk {kind.decode('latin-1')!r} has a bad CRC")
        if kind == b"tEXt" and b"\0" in body:
            keyword, text = body.split(b"\0", 1)
            found[keyword.decode("latin-1")] = text
        if kind == b"IEND":
            break
        at = end
    return found


def chunk(kind: bytes, body: bytes) -> bytes:
    return struct.pack(">I", len(body)) + kind + body + struct.pack(">I", zlib.crc32(kind + body))


def with_text(data: bytes, keyword: str, text: bytes) -> bytes:
    """``data`` (a PNG) with a tEXt chunk added before IEND: how card editors write cards."""
    if not is_png(data) or data[-12:-8] != b"\0\0\0\0" or data[-8:-4] != b"IEND":
        raise ValueError("not a PNG file ending in IEND")
    return data[:-12] + chunk(b"tEXt", keyword.encode("latin-1") + b"\0" + text) + data[-12:]
