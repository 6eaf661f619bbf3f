"""SillyTavern and RisuAI data in and out, shared by the CLI and the web app.

In: character cards (V1/V2/V3 JSON, PNG with a ``chara`` or ``ccv3`` tEXt chunk), chat logs
(SillyTavern ``.jsonl``, RisuAI ``risuChat`` JSON) and lorebooks (SillyTavern World Info,
the V2 card ``character_book``, RisuAI lorebook exports). ``parse_file`` turns any of them
into an ``ImportPlan`` without touching the engine (a malformed file raises
``MALFORMED_CHAT_DATA`` naming what is wrong); ``apply_plan`` writes it: card fields and
lorebook entries as facts, chats through conversation ingest with their dates.
Out: ``export_world_info`` writes a character's memories as SillyTavern World Info JSON,
which ``parse_file`` reads back.
"""

from omoide.interop.importer import apply_plan, import_file
from omoide.interop.parse import ImportPlan, parse_file
from omoide.interop.worldinfo import export_world_info

__all__ = ["ImportPlan", "apply_plan", "export_world_info", "import_file", "parse_file"]
