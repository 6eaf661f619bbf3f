"""A call that fails writes nothing: what it changed before the failure is dropped, not
committed, and the characters it touched are read again from IndexedDB. A SillyTavern chat
of two days is ingested one day at a time; the second day's embedding fails."""

from __future__ import annotations

import base64
import json

from .conftest import engine_call, wait_ready
from .faults import engine_worker
from .test_storage import call_error
from .test_storage_purge import RAW

# In the engine worker: the embedding request holding ``marker`` fails (a bad argument), as
# a model that runs out of memory or a lost GPU device would make it fail.
FAIL_EMBEDDING_OF = """(marker) => {
  const original = MessagePort.prototype.postMessage;
  MessagePort.prototype.postMessage = function (message, ...rest) {
    if (message && message.type === "APPLY" && JSON.stringify(message).includes(marker)) {
      message = { ...message, argumentList: [{ type: "RAW", value: 12345 }] };
    }
    return original.call(this, message, ...rest);
  };
}"""


def chat_of_two_days() -> str:
    lines = [{"user_name": "You", "character_name": "Rin", "create_date": "2024-05-01@10h00m00s"},
             {"name": "You", "is_user": True, "send_date": "May 1, 2024 10:01am",
              "mes": "I love green tea. I always walk at dawn."},
             {"name": "You", "is_user": True, "send_date": "May 2, 2024 10:01am",
              "mes": "I prefer TypeScript over zebrafish."}]
    text = "\n".join(json.dumps(line) for line in lines)
    return base64.b64encode(text.encode()).decode()


def test_a_call_that_fails_half_way_writes_nothing(launch, app_url, tmp_path):
    page = launch(tmp_path / "profile").new_page()
    page.goto(app_url)
    wait_ready(page)
    engine_call(page, "remember", {"character": "rin", "text": "Rin keeps a garden"})
    engine_worker(page).evaluate(FAIL_EMBEDDING_OF, "zebrafish")
    params = {"data_base64": chat_of_two_days(), "filename": "Rin - chat.jsonl"}
    code, message = call_error(page, "tavern_import", params)
    # named as what failed: the embedding, not the browser database (which was not written)
    assert code == "EMBEDDING_FAILED", (code, message)
    assert "database" not in message
    texts = [m["text"] for m in engine_call(page, "memories", {"character": "rin"})]
    assert texts == ["Rin keeps a garden"]  # the first day's memories are not kept
    raw = page.evaluate(RAW)
    assert not any("green tea" in row for row in raw["memories"] + raw["record_packs"])
    page.reload()
    wait_ready(page)
    texts = [m["text"] for m in engine_call(page, "memories", {"character": "rin"})]
    assert texts == ["Rin keeps a garden"]
    report = engine_call(page, "tavern_import", params)  # the next try stores it all
    assert report["stored"] >= 3


def test_a_model_or_settings_change_that_is_not_stored_is_not_applied(launch, app_url,
                                                                      tmp_path):
    """select_model and set_settings switched the running engine, then failed to store the
    setting: new characters were stamped with a model the next start would not select (and
    their vector recall refused after a reload); a backup URL nothing stored was used."""
    from .faults import INSTALL

    page = launch(tmp_path / "profile").new_page()
    page.goto(app_url)
    wait_ready(page)
    before = engine_call(page, "model_state")
    engine_worker(page).evaluate(INSTALL, 1)
    code, _ = call_error(page, "select_model", {"model": "omoide/all-MiniLM-L6-v2",
                                                "dtype": "fp32"})
    engine_worker(page).evaluate(INSTALL, 0)
    assert code == "QUOTA_EXCEEDED"
    assert engine_call(page, "model_state") == before
    kei = engine_call(page, "remember", {"character": "kei", "text": "Kei likes chess"})
    page.reload()
    wait_ready(page)
    assert engine_call(page, "model_state") == before
    hits = engine_call(page, "recall", {"character": "kei", "query": "chess",
                                        "mode": "vector"})
    assert hits[0]["memory"]["id"] == kei["id"]

    engine_worker(page).evaluate(INSTALL, 1)
    code, _ = call_error(page, "set_settings", {"backup_url": "http://127.0.0.1:48997"})
    engine_worker(page).evaluate(INSTALL, 0)
    assert code == "QUOTA_EXCEEDED"
    assert engine_call(page, "settings")["backup_url"] is None
