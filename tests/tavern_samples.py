"""Sample SillyTavern / RisuAI files of our own, written the way those apps write them
(shared by the unit tests and the browser tests)."""

from __future__ import annotations

import base64
import json
import struct
import zlib

from omoide.interop import png

CARD_V2 = {
    "spec": "chara_card_v2", "spec_version": "2.0",
    "data": {
        "name": "Seraphina",
        "description": "{{char}} is a guardian of the Eldoria forest.\n\n"
                       "She heals travellers who lose their way among the old oaks.",
        "personality": "kind, protective, a little mischievous",
        "scenario": "{{user}} wakes up in {{char}}'s glade after a storm.",
        "first_mes": "*You wake up to birdsong.* Easy now, you were hurt.",
        "mes_example": "<START>\n{{user}}: Who are you?\n{{char}}: Seraphina.",
        "creator_notes": "", "system_prompt": "", "post_history_instructions": "",
        "alternate_greetings": [], "tags": ["fantasy"], "creator": "omoide-tests",
        "character_version": "1", "extensions": {},
        "character_book": {
            "name": "Eldoria", "extensions": {},
            "entries": [
                {"keys": ["Eldoria", "forest"], "content": "Eldoria is an ancient forest "
                 "where the trees remember every traveller.", "extensions": {},
                 "enabled": True, "insertion_order": 100, "comment": "the forest",
                 "secondary_keys": []},
                {"keys": ["moonpetal"], "content": "Moonpetal tea cures fevers; Seraphina "
                 "brews it at dusk.", "extensions": {}, "enabled": True,
                 "insertion_order": 100, "comment": "moonpetal", "secondary_keys": ["tea"]},
            ],
        },
    },
}

CARD_V3 = {"spec": "chara_card_v3", "spec_version": "3.0",
           "data": CARD_V2["data"] | {"name": "Kaito", "description": "Kaito is a "
                                      "lighthouse keeper on a foggy island.",
                                      "character_book": None, "personality": "",
                                      "scenario": "", "group_only_greetings": []}}

WORLD_INFO = {"entries": {
    "0": {"uid": 0, "key": ["Harbor", "port"], "keysecondary": [], "comment": "the harbor",
          "content": "The harbor town of Minato trades in salt and dried fish.",
          "constant": False, "selective": False, "order": 100, "position": 0,
          "disable": False, "probability": 100, "useProbability": True, "depth": 4},
    "1": {"uid": 1, "key": ["lighthouse"], "keysecondary": ["storm"], "comment": "",
          "content": "The lighthouse lamp has not failed in forty years.", "constant": True,
          "selective": True, "order": 90, "position": 0, "disable": False},
    "2": {"uid": 2, "key": [], "keysecondary": [], "comment": "blank", "content": "",
          "constant": False, "disable": False},
}}

RISU_LOREBOOK = {"type": "risu", "ver": 1, "data": [
    {"key": "guild, adventurers", "secondkey": "", "insertorder": 100, "comment": "guild",
     "content": "The adventurers' guild opens at dawn.", "mode": "normal",
     "alwaysActive": False, "selective": False},
]}

CHAT_HEAD = {"user_name": "You", "character_name": "Seraphina",
             "create_date": "2024-05-01@12h30m15s", "chat_metadata": {}}
CHAT_MESSAGES = [
    {"name": "Seraphina", "is_user": False, "is_system": False,
     "send_date": "May 1, 2024 12:30pm", "mes": "How are you feeling today?"},
    {"name": "You", "is_user": True, "is_system": False,
     "send_date": "May 1, 2024 12:31pm", "mes": "I love green tea. I always walk at dawn."},
    {"name": "System", "is_user": False, "is_system": True,
     "send_date": "May 1, 2024 12:32pm", "mes": "[the narrator speaks]"},
    {"name": "You", "is_user": True, "is_system": False,
     "send_date": "June 3, 2024 9:05am", "mes": "I prefer TypeScript over JavaScript."},
]


def st_chat(head: dict | None = None, messages: list | None = None) -> bytes:
    lines = [head or CHAT_HEAD, *(CHAT_MESSAGES if messages is None else messages)]
    return "\n".join(json.dumps(x, ensure_ascii=False) for x in lines).encode() + b"\n"


RISU_CHAT = {"type": "risuChat", "ver": 1, "data": {
    "name": "Chat 1", "note": "", "localLore": [],
    "message": [{"role": "char", "data": "Welcome back!", "time": 1714566600000},
                {"role": "user", "data": "I hate spicy food.", "time": 1714566660000}]}}


def tiny_png() -> bytes:
    """A valid 1x1 grey PNG."""
    ihdr = struct.pack(">IIBBBBB", 1, 1, 8, 0, 0, 0, 0)
    return (png.SIGNATURE + png.chunk(b"IHDR", ihdr)
            + png.chunk(b"IDAT", zlib.compress(b"\x00\x80")) + png.chunk(b"IEND", b""))


def card_png(card: dict, keyword: str = "chara") -> bytes:
    encoded = base64.b64encode(json.dumps(card, ensure_ascii=False).encode())
    return png.with_text(tiny_png(), keyword, encoded)


def as_json(value: object) -> bytes:
    return json.dumps(value, ensure_ascii=False).encode()
