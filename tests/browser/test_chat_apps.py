"""Omoide in chat apps, in Chromium: SillyTavern / RisuAI files through the maintenance tab,
the JS client on a second origin (allowed / refused / revoked / character outside the grant
/ cross-site through the Omoide window / offline after the first visit), the chat demo end
to end against a loopback OpenAI-compatible server, and the SillyTavern extension against a
stand-in page providing the extension API it uses.

One profile and one app page for the module (each engine boot is slow); the tests build on
each other in file order. Origins: the app 127.0.0.1:27651; the demo (a plain page of another
origin, same site) 127.0.0.1:27652, and the same server as http://localhost:27652 (another
site: Chromium partitions the storage of frames under it); the SillyTavern stand-in
127.0.0.1:27653; the chat endpoint 127.0.0.1:27654.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest
from playwright.sync_api import BrowserContext, Page, expect

from buildtools.serve import AppServer, demo_server
from tests import tavern_samples as samples

from .conftest import CHROMIUM, CHROMIUM_ARGS, DIST, engine_call, wait_ready

expect.set_options(timeout=60_000)
ROOT = Path(__file__).resolve().parents[2]
APP, DEMO, ST_HOST, LLM = 27651, 27652, 27653, 27654
SAME_SITE = f"http://127.0.0.1:{DEMO}"
CROSS_SITE = f"http://localhost:{DEMO}"
CALL = """async ([method, args]) => {
  const c = window.client;
  try { return { ok: await (method in c ? c[method](...args) : c.call(method, ...args)) }; }
  catch (e) { return { code: e.code, message: e.message, fields: e.fields }; }
}"""


@pytest.fixture(scope="module")
def servers() -> Iterator[dict[str, AppServer]]:
    running = {
        "app": AppServer(DIST, port=APP).start(),
        "demo": demo_server(port=DEMO).start(),
        "st": AppServer(ROOT / "integrations" / "sillytavern", port=ST_HOST, isolated=False,
                        extra_files={f"/{n}": ROOT / "tests/browser/fixtures/sillytavern" / n
                                     for n in ("host.html", "host.js")}).start(),
    }
    yield running
    for server in running.values():
        server.stop()


class EchoChat(BaseHTTPRequestHandler):
    """An OpenAI-compatible chat endpoint that answers with the system prompt it got."""

    def log_message(self, *args):
        pass

    def cors(self) -> None:
        self.send_header("Access-Control-Allow-Origin", "*")
        self.send_header("Access-Control-Allow-Headers", "Content-Type, Authorization")
        self.send_header("Access-Control-Allow-Methods", "POST")

    def do_OPTIONS(self):
        self.send_response(204)
        self.cors()
        self.end_headers()

    def do_POST(self):
        payload = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        self.server.seen.append((self.path, payload))
        system = payload["messages"][0]
        assert system["role"] == "system"
        body = json.dumps({"choices": [{"index": 0, "message": {
            "role": "assistant", "content": "ECHO " + system["content"]}}]}).encode()
        self.send_response(200)
        self.cors()
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)


@pytest.fixture(scope="module")
def llm() -> Iterator[ThreadingHTTPServer]:
    server = ThreadingHTTPServer(("127.0.0.1", LLM), EchoChat)
    server.seen = []
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield server
    server.shutdown()
    server.server_close()


@pytest.fixture(scope="module")
def context(browser_type, servers, module_profile) -> Iterator[BrowserContext]:
    context = browser_type.launch_persistent_context(
        str(module_profile), executable_path=CHROMIUM, headless=True,
        args=CHROMIUM_ARGS, viewport={"width": 1200, "height": 900}, locale="en-US",
        accept_downloads=True)
    yield context
    context.close()


@pytest.fixture(scope="module")
def app(context, servers) -> Page:
    page = context.new_page()
    page.goto(servers["app"].url)
    wait_ready(page)
    page.wait_for_selector("#app[data-ready='true']", timeout=60_000)
    page.click("#tab-maintenance")
    return page


def texts(app: Page, character: str) -> list[str]:
    return sorted(m["text"] for m in engine_call(app, "memories", {"character": character}))


def upload(app: Page, name: str, data: bytes, into: str = "") -> str:
    app.select_option("#tavern-character", into)
    app.set_input_files("#tavern-file", files=[{"name": name, "mimeType": "application/json",
                                                "buffer": data}])
    app.evaluate("() => { delete document.getElementById('tavern-report').dataset.state; }")
    app.click("#tavern-import")
    app.wait_for_selector("#tavern-report[data-state]")
    return app.text_content("#tavern-report")


def client_page(context: BrowserContext, origin: str, app_url: str) -> Page:
    page = context.new_page()
    page.goto(f"{origin}/?omoide={app_url}")
    page.evaluate("""async (url) => {
      const { connect } = await import('/client.js');
      window.client = await connect({ url });
    }""", app_url)
    return page


def call(page: Page, method: str, *args):
    return page.evaluate(CALL, [method, list(args)])


# -- SillyTavern / RisuAI files in the app ------------------------------------------------------


def test_tavern_files_in_and_out(app, tmp_path):
    report = upload(app, "Seraphina.png", samples.card_png(samples.CARD_V2))
    assert "card-v2 → Seraphina: 5 facts stored" in report
    names = {c["id"]: c["name"] for c in engine_call(app, "characters")}
    assert names["seraphina"] == "Seraphina"  # named from the card, not its id
    assert "st-chat" in upload(app, "Seraphina - 2024-05-01.jsonl", samples.st_chat())
    tea = next(m for m in engine_call(app, "memories", {"character": "seraphina"})
               if "green tea" in m["text"])
    assert tea["created_at"] == 1714566660  # 2024-05-01 12:31 UTC, when it was said
    assert "st-worldinfo" in upload(app, "minato.json", samples.as_json(samples.WORLD_INFO),
                                    into="seraphina")
    before = texts(app, "seraphina")
    assert "The harbor town of Minato trades in salt and dried fish." in before

    # the other formats: V3 JSON card, RisuAI chat and lorebook
    assert "card-v3 → Kaito: 1 facts" in upload(app, "kaito.json", samples.as_json(samples.CARD_V3))
    assert "risu-chat → Kaito" in upload(app, "risu.json", samples.as_json(samples.RISU_CHAT),
                                         into="kaito")
    assert "risu-lorebook → Kaito: 1 facts" in upload(
        app, "guild.json", samples.as_json(samples.RISU_LOREBOOK), into="kaito")
    assert any("spicy" in t for t in texts(app, "kaito"))

    for name, data in [("plain.png", samples.tiny_png()), ("broken.jsonl", b'{"a": 1}\n{oops'),
                       ("nothing.json", b'{"hello": "world"}'),
                       ("noname.json", samples.as_json({"spec": "chara_card_v3", "data": {}})),
                       ("risu.json", samples.as_json({"type": "risuChat", "data": {
                           "message": [{"role": "bot", "data": "x"}]}})),
                       ("lore.json", samples.as_json({"entries": {"0": {"content": 5}}}))]:
        failed = upload(app, name, data, into="seraphina")
        assert app.get_attribute("#tavern-report", "data-state") == "failed"
        assert f"{name}: not a valid" in failed and "Nothing was imported" in failed
    assert texts(app, "seraphina") == before

    app.select_option("#current-character", "seraphina")
    with app.expect_download() as info:
        app.click("#tavern-export")
    exported = tmp_path / info.value.suggested_filename
    info.value.save_as(exported)
    assert exported.name == "Seraphina-worldinfo.json"
    world = json.loads(exported.read_text())
    assert sorted(e["content"] for e in world["entries"].values()) == before
    copy = engine_call(app, "create_character", {"name": "Copy"})["id"]
    app.evaluate("() => window.omoide.ui.refreshCharacters()")
    assert f"st-worldinfo → Copy: {len(before)} facts" in upload(
        app, exported.name, exported.read_bytes(), into=copy)
    assert texts(app, copy) == before


# -- the JS client -------------------------------------------------------------------------------


def test_client_allowed_refused_revoked(app, context, servers):
    client = client_page(context, SAME_SITE, servers["app"].url)
    assert call(client, "characters")["code"] == "ORIGIN_NOT_ALLOWED"

    app.fill("#client-origin", SAME_SITE)
    app.check("#client-pick-seraphina")
    app.click("#client-allow")
    expect(app.locator(f"#clients-list li[data-origin='{SAME_SITE}'] .who")).to_have_text(
        "Seraphina")
    assert [c["id"] for c in call(client, "characters")["ok"]] == ["seraphina"]  # not "copy"
    for method, args in [("recall", ["copy", "tea"]), ("context", ["copy", "tea"]),
                         ("remember", ["copy", "x"]), ("forget", ["copy", "x"])]:
        refused = call(client, method, *args)
        assert refused["code"] == "CHARACTER_NOT_ALLOWED", (method, refused)

    shown = {m["id"]: m["text"] for m in engine_call(app, "memories",
                                                     {"character": "seraphina"})}
    hits = call(client, "recall", "seraphina", "green tea", {"k": 50})["ok"]
    assert {h["id"]: h["text"] for h in hits} == shown  # exactly what the app shows
    assert "green tea" in hits[0]["text"]
    block = call(client, "context", "seraphina", "what do I like to drink?",
                 {"tokenBudget": 120})["ok"]
    assert "(2024-05-01, preference) I love green tea" in block["text"]
    assert 0 < block["tokens"] <= 120

    stored = call(client, "remember", "seraphina", "Seraphina keeps a lantern by the door")
    assert "Seraphina keeps a lantern by the door" in texts(app, "seraphina")
    report = call(client, "ingest", "seraphina",
                  [{"role": "user", "content": "I hate spicy food."}])["ok"]
    assert [i["text"] for i in report["stored"]] == ["I hate spicy food."]
    call(client, "forget", "seraphina", stored["ok"]["id"])
    trash = engine_call(app, "trash", {"character": "seraphina"})
    assert stored["ok"]["id"] in [e["memory"]["id"] for e in trash]  # restorable
    assert call(client, "frobnicate")["code"] == "INVALID_ARGUMENT"
    # the engine's own refusals name their field too (they came with empty fields)
    refused = call(client, "recall", "seraphina", "tea", {"k": 0})
    assert (refused["code"], refused["fields"].get("name")) == ("INVALID_ARGUMENT", "k")
    refused = call(client, "recall", "seraphina", "   ")
    assert refused["fields"].get("name") == "query" and "query" in refused["message"]

    # a character deleted in the app (its trash of characters) is out of every app's reach
    engine_call(app, "delete_character", {"character": "seraphina"})
    assert call(client, "characters")["ok"] == []
    for method, args in [("recall", ["seraphina", "tea"]), ("context", ["seraphina", "tea"]),
                         ("remember", ["seraphina", "written after the delete"]),
                         ("ingest", ["seraphina", "I love plums."]),
                         ("forget", ["seraphina", hits[0]["id"]])]:
        refused = call(client, method, *args)
        assert refused["code"] == "CHARACTER_NOT_ALLOWED", (method, refused)
    engine_call(app, "restore_character", {"character": "seraphina"})
    assert "written after the delete" not in texts(app, "seraphina")
    assert call(client, "recall", "seraphina", "green tea")["ok"]

    # a window of the same allowed origin that is not the frame's parent is ignored
    with context.expect_page() as opened:
        client.evaluate("() => { window.other = window.open('/?other'); }")
    other = opened.value
    other.wait_for_load_state()
    assert other.evaluate("""() => new Promise((resolve) => {
      addEventListener('message', () => resolve('answered'));
      opener.frames[0].postMessage({ protocol: 'omoide-client/1', type: 'request', id: 1,
        method: 'characters', params: {} }, '*');
      setTimeout(() => resolve('ignored'), 2000);
    })""") == "ignored"
    other.close()

    app.click(f"#clients-list li[data-origin='{SAME_SITE}'] button.revoke")
    expect(app.locator(f"#clients-list li[data-origin='{SAME_SITE}']")).to_have_count(0)
    assert call(client, "characters")["code"] == "ORIGIN_NOT_ALLOWED"  # at once
    assert call(client, "recall", "seraphina", "tea")["code"] == "ORIGIN_NOT_ALLOWED"
    client.close()


def test_a_fourth_connection_is_refused_instead_of_running_the_browser_out_of_memory(
        app, context, servers):
    """Each connection boots an engine of its own: nine frames of one app ran the browser
    out of memory and every call failed. Three run; the fourth is told, and gets its turn
    once one has gone."""
    app.fill("#client-origin", SAME_SITE)
    app.check("#client-pick-seraphina")
    app.click("#client-allow")
    client = client_page(context, SAME_SITE, servers["app"].url)
    answers = client.evaluate("""async (url) => {
      const { connect } = await import('/client.js');
      const clients = [window.client];
      for (let i = 0; i < 3; i++) clients.push(await connect({ url }));
      window.clients = clients;
      return Promise.all(clients.map((c) => c.characters().then(
        (list) => list.map((x) => x.id).join(), (e) => e.code)));
    }""", servers["app"].url)
    assert sorted(answers) == ["TOO_MANY_CONNECTIONS", "seraphina", "seraphina", "seraphina"]
    late = answers.index("TOO_MANY_CONNECTIONS")
    first = next(i for i, a in enumerate(answers) if a == "seraphina")
    assert client.evaluate(f"""async () => {{
      window.clients[{first}].close();
      await new Promise((ok) => setTimeout(ok, 500));
      return (await window.clients[{late}].characters()).map((x) => x.id).join();
    }}""") == "seraphina"
    app.click(f"#clients-list li[data-origin='{SAME_SITE}'] button.revoke")
    client.close()


def test_a_careless_apps_mistakes_are_omoide_errors_and_leave_nothing_pending(
        app, context, servers):
    """Options given as null threw a TypeError; a function in meta threw the browser's
    DataCloneError and left the call pending for ever; a call after close() was a TypeError."""
    client = client_page(context, SAME_SITE, servers["app"].url)
    assert client.evaluate("""async () => {
      const c = window.client;
      const code = (p) => p.then(() => "answered", (e) => e.code ?? `not an OmoideError: ${e}`);
      const out = [await code(c.remember("seraphina", "tea", null)),
                   await code(c.recall("seraphina", "tea", null)),
                   await code(c.remember("seraphina", "tea", { meta: { f: () => 1 } })),
                   c.pending.size];
      c.close();
      out.push(await code(c.characters()));
      return out;
    }""") == ["ORIGIN_NOT_ALLOWED", "ORIGIN_NOT_ALLOWED", "INVALID_ARGUMENT", 0, "CLOSED"]
    client.close()


def test_a_page_without_an_origin_is_refused_at_once_instead_of_never_answered(app, context,
                                                                              servers):
    """A page with an opaque origin ("null": a sandboxed frame without allow-same-origin, a
    data: page) cannot be allowed. In a sandboxed frame the client waited out its 30 s load
    timeout (Omoide's frame inherits the sandbox and cannot run); under an opaque page the
    bridge failed to start (its ancestor's origin is no URL) and no reply can name the
    origin. Both are refused in words, with no data."""
    base = servers["app"].url
    page = context.new_page()  # about:blank: an opaque origin, no content security policy
    source = (DIST / "client.js").read_text("utf-8").replace(
        'new URL("./", import.meta.url).href', json.dumps(base))
    got = page.evaluate("""([source, base]) => new Promise((resolve) => {
      const sandboxed = document.createElement('iframe');
      sandboxed.sandbox = 'allow-scripts';
      sandboxed.srcdoc = '<body><script type="module">' + source +
        `\nconnect({ url: ${JSON.stringify(base)}, loadTimeoutMs: 20000 }).then(
           () => parent.postMessage({ got: 'connected' }, '*'),
           (e) => parent.postMessage({ got: e.code, message: e.message }, '*'));<\\/script>`;
      addEventListener('message', (e) => { if (e.data?.got) resolve(e.data); });
      setTimeout(() => resolve({ got: 'no answer' }), 10000);
      document.body.append(sandboxed);
    })""", [source, base])
    assert got["got"] == "ORIGIN_NOT_ALLOWED" and "sandboxed" in got["message"], got
    reply = page.evaluate("""(bridge) => new Promise((resolve) => {
      const frame = document.createElement('iframe');
      frame.src = bridge;
      addEventListener('message', (e) => {
        if (e.data?.type === 'ready') frame.contentWindow.postMessage({ protocol:
          'omoide-client/1', type: 'request', id: 1, method: 'characters', params: {} }, '*');
        if (e.data?.type === 'reply') resolve(e.data);
      });
      setTimeout(() => resolve('no answer'), 20000);
      document.body.append(frame);
    })""", f"{base}bridge.html")
    assert reply != "no answer"
    assert (reply["ok"], reply["error"]["code"]) == (False, "ORIGIN_NOT_ALLOWED"), reply
    assert "result" not in reply
    page.close()


def test_client_places_memories_in_the_conversation_it_names(app, context, servers):
    """A chat app sending one message at a time names its chat: each memory takes the next
    turn there (``engine/neighbourhood.py``); a bad place is refused by name, nothing written."""
    engine_call(app, "allow_origin", {"origin": SAME_SITE, "characters": ["seraphina"]})
    client = client_page(context, SAME_SITE, servers["app"].url)
    first = call(client, "remember", "seraphina", "Seraphina lit the lantern at dusk",
                 {"conversation": "chat-7", "context": "On 1 May 2024"})["ok"]
    assert (first["conversation"], first["turn"]) == ("chat-7", 0)
    report = call(client, "ingest", "seraphina",
                  [{"role": "user", "content": "I adopted a cat named Biscuit."}],
                  {"conversation": "chat-7"})["ok"]
    assert report["conversation"] == "chat-7"
    assert [i["turn"] for i in report["stored"]] == [1]
    before = texts(app, "seraphina")
    for options, field in (({"turn": 3}, "turn"), ({"conversation": 7}, "conversation")):
        refused = call(client, "remember", "seraphina", "a bad place", options)
        assert refused["code"] == "INVALID_ARGUMENT" and field in refused["message"], refused
    refused = call(client, "ingest", "seraphina", "I hate mornings.", {"conversation": " "})
    assert refused["code"] == "INVALID_ARGUMENT" and "conversation" in refused["message"]
    assert texts(app, "seraphina") == before
    placed = {(m["conversation"], m["turn"]) for m in engine_call(
        app, "memories", {"character": "seraphina"}) if m["conversation"] == "chat-7"}
    assert placed == {("chat-7", 0), ("chat-7", 1)}  # the app's engine reads them back
    client.close()


def test_client_cross_site_goes_through_an_omoide_window(app, context, servers):
    engine_call(app, "allow_origin", {"origin": CROSS_SITE, "characters": ["seraphina"]})
    client = client_page(context, CROSS_SITE, servers["app"].url)
    assert client.evaluate("() => window.client.needsWindow") is True
    assert call(client, "characters")["code"] == "STORAGE_PARTITIONED"
    client.evaluate("""() => {
      const button = document.createElement('button');
      button.id = 'open-omoide';
      button.textContent = 'Connect Omoide';
      button.addEventListener('click', () => window.client.openWindow()
        .then(() => { window.opened = true; }));
      document.body.prepend(button);
    }""")
    with context.expect_page() as opened:
        client.click("#open-omoide")  # a user gesture: pop-ups need one
    popup = opened.value
    client.wait_for_function("() => window.opened === true")
    assert popup.url.startswith(servers["app"].url + "bridge.html")
    assert [c["id"] for c in call(client, "characters")["ok"]] == ["seraphina"]
    shown = {m["id"]: m["text"] for m in engine_call(app, "memories",
                                                     {"character": "seraphina"})}
    hits = call(client, "recall", "seraphina", "green tea", {"k": 50})["ok"]
    assert {h["id"]: h["text"] for h in hits} == shown  # exactly what the app shows
    assert call(client, "recall", "copy", "tea")["code"] == "CHARACTER_NOT_ALLOWED"
    popup.close()
    assert call(client, "characters")["code"] == "STORAGE_PARTITIONED"
    client.close()


@pytest.mark.parametrize(("page_host", "partitioned"), [
    ("chat.other.co.uk", True),  # another site under a two-label public suffix
    ("b.github.io", True),  # a.github.io and b.github.io are two sites
    ("chat.example.co.uk", False),  # same site, another host: storage is shared
])
def test_the_bridge_knows_a_partitioned_frame_under_a_public_suffix(
        browser_type, servers, tmp_path, page_host, partitioned):
    """The bridge's site() took the last two labels of a host: omoide.example.co.uk under
    chat.other.co.uk (or a.github.io under b.github.io) was "the same site", so the frame
    answered from Chromium's partitioned, empty storage and kept what the app wrote there."""
    omoide_host = "a.github.io" if page_host.endswith("github.io") else "omoide.example.co.uk"
    app_url = f"http://{omoide_host}:{APP}/"
    origins = [f"http://{h}:{p}" for h, p in ((omoide_host, APP), (page_host, DEMO))]
    context = browser_type.launch_persistent_context(
        str(tmp_path), executable_path=CHROMIUM, headless=True,
        args=[*CHROMIUM_ARGS, "--host-resolver-rules=MAP *.co.uk 127.0.0.1, "
              "MAP *.github.io 127.0.0.1",
              f"--unsafely-treat-insecure-origin-as-secure={','.join(origins)}"])
    try:
        client = client_page(context, origins[1], app_url)
        assert client.evaluate("() => window.client.needsWindow") is partitioned
    finally:
        context.close()


# -- the chat demo and the SillyTavern extension -------------------------------------------------


def test_chat_demo_end_to_end(app, context, servers, llm):
    engine_call(app, "allow_origin", {"origin": SAME_SITE, "characters": ["seraphina"]})
    page = context.new_page()
    page.goto(f"{SAME_SITE}/?omoide={servers['app'].url}&endpoint=http://127.0.0.1:{LLM}/v1")
    page.click("#connect")
    expect(page.locator("#character option[value='seraphina']")).to_have_count(1)
    page.fill("#input", "What should I drink this morning?")
    page.click("#send")
    answer = page.locator("#messages li.assistant").first
    expect(answer).to_contain_text("You are Seraphina")
    expect(answer).to_contain_text("I love green tea")  # recalled, injected, echoed
    expect(page.locator("#recalled li", has_text="I love green tea")).to_have_count(1)
    path, payload = llm.seen[-1]
    assert path == "/v1/chat/completions"
    assert payload["messages"][-1] == {"role": "user",
                                       "content": "What should I drink this morning?"}

    page.fill("#input", "I love hiking in the mountains.")
    page.click("#send")
    expect(page.locator("#messages li.assistant")).to_have_count(2)
    expect(page.locator("#remembered li", has_text="hiking")).to_have_count(1)
    assert any("hiking in the mountains" in t for t in texts(app, "seraphina"))
    # the reply it answered went along as its index context
    [hiking] = [m for m in engine_call(app, "memories", {"character": "seraphina"})
                if "hiking in the mountains" in m["text"]]
    assert "\nassistant: ECHO You are Seraphina" in hiking["context"]
    page.close()


def test_sillytavern_extension(app, context, servers):
    host_url = f"http://127.0.0.1:{ST_HOST}"
    engine_call(app, "allow_origin", {"origin": host_url, "characters": ["seraphina"]})
    page = context.new_page()
    page.goto(f"{host_url}/host.html?omoide={servers['app'].url}")
    page.wait_for_selector("body[data-ready='true']")
    page.evaluate("() => window.host.reply('Where do you like to walk?')")
    page.evaluate("() => window.host.said('I love moonlit walks by the river.')")
    assert any("moonlit walks" in t for t in texts(app, "seraphina"))
    # the message it answered went along as its index context
    [walks] = [m for m in engine_call(app, "memories", {"character": "seraphina"})
               if "moonlit walks" in m["text"]]
    assert "assistant: Where do you like to walk?" in walks["context"]
    prompt = page.evaluate("() => window.host.generate()")
    assert prompt.startswith("[What {{char}} remembers")
    assert "moonlit walks by the river" in prompt
    assert page.evaluate("() => window.host.context.extensionPrompts.omoide.position") == 0
    page.close()

    # the user opens another character's chat while Seraphina's memories are on their way:
    # they arrived after Kaito's generation started and went into Kaito's prompt
    page = context.new_page()
    page.goto(f'{host_url}/host.html?omoide={servers["app"].url}&chars=["Seraphina","Kaito"]')
    page.wait_for_selector("body[data-ready='true']")
    page.evaluate("() => window.host.generate()")  # connected, engine warm
    prompt = page.evaluate("""async () => {
      const h = window.host;
      h.context.chat.push({ is_user: true, name: 'You', mes: 'where do I like to walk?' });
      const seraphinas = h.generate();
      await h.switchTo(1);
      h.context.chat.push({ is_user: true, name: 'You', mes: 'hello Kaito' });
      const kaitos = h.generate();
      await Promise.all([seraphinas, kaitos]);
      return h.context.extensionPrompts.omoide?.value ?? '';
    }""")
    assert "moonlit walks" not in prompt
    page.close()


def st_page(context: BrowserContext, servers, names: list[str]) -> Page:
    page = context.new_page()
    page.goto(f"http://127.0.0.1:{ST_HOST}/host.html?omoide={servers['app'].url}"
              f"&chars={json.dumps(names)}")
    page.wait_for_selector("body[data-ready='true']")
    return page


def st_prompt(page: Page, index: int, question: str) -> str:
    """The memories block SillyTavern's generation for character `index` gets."""
    return page.evaluate("""async ([index, question]) => {
      const h = window.host;
      await h.switchTo(index);
      h.context.chat.push({ is_user: true, name: 'You', mes: question });
      return await h.generate();
    }""", [index, question])


def test_sillytavern_characters_of_one_name_keep_their_own_memories(app, context, servers):
    """The extension used the name's slug: two cards named Alice (or Alice and ALICE) read
    and wrote one Omoide character; a rename cut a character off from its memories; a new card
    with a deleted one's name inherited them."""
    engine_call(app, "allow_origin", {"origin": f"http://127.0.0.1:{ST_HOST}",
                                      "characters": "*"})
    page = st_page(context, servers, ["Alice", "ALICE", "Alice", "Bob"])
    page.evaluate("() => window.host.said('I love beekeeping in my garden.')")
    assert any("beekeeping" in t for t in texts(app, "alice"))
    links = page.evaluate("() => window.host.context.extensionSettings.omoide.characters")
    assert links == {"Alice.png": "alice"}
    for other in (1, 2):
        assert "beekeeping" not in st_prompt(page, other, "What do I love doing at home?")
    links = page.evaluate("() => window.host.context.extensionSettings.omoide.characters")
    assert links == {"Alice.png": "alice", "ALICE.png": "alice_2", "Alice1.png": "alice_3"}

    # a rename moves the avatar file: the memories follow
    page.evaluate("() => window.host.rename(0, 'Alicia')")
    assert "beekeeping" in st_prompt(page, 0, "What do I love doing at home?")
    assert page.input_value("#omoide_link") == "alice"

    # deleted, then a new card of the same name: a fresh character, the old one kept aside
    page.evaluate("() => window.host.remove(0)")
    fresh = page.evaluate("() => window.host.add('Alicia')")
    assert "beekeeping" not in st_prompt(page, fresh, "What do I love doing at home?")
    assert page.input_value("#omoide_link") == "alicia"
    # the user links it back on purpose, from the panel; a link another card holds is refused
    page.fill("#omoide_link", "alice_2")
    page.dispatch_event("#omoide_link", "change")
    assert page.input_value("#omoide_link") == "alicia"
    assert "CHARACTER_TAKEN" in page.text_content("#omoide_status")
    page.fill("#omoide_link", "alice")
    page.dispatch_event("#omoide_link", "change")
    assert "beekeeping" in st_prompt(page, fresh, "What do I love doing at home?")
    page.close()


def test_sillytavern_group_chats_and_edits(app, context, servers):
    """In a group chat the user's message went to whichever character was last selected (or
    to none); an edited message was never read again."""
    engine_call(app, "allow_origin", {"origin": f"http://127.0.0.1:{ST_HOST}",
                                      "characters": "*"})
    page = st_page(context, servers, ["Mira", "Juno", "Tess"])
    page.evaluate("() => window.host.openGroup([0, 1])")
    page.evaluate("() => window.host.said('I love the street food of Osaka.')")
    for member in ("mira", "juno"):
        assert any("Osaka" in t for t in texts(app, member)), member
    assert texts(app, "tess") == []
    [said] = [m for m in engine_call(app, "memories", {"character": "juno"})
              if "Osaka" in m["text"]]
    assert said["conversation"] == "sillytavern:group-0-chat"
    prompt = page.evaluate("""async () => {
      window.host.context.chat.push({ is_user: true, name: 'You', mes: 'What food do I love?' });
      return await window.host.draft(1);
    }""")
    assert "Osaka" in prompt

    # the user edits what they said: the new words are read (the old value stays as history)
    page.evaluate("async () => { await window.host.edit(0, 'I love the temples of Kyoto.');"
                  " await window.host.settled(); }")
    for member in ("mira", "juno"):
        assert any("Kyoto" in t for t in texts(app, member)), member
    # an edit of the character's message is not the user's word
    page.evaluate("""async () => {
      const h = window.host;
      h.reply('I love spiders.');
      await h.edit(h.context.chat.length - 1, 'I love snakes.');
      await h.settled();
    }""")
    assert not any("snakes" in t or "spiders" in t for t in texts(app, "juno"))
    page.close()


def test_sillytavern_links_never_land_on_another_cards_character(app, context, servers):
    """The next free form of a taken slug was alice-2: the slug of a card named "Alice 2",
    whose memories Omoide already held; the second Alice read and wrote them. A group member
    outside the grant stopped the message from reaching the members after it; a typed
    budget of 50000 turned memories off."""
    host = f"http://127.0.0.1:{ST_HOST}"
    engine_call(app, "remember", {"character": "alice-2", "text": "My safe word is pineapple."})
    engine_call(app, "allow_origin", {"origin": host, "characters": "*"})
    page = st_page(context, servers, ["Alice", "Alice", "Alice 2"])
    assert "pineapple" not in st_prompt(page, 1, "What is my safe word?")
    assert "pineapple" in st_prompt(page, 2, "What is my safe word?")
    links = page.evaluate("() => window.host.context.extensionSettings.omoide.characters")
    assert links == {"Alice.png": "alice", "Alice1.png": "alice_2", "Alice 2.png": "alice-2"}

    engine_call(app, "allow_origin", {"origin": host, "characters": ["rin", "sora"]})
    page.evaluate("() => { const h = window.host; ['Rin', 'Kai', 'Sora'].forEach((n) => h.add(n));"
                  " return h.openGroup([3, 4, 5]); }")
    page.evaluate("() => window.host.said('I love playing the cello.')")
    for member in ("rin", "sora"):
        assert any("cello" in t for t in texts(app, member)), member
    assert "CHARACTER_NOT_ALLOWED" in page.text_content("#omoide_status")

    engine_call(app, "allow_origin", {"origin": host, "characters": "*"})
    page.evaluate("() => { window.host.context.extensionSettings.omoide.tokenBudget = 50000; }")
    prompt = page.evaluate("""async () => {
      window.host.context.chat.push({ is_user: true, name: 'You', mes: 'What do I play?' });
      return await window.host.draft(3);
    }""")
    assert "cello" in prompt
    page.close()


def test_sillytavern_messages_said_while_omoide_refuses_for_a_while_are_kept_and_stored(
        app, context, servers):
    """Said while Omoide could not take it (its connection closed, its tab reloading, the
    character's index waiting for a re-vectorization), a message was reported and lost. It
    waits in the extension's settings, in order, and is stored (dated when it was said)
    once Omoide takes it again."""
    engine_call(app, "allow_origin", {"origin": f"http://127.0.0.1:{ST_HOST}",
                                      "characters": ["kaede"]})
    page = st_page(context, servers, ["Kaede"])
    page.evaluate("() => window.host.said('I love ginger tea.')")
    assert any("ginger tea" in t for t in texts(app, "kaede"))
    page.evaluate("async () => (await window.host.extension.state.omoide()).close()")
    page.evaluate("() => window.host.said('I love hiking in the mountains.')")
    # the first retry reconnects: what is said meanwhile waits behind what waits already
    page.evaluate("""() => { window.host.extension.state.omoide().then((c) => c.close()); }""")
    page.evaluate("() => window.host.said('I play the violin every evening.')")
    state = page.evaluate("() => [window.host.extension.state.pending, "
                          "window.host.extension.state.lastError?.code]")
    assert state == [2, "CLOSED"]
    said_at = page.evaluate("() => Date.now() / 1000")
    page.evaluate("() => window.host.extension.state.retry()")
    page.evaluate("() => window.host.settled()")
    assert page.evaluate("() => window.host.extension.state.pending") == 0
    memories = engine_call(app, "memories", {"character": "kaede"})
    hiking = [m for m in memories if "hiking" in m["text"]]
    assert len(hiking) == 1 and any("violin" in m["text"] for m in memories)
    assert hiking[0]["created_at"] <= said_at  # when it was said, not when it was stored
    page.close()


def test_a_call_in_flight_when_the_bridge_reloads_fails_instead_of_hanging(app, context,
                                                                           servers):
    """The reloaded bridge's new "ready" was ignored: the call waited for ever (the default
    per-call timeout is none)."""
    engine_call(app, "allow_origin", {"origin": SAME_SITE, "characters": ["seraphina"]})
    client = client_page(context, SAME_SITE, servers["app"].url)
    assert call(client, "characters")["ok"] is not None  # connected
    outcome = client.evaluate("""async () => {
      const p = window.client.ingest('seraphina', [{role: 'user', content: 'I adopted a cat.'}]);
      const f = document.querySelector('iframe');
      const u = new URL(f.src); u.searchParams.set('reloaded', '1');
      f.src = u.href;  // what a reload, a service worker update or a crash does to the frame
      const late = new Promise((r) => setTimeout(() => r('pending'), 60000));
      return await Promise.race([p.then(() => 'done', (e) => e.code), late]);
    }""")
    assert outcome in ("done", "RELOADED")
    assert call(client, "characters")["ok"] is not None  # the reloaded bridge answers
    client.close()


def test_an_apps_recall_never_brings_back_what_the_user_forgot(browser_type, servers,
                                                               tmp_path):
    """A recall revives a trashed near-exact match (governance); through the bridge that
    undid the user's forget on another app's read and handed it the forgotten words."""
    context = browser_type.launch_persistent_context(
        str(tmp_path / "profile"), executable_path=CHROMIUM, headless=True, args=CHROMIUM_ARGS)
    try:
        app = context.new_page()
        app.goto(servers["app"].url)
        wait_ready(app)
        engine_call(app, "select_model", {"model": "omoide/all-MiniLM-L6-v2",  # no prefix
                                          "dtype": "q8"})
        engine_call(app, "remember", {"character": "hana", "text": "hana likes green tea"})
        secret = engine_call(app, "remember", {"character": "hana",
                                               "text": "my old password was hunter2"})
        engine_call(app, "forget", {"character": "hana", "id": secret["id"]})
        engine_call(app, "allow_origin", {"origin": SAME_SITE, "characters": ["hana"]})
        client = client_page(context, SAME_SITE, servers["app"].url)
        hits = call(client, "recall", "hana", "my old password was hunter2")["ok"]
        assert "my old password was hunter2" not in [h["text"] for h in hits]
        trash = engine_call(app, "trash", {"character": "hana"})
        assert [e["memory"]["id"] for e in trash] == [secret["id"]]
        # the user's own recall in the app still revives it, as documented
        hits = engine_call(app, "recall", {"character": "hana",
                                           "query": "my old password was hunter2"})
        assert hits[0]["memory"]["id"] == secret["id"] and hits[0]["revived"] is True
    finally:
        context.close()


def test_client_works_offline_after_the_first_visit(app, context, servers):
    servers["app"].stop()  # Omoide's server is gone; the demo's own server still runs
    client = client_page(context, SAME_SITE, servers["app"].url)
    assert [c["id"] for c in call(client, "characters")["ok"]] == ["seraphina"]
    hits = call(client, "recall", "seraphina", "green tea")["ok"]
    assert "green tea" in hits[0]["text"]
    client.close()

