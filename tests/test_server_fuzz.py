"""Hypothesis-generated HTTP requests against the reference server on loopback (issue 13's fuzz
suite, the server half): methods, paths, Host/Origin/key/Content-Type headers, honest and lying
framing (Content-Length missing, negative, non-numeric, short, long, doubled, huge; chunked),
and bodies from valid records to mutated records, random JSON and random bytes.

Invariants: no answer is a 5xx, every refusal is a short JSON error, the server keeps answering,
every acknowledged write (201 create, 200 update, 204 delete) is in the database afterwards,
and the CLI's recall, stats, characters, export and audit still succeed on that workspace.
Bounded (``MAX_EXAMPLES``) to run in CI in about a minute."""

from __future__ import annotations

import http.client
import io
import itertools
import json
import socket
import string
import urllib.parse

from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from omoide.backends.sqlite import SQLiteBackend
from omoide.cli import main
from omoide.engine.memory import KINDS
from tests.backend_fixtures import running_server
from tests.test_engine_embedder import HashingEmbedder

PORT = 27705
KEY = "fuzz-key-0123456789abcdef"
HOST = f"127.0.0.1:{PORT}"
APP = "http://127.0.0.1:8742"
STAMP = HashingEmbedder(seed=0).stamp  # the workspace's model (test_cli's factory for e5)
DIM = HashingEmbedder(seed=0).dimension
MAX_EXAMPLES = 250

ULID = st.text(alphabet="0123456789ABCDEFGHJKMNPQRSTVWXYZ", min_size=26, max_size=26)
TEXT = st.text(min_size=1, max_size=120).filter(lambda t: t.strip() != "")
FINITE = st.floats(min_value=-1.0, max_value=1.0, allow_nan=False)
JSON = st.recursive(st.none() | st.booleans() | st.integers() | FINITE | st.text(max_size=20),
                    lambda inner: st.lists(inner, max_size=4)
                    | st.dictionaries(st.text(max_size=8), inner, max_size=4), max_leaves=12)
RECORD_FIELDS = ("id", "character_id", "text", "kind", "key", "importance", "created_at",
                 "updated_at", "recall_count", "model", "meta", "vector", "trashed_at")


@st.composite
def records(draw) -> dict:
    at = draw(st.floats(min_value=1.6e9, max_value=1.9e9))
    return {"id": draw(ULID), "character_id": draw(st.sampled_from(["alice", "bob"])),
            "text": draw(TEXT), "kind": draw(st.sampled_from(KINDS)),
            "importance": draw(st.floats(min_value=0, max_value=1)),
            "created_at": at, "updated_at": at, "model": STAMP,
            "vector": draw(st.lists(FINITE, min_size=DIM, max_size=DIM))}


@st.composite
def mutated(draw) -> dict:
    """A valid record with one field replaced by any JSON value, or dropped."""
    record = draw(records())
    name = draw(st.sampled_from(RECORD_FIELDS))
    if draw(st.booleans()):
        record.pop(name, None)
    else:
        record[name] = draw(JSON)
    return record


# HTTP-level bodies: valid records and searches, and anything that is not a record at all
BODIES = st.one_of(
    records().map(json.dumps),
    st.fixed_dictionaries({"query": TEXT, "character_id": st.sampled_from(["alice", "bob"]),
                           "k": st.integers(1, 20)}).map(json.dumps),
    st.dictionaries(st.text(max_size=8), JSON, max_size=3).map(json.dumps),
    JSON.map(json.dumps),
    st.binary(max_size=64).map(lambda b: b.decode("latin-1")),
    st.just(""),
)
# records one field off, or a few record fields with any values (the one validator's job)
BAD_RECORDS = st.one_of(mutated(), st.dictionaries(st.sampled_from(RECORD_FIELDS), JSON,
                                                   max_size=4))
PATH_TEXT = st.text(alphabet=string.ascii_letters + string.digits + "-._~%/?=&", max_size=24)
PATHS = st.one_of(
    st.sampled_from(["/health", "/memories", "/memories/search", "/memories/{id}",
                     "/memories/{id}?vectors=1", "/memories?character_id=alice&limit=5",
                     "/memories?trashed=any&vectors=1", "/memories?limit=x", "/", "/memories/",
                     "/memories//{id}", "/memories/..%2F..%2Fetc%2Fpasswd", "/memories/%ff"]),
    PATH_TEXT.map(lambda s: "/" + s),
)
FRAMINGS = ("exact", "exact", "exact", "none", "negative", "words", "short", "long", "double",
            "huge", "chunked")


ROUTES = st.sampled_from(["/memories", "/memories", "/memories/search", "/memories/{id}",
                          "/memories?character_id=alice&trashed=any", "/health"])


@st.composite
def requests(draw, records_strategy=None, only_creates: bool = False) -> dict:
    """A third create a memory; a third are well-formed (right key, Host, JSON, exact
    length: they reach the backend with random bodies); a third vary every header and the
    framing."""
    mode = "create" if only_creates else draw(st.sampled_from(["create", "honest", "any"]))
    if mode == "create":  # the writes that are acknowledged
        return {"method": "POST", "path": "/memories", "host": HOST, "origin": None,
                "body": json.dumps(draw(records_strategy if records_strategy is not None
                                else records())),
                "auth": f"Bearer {KEY}",
                "ctype": "application/json", "framing": "exact", "close": False,
                "junk": None}
    if mode == "honest":
        return {"method": draw(st.sampled_from(["POST", "GET", "PATCH", "DELETE"])),
                "path": draw(ROUTES), "body": draw(BODIES), "host": HOST,
                "origin": draw(st.sampled_from([None, APP])), "auth": f"Bearer {KEY}",
                "ctype": "application/json", "framing": "exact", "close": draw(st.booleans()),
                "junk": None}
    return {
        "method": draw(st.sampled_from(["GET", "POST", "PATCH", "DELETE", "OPTIONS", "PUT",
                                        "HEAD", "BREW"])),
        "path": draw(st.one_of(ROUTES, PATHS)),
        "body": draw(BODIES),
        "host": draw(st.sampled_from([HOST, "localhost", "evil.example", None])),
        "origin": draw(st.sampled_from([None, APP, "http://evil.example", "null"])),
        "auth": draw(st.sampled_from([f"Bearer {KEY}", "Bearer nope", None])),
        "ctype": draw(st.sampled_from(["application/json", "application/json; charset=utf-8",
                                       "text/plain", None])),
        "framing": draw(st.sampled_from(FRAMINGS)),
        "close": draw(st.booleans()),
        "junk": draw(st.none() | st.tuples(st.text(string.ascii_letters, min_size=1,
                                                   max_size=10),
                                           st.text(string.printable.strip(), max_size=20))),
    }


def wire(req: dict, known_id: str) -> bytes:
    path = req["path"].replace("{id}", urllib.parse.quote(known_id, safe=""))
    body = req["body"].encode("utf-8", "surrogatepass")
    head = [f"{req['method']} {path} HTTP/1.1"]
    for name, value in (("Host", req["host"]), ("Origin", req["origin"]),
                        ("Authorization", req["auth"]), ("Content-Type", req["ctype"])):
        if value is not None:
            head.append(f"{name}: {value}")
    framing = req["framing"]
    lengths = {"exact": str(len(body)), "negative": "-1", "words": "ten",
               "short": str(max(0, len(body) - 5)), "long": str(len(body) + 50),
               "huge": str(10 ** 10)}
    if framing in lengths:
        head.append(f"Content-Length: {lengths[framing]}")
    elif framing == "double":
        head += [f"Content-Length: {len(body)}", f"Content-Length: {len(body) + 1}"]
    elif framing == "chunked":
        head.append("Transfer-Encoding: chunked")
        body = f"{len(body):x}\r\n".encode() + body + b"\r\n0\r\n\r\n" if body else b"0\r\n\r\n"
    if req["close"]:
        head.append("Connection: close")
    if req["junk"]:
        head.append(f"X-{req['junk'][0]}: {req['junk'][1]}")
    return "\r\n".join(head).encode("utf-8") + b"\r\n\r\n" + body


def exchange(data: bytes, method: str) -> tuple[int | None, bytes]:
    with socket.create_connection(("127.0.0.1", PORT), timeout=5) as sock:
        try:
            sock.sendall(data)
        except OSError:
            pass  # refused early and closed: the answer may still be readable
        reply = http.client.HTTPResponse(sock, method=method)
        try:
            reply.begin()
            return reply.status, reply.read()
        except (http.client.RemoteDisconnected, http.client.IncompleteRead,
                ConnectionResetError, BrokenPipeError):
            return None, b""


def health() -> int:
    status, _ = exchange(f"GET /health HTTP/1.1\r\nHost: {HOST}\r\nAuthorization: Bearer {KEY}"
                         "\r\n\r\n".encode(), "GET")
    return status or 0


def cli(db, *args: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    code = main(["--db", str(db), *args],
                embedder_factory=lambda model, dtype: HashingEmbedder(seed=0),
                stdout=out, stderr=err)
    return code, out.getvalue(), err.getvalue()


def fuzz(tmp_path, strategy, examples: int, *, explicit: tuple[dict, ...] = ()
         ) -> tuple[dict, set, dict]:
    """Run ``examples`` generated requests (and the ``explicit`` ones) against a server on a
    real workspace; answers the acknowledged state (id -> text, deleted ids) and the count of
    each status."""
    db = tmp_path / "w.db"
    assert cli(db, "remember", "alice", "Alice likes green tea")[0] == 0  # a real workspace
    live: dict[str, str] = {}  # id -> text, as last acknowledged
    gone: set[str] = set()
    statuses: dict[int | None, int] = {}

    with running_server(db, PORT, api_key=KEY, body_timeout=0.5, header_timeout=1.0):

        @settings(max_examples=examples, deadline=None, database=None,
                  suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
        @given(req=strategy, pick=st.integers(min_value=0))
        def one(req: dict, pick: int) -> None:
            known = sorted(live | dict.fromkeys(gone, ""))
            known_id = known[pick % len(known)] if known else "01ARZ3NDEKTSV4RRFFQ69G5FAV"
            status, body = exchange(wire(req, known_id), req["method"])
            statuses[status] = statuses.get(status, 0) + 1
            assert status is None or status < 500, (status, body[:300])
            if status is not None and status >= 400 and body:
                assert "Traceback" not in body.decode("utf-8", "replace") and len(body) < 2000
                assert json.loads(body)["error"]["message"]
            if status in (200, 201) and req["method"] in ("POST", "PATCH") and body:
                answer = json.loads(body)
                if isinstance(answer, dict) and "id" in answer and "text" in answer:
                    live[answer["id"]] = answer["text"]
                    gone.discard(answer["id"])
            if status == 204 and req["method"] == "DELETE":
                live.pop(known_id, None)
                gone.add(known_id)
            assert health() == 200  # still serving

        for req in explicit:
            one = example(req=req, pick=0)(one)
        one()
    return live, gone, statuses


def assert_workspace_works(db, live: dict[str, str], gone: set[str], export) -> None:
    """Every acknowledged write is there, and the CLI's verbs all succeed."""
    backend = SQLiteBackend(db)
    try:
        for memory_id, text in live.items():
            record = backend.get(memory_id)
            assert record is not None and record["text"] == text
        assert all(backend.get(memory_id) is None for memory_id in gone)
    finally:
        backend.shutdown()
    code, out, err = cli(db, "characters", "--json")
    assert code == 0, err
    for character in [c["id"] for c in json.loads(out)]:
        for args in (["recall", character, "tea"], ["recall", character, "tea", "--mode",
                                                    "fulltext"], ["audit", character]):
            code, _, err = cli(db, *args)
            assert code == 0, (args, err)
    for args in (["stats"], ["export", str(export)]):
        code, _, err = cli(db, *args)
        assert code == 0, (args, err)
    exported = json.loads(export.read_text())
    assert exported


def refusal(**changes) -> dict:
    """A well-formed create with ``changes``: one reason to refuse it."""
    record = json.dumps({"id": "01ARZ3NDEKTSV4RRFFQ69G5FAW", "character_id": "alice",
                         "text": "Alice keeps bees", "model": STAMP, "vector": [0.125] * DIM})
    return {"method": "POST", "path": "/memories", "host": HOST, "origin": None,
            "body": record, "auth": f"Bearer {KEY}", "ctype": "application/json",
            "framing": "exact", "close": False, "junk": None} | changes


REFUSALS = {400: refusal(framing="negative"), 401: refusal(auth="Bearer nope"),
            403: refusal(origin="http://evil.example"), 404: refusal(path="/nowhere"),
            411: refusal(framing="chunked"), 413: refusal(framing="huge"),
            415: refusal(ctype="text/plain"), 421: refusal(host="evil.example")}


def test_fuzzed_requests_leave_a_working_server_and_workspace(tmp_path):
    live, gone, statuses = fuzz(tmp_path, requests(), MAX_EXAMPLES,
                                explicit=tuple(REFUSALS.values()))
    # acknowledged writes happened, and each kind of refusal was answered as such
    assert statuses.get(201, 0) >= 5
    assert set(REFUSALS) <= set(statuses)
    assert_workspace_works(tmp_path / "w.db", live, gone, tmp_path / "all.json")


def create(record: dict) -> dict:
    return {"method": "POST", "path": "/memories", "host": HOST, "origin": None,
            "body": json.dumps(record), "auth": f"Bearer {KEY}", "ctype": "application/json",
            "framing": "exact", "close": False, "junk": None}


SERIAL = itertools.count(1)


def one_off(**fields) -> dict:
    """A valid record (an id of its own) with ``fields`` changed (None: the field dropped)."""
    record = {"id": f"01ARZ3NDEKTSV4RRFFQ69G{next(SERIAL):04d}",
              "character_id": "alice", "kind": "fact",
              "text": "Alice keeps bees", "importance": 0.5, "created_at": 1.7e9,
              "updated_at": 1.7e9, "model": STAMP, "vector": [0.125] * DIM}
    record |= fields
    return {k: v for k, v in record.items() if v is not None}


# The records issue 13 (item 3) found accepted over REST, each then crashing a verb.
ISSUE_RECORDS = (
    one_off(vector=None), one_off(vector=[0.5] * (DIM - 1)), one_off(recall_count="lots"),
    one_off(kind="bogus"), one_off(importance=1e308), one_off(text="   "),
    one_off(id="../../etc/passwd"), one_off(key={"a": 1}), one_off(text="x" * 60_000),
    one_off(created_at="yesterday"), one_off(meta=[1, 2]), one_off(model=5),
)


def test_fuzzed_records_through_the_server_leave_a_working_workspace(tmp_path):
    """Records one field off (no vector, wrong types, out-of-range numbers, odd ids) sent as
    creates: refused with a 4xx or stored in a form every verb can read."""
    live, gone, statuses = fuzz(tmp_path, requests(BAD_RECORDS, only_creates=True),
                                MAX_EXAMPLES // 2,
                                explicit=tuple(create(r) for r in ISSUE_RECORDS))
    assert sum(n for status, n in statuses.items() if status and status >= 400) >= 10
    assert_workspace_works(tmp_path / "w.db", live, gone, tmp_path / "all.json")
