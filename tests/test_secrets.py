"""Secrets (issue 13, item 6): keys never in a repr or an error, read from a file or the
environment as well as a flag (flags show in the process list), and private files (0600)."""

from __future__ import annotations

import io
import json
import os
import signal
import stat
import subprocess
import sys
import threading
import urllib.request
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from omoide.backends.http import HttpBackend, HttpConfig
from omoide.backends.manager import JsonFileQueueStore
from omoide.backends.sqlite import SQLiteBackend
from omoide.cli import main
from omoide.errors import OmoideError
from omoide.keys import read_key_file, resolve_key
from tests.backend_fixtures import make_record, running_server
from tests.test_engine_embedder import HashingEmbedder

ROOT = Path(__file__).resolve().parents[1]
PORT = 27703
URL = f"http://127.0.0.1:{PORT}"
KEY = "0123456789abcdef-secret"


def mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def key_file(tmp_path: Path, text: str = KEY + "\n") -> Path:
    path = tmp_path / "key"
    path.write_text(text)
    path.chmod(0o600)
    return path


def test_http_config_repr_shows_no_key_nor_headers():
    config = HttpConfig(URL, api_key=KEY, headers={"X-Api-Key": "header-secret"})
    for text in (repr(config), str(config), repr(HttpBackend(config).config)):
        assert KEY not in text and "header-secret" not in text
    assert URL in repr(config)


class EchoHandler(BaseHTTPRequestHandler):
    """A careless server: its error page echoes the request headers."""

    def do_GET(self):  # noqa: N802
        body = f"denied: {self.headers}".encode()
        self.send_response(500)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args):
        pass


def test_errors_never_carry_the_key():
    server = ThreadingHTTPServer(("127.0.0.1", PORT), EchoHandler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        with pytest.raises(OmoideError) as err:
            HttpBackend(HttpConfig(URL, api_key=KEY)).list()
        assert err.value.fields["status"] == 500 and "denied" in str(err.value)
        assert KEY not in str(err.value) and KEY not in json.dumps(err.value.to_dict())
    finally:
        server.shutdown()
        server.server_close()


def test_the_llm_and_the_remote_embedder_never_put_the_key_in_an_error():
    """Their refused replies went into REMOTE_ERROR as they came: an echoing endpoint put
    the key in the error, the ingest report's ``degraded`` line and the governance log. The
    key is masked in the whole body before the cut (a key across the cut leaves no prefix)."""
    from omoide.embeddings.auto import RemoteConfig
    from omoide.embeddings.remote import RemoteEmbedder
    from omoide.governance.llm import ChatClient
    from omoide.transport import Reply

    for pad in (0, 150, 190, 199):
        def echo(method, url, headers, body, timeout, pad=pad):
            return Reply(400, ("x" * pad + f" {headers}").encode())

        for call in (lambda: ChatClient(URL, "m", api_key=KEY, transport=echo).complete(
                         [{"role": "user", "content": "hi"}]),
                     lambda: RemoteEmbedder(URL, "m", api_key=KEY, transport=echo,
                                            max_retries=0).embed_passages(["hi"])):
            with pytest.raises(OmoideError) as err:
                call()
            shown = str(err.value) + json.dumps(err.value.to_dict(), ensure_ascii=False)
            assert err.value.code == "REMOTE_ERROR" and KEY[:6] not in shown
            assert pad or "••••" in shown  # the mask shows where the key was
    config = RemoteConfig(URL, "m", api_key=KEY)
    assert KEY not in repr(config) and KEY not in str(config)


def test_keys_from_a_file_or_the_environment(tmp_path, monkeypatch):
    monkeypatch.setenv("OMOIDE_TEST_KEY", "from-env")
    assert resolve_key(None, None, "OMOIDE_TEST_KEY") == "from-env"
    assert resolve_key("from-flag", None, "OMOIDE_TEST_KEY") == "from-flag"
    assert resolve_key(None, key_file(tmp_path), "OMOIDE_TEST_KEY") == KEY
    monkeypatch.delenv("OMOIDE_TEST_KEY")
    assert resolve_key(None, None, "OMOIDE_TEST_KEY") is None
    with pytest.raises(OmoideError) as err:
        resolve_key("from-flag", key_file(tmp_path), "OMOIDE_TEST_KEY")
    assert err.value.code == "INVALID_ARGUMENT"
    for text in ("", "\n", "two words", "line\nline"):
        with pytest.raises(OmoideError) as err:
            read_key_file(key_file(tmp_path, text))
        assert err.value.code == "INVALID_ARGUMENT"
    with pytest.raises(OmoideError) as err:
        read_key_file(tmp_path / "missing")
    assert err.value.code == "FILE_UNREADABLE" and "missing" in str(err.value)


def test_a_key_from_the_flag_or_the_environment_is_checked_as_a_key_file_is(monkeypatch):
    """A server started with a key holding a space or a line break: the CLI refused the key,
    or no client could send it (every request 401)."""
    monkeypatch.setenv("OMOIDE_TEST_KEY", "k" * 24 + "\r")
    assert resolve_key(None, None, "OMOIDE_TEST_KEY") == "k" * 24  # a pasted line's end
    for flag, env in (("two words here", None), (None, "two words here"), ("a\x00b", None)):
        if env is not None:
            monkeypatch.setenv("OMOIDE_TEST_KEY", env)
        with pytest.raises(OmoideError) as err:
            resolve_key(flag, None, "OMOIDE_TEST_KEY")
        assert err.value.code == "INVALID_ARGUMENT" and "words" not in str(err.value)
        assert ("--key" if flag else "OMOIDE_TEST_KEY") in str(err.value)


def test_a_backup_url_holding_a_password_is_refused_and_never_shown():
    """A token in the query (``?token=``) was shown in every error and status, and each
    path went after it: every mirrored change answered 404 and stayed queued."""
    for url in ("http://user:PASSWORDLEAK@127.0.0.1:1", "https://PASSWORDLEAK@example.org",
                "http://127.0.0.1:1/?token=PASSWORDLEAK", "http://127.0.0.1:1/#PASSWORDLEAK"):
        with pytest.raises(OmoideError) as err:
            HttpConfig(url)
        assert err.value.code == "BACKEND_CONFIG" and "PASSWORDLEAK" not in str(err.value)


def cli(db: Path, *args: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    code = main(["--db", str(db), "--backup", URL, *args, "--json"],
                embedder_factory=lambda model, dtype: HashingEmbedder(), stdout=out, stderr=err)
    return code, out.getvalue(), err.getvalue()


def test_cli_backup_key_from_a_file_or_the_environment(tmp_path, monkeypatch):
    monkeypatch.delenv("OMOIDE_BACKUP_KEY", raising=False)
    server_side = HttpBackend(HttpConfig(URL, api_key=KEY))
    with running_server(tmp_path / "server.db", PORT, api_key=KEY):
        code, out, err = cli(tmp_path / "w.db", "--backup-key-file", str(key_file(tmp_path)),
                             "remember", "alice", "Alice likes green tea")
        assert code == 0, err
        assert server_side.list(character_id="alice")["total"] == 1
        monkeypatch.setenv("OMOIDE_BACKUP_KEY", KEY)
        code, _, err = cli(tmp_path / "w.db", "remember", "alice", "Alice has a cat")
        assert code == 0, err
        assert server_side.list(character_id="alice")["total"] == 2
    code, out, err = cli(tmp_path / "w.db", "--backup-key-file", str(tmp_path / "nope"),
                         "stats")
    assert code == 2 and "nope" in err and "Traceback" not in err


def test_mcp_backup_key_from_a_file(tmp_path):
    from omoide.cli.context import Context
    from omoide.mcp.__main__ import parse_args

    args = parse_args(["--backup", URL, "--backup-key-file", str(key_file(tmp_path))])
    assert args.backup_key is None and args.backup_key_file is not None
    namespace = type("Args", (), {"backup": URL, "backup_key": None,
                                  "backup_key_file": args.backup_key_file, "db": "x"})()
    context = Context(namespace, lambda m, d: HashingEmbedder(), stdout=io.StringIO(),
                      stderr=io.StringIO())
    [backend] = context.fallbacks()
    assert backend.config.api_key == KEY and KEY not in repr(backend.config)


def test_server_key_from_a_file_never_printed(tmp_path):
    env = os.environ | {"PYTHONPATH": str(ROOT / "py")}
    env.pop("OMOIDE_SERVER_KEY", None)
    proc = subprocess.Popen(
        [sys.executable, "-m", "omoide.server", "--db", str(tmp_path / "s.db"), "--port",
         str(PORT), "--key-file", str(key_file(tmp_path))],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
    try:
        banner = proc.stdout.readline()
        assert "bearer key required" in banner and KEY not in banner
        request = urllib.request.Request(f"{URL}/health",
                                         headers={"Authorization": f"Bearer {KEY}"})
        with urllib.request.urlopen(request, timeout=10) as reply:
            assert json.loads(reply.read())["ok"] is True
        assert KEY not in Path(f"/proc/{proc.pid}/cmdline").read_text()
    finally:
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=20)
    assert proc.returncode == 0, err
    assert KEY not in out + err


@pytest.fixture
def usual_umask():
    old = os.umask(0o022)  # the usual umask: new files would be world-readable
    yield
    os.umask(old)


def test_database_and_queue_files_are_private(tmp_path, usual_umask):
    backend = SQLiteBackend(tmp_path / "w.db")
    backend.initialize()
    backend.create(make_record("alice", "private"))
    files = [tmp_path / "w.db", tmp_path / "w.db-wal", tmp_path / "w.db-shm"]
    assert all(f.exists() for f in files)
    assert [mode(f) for f in files] == [0o600] * 3
    backend.shutdown()
    queue = JsonFileQueueStore(tmp_path / "w.db.mirror-queue.json")
    (tmp_path / "w.db.mirror-queue.json.tmp").write_text("[]")  # a leftover, 0644
    queue.save([{"op": "delete", "id": "x"}])
    assert mode(tmp_path / "w.db.mirror-queue.json") == 0o600
    assert queue.load() == [{"op": "delete", "id": "x"}]
    existing = tmp_path / "shared.db"  # a file the user made keeps its mode
    existing.touch(mode=0o640)
    existing.chmod(0o640)
    backend = SQLiteBackend(existing)
    backend.initialize()
    backend.shutdown()
    assert mode(existing) == 0o640


def test_an_export_file_is_private_and_keeps_the_mode_it_had(tmp_path, usual_umask):
    """The export wrote a temporary file under the umask and renamed it over the target: a
    0600 file holding every memory and the trash became world-readable (0644)."""
    db = tmp_path / "w.db"
    def run(*args: str) -> int:
        return main(["--db", str(db), *args], stdout=io.StringIO(), stderr=io.StringIO(),
                    embedder_factory=lambda model, dtype: HashingEmbedder())

    assert run("remember", "alice", "secret") == 0
    fresh, kept = tmp_path / "fresh.json", tmp_path / "kept.json"
    kept.write_text("{}")
    kept.chmod(0o640)
    for target in (fresh, kept):
        assert run("export", str(target)) == 0
    assert (mode(fresh), mode(kept)) == (0o600, 0o640)
    assert "secret" in fresh.read_text()


@pytest.mark.parametrize("status", [200, 500])
def test_a_backup_server_echoing_the_request_never_gets_the_key_into_an_error(status):
    """A 200 whose body was not JSON put the body's start in BACKEND_HTTP unmasked: a
    server echoing the request headers put the key in the error, the backups report and
    the mirror queue file's last_error."""
    from omoide.transport import Reply

    custom = "custom-header-secret-0123456789"

    def echo(method, url, headers, body, timeout):
        return Reply(status, f"<html>{headers}</html>".encode())

    backend = HttpBackend(HttpConfig("http://127.0.0.1:9/", api_key=KEY,
                                     headers={"X-Token": custom}), transport=echo)
    with pytest.raises(OmoideError) as err:
        backend.search("tea", character_id="a")
    shown = str(err.value) + json.dumps(err.value.to_dict(), ensure_ascii=False)
    assert err.value.code == "BACKEND_HTTP"
    assert KEY[:6] not in shown and custom[:10] not in shown and "••••" in shown


def test_a_key_outside_printable_ascii_is_refused_naming_where_it_came_from(tmp_path):
    """A server started with "clé-…" from a key file answered 401 to every client (the
    header travels as Latin-1, the server compared UTF-8 bytes), and a client's "鍵-…"
    could not be sent at all: both are refused when given, never shown."""
    for key in ("clé-secrète-1234", "鍵-secret-1234", "key\u00a0nbsp1234"):
        with pytest.raises(OmoideError) as err:
            read_key_file(key_file(tmp_path, key))
        assert err.value.code == "INVALID_ARGUMENT" and key not in str(err.value)
        with pytest.raises(OmoideError) as err:
            HttpConfig(URL, api_key=key)
        assert err.value.code == "INVALID_ARGUMENT" and key not in str(err.value)
        with pytest.raises(OmoideError) as err:
            running_server(tmp_path / "s.db", PORT, api_key=key).__enter__()
        assert key not in str(err.value)


def test_the_browsers_backup_url_setting_refuses_a_password_before_it_is_stored():
    """The web app stored such a URL and showed it back in full in its settings (only the
    backup engine refused it later)."""
    from omoide.browser.session import checked_setting

    for url in ("http://user:PASSWORDLEAK@127.0.0.1:1", "http://127.0.0.1:1/?t=PASSWORDLEAK"):
        with pytest.raises(OmoideError) as err:
            checked_setting("backup_url", url)
        assert err.value.code == "INVALID_ARGUMENT" and err.value.fields["name"] == "backup_url"
        assert "PASSWORDLEAK" not in str(err.value)
    assert checked_setting("backup_url", " http://127.0.0.1:8750 ") == "http://127.0.0.1:8750"


def test_an_llm_or_embedding_endpoint_holding_a_password_is_refused_and_never_shown():
    """The chat and embedding endpoints took a URL with a user, password or token in it and
    showed it in full: in every REMOTE_AUTH / REMOTE_ERROR / REMOTE_TIMEOUT, their repr, the
    provider line the MCP server logs ("remote model ... at URL") and the web app's
    settings (only ``backup_url`` was refused)."""
    from omoide.browser.session import checked_setting
    from omoide.embeddings.remote import RemoteEmbedder
    from omoide.governance.llm import ChatClient

    for url in ("http://user:PASSWORDLEAK@127.0.0.1:9/v1", "https://PASSWORDLEAK@example.org",
                "http://127.0.0.1:9/v1?key=PASSWORDLEAK", "http://127.0.0.1:9/#PASSWORDLEAK"):
        for make in (lambda u: RemoteEmbedder(u, "m"), lambda u: ChatClient(u, "m"),
                     lambda u: checked_setting("llm_endpoint", u)):
            with pytest.raises(OmoideError) as err:
                make(url)
            assert err.value.code == "INVALID_ARGUMENT"
            assert "PASSWORDLEAK" not in str(err.value) + repr(err.value.to_dict())
    assert checked_setting("llm_endpoint", " http://127.0.0.1:9/v1 ") == "http://127.0.0.1:9/v1"
    assert ChatClient("http://127.0.0.1:9/v1/", "m").url == "http://127.0.0.1:9/v1/chat/completions"


def test_a_remote_config_holding_a_password_is_refused_when_made_and_never_shown():
    """``RemoteConfig`` took a URL with a user, password or ``?key=`` (from
    ``$OMOIDE_REMOTE_URL`` too) and showed it in its repr; only the client it made refused
    it, and only once the remote provider was chosen. It is refused when the config is made,
    naming the field or the variable, never the URL; its repr never shows the key."""
    from omoide.embeddings.auto import RemoteConfig

    for url in ("http://user:PASSWORDLEAK@127.0.0.1:9/v1", "https://PASSWORDLEAK@example.org",
                "http://127.0.0.1:9/v1?key=PASSWORDLEAK", "http://127.0.0.1:9/#PASSWORDLEAK"):
        for make, name in ((lambda u: RemoteConfig(u, "m"), "base_url"),
                           (lambda u: RemoteConfig.from_env({"OMOIDE_REMOTE_URL": u,
                                                             "OMOIDE_REMOTE_MODEL": "m"}),
                            "$OMOIDE_REMOTE_URL")):
            with pytest.raises(OmoideError) as err:
                make(url)
            assert err.value.code == "INVALID_ARGUMENT" and err.value.fields["name"] == name
            assert "PASSWORDLEAK" not in str(err.value) + repr(err.value.to_dict())
    config = RemoteConfig.from_env({"OMOIDE_REMOTE_URL": "http://127.0.0.1:9/v1",
                                    "OMOIDE_REMOTE_MODEL": "m", "OMOIDE_REMOTE_API_KEY": KEY})
    assert config is not None and config.api_key == KEY
    assert KEY not in repr(config) and KEY not in str(config)
    assert "http://127.0.0.1:9/v1" in repr(config)


ESCAPED_ECHOES = {  # how servers write a request's headers back into their answer
    "json": lambda text: json.dumps(text),  # Python, Node: " and \ escaped
    "php": lambda text: json.dumps(text).replace("/", "\\/"),  # json_encode: "\/"
    "go": lambda text: json.dumps(text).replace("&", "\\u0026").replace("<", "\\u003c")
    .replace(">", "\\u003e"),  # encoding/json, HTML-safe
    "ascii": lambda text: "".join(f"\\u{ord(c):04x}" if not c.isalnum() else c for c in text),
    "html": lambda text: text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
    .replace('"', "&quot;").replace("'", "&#x27;"),
    "html-decimal": lambda text: "".join(c if c.isalnum() else f"&#{ord(c)};" for c in text),
}


@pytest.mark.parametrize("style", ESCAPED_ECHOES)
def test_a_key_echoed_back_escaped_is_masked_too(style):
    """A base64 or punctuated key ("Zq/9+x&...") echoed by a server that escapes what it
    writes back (PHP's "\\/", Go's "\\u0026", an HTML error page's "&amp;") was not the
    key's text, so it went unmasked into REMOTE_ERROR / BACKEND_HTTP, the ingest report, the
    backups status and the mirror queue's last_error."""
    from omoide.embeddings.remote import RemoteEmbedder
    from omoide.governance.llm import ChatClient
    from omoide.transport import Reply

    key, header = "Zq/9+x&<secret>'\"key=end~", "hdr/value&<private>"
    escape = ESCAPED_ECHOES[style]

    def echo(method, url, headers, body, timeout):
        lines = "\n".join(f"{name}: {value}" for name, value in headers.items())
        return Reply(500, f"denied: {escape(lines)}".encode())

    backend = HttpBackend(HttpConfig("http://127.0.0.1:9/", api_key=key,
                                     headers={"X-Token": header}), transport=echo)
    for call in (lambda: backend.list(),
                 lambda: ChatClient(URL, "m", api_key=key, transport=echo).complete(
                     [{"role": "user", "content": "hi"}]),
                 lambda: RemoteEmbedder(URL, "m", api_key=key, transport=echo,
                                        max_retries=0).embed_passages(["hi"])):
        with pytest.raises(OmoideError) as err:
            call()
        shown = str(err.value) + json.dumps(err.value.to_dict(), ensure_ascii=False)
        assert "denied" in shown and "••••" in shown
        assert "secret" not in shown and "private" not in shown and "Zq" not in shown


def test_masking_leaves_other_text_as_it_was():
    from omoide.transport import mask_secret

    assert mask_secret("a/b a\\/b a&amp;b", "a/b") == "•••• •••• a&amp;b"
    assert mask_secret("a&amp;b a&#38;b a\\u0026b a&B", "a&b") == "•••• •••• •••• a&B"
    assert mask_secret("plain key", None) == "plain key"
    assert mask_secret("sk123 sk1234", "sk1234") == "sk123 ••••"


def test_an_unusable_answer_that_echoes_the_key_never_quotes_it():
    """A 200 whose content was not what the protocol says went into EMBEDDING_FAILED /
    LLM_BAD_ANSWER through the exception's text: float()'s error quotes the value (an
    echoed "Bearer <key>" in a vector), a UnicodeDecodeError's repr the whole answer."""
    from omoide.embeddings.remote import RemoteEmbedder
    from omoide.governance.llm import ChatClient
    from omoide.transport import Reply

    def vector_echo(method, url, headers, body, timeout):
        return Reply(200, json.dumps({"data": [{"embedding": [headers["Authorization"]]}]})
                     .encode())

    def bytes_echo(method, url, headers, body, timeout):
        return Reply(200, b"\xff" + repr(headers).encode())

    for call in (lambda: RemoteEmbedder(URL, "m", api_key=KEY, transport=vector_echo)
                 .embed_passages(["hi"]),
                 lambda: ChatClient(URL, "m", api_key=KEY, transport=bytes_echo).complete(
                     [{"role": "user", "content": "hi"}])):
        with pytest.raises(OmoideError) as err:
            call()
        shown = str(err.value) + repr(err.value.to_dict())
        assert err.value.code in ("EMBEDDING_FAILED", "LLM_BAD_ANSWER")
        assert KEY[:6] not in shown
