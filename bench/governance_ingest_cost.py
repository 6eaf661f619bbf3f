"""Ingest cost per message, two source trees side by side at the same load.

Each tree's ``py/`` runs ``omoide.governance.ingest`` end to end (pattern extraction, the
learned second stage, dedup, e5-small q8 embedding on the CPU, writes into an in-memory
engine) over the same messages: the dev splits' messages of both languages, in
conversations of 10, into a fresh engine per round. The trees run in separate processes,
alternating round by round (A B, B A, A B ...), so a load change on the shared box hits both;
the figure to read is the ratio, with the load average printed beside it.

    PYTHONPATH=py:. .venv/bin/python bench/governance_ingest_cost.py /work/main . --rounds 3
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.common import machine_info, md_table, write_results  # noqa: E402

DATA = ROOT / "bench" / "data"
CONVERSATION = 10

# One round in a child process: the tree's own omoide, the same messages (read from stdin).
CHILD = r"""
import json, sys, time
msgs = json.loads(sys.stdin.read())
from omoide.embeddings.onnx_provider import OnnxEmbedder
from omoide.engine import MemoryEngine
from omoide.governance.ingest import ingest
embedder = OnnxEmbedder.from_model_id("omoide/multilingual-e5-small", "q8")
ingest(MemoryEngine(embedder), "warm", msgs[:CONVERSATION])  # load the model and the rules
engine = MemoryEngine(embedder)
started = time.perf_counter()
for i in range(0, len(msgs), CONVERSATION):
    ingest(engine, "bench", msgs[i:i + CONVERSATION])
print(json.dumps({"seconds": time.perf_counter() - started}))
""".replace("CONVERSATION", str(CONVERSATION))


def dev_messages(limit: int) -> list[str]:
    out = []
    for lang in ("en", "ja"):
        rows = [json.loads(line) for line in
                (DATA / f"extraction_{lang}.jsonl").open(encoding="utf-8")]
        out += [r["text"] for r in rows if r["split"] in ("dev", "dev2", "dev3")][:limit]
    return out


def commit_of(tree: Path) -> str:
    try:
        return subprocess.run(["git", "-C", str(tree), "rev-parse", "--short", "HEAD"],
                              capture_output=True, text=True, check=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return "?"


def one_round(tree: Path, messages: list[str]) -> float:
    env = dict(os.environ, PYTHONPATH=str(tree / "py"), OPENBLAS_NUM_THREADS="1")
    done = subprocess.run([sys.executable, "-c", CHILD], input=json.dumps(messages),
                          capture_output=True, text=True, env=env, check=True)
    return json.loads(done.stdout.strip().splitlines()[-1])["seconds"]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("trees", nargs=2, type=Path, help="baseline tree, then the new one")
    parser.add_argument("--per-language", type=int, default=150)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--name", default="governance_ingest_cost")
    args = parser.parse_args()
    messages = dev_messages(args.per_language)
    seconds: dict[str, list[float]] = {str(t): [] for t in args.trees}
    loads = [os.getloadavg()[0]]
    for round_no in range(args.rounds):
        # A B, then B A: neither tree always runs second while the load drifts
        for tree in (args.trees if round_no % 2 == 0 else args.trees[::-1]):
            seconds[str(tree)].append(one_round(tree.resolve(), messages))
            loads.append(os.getloadavg()[0])
    rows, payload = [], {}
    for tree in args.trees:
        ms = [1000 * s / len(messages) for s in seconds[str(tree)]]
        payload[str(tree)] = {"commit": commit_of(tree), "ms_per_message": ms,
                              "median_ms": statistics.median(ms)}
        rows.append([str(tree), commit_of(tree), statistics.median(ms), min(ms), max(ms)])
    base, new = (payload[str(t)]["median_ms"] for t in args.trees)
    markdown = (
        "# Ingest cost per message, side by side\n\n"
        f"{len(messages)} dev messages (EN + JA) per round in conversations of "
        f"{CONVERSATION}, e5-small q8, {args.rounds} alternating rounds per tree; load "
        f"average (1 min) {min(loads):.1f}-{max(loads):.1f}. New / baseline: "
        f"{new / base:.2f}.\n\n"
        + md_table(["tree", "commit", "median ms/message", "min", "max"], rows))
    write_results(args.name, {"benchmark": "governance_ingest_cost", "machine": machine_info(),
                              "messages": len(messages), "rounds": args.rounds,
                              "load_1min": loads, "trees": payload,
                              "ratio_new_to_baseline": new / base}, markdown)
    print(markdown)
    print(f"load averages during the run: {loads}")
    print(time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime()))


if __name__ == "__main__":
    main()
