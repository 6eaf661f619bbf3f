"""``python -m omoide``: every verb in-process through ``main(argv)`` with a hashing
embedder, error paths (message on stderr, exit 2, nothing changed), the workspace's model,
resumable re-vectorization, and one real subprocess run with the real model."""

from __future__ import annotations

import argparse
import io
import json
import os
import signal
import sqlite3
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from omoide.backends.sqlite import unpack
from omoide.cli import main
from omoide.engine.embedding import embed_memories
from omoide.errors import OmoideError
from omoide.workspace import open_workspace
from tests.test_engine_embedder import HashingEmbedder

ROOT = Path(__file__).resolve().parents[1]
E5, MINILM = "omoide/multilingual-e5-small", "omoide/all-MiniLM-L6-v2"
SEEDS = {E5: 0, MINILM: 1}


def factory(model_id: str, dtype: str) -> HashingEmbedder:
    if model_id not in SEEDS:
        raise OmoideError.of("UNKNOWN_MODEL", model=model_id, known=", ".join(SEEDS))
    return HashingEmbedder(seed=SEEDS[model_id])


class Cli:
    def __init__(self, db: Path, capsys: pytest.CaptureFixture) -> None:
        self.db, self.capsys = db, capsys
        self.factory = factory

    def __call__(self, *argv: str, db: Path | None = None) -> tuple[int, str, str]:
        self.capsys.readouterr()
        code = main(["--db", str(db or self.db), *argv], embedder_factory=self.factory)
        out, err = self.capsys.readouterr()
        return code, out, err

    def json(self, *argv: str, db: Path | None = None):
        code, out, err = self(*argv, "--json", db=db)
        assert code == 0, err
        return json.loads(out)

    def ok(self, *argv: str, db: Path | None = None) -> str:
        code, out, err = self(*argv, db=db)
        assert code == 0, err
        return out

    def fails(self, *argv: str, db: Path | None = None) -> str:
        code, out, err = self(*argv, db=db)
        assert code == 2, (out, err)
        assert "Traceback" not in err
        return err


@pytest.fixture
def cli(tmp_path, capsys) -> Cli:
    return Cli(tmp_path / "ws.db", capsys)


def fill(cli: Cli) -> dict[str, str]:
    ids = {}
    for character, text in [("alice", "Alice loves green tea"),
                            ("alice", "Alice plays the violin on Sundays"),
                            ("alice", "アリスは猫が好きです"),
                            ("bob", "Bob drinks black coffee"),
                            ("bob", "ボブは山登りが好きです")]:
        ids[text] = cli.json("remember", character, text)["id"]
    return ids


def rows(db: Path) -> list[tuple]:
    con = sqlite3.connect(db)
    try:
        return con.execute("SELECT id, character_id, trashed_at, record FROM memories "
                           "ORDER BY id").fetchall()
    finally:
        con.close()


def meta(db: Path) -> dict[str, str]:
    con = sqlite3.connect(db)
    try:
        return dict(con.execute("SELECT name, value FROM meta").fetchall())
    finally:
        con.close()


# -- verbs -----------------------------------------------------------------------------------


def test_remember_and_recall(cli):
    ids = fill(cli)
    out = cli.ok("remember", "alice", "Alice's favourite drink is tea", "--kind", "preference",
                 "--importance", "0.9", "--key", "favorite_drink")
    assert out.startswith("remembered ") and "preference key=favorite_drink" in out
    data = cli.json("recall", "alice", "green tea", "-k", "2")
    assert [h["rank"] for h in data["hits"]] == [1, 2]
    assert data["hits"][0]["id"] == ids["Alice loves green tea"]
    assert {"score", "kind", "text", "vector_cosine", "bm25", "memory"} <= set(data["hits"][0])
    human = cli.ok("recall", "alice", "green tea", "-k", "2", "--mode", "vector")
    first = human.splitlines()[0].split()
    assert first[0] == "1" and float(first[1]) > 0 and first[2] == ids["Alice loves green tea"]
    assert "Alice loves green tea" in human.splitlines()[0]
    fulltext = cli.json("recall", "bob", "coffee", "--mode", "fulltext")
    assert [h["text"] for h in fulltext["hits"]] == ["Bob drinks black coffee"]
    # global options are accepted after the command too
    assert json.loads(cli.ok("recall", "bob", "coffee", "--json"))["hits"]


def test_memories_persist_between_runs(cli):
    ids = fill(cli)
    assert {r[0] for r in rows(cli.db)} == set(ids.values())
    assert cli.json("recall", "bob", "coffee")["hits"][0]["id"] == ids["Bob drinks black coffee"]


def test_forget_and_restore(cli):
    ids = fill(cli)
    tea = ids["Alice loves green tea"]
    assert "python -m omoide restore alice" in cli.ok("forget", "alice", tea)
    assert tea not in [h["id"] for h in cli.json("recall", "alice", "violin", "--mode",
                                                   "fulltext")["hits"]]
    assert cli.json("stats", "alice")["trashed"] == 1
    assert cli.json("restore", "alice", tea)["id"] == tea
    assert cli.json("stats", "alice")["trashed"] == 0
    assert "No memory with id 'NOPE'" in cli.fails("forget", "alice", "NOPE")


def test_update(cli):
    ids = fill(cli)
    tea = ids["Alice loves green tea"]
    changed = cli.json("update", "alice", tea, "--text", "Alice loves jasmine tea",
                       "--importance", "0.9", "--key", "drink")
    assert (changed["text"], changed["importance"], changed["key"]) == (
        "Alice loves jasmine tea", 0.9, "drink")
    assert cli.json("recall", "alice", "jasmine", "--mode", "fulltext")["hits"][0]["id"] == tea
    assert cli.json("update", "alice", tea, "--key", "")["key"] is None
    assert "give --text, --kind, --importance or --key" in cli.fails("update", "alice", tea)
    assert "No memory with id 'NOPE'" in cli.fails("update", "alice", "NOPE", "--kind", "fact")
    cli.ok("forget", "alice", tea)
    assert "No memory with id" in cli.fails("update", "alice", tea, "--importance", "0.1")


def test_characters_stats_audit(cli):
    fill(cli)
    assert [c["id"] for c in cli.json("characters")] == ["alice", "bob"]
    assert cli.ok("characters").splitlines() == ["alice  3 memories, 0 trashed",
                                                 "bob  2 memories, 0 trashed"]
    stats = cli.json("stats")
    assert (stats["characters"], stats["memories"], stats["model"]) == (2, 5, E5)
    assert cli.json("stats", "bob")["memories"] == 2
    assert "alice: 3 memories" in cli.ok("stats")
    audit = cli.json("audit", "alice")
    assert audit["character"] == "alice" and audit["counts"]["live"] == 3
    assert cli.ok("audit", "alice").startswith("audit of alice")


CHAT = """user: I prefer TypeScript over JavaScript.
assistant: Noted!
user: 私はいつもプッシュする前にコミットします。
user: We will use Postgres for this project,
  and Redis for the cache.
"""


def test_ingest_text_and_json(cli, tmp_path):
    chat = tmp_path / "chat.txt"
    chat.write_text(CHAT, encoding="utf-8")
    dry = cli.json("ingest", "carol", str(chat), "--dry-run")
    assert dry["dry_run"] and [i["action"] for i in dry["items"]].count("stored") >= 3
    assert "dry run: nothing was written" in cli.ok("ingest", "carol", str(chat), "--dry-run")
    assert rows(cli.db) == []
    report = cli.json("ingest", "carol", str(chat))
    stored = {i["key"] for i in report["items"] if i["action"] == "stored"}
    assert {"preference:typescript", "pattern:commit_before_pushing"} <= stored
    messages = tmp_path / "chat.json"
    messages.write_text(json.dumps([{"role": "user", "content": "I prefer TypeScript."},
                                    {"role": "assistant", "content": "OK"}]), encoding="utf-8")
    again = cli.json("ingest", "carol", str(messages))
    assert [i["action"] for i in again["items"]] == ["merged"]
    assert cli.json("stats", "carol")["memories"] == len(stored)


def test_a_file_starting_with_a_byte_order_mark_is_read(cli, tmp_path):
    """Notepad's UTF-8 puts U+FEFF first: the conversation was refused as not starting with
    'user:' (the JSON one too), the backup as not JSON."""
    chat, messages = tmp_path / "chat.txt", tmp_path / "chat.json"
    chat.write_text("user: I prefer TypeScript.\r\nassistant: OK\r\n", encoding="utf-8-sig")
    messages.write_text(json.dumps([{"role": "user", "content": "I love green tea."}]),
                        encoding="utf-8-sig")
    assert cli.json("ingest", "carol", str(chat))["items"][0]["action"] == "stored"
    assert cli.json("ingest", "carol", str(messages))["items"][0]["action"] == "stored"
    backup = tmp_path / "backup.json"
    cli.ok("export", str(backup))
    backup.write_text(backup.read_text(encoding="utf-8"), encoding="utf-8-sig")
    assert cli.json("import", str(backup), db=tmp_path / "second.db")["imported"] == 2


def test_a_conversation_line_ends_at_a_newline_only():
    from omoide.cli.ingest import parse_conversation

    text = "user: I love tea.\u2028Really.\r\nassistant: ok\u0085fine\nuser: more"
    assert parse_conversation(text, "chat.txt") == [
        {"role": "user", "content": "I love tea.\u2028Really."},
        {"role": "assistant", "content": "ok\u0085fine"}, {"role": "user", "content": "more"}]


@pytest.mark.parametrize(("content", "reason"), [
    ("", "it is empty"),
    ("hello there\nuser: hi", "line 1 does not start with 'user:'"),
    ("[{\"role\": \"user\"", "invalid JSON at line 1"),
    ("[{\"role\": \"user\", \"content\": 3}]", "message 0 needs a string 'content'"),
    ("{\"messages\": 3}", "JSON must be a list of messages"),
])
def test_ingest_rejects_a_malformed_conversation(cli, tmp_path, content, reason):
    chat = tmp_path / "chat.txt"
    chat.write_text(content, encoding="utf-8")
    err = cli.fails("ingest", "carol", str(chat))
    assert "conversation file" in err and reason in err
    assert not cli.db.exists()


def test_export_import_roundtrip(cli, tmp_path):
    ids = fill(cli)
    cli.ok("forget", "bob", ids["Bob drinks black coffee"])
    path = tmp_path / "export.json"
    assert "exported 4 memories (1 trashed) of 2 characters" in cli.ok(
        "export", str(path), "--with-vectors")
    data = json.loads(path.read_text(encoding="utf-8"))
    assert data["format"] == "omoide-export" and data["characters"][0]["vectors"]
    second = tmp_path / "second.db"
    report = cli.json("import", str(path), db=second)
    # the trashed memory comes along, in the trash (its vector too)
    assert (report["imported"], report["trashed"], report["reembedded"]) == (5, 1, 0)
    for character, query in [("alice", "green tea"), ("bob", "mountains")]:
        a = cli.json("recall", character, query)["hits"]
        b = cli.json("recall", character, query, db=second)["hits"]
        assert [(h["id"], round(h["score"], 6)) for h in a] == \
            [(h["id"], round(h["score"], 6)) for h in b]
    assert cli.json("import", str(path), db=second)["skipped"] == 5  # nothing twice

    plain = tmp_path / "plain.json"
    cli.ok("export", str(plain), "--character", "alice")
    third = tmp_path / "third.db"
    report = cli.json("import", str(plain), db=third)
    assert (report["imported"], report["reembedded"], report["characters"]) == (3, 3, ["alice"])


def test_export_never_writes_through_a_link_at_its_temporary_name(cli, tmp_path):
    fill(cli)
    victim = tmp_path / "victim.txt"
    victim.write_text("someone else's file", encoding="utf-8")
    target = tmp_path / "out.json"
    (tmp_path / "out.json.tmp").symlink_to(victim)
    cli.ok("export", str(target))
    assert victim.read_text(encoding="utf-8") == "someone else's file"
    assert not target.is_symlink() and json.loads(target.read_text(encoding="utf-8"))
    assert stat.S_IMODE(target.stat().st_mode) == 0o600


def test_export_to_stdout_and_import_from_stdin(cli, tmp_path, monkeypatch):
    import io

    fill(cli)
    out = cli.ok("export", "-", "--character", "bob")
    assert [c["id"] for c in json.loads(out)["characters"]] == ["bob"]
    monkeypatch.setattr(sys, "stdin", io.StringIO(out))
    report = cli.json("import", "-", db=tmp_path / "other.db")
    assert report["imported"] == 2


def test_progress_bars_on_long_work(cli, tmp_path):
    fill(cli)
    path = tmp_path / "plain.json"
    cli.ok("export", str(path))
    _, _, err = cli("--progress", "on", "import", str(path), db=tmp_path / "other.db")
    assert "embedding" in err and "importing" in err and "5/5" in err
    chat = tmp_path / "chat.txt"
    chat.write_text(CHAT, encoding="utf-8")
    _, _, err = cli("--progress", "on", "ingest", "carol", str(chat))
    assert "embedding" in err
    _, _, err = cli("--progress", "on", "revectorize", "--model", MINILM)
    assert "re-embedding" in err and "8/8" in err  # 5 + 3 from the ingest
    _, _, err = cli("import", str(path), db=tmp_path / "quiet.db")  # not a terminal: silent
    assert err == ""


# -- errors ----------------------------------------------------------------------------------


def test_empty_text_changes_nothing(cli):
    fill(cli)
    before = rows(cli.db)
    assert "Memory text is empty" in cli.fails("remember", "alice", "   ")
    assert rows(cli.db) == before


@pytest.mark.parametrize("argv", [
    ("recall", "zoe", "tea"), ("stats", "zoe"), ("audit", "zoe"), ("forget", "zoe", "X"),
    ("restore", "zoe", "X"), ("export", "-", "--character", "zoe"),
])
def test_unknown_character(cli, argv):
    fill(cli)
    before = rows(cli.db)
    assert "No character with id 'zoe'" in cli.fails(*argv)
    assert rows(cli.db) == before


def test_malformed_imports_change_nothing(cli, tmp_path):
    fill(cli)
    good = tmp_path / "good.json"
    cli.ok("export", str(good), "--with-vectors")
    data = json.loads(good.read_text(encoding="utf-8"))
    target = tmp_path / "target.db"
    cli.ok("remember", "dan", "Dan likes jazz", db=target)
    before = rows(target)

    cases = {
        "invalid.json": ("{\"format\": \"omoide-export\",", "is not JSON (line 1"),
        "format.json": (json.dumps({"format": "zip"}), "not an Omoide export"),
        "version.json": (json.dumps(data | {"version": 7}), "unsupported version 7"),
    }
    bad_kind = json.loads(json.dumps(data))
    bad_kind["characters"][1]["memories"][0]["kind"] = "gossip"  # the SECOND character
    cases["kind.json"] = (json.dumps(bad_kind), "kind: 'gossip' not in")
    bad_vector = json.loads(json.dumps(data))
    first = bad_vector["characters"][1]["memories"][0]["id"]
    bad_vector["characters"][1]["vectors"][first] = [0.5, 0.5]
    cases["vector.json"] = (json.dumps(bad_vector), "vector: has 2 numbers, 64 expected")
    no_text = json.loads(json.dumps(data))
    del no_text["characters"][0]["memories"][0]["text"]
    cases["text.json"] = (json.dumps(no_text), "text: missing")
    for name, (content, reason) in cases.items():
        path = tmp_path / name
        path.write_text(content, encoding="utf-8")
        err = cli.fails("import", str(path), db=target)
        assert "The import file is not valid" in err and reason in err, (name, err)
        assert rows(target) == before, name
    assert "no such file" in cli.fails("import", str(tmp_path / "missing.json"), db=target)
    err = cli.fails("import", str(tmp_path / "invalid.json"), db=tmp_path / "fresh.db")
    assert "not JSON" in err and not (tmp_path / "fresh.db").exists()


def test_bad_arguments_print_usage(cli, capsys):
    code, _, err = cli("recall", "alice")
    assert code == 2 and "usage:" in err and "required: query" in err
    code, _, err = cli("remember", "alice", "x", "--kind", "gossip")
    assert code == 2 and "invalid choice" in err
    code, _, err = cli("frobnicate")
    assert code == 2 and "usage:" in err
    code, out, _ = cli("--help")
    assert code == 0 and "revectorize" in out
    fill(cli)
    assert "Invalid k" in cli.fails("recall", "alice", "tea", "-k", "0")


# -- the workspace's model -------------------------------------------------------------------


def test_first_open_records_the_model_and_later_opens_reuse_it(cli, tmp_path):
    fill(cli)
    assert (meta(cli.db)["model"], meta(cli.db)["dtype"]) == (E5, "q8")
    other = tmp_path / "minilm.db"
    cli.ok("--model", MINILM, "--dtype", "fp32", "remember", "eve", "Eve sings", db=other)
    assert (meta(other)["model"], meta(other)["dtype"]) == (MINILM, "fp32")
    assert cli.json("stats", db=other)["model"] == MINILM  # no --model: the stored one
    assert "hashing-ngram-s1" in cli.json("stats", "eve", db=other)["model"]


def test_another_model_is_refused_with_the_revectorize_command(cli):
    fill(cli)
    before = rows(cli.db)
    err = cli.fails("--model", MINILM, "recall", "alice", "tea")
    assert f"python -m omoide revectorize --model {MINILM} --dtype q8" in err
    err = cli.fails("--dtype", "fp32", "remember", "alice", "more")
    assert f"revectorize --model {E5} --dtype fp32" in err
    assert rows(cli.db) == before


def test_store_on_another_model_names_the_command(cli):
    fill(cli)
    con = sqlite3.connect(cli.db)
    con.execute("UPDATE meta SET value = ? WHERE name = 'model'", (MINILM,))
    con.commit()
    con.close()
    err = cli.fails("recall", "alice", "tea")
    assert "The memories of 'alice' were embedded with" in err
    assert f"python -m omoide revectorize --model {MINILM} --dtype q8" in err
    assert "needs revectorize" in cli.ok("characters")


def test_revectorize_switches_the_workspace(cli):
    ids = fill(cli)
    before = cli.json("recall", "alice", "green tea")["hits"][0]["id"]
    report = cli.json("revectorize", "--model", MINILM)
    assert (report["embedded"], report["characters"]) == (5, ["alice", "bob"])
    assert (meta(cli.db)["model"], meta(cli.db)["dtype"]) == (MINILM, "q8")
    stats = cli.json("stats")
    assert stats["model"] == MINILM and stats["mismatched"] == []
    assert {json.loads(r[3])["model"] for r in rows(cli.db)} == {
        HashingEmbedder(seed=1).stamp}
    assert cli.json("recall", "alice", "green tea")["hits"][0]["id"] == before
    assert before == ids["Alice loves green tea"]
    assert "nothing to re-embed" in cli.ok("revectorize", "--model", MINILM)
    err = cli.fails("revectorize", "--model", "no/such-model")
    assert "No embedding model with id 'no/such-model'" in err


def test_a_server_started_before_a_switch_is_told_to_restart_not_to_switch_back(cli):
    """An MCP server (one long-lived workspace) whose workspace a CLI revectorize switched
    meanwhile answered "run revectorize --model <its old model>": re-embedding every memory
    back. It is told the workspace now uses the other model, and to restart."""
    from omoide.mcp.__main__ import open_with_model

    fill(cli)
    args = argparse.Namespace(db=str(cli.db), model=None, dtype=None, backup=None,
                              backup_key=None, backup_key_file=None)
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr("omoide.embeddings.auto.choose_embedder",
                      lambda m, d: argparse.Namespace(embedder=factory(m, d), reason="test"))
        workspace, translate = open_with_model(args)
    try:
        cli.json("revectorize", "--model", MINILM)  # another process
        with pytest.raises(OmoideError) as refused:
            workspace.engine.run_fresh(lambda: workspace.engine.recall("alice", "tea"))
        told = translate(refused.value)
        assert told.code == "WORKSPACE_SWITCHED", told
        assert MINILM in str(told) and "restart" in str(told).lower()
        assert "revectorize --model" not in str(told)
    finally:
        workspace.close()


def test_rows_of_another_model_in_a_character_block_it_until_revectorized(cli):
    """A row of another model with vectors of the same length (written by a backup server
    or another device after a switch) was loaded into the character's index and ranked
    with the rest: two models' cosines compared. The character is blocked as mismatched
    until revectorize embeds every row with one model."""
    fill(cli)
    con = sqlite3.connect(cli.db)
    try:
        row = list(con.execute("SELECT id, character_id, kind, trashed_at, updated_at, "
                               "record, vector FROM memories WHERE character_id = 'alice'"
                               ).fetchone())
        record = json.loads(row[5]) | {"id": "01ZZZZZZZZZZZZZZZZZZZZZZZZ",
                                       "text": "Alice came back from the backup",
                                       "model": HashingEmbedder(seed=1).stamp}
        row[0], row[5] = record["id"], json.dumps(record)
        con.execute("INSERT INTO memories VALUES (?, ?, ?, ?, ?, ?, ?)", row)
        con.commit()
    finally:
        con.close()
    assert cli.json("stats", "alice")["model_mismatch"] is True
    assert "revectorize" in cli.fails("recall", "alice", "tea")
    assert cli.json("recall", "bob", "coffee")["hits"]  # the others are not blocked
    assert cli.json("revectorize", "--model", E5)["embedded"] == 4
    assert cli.json("stats", "alice")["model_mismatch"] is False
    assert {json.loads(r[3])["model"] for r in rows(cli.db)} == {HashingEmbedder(seed=0).stamp}
    hits = cli.json("recall", "alice", "back from the backup")["hits"]
    assert hits[0]["id"] == record["id"]


def test_revectorize_of_a_missing_workspace_is_refused(cli, tmp_path):
    """A mistyped --db made a new empty workspace there and answered "the workspace now
    uses ...": the real workspace was left on its old model, the user told it switched."""
    typo = tmp_path / "wsx.db"
    err = cli.fails("revectorize", "--model", MINILM, db=typo)
    assert "there is no workspace there" in err and not typo.exists()


def test_revectorize_switches_past_a_damaged_row(cli):
    """A row quarantined at load (damaged: never loaded, listed by the audit) made every
    revectorize fail (its record was parsed as a memory): the workspace could not switch
    models, and the CLI has no way to delete the row."""
    fill(cli)
    with sqlite3.connect(cli.db) as db:
        db.execute("INSERT INTO memories (id, character_id, kind, trashed_at, updated_at, "
                   "record, vector) VALUES ('DAMAGED1', 'alice', 'fact', NULL, 0, "
                   "'{not json', NULL)")
        db.execute("INSERT INTO memories (id, character_id, kind, trashed_at, updated_at, "
                   "record, vector) VALUES ('DAMAGED2', 'alice', 'fact', NULL, 0, "
                   "'{\"id\": \"DAMAGED2\"}', NULL)")
    report = cli.json("revectorize", "--model", MINILM)
    assert report["characters"] == ["alice", "bob"]
    assert cli.json("stats")["mismatched"] == []
    with sqlite3.connect(cli.db) as db:  # kept as they were, for the audit
        damaged = db.execute("SELECT count(*) FROM memories WHERE id LIKE 'DAMAGED%'")
        assert damaged.fetchone() == (2,)


def test_revectorize_one_character_blocks_the_others(cli):
    fill(cli)
    out = cli.ok("revectorize", "--model", MINILM, "--character", "bob")
    assert "re-vectorized bob" in out and "still on another model: alice" in out
    assert cli.json("recall", "bob", "coffee")["hits"]
    assert f"revectorize --model {MINILM}" in cli.fails("recall", "alice", "tea")
    assert cli.json("revectorize", "--model", MINILM)["characters"] == ["alice"]
    assert cli.json("recall", "alice", "tea")["hits"]


class NotANumberEmbedder(HashingEmbedder):
    """A broken model (a damaged file): every vector it gives is NaN."""

    def embed_passages(self, texts):
        return [[float("nan")] * self.dimension for _ in texts]


def test_revectorize_refuses_a_model_that_answers_nan(cli):
    """The new model's NaN vectors were written over every memory's vector and the
    workspace switched: at the next start every memory was quarantined (the character
    showed none), its old vector gone. Now the embedding is refused, nothing written."""
    fill(cli)
    before = rows(cli.db)
    broken = NotANumberEmbedder(seed=1)
    cli.factory = lambda m, d: broken if m == MINILM else factory(m, d)
    err = cli.fails("revectorize", "--model", MINILM)
    assert "failed: a vector holds NaN or an infinity" in err
    assert rows(cli.db) == before and meta(cli.db)["model"] == E5
    cli.factory = factory
    assert cli.json("stats", "alice")["memories"] == 3


class InterruptingEmbedder(HashingEmbedder):
    """Presses Ctrl-C (a real SIGINT) during its second passage batch."""

    def __init__(self, **kw):
        super().__init__(**kw)
        self.batches = 0

    def embed_passages(self, texts):
        self.batches += 1
        if self.batches == 2:
            os.kill(os.getpid(), signal.SIGINT)
        return super().embed_passages(texts)


def test_revectorize_cancels_on_ctrl_c_and_resumes(cli):
    for i in range(9):
        cli.ok("remember", "alice", f"Alice remembers note {i} about the sea")
    target = InterruptingEmbedder(seed=1)
    cli.factory = lambda m, d: target if m == MINILM else factory(m, d)
    code, _, err = cli("revectorize", "--model", MINILM, "--batch-size", "2")
    assert code == 130 and "run the same command again to resume" in err
    assert "Traceback" not in err
    assert meta(cli.db)["model"] == E5  # nothing switched yet
    assert cli.json("recall", "alice", "sea")["hits"]  # still usable on the old model
    con = sqlite3.connect(cli.db)
    staged = con.execute("SELECT COUNT(*) FROM revectorize_staged").fetchone()[0]
    con.close()
    assert staged == 4  # two whole batches were saved before the cancel

    cli.factory = factory
    report = cli.json("revectorize", "--model", MINILM, "--batch-size", "2")
    assert (report["resumed"], report["embedded"]) == (4, 5)
    assert meta(cli.db)["model"] == MINILM
    con = sqlite3.connect(cli.db)
    assert con.execute("SELECT COUNT(*) FROM revectorize_staged").fetchone()[0] == 0
    con.close()


def test_a_purge_erases_what_an_interrupted_revectorize_staged(cli):
    """The staging of an interrupted re-vectorization kept each memory's words: a memory
    purged (forgotten for good, by any process) afterwards still had its text in the file,
    for as long as the re-vectorization was not resumed. An edit now drops the vector of
    the old words too."""
    for i in range(9):
        cli.ok("remember", "alice", f"Alice's secret number {i} is {i * 7}")
    target = InterruptingEmbedder(seed=1)
    cli.factory = lambda m, d: target if m == MINILM else factory(m, d)
    assert cli("revectorize", "--model", MINILM, "--batch-size", "2")[0] == 130
    con = sqlite3.connect(cli.db)
    first, second, *kept = [row[0] for row in con.execute(
        "SELECT memory_id FROM revectorize_staged ORDER BY memory_id")]
    other = open_workspace(cli.db, embedder=factory(E5, "q8"), model_id=E5)
    other.engine.forget("alice", first)
    other.engine.purge_trash("alice")
    other.engine.update("alice", second, text="Alice has no secret number")
    other.close()
    staged = [row[0] for row in con.execute(
        "SELECT memory_id FROM revectorize_staged ORDER BY memory_id")]
    con.close()
    assert staged == kept

    cli.factory = factory
    report = cli.json("revectorize", "--model", MINILM, "--batch-size", "2")
    assert (report["resumed"], report["embedded"]) == (2, 7)  # the edit's history copy too
    assert (cli.json("stats", "alice")["memories"], cli.json("stats", "alice")["trashed"]) == (
        8, 1)


class WritingElsewhereEmbedder(HashingEmbedder):
    """The new model of a re-vectorization during which another process writes the same
    workspace: on its second batch, a new memory and an edit arrive from another engine."""

    def __init__(self, db: Path, edit_id: str) -> None:
        super().__init__(seed=SEEDS[MINILM])
        self.db, self.edit_id, self.batches = db, edit_id, 0

    def embed_passages(self, texts):
        self.batches += 1
        if self.batches == 2:
            other = open_workspace(self.db, embedder=factory(E5, "q8"), model_id=E5)
            other.engine.remember("alice", "Alice learned to sail last summer")
            other.engine.update("alice", self.edit_id, text="Alice switched to oolong tea")
            other.engine.remember("alice", "Alice bakes bread", context="a weekend chat")
            other.close()
        return super().embed_passages(texts)


def test_revectorize_takes_in_what_another_process_wrote_meanwhile(cli):
    """Memories written or edited by another process while the re-vectorization ran were
    left with the old model's vectors under the new model's name (or quarantined when the
    sizes differ): the switch now embeds them too, in its transaction."""
    ids = fill(cli)
    target = WritingElsewhereEmbedder(cli.db, ids["Alice loves green tea"])
    cli.factory = lambda m, d: target if m == MINILM else factory(m, d)
    cli.json("revectorize", "--model", MINILM, "--batch-size", "1")
    assert target.batches > 2
    cli.factory = factory
    fresh = factory(MINILM, "q8")
    stored = {r[0]: json.loads(r[3]) for r in rows(cli.db)}
    assert len(stored) == len(ids) + 3  # two new, the edit's history copy
    con = sqlite3.connect(cli.db)
    vectors = {i: unpack(v) for i, v in con.execute("SELECT id, vector FROM memories")}
    con.close()
    for memory_id, record in stored.items():
        assert record["model"] == fresh.stamp, record["text"]
        (expected,) = embed_memories(fresh, [(record["text"], record.get("context"))])
        assert vectors[memory_id] == pytest.approx(list(expected), abs=1e-6), record["text"]
    hits = cli.json("recall", "alice", "sail oolong bread", "-k", "10")["hits"]
    texts = {h["text"] for h in hits}
    assert {"Alice learned to sail last summer", "Alice switched to oolong tea",
            "Alice bakes bread"} <= texts
    assert cli.json("audit", "alice")["quarantined"] == []


def test_keyboard_interrupt_elsewhere_exits_130(cli, monkeypatch):
    fill(cli)

    def interrupted(*_a, **_k):
        raise KeyboardInterrupt

    monkeypatch.setattr("omoide.engine.core.MemoryEngine.recall", interrupted)
    code, _, err = cli("recall", "alice", "tea", "--mode", "fulltext")
    assert code == 130 and err.strip() == "interrupted"


# -- the real thing --------------------------------------------------------------------------


def run_cli(db: Path, *argv: str) -> str:
    env = os.environ | {"PYTHONPATH": os.pathsep.join([str(ROOT / "py"),
                                                      os.environ.get("PYTHONPATH", "")])}
    done = subprocess.run([sys.executable, "-m", "omoide", "--db", str(db), *argv],
                          capture_output=True, text=True, env=env, timeout=300, check=False)
    assert done.returncode == 0, done.stderr
    return done.stdout


@pytest.mark.models
def test_subprocess_with_the_real_model(tmp_path):
    from omoide.embeddings.onnx_provider import find_model_dir

    if find_model_dir(E5, "q8") is None:
        pytest.fail("the default model is not built: run `python3 build.py`")
    db, copy = tmp_path / "a.db", tmp_path / "b.db"
    for text in ["Alice loves green tea", "Alice plays the violin on Sundays",
                 "アリスは猫が好きです", "Alice's brother lives in Kyoto"]:
        run_cli(db, "remember", "alice", text)
    first = json.loads(run_cli(db, "recall", "alice", "what does Alice drink?", "--json"))
    assert first["hits"][0]["text"] == "Alice loves green tea"
    assert json.loads(run_cli(db, "--json", "recall", "alice", "猫"))["hits"][0]["text"] == \
        "アリスは猫が好きです"
    export = tmp_path / "export.json"
    run_cli(db, "export", str(export), "--with-vectors")
    assert json.loads(run_cli(copy, "--json", "import", str(export)))["reembedded"] == 0
    for query in ["what does Alice drink?", "猫", "family in Kyoto"]:
        a = json.loads(run_cli(db, "--json", "recall", "alice", query))["hits"]
        b = json.loads(run_cli(copy, "--json", "recall", "alice", query))["hits"]
        assert [(h["id"], h["score"]) for h in a] == [(h["id"], h["score"]) for h in b]
    bad = subprocess.run([sys.executable, "-m", "omoide", "--db", str(db), "recall", "nobody",
                          "x"], capture_output=True, text=True, check=False,
                         env=os.environ | {"PYTHONPATH": str(ROOT / "py")})
    assert bad.returncode == 2 and bad.stderr.strip() == "error: No character with id 'nobody'."


def test_a_workspace_path_that_is_not_a_database_is_one_clear_error(cli, tmp_path):
    """A text file, a folder or an unreachable path as --db: an ``error:`` line and exit 2
    (it was a sqlite3 traceback and exit 1), nothing created or changed."""
    garbage = tmp_path / "garbage.db"
    garbage.write_text("not a database\n" * 100)
    folder = tmp_path / "folder.db"
    folder.mkdir()
    for db in (garbage, folder):
        for argv in (("stats",), ("remember", "alice", "hello"), ("export", "-")):
            err = cli.fails(*argv, db=db)
            assert str(db) in err and "not a usable SQLite workspace" in err
    assert garbage.read_text() == "not a database\n" * 100


def test_json_nested_past_the_parsers_depth_is_malformed_input(cli, tmp_path):
    """``json.loads`` raises RecursionError (not a JSONDecodeError) on deep nesting: every
    reader of outside JSON said "Traceback" instead of "not JSON"."""
    deep = tmp_path / "deep.json"
    deep.write_text("[" * 100_000 + "]" * 100_000)
    for argv in (("import", str(deep)), ("ingest", "alice", str(deep)),
                 ("import-tavern", str(deep))):
        assert "nested too deeply" in cli.fails(*argv)
    assert not cli.db.exists() or cli.json("stats")["memories"] == 0


def test_json_with_a_number_too_long_to_convert_is_malformed_input(cli, tmp_path):
    """int() refuses more than 4,300 digits with a ValueError, not a JSONDecodeError: every
    reader of outside JSON answered with a traceback and exit 1."""
    digits = "9" * 5000
    files = {"import": {"format": "omoide-export", "version": 1, "characters": [
                 {"id": "alice", "memories": [], "n": 0}]},
             "ingest": [{"role": "user", "content": "hi", "n": 0}],
             "import-tavern": {"spec": "chara_card_v2", "data": {"name": "A", "n": 0}}}
    for verb, data in files.items():
        path = tmp_path / f"{verb}.json"
        path.write_text(json.dumps(data).replace('"n": 0', f'"n": {digits}'))
        argv = (verb, str(path)) if verb != "ingest" else (verb, "alice", str(path))
        assert "a number too long" in cli.fails(*argv)
    assert not cli.db.exists() or cli.json("stats")["memories"] == 0


def test_a_command_that_only_reads_never_creates_a_workspace(cli, tmp_path):
    """recall on a mistyped --db path created the file and stamped it with the default
    model: the next command with the right model was refused (WORKSPACE_MODEL_MISMATCH)."""
    typo = tmp_path / "typo.db"
    for argv in (("recall", "alice", "tea"), ("stats",), ("characters",), ("audit", "alice"),
                 ("export", "-")):
        assert "there is no workspace there" in cli.fails(*argv, db=typo)
    assert not typo.exists()


def test_memory_text_cannot_drive_the_terminal(cli):
    """Text from a card, an import or an MCP agent reached the terminal raw: ESC [2J cleared
    the screen, OSC 52 wrote the clipboard. Shown escaped (JSON escapes them itself)."""
    hostile = "I love tea\x1b[2J\x1b]52;c;ZXZpbA==\x07 \x9b31m"
    cli.ok("remember", "alice", hostile)
    for out in (cli.ok("recall", "alice", "tea"), cli.ok("audit", "alice")):
        assert "\x1b" not in out and "\x07" not in out and "\x9b" not in out
    assert "\\x1b[2J" in cli.ok("recall", "alice", "tea")
    [hit] = cli.json("recall", "alice", "tea")["hits"]
    assert hit["text"] == hostile  # stored and given to programs as it is
    err = cli.fails("recall", "alice\x1b[2J", "tea")
    assert "\x1b" not in err


def test_memory_text_cannot_reorder_what_the_terminal_shows(cli):
    """A right-to-left override (U+202E) in a memory reversed everything the terminal printed
    after it on the line: a memory could read as another. Shown escaped; the marks Arabic
    and Hebrew need (U+200F) stay as they are."""
    hostile = "I love tea \u202egnisoob\u202c and \u2067isolated\u2069 \u05e9\u05dc\u200f"
    cli.ok("remember", "alice", hostile)
    out = cli.ok("recall", "alice", "tea")
    assert not any(c in out for c in "\u202e\u202c\u2067\u2069")
    assert "\\u202egnisoob" in out and "\u05e9\u05dc\u200f" in out
    [hit] = cli.json("recall", "alice", "tea")["hits"]
    assert hit["text"] == hostile  # stored and given to programs as it is


def test_text_the_console_cannot_encode_is_shown_escaped(tmp_path, monkeypatch):
    """With an ASCII (or cp1252) stdout, the confirmation of a memory in Japanese raised
    UnicodeEncodeError: a traceback after the memory was written."""
    raw = io.BytesIO()
    monkeypatch.setattr(sys, "stdout", io.TextIOWrapper(raw, encoding="ascii"))
    code = main(["--db", str(tmp_path / "ws.db"), "remember", "alice", "アリスは猫が好き"],
                embedder_factory=factory)
    sys.stdout.flush()
    assert code == 0 and "\\u732b" in raw.getvalue().decode("ascii")
