"""Benchmark start-up and first use in headless Chromium (issue 16's figures, one run).

    PYTHONPATH=.:py .venv/bin/python bench/boot_browser.py [--reloads 5] [--revectorize 1000]

Needs a built dist/ (``python3 build.py build``). On one persistent profile:

- warm boot: page reload to ``ready`` (the engine worker's last boot stage) and to the app's
  first screen, median of ``--reloads``, with the time each boot stage was reached (the
  worker's own marks too); each one followed by a boot without the Python snapshot;
- first remember after ready: issued the moment the app is ready (it waits for the model's
  background warm-up) and, on another reload, once the warm-up says the model is ready;
- offline boot: the HTTP server stopped, a restarted browser on the same profile, median of 3;
- query embedding: p50 of a short query through the app's embedding worker;
- re-vectorize ``--revectorize`` dialogue-length memories (MiniLM -> e5 q8) with the app's
  own job, texts/s and the 10,000-memory time extrapolated from it (said so in the table);
- memory: RSS of each Chromium process of the profile (/proc), and the page's
  ``performance.measureUserAgentSpecificMemory()`` split by worker where Chromium gives it.

Writes bench/results/boot_browser.json and boot_browser.md.
"""

from __future__ import annotations

import argparse
import os
import statistics
import tempfile
import time
from pathlib import Path

from playwright.sync_api import Page, sync_playwright

from bench.common import machine_info, md_table, write_results
from buildtools.serve import AppServer

ROOT = Path(__file__).resolve().parent.parent
DIST = ROOT / "dist"
PORT = 27697
E5 = {"model": "omoide/multilingual-e5-small", "dtype": "q8"}
MINILM = {"model": "omoide/all-MiniLM-L6-v2", "dtype": "q8"}
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking",
                 "--disable-component-update", "--disable-sync", "--no-first-run",
                 "--enable-blink-features=ForceEagerMeasureMemory"]
# Each boot stage and the app's first screen, stamped with performance.now() as they happen.
STAGE_PROBE = """(() => {
  window.__stages = {};
  const seen = () => {
    const boot = document.getElementById("boot");
    const app = document.getElementById("app");
    if (boot && !(boot.dataset.bootState in window.__stages)) {
      window.__stages[boot.dataset.bootState] = performance.now();
    }
    if (app?.dataset.ready === "true" && !("app" in window.__stages)) {
      window.__stages.app = performance.now();
    }
  };
  new MutationObserver(seen).observe(document, { subtree: true, attributes: true,
    childList: true });
})();"""
DIALOGUE = [
    "I moved to Osaka last spring for a new job and I still get lost around Umeda station.",
    "My sister is allergic to peanuts, so we never cook with them when she visits.",
    "The meeting with the design team was moved to Thursday afternoon after lunch.",
    "I usually run five kilometres along the river before breakfast, unless it rains.",
    "去年の春、新しい仕事のために大阪へ引っ越しましたが、まだ梅田駅で迷います。",
    "妹はピーナッツアレルギーなので、妹が来るときは料理に使いません。",
    "毎朝、朝食の前に川沿いを五キロ走っています。雨の日は休みます。",
    "We adopted a grey cat named Mochi from the shelter in March; she sleeps all day.",
]


def call(page: Page, method: str, params: dict | None = None):
    return page.evaluate("([m, p]) => window.omoide.call(m, p)", [method, params or {}])


def wait_app(page: Page) -> dict:
    page.wait_for_selector("#app[data-ready='true']", timeout=120_000)
    return page.evaluate("() => window.__stages")


def boot_once(page: Page) -> dict:
    page.reload(wait_until="commit")
    stages = wait_app(page)
    # The engine worker's own marks (wheel, imports, database), on the page's clock.
    worker = call(page, "storage_info").get("boot") or {}
    shift = worker.pop("origin", 0) - page.evaluate("performance.timeOrigin")
    fetched = worker.pop("fetched", {})
    snapshot = worker.pop("snapshot", None)  # Python started from a snapshot, or took one
    marks = {f"worker.{k}": v + shift for k, v in worker.items()}
    marks |= {f"fetched.{k}": v + shift for k, v in fetched.items()}
    timed = {k: round(v) for k, v in sorted({**stages, **marks}.items(), key=lambda kv: kv[1])}
    return timed | {"snapshot": snapshot}


def first_remember(page: Page, *, after_warm: bool, i: int) -> float:
    page.reload(wait_until="commit")
    wait_app(page)
    if after_warm:
        page.wait_for_selector("#model-warm[data-state='ready']", timeout=120_000)
    t = time.perf_counter()
    call(page, "remember", {"character": "bench", "text": f"Bench note {i}: {DIALOGUE[i % 8]}"})
    return (time.perf_counter() - t) * 1000


def warm_at(page: Page, url: str, stages: list[str], rounds: int) -> dict:
    """Ready time and the first remember issued at ready, with the model's background set-up
    started at each boot stage (the app's ``?warm=`` override), interleaved round by round."""
    runs: dict[str, dict[str, list]] = {s: {"ready": [], "remember": []} for s in stages}
    for r in range(rounds):
        for stage in stages:
            page.goto(f"{url}?warm={stage}", wait_until="commit")
            runs[stage]["ready"].append(round(wait_app(page)["ready"]))
            t = time.perf_counter()
            call(page, "remember", {"character": "bench",
                                    "text": f"Warm-up note {r} {stage}: {DIALOGUE[r % 8]}"})
            runs[stage]["remember"].append(round((time.perf_counter() - t) * 1000))
            page.wait_for_selector("#model-warm[data-state='ready']", timeout=120_000)
            runs[stage].setdefault("setup", []).append(
                page.evaluate("() => window.omoide.embedder.status()").get("setup"))
    return {s: {"ready_ms": statistics.median(v["ready"]),
                "first_remember_at_ready_ms": statistics.median(v["remember"]),
                "runs": v} for s, v in runs.items()}


def query_p50(page: Page, n: int = 20) -> float:
    times = page.evaluate("""async (n) => {
      const out = [];
      for (let i = 0; i < n; i++) {
        const t = performance.now();
        await window.omoide.embed([`what does Yui like to drink? ${i}`], { kind: "query" });
        out.push(performance.now() - t);
      }
      return out;
    }""", n)
    return statistics.median(times[2:])


# Re-vectorization as the app runs it now (steps of 64 embedded ahead, outside the engine
# lock) and as it ran before (steps of 16, embedded under the lock), same box, same run.
REVECTORIZE_WAYS = {"now": {"step": 64, "ahead": True}, "before": {"step": 16, "ahead": False}}


def revectorize(page: Page, count: int) -> dict:
    call(page, "select_model", MINILM)
    ids = {}
    for name in REVECTORIZE_WAYS:
        ids[name] = call(page, "create_character", {"name": f"Revec {name}"})["id"]
        items = [{"text": f"{DIALOGUE[i % 8]} (note {i}, {name})"} for i in range(count)]
        for start in range(0, count, 200):
            call(page, "remember_many", {"character": ids[name],
                                         "items": items[start:start + 200]})
    call(page, "select_model", E5)
    page.evaluate("(o) => window.omoide.loadModel(o)", E5)
    out = {}
    for name, way in REVECTORIZE_WAYS.items():
        page.evaluate("() => { window.omoide.events.length = 0; }")
        t = time.perf_counter()
        call(page, "revectorize_start", {**E5, "character": ids[name], **way})
        page.wait_for_function("""() => window.omoide.events.some((e) => e.type === 'revectorize'
          && ['finished', 'failed', 'cancelled'].includes(e.state))""", timeout=1_800_000,
                               polling=500)
        seconds = time.perf_counter() - t
        last = page.evaluate("""() => window.omoide.events.filter((e) =>
          e.type === 'revectorize' && e.state !== 'running').at(-1)""")
        rate = count / seconds
        out[name] = {**way, "memories": count, "seconds": round(seconds, 1),
                     "texts_per_s": round(rate, 1), "state": last.get("state"),
                     "load_average": os.getloadavg()[0],
                     "extrapolated_10k_min": round(10_000 / rate / 60, 1)}
    return out


def process_memory(profile: str) -> list[dict]:
    """RSS of every Chromium process started with this profile, by process type."""
    rows = []
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            cmd = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
            status = Path(f"/proc/{pid}/status").read_text()
        except OSError:
            continue
        # Chromium rewrites a child's argv into one space-separated string.
        args = b" ".join(cmd).decode(errors="replace").split()
        if not any(profile in a for a in args):
            continue
        kind = next((a.split("=", 1)[1] for a in args if a.startswith("--type=")), "browser")
        kind += next((f" ({a.split('=', 1)[1]})" for a in args
                      if a.startswith("--utility-sub-type=")), "")
        rss = next((int(line.split()[1]) for line in status.splitlines()
                    if line.startswith("VmRSS:")), 0)
        rows.append({"pid": int(pid), "type": kind, "rss_mib": round(rss / 1024, 1)})
    return sorted(rows, key=lambda r: -r["rss_mib"])


def measured_memory(page: Page) -> list[dict]:
    result = page.evaluate("""async () => {
      if (!self.crossOriginIsolated || !performance.measureUserAgentSpecificMemory) return null;
      const m = await performance.measureUserAgentSpecificMemory();
      return m.breakdown.filter((b) => b.bytes > 0).map((b) => ({
        mib: b.bytes / 2 ** 20, types: b.types,
        where: b.attribution.map((a) => (a.scope ?? "") + " " + (a.url ?? "").split("/").at(-1)),
      }));
    }""")
    return sorted(result or [], key=lambda r: -r["mib"])


def markdown(payload: dict) -> str:
    r = payload["results"]
    measures = [  # (key, label, goal); a --quick run has only some of them
        ("warm_ready_ms", "warm boot to ready (median)", "<= 2,500 ms"),
        ("warm_app_ms", "warm boot to first screen (median)", ""),
        ("no_snapshot_ready_ms", "warm boot to ready without the Python snapshot, "
                                 "interleaved (median)", ""),
        ("offline_ready_ms", "offline boot to ready (median)", "<= 2,500 ms"),
        ("first_remember_at_ready_ms", "first remember, issued at ready", "<= 1,000 ms"),
        ("first_remember_warm_ms", "first remember, after the model warm-up", "<= 1,000 ms"),
        ("query_p50_ms", "short query embedding p50 (e5 q8)", ""),
    ]
    rows = [[label, f"{r[key]:.0f} ms", goal] for key, label, goal in measures if key in r]
    for stage, v in (r.get("warm_at") or {}).items():
        rows.append([f"model set-up from the {stage!r} stage: ready / first remember at ready "
                     f"(medians; runs {v['runs']['ready']} / {v['runs']['remember']})",
                     f"{v['ready_ms']:.0f} / {v['first_remember_at_ready_ms']:.0f} ms",
                     "<= 2,500 / <= 1,000 ms"])
    for name, v in (r.get("revectorize") or {}).items():
        how = f"steps of {v['step']}" + (", embedded outside the lock" if v["ahead"] else
                                          ", embedded under the lock")
        rows.append([f"re-vectorize {v['memories']} (MiniLM -> e5 q8), {name}: {how}",
                     f"{v['seconds']} s, {v['texts_per_s']} texts/s "
                     f"(load {v['load_average']:.1f})", ""])
        rows.append([f"re-vectorize 10,000 (extrapolated), {name}",
                     f"{v['extrapolated_10k_min']} min", "<= 4 min"])
    lines = ["# Boot and first use in headless Chromium", "",
             md_table(["measure", "value", "goal"], rows), "",
             "Boot stages of the median warm boot (ms after navigation): "
             + ", ".join(f"{k} {v}" for k, v in r.get("median_stages", {}).items()), "",
             "## Memory per process (RSS)", "",
             md_table(["process", "RSS MiB"],
                      [[p["type"], p["rss_mib"]] for p in r.get("processes", [])])]
    if r.get("measured"):
        lines += ["", "## performance.measureUserAgentSpecificMemory()", "",
                  md_table(["where", "types", "MiB"],
                           [["; ".join(m["where"]), ",".join(m["types"]), f"{m['mib']:.1f}"]
                            for m in r["measured"][:8]])]
    return "\n".join(lines) + "\n"


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--reloads", type=int, default=5)
    parser.add_argument("--revectorize", type=int, default=1000)
    parser.add_argument("--warm-at", nargs="+", default=[], metavar="STAGE",
                        help="only compare the model warm-up started at these boot stages "
                             "(runtime, python), interleaved (writes boot_browser_warm_at.*)")
    parser.add_argument("--quick", action="store_true",
                        help="warm boots and the first remember at ready only "
                             "(writes boot_browser_quick.*)")
    args = parser.parse_args()
    server = AppServer(DIST, port=PORT).start()
    results: dict = {}
    load = [os.getloadavg()[0]]
    with sync_playwright() as p, tempfile.TemporaryDirectory() as profile:
        launch = lambda: p.chromium.launch_persistent_context(  # noqa: E731
            profile, executable_path="/usr/bin/chromium", headless=True, args=CHROMIUM_ARGS)
        context = launch()
        context.add_init_script(STAGE_PROBE)
        page = context.new_page()
        page.goto(server.url)
        wait_app(page)
        page.evaluate("(o) => window.omoide.loadModel(o)", E5)  # the first visit's download
        call(page, "create_character", {"name": "Bench"})
        call(page, "remember", {"character": "bench", "text": "Bench keeps notes."})
        page.wait_for_function("() => navigator.serviceWorker.controller !== null",
                               timeout=60_000)
        if args.warm_at:
            results["warm_at"] = warm_at(page, server.url, args.warm_at, args.reloads)
            context.close()
            server.stop()
            return finish(results, load, "boot_browser_warm_at")
        # Interleaved with each warm boot, one without the Python snapshot (it is dropped
        # first, so that boot starts the interpreter afresh and takes a new one): the ratio
        # of the two, same run, same load.
        boots, plain = [], []
        for _ in range(args.reloads):
            boots.append(boot_once(page))
            page.evaluate("() => caches.delete('omoide-pyodide-snapshot')")
            plain.append(boot_once(page))
        results["no_snapshot_ready_ms"] = statistics.median(b["ready"] for b in plain)
        results["no_snapshot_boots"] = plain
        boots.sort(key=lambda b: b["ready"])
        median = boots[len(boots) // 2]
        results["warm_ready_ms"] = statistics.median(b["ready"] for b in boots)
        results["warm_app_ms"] = statistics.median(b["app"] for b in boots)
        results["median_stages"] = median
        results["boots"] = boots
        results["first_remember_at_ready_ms"] = statistics.median(
            first_remember(page, after_warm=False, i=i) for i in range(3))
        if args.quick:
            context.close()
            server.stop()
            return finish(results, load, "boot_browser_quick")
        results["first_remember_warm_ms"] = statistics.median(
            first_remember(page, after_warm=True, i=i) for i in range(3, 6))
        results["query_p50_ms"] = query_p50(page)
        results["processes"] = process_memory(profile)
        results["measured"] = measured_memory(page)
        if args.revectorize:
            results["revectorize"] = revectorize(page, args.revectorize)
        context.close()
        server.stop()
        offline = []
        for _ in range(3):
            context = launch()
            context.add_init_script(STAGE_PROBE)
            page = context.new_page()
            page.goto(server.url)
            offline.append(wait_app(page)["ready"])
            context.close()
        results["offline_ready_ms"] = statistics.median(offline)
        results["offline_boots"] = [round(x) for x in offline]
    finish(results, load, "boot_browser")


def finish(results: dict, load: list[float], name: str) -> None:
    load.append(os.getloadavg()[0])
    payload = {"machine": machine_info() | {"load_average": load}, "results": results}
    json_path, md_path = write_results(name, payload, markdown(payload))
    print(md_path.read_text())


if __name__ == "__main__":
    main()
