from __future__ import annotations
import json
from .conftest import engine_call, wait_ready

MINILM = {"model": "omoide/all-MiniLM-L6-v2", "dtype": "q8"}
E5 = {"model": "omoide/multilingual-e5-small", "dtype": "q8"}


def call(page, verb, params=None):
    try:
        return ("ok", engine_call(page, verb, params))
    except Exception as e:  # noqa
        return ("err", str(e).splitlines()[0][:300])


def state(page, ch):
    mems = {m["id"]: (m["text"], m.get("key"), json.dumps(m.get("meta"), sort_keys=True))
            for m in engine_call(page, "memories", {"character": ch})}
    trash = {e["memory"]["id"]: (e["memory"]["text"], json.dumps(e["memory"].get("meta"), sort_keys=True))
             for e in engine_call(page, "trash", {"character": ch})}
    return mems, trash


def open_page(context, url):
    p = context.new_page()
    p.goto(url)
    wait_ready(p)
    return p


def test_refused_import_partial(launch, app_url, tmp_path):
    context = launch(tmp_path / "profile")
    a = open_page(context, app_url)
    engine_call(a, "select_model", MINILM)
    m = engine_call(a, "remember", {"character": "bob", "text": "bob likes green tea"})
    engine_call(a, "select_model", E5)
    print("model now", engine_call(a, "model_state").get("stamp"))
    now = m["updated_at"] + 1000
    rec_b = dict(m)
    data = {"format": "omoide-export", "version": 1, "characters": [
        {"id": "alice", "memories": [{"id": "mem-alice-1", "text": "alice loves the sea",
                                      "kind": "fact", "importance": 0.5,
                                      "created_at": now, "updated_at": now, "meta": {}}]},
        {"id": "bob", "memories": [{"id": m["id"], "text": "bob likes black coffee now",
                                    "kind": "fact", "importance": 0.5,
                                    "created_at": m["created_at"], "updated_at": now,
                                    "meta": {}}]},
    ]}
    r = call(a, "import_data", {"data": data})
    print("IMPORT RESULT", r)
    print("alice after refused import (engine):", state(a, "alice"))
    chars = call(a, "characters", {})
    print("characters:", chars)
    a.reload(); wait_ready(a)
    print("alice after reload:", state(a, "alice"))
    print("bob after reload:", state(a, "bob"))


def test_two_tabs_edit_restore(launch, app_url, tmp_path):
    context = launch(tmp_path / "profile")
    a = open_page(context, app_url)
    m = engine_call(a, "remember", {"character": "hana", "text": "hana drinks tea every morning"})
    mid = m["id"]
    b = open_page(context, app_url)
    print("B sees", state(b, "hana"))
    print("A edit v2", call(a, "update", {"character": "hana", "id": mid, "text": "hana drinks coffee every morning"}))
    print("B edit v3", call(b, "update", {"character": "hana", "id": mid, "text": "hana drinks cocoa every morning"}))
    sa, sb = state(a, "hana"), state(b, "hana")
    print("A state", sa)
    print("B state", sb)
    # restore the original (v1) history in A, while B then restores v2 history
    trash = engine_call(a, "trash", {"character": "hana"})
    by_text = {e["memory"]["text"]: e["memory"]["id"] for e in trash}
    v1 = by_text.get("hana drinks tea every morning"); v2 = by_text.get("hana drinks coffee every morning")
    print("restore v1 in A", call(a, "restore", {"character": "hana", "id": v1}))
    print("restore v2 in B", call(b, "restore", {"character": "hana", "id": v2}))
    sa, sb = state(a, "hana"), state(b, "hana")
    print("LIVE A", {k: v[0] for k, v in sa[0].items()})
    print("LIVE B", {k: v[0] for k, v in sb[0].items()})
    print("TRASH A", {k: v[0] for k, v in sa[1].items()})
    # edit in B the memory A restored, concurrently
    b2 = state(b, "hana")
    a.reload(); wait_ready(a)
    sa2 = state(a, "hana")
    print("A after reload == B engine:", sa2 == b2)
    if sa2 != b2:
        print(" engine", b2); print(" disk", sa2)
    # forget live then restore something, reload again
    live = list(sa2[0])
    print("n live", len(live))


def test_export_import_roundtrip(launch, app_url, tmp_path):
    context = launch(tmp_path / "p1")
    a = open_page(context, app_url)
    print(call(a, "create_character", {"name": "Kei <b>x</b>"}))
    chars = engine_call(a, "characters", {})
    kid = chars[0]["id"]
    m = engine_call(a, "remember", {"character": kid, "text": "kei plays chess on sundays", "key": "hobby"})
    engine_call(a, "update", {"character": kid, "id": m["id"], "text": "kei plays go on sundays"})
    engine_call(a, "remember", {"character": kid, "text": "kei plays shogi on sundays", "key": "hobby"})
    x = engine_call(a, "remember", {"character": kid, "text": "kei hates rain"})
    engine_call(a, "forget", {"character": kid, "id": x["id"]})
    before = state(a, kid)
    exp = engine_call(a, "export_data", {"with_vectors": True, "names": {c["id"]: c["name"] for c in chars}})
    print("export names", [(c["id"], c.get("name")) for c in exp["characters"]])
    c2 = launch(tmp_path / "p2")
    b = open_page(c2, app_url)
    print("import", call(b, "import_data", {"data": exp}))
    after = state(b, kid)
    print("same state after import:", after == before)
    if after != before:
        print(" before", before); print(" after", after)
    print("names in p2", [(c["id"], c["name"]) for c in engine_call(b, "characters", {})])
    b.reload(); wait_ready(b)
    after2 = state(b, kid)
    print("same after reload:", after2 == before)
    if after2 != before:
        print(" after2", after2)
    au = call(b, "audit", {"character": kid})
    print("audit", json.dumps(au)[:1500])
    # restore the original chess version in p2
    tr = {e["memory"]["text"]: e["memory"]["id"] for e in engine_call(b, "trash", {"character": kid})}
    print("restore chess", call(b, "restore", {"character": kid, "id": tr["kei plays chess on sundays"]}))
    s = state(b, kid)
    print("live after restore", {k: (v[0], v[1]) for k, v in s[0].items()})
