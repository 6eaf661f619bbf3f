"""Benchmark embedding throughput in headless Chromium: our pipeline vs a raw session.

    PYTHONPATH=.:py .venv/bin/python bench/embed_browser.py [--rounds 3]

Needs a built dist/ (``python3 build.py build``) with both models. On one page
(web/bench/embed.html), for each model and dtype, two workers embed the same 64 EN+JA
sentences (e5: with its passage prefix) at batch 1 and batch 16:

- ours: the app's embedding worker (web/embed-worker.js, Transformers.js feature-extraction
  pipeline, mean pooling + normalize), called through Comlink as the app calls it;
- raw: an onnxruntime-web InferenceSession on the same .onnx file (web/bench/embed-raw.js),
  the same tokenizer call, mean pooling + L2 normalization in plain JavaScript.

Both run on the WebAssembly backend with the same thread count; each timed call embeds all
texts (tokenization, session runs, pooling and the Comlink round trip included). Rounds
alternate ours/raw after a warm-up call (two batches) each. Writes
bench/results/embed_browser.json and embed_browser.md.
"""

from __future__ import annotations

import argparse
import datetime
import json
import math
import os
import platform
import statistics
import subprocess
import tempfile
import time
from pathlib import Path
from urllib.parse import urlencode

from playwright.sync_api import sync_playwright

from buildtools.serve import AppServer

ROOT = Path(__file__).resolve().parent.parent
DIST = ROOT / "dist"
RESULTS = ROOT / "bench" / "results"
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking",
                 "--disable-component-update", "--disable-sync", "--no-first-run"]
MODELS = ["omoide/all-MiniLM-L6-v2", "omoide/multilingual-e5-small"]
DTYPES = ["q8", "fp32"]
BATCHES = [1, 16]

TEXTS = [
    "I moved to Osaka last spring for a new job.",
    "My sister is allergic to peanuts, so we never cook with them.",
    "The meeting with the design team was moved to Thursday afternoon.",
    "I usually run five kilometres along the river before breakfast.",
    "We adopted a grey cat named Mochi from the shelter in March.",
    "Remember to renew the passport before the trip to Lisbon in August.",
    "The quarterly report is due on the last Friday of the month.",
    "He prefers green tea to coffee and never drinks after 3 pm.",
    "The kitchen tap started leaking again; the plumber comes on Monday.",
    "Our anniversary dinner is booked at the small Italian place near the station.",
    "I finished reading a long novel about a family of lighthouse keepers.",
    "The new laptop has 32 GB of memory and a much better keyboard.",
    "She is learning Japanese and practises kanji for twenty minutes every evening.",
    "The project deadline slipped by two weeks because of the supplier delay.",
    "My grandmother's recipe for apple cake uses cinnamon and a little cardamom.",
    "Tomorrow it will rain in the morning and clear up by the evening.",
    "The dentist said I should come back in six months for a check-up.",
    "We decided to paint the living room a soft shade of blue.",
    "Ken plays bass in a jazz trio that meets every second Saturday.",
    "The library closes early on public holidays.",
    "I lost my umbrella on the train again.",
    "Their daughter starts primary school next April.",
    "The backup drive must be replaced before it fails completely; it already reports "
    "reallocated sectors and the nightly copy took twice as long as usual.",
    "Budget for the conference: flights, two nights at the hotel, registration fee and a "
    "small allowance for meals, all to be approved by the department head.",
    "A short walk after lunch helps me concentrate in the afternoon.",
    "The bakery on the corner sells the best croissants in town.",
    "I need to call the bank about the duplicate charge on my card.",
    "The garden tomatoes ripened all at once this year.",
    "We watched the fireworks from the rooftop with our neighbours.",
    "The train to Kyoto leaves at 8:15 from platform 14.",
    "He keeps his notes in plain text files synced between devices.",
    "Please water the plants while I am away next week.",
    "去年の春、新しい仕事のために大阪へ引っ越しました。",
    "妹はピーナッツアレルギーなので、料理には使いません。",
    "デザインチームとの打ち合わせは木曜日の午後に変更になりました。",
    "毎朝、朝食の前に川沿いを五キロ走っています。",
    "三月に保護施設から灰色の猫を引き取り、モチと名付けました。",
    "八月のリスボン旅行の前にパスポートを更新するのを忘れないでください。",
    "四半期報告書の締め切りは月末の金曜日です。",
    "彼はコーヒーよりも緑茶が好きで、午後三時以降は何も飲みません。",
    "台所の蛇口がまた水漏れを始めたので、月曜日に配管工が来ます。",
    "結婚記念日のディナーは駅の近くの小さなイタリア料理店を予約しました。",
    "灯台守の家族を描いた長編小説を読み終えました。",
    "新しいノートパソコンはメモリが32GBで、キーボードもずっと良くなりました。",
    "彼女は日本語を勉強していて、毎晩二十分漢字の練習をしています。",
    "部品の納入が遅れたため、プロジェクトの締め切りが二週間延びました。",
    "祖母のアップルケーキのレシピにはシナモンと少しのカルダモンを使います。",
    "明日は午前中は雨で、夕方には晴れるでしょう。",
    "歯医者さんに半年後にまた検診に来るように言われました。",
    "リビングの壁を柔らかい青色に塗ることにしました。",
    "健さんは隔週の土曜日に集まるジャズトリオでベースを弾いています。",
    "祝日は図書館が早く閉まります。",
    "また電車に傘を忘れてしまいました。",
    "彼らの娘さんは来年の四月に小学校に入学します。",
    "バックアップ用のドライブは完全に壊れる前に交換しなければなりません。すでに代替セクタが"
    "報告されていて、夜間のコピーにいつもの二倍の時間がかかりました。",
    "学会の予算は、航空券、ホテル二泊、参加費、食事の少額の手当で、すべて部長の承認が必要です。",
    "昼食後に少し散歩すると、午後に集中しやすくなります。",
    "角のパン屋さんのクロワッサンは町で一番おいしいです。",
    "カードの二重請求について銀行に電話する必要があります。",
    "今年は庭のトマトが一度に熟しました。",
    "屋上から近所の人たちと一緒に花火を見ました。",
    "京都行きの電車は十四番線から八時十五分に出発します。",
    "彼はメモをプレーンテキストで書き、端末間で同期しています。",
    "来週留守にする間、植物に水をやってください。",
]

JS_BENCH = """
async ([model, dtype, texts, batches, rounds]) => {
  // warm-up: two calls per batch size
  const ours = E.ours(), raw = E.raw();
  try {
    const loaded = {
      ours: await ours.api.load({ model, dtype, device: "wasm" }),
      raw: await raw.api.load({ model, dtype }),
    };
    delete loaded.ours.progress;
    const sides = { ours: ours.api, raw: raw.api };
    const times = { ours: {}, raw: {} };
    const last = {};
    for (const b of batches) {
      for (const side of ["ours", "raw"]) {
        await sides[side].embed(texts.slice(0, 2 * b), { kind: "passage", batchSize: b });
        times[side][b] = [];
      }
    }
    for (let r = 0; r < rounds; r++) {
      for (const b of batches) {
        for (const side of ["ours", "raw"]) {
          const t = performance.now();
          const out = await sides[side].embed(texts, { kind: "passage", batchSize: b });
          times[side][b].push(performance.now() - t);
          last[side + b] = out;
        }
      }
    }
    // Parity: cosine between ours and raw per text (both are unit vectors), batch 16.
    const b = batches[batches.length - 1];
    const [n, dim] = last["ours" + b].dims;
    let minCos = 1;
    for (let i = 0; i < n; i++) {
      let dot = 0;
      for (let d = 0; d < dim; d++)
        dot += last["ours" + b].data[i * dim + d] * last["raw" + b].data[i * dim + d];
      minCos = Math.min(minCos, dot);
    }
    return { loaded, times, min_cosine: minCos, crossOriginIsolated };
  } finally {
    ours.worker.terminate();
    raw.worker.terminate();
  }
}
"""


def git_commit() -> str:
    try:
        return subprocess.run(["git", "rev-parse", "HEAD"], cwd=ROOT, capture_output=True,
                              text=True, check=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return ""


def summarize(ms: list[float], texts: int) -> dict:
    rates = sorted(texts / (t / 1000) for t in ms)
    return {"ms": [round(t, 1) for t in ms], "best_texts_s": rates[-1],
            "median_texts_s": statistics.median(rates)}


def overall(results: list[dict]) -> dict:
    """ours/raw over every timed call: total-time ratio and geometric mean of paired calls."""
    ours = [t for r in results for t in r["ours"]["ms"]]
    raw = [t for r in results for t in r["raw"]["ms"]]
    logs = [math.log(b / a) for a, b in zip(ours, raw, strict=True)]
    return {"ratio_total_time": sum(raw) / sum(ours), "ratio_paired_geomean":
            math.exp(sum(logs) / len(logs)), "ratio_paired_min": math.exp(min(logs)),
            "ratio_paired_max": math.exp(max(logs)), "pairs": len(logs)}


def write_results(results: list[dict], rounds: int, started: float,
                  meta: dict | None = None, stem: str = "embed_browser",
                  texts: str = "sentences") -> None:
    RESULTS.mkdir(parents=True, exist_ok=True)
    meta = meta or {
        "machine": platform.machine(), "cpus": os.cpu_count(), "texts": len(TEXTS),
        "text_set": texts,
        "rounds": rounds, "backend": "wasm", "browser": "headless Chromium",
        "date": datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds"),
        "commit": git_commit(), "seconds": round(time.time() - started, 1)}
    meta["overall"] = overall(results) if results else None
    (RESULTS / f"{stem}.json").write_text(
        json.dumps({"meta": meta, "results": results}, indent=2, ensure_ascii=False) + "\n")
    lines = [
        f"# Embedding throughput in headless Chromium: our pipeline vs a raw onnxruntime-web "
        f"session ({len(TEXTS)} EN+JA texts: {texts}, wasm, {rounds} rounds)",
        "",
        "| threads | runtime | model | dtype | batch | ours texts/s (median / best) "
        "| raw texts/s (median / best) | ours/raw (median) | ours/raw (best) | min cosine "
        "| model set-up ms (ours / raw) | load |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for r in results:
        threads = f"{r['loaded']['ours'].get('threads')} / {r['loaded']['raw'].get('threads')}"
        lines.append(
            f"| {threads} | {r.get('runtime')} | {r['model'].split('/')[-1]} | {r['dtype']} "
            f"| {r['batch']} | "
            f"{r['ours']['median_texts_s']:.1f} / {r['ours']['best_texts_s']:.1f} | "
            f"{r['raw']['median_texts_s']:.1f} / {r['raw']['best_texts_s']:.1f} | "
            f"{r['ratio_median']:.2f} | {r['ratio_best']:.2f} | {r['min_cosine']:.5f} | "
            f"{r['loaded']['ours'].get('loadMs')} / {r['loaded']['raw'].get('loadMs')} | "
            f"{r['load_average'][0]:.1f}-{r['load_average'][1]:.1f} |")
    if results:
        o = meta["overall"]
        lines += ["", f"Over all {o['pairs']} timed call pairs: ours/raw "
                  f"{o['ratio_total_time']:.2f} by total time, "
                  f"{o['ratio_paired_geomean']:.2f} geometric mean of back-to-back "
                  f"pairs (range {o['ratio_paired_min']:.2f}-{o['ratio_paired_max']:.2f})."]
    (RESULTS / f"{stem}.md").write_text("\n".join(lines) + "\n")
    print("\n".join(lines))


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--models", nargs="+", default=MODELS)
    parser.add_argument("--dtypes", nargs="+", default=DTYPES)
    parser.add_argument("--threads", type=int, nargs="+", default=[0],
                        help="WebAssembly threads for both sides, one pass per count in the "
                             "same browser run (default: the app's choice)")
    parser.add_argument("--runtimes", nargs="+", default=[""],
                        help="onnxruntime-web builds for both sides (plain, asyncify), one "
                             "pass per build in the same browser run (default: the app's "
                             "choice, web/embed/runtime.js)")
    parser.add_argument("--texts", choices=["sentences", "dialogue"], default="sentences",
                        help="sentences: the 64 EN+JA sentences above; dialogue: the 64 texts "
                             "bench/boot_browser.py re-vectorizes (its dialogue turns with a "
                             "note suffix), so the job's texts/s has a raw session beside it")
    parser.add_argument("--out", default="embed_browser",
                        help="results file stem under bench/results/")
    args = parser.parse_args()
    texts = TEXTS if args.texts == "sentences" else dialogue_texts(len(TEXTS))
    server = AppServer(DIST, port=27695).start()
    results: list[dict] = []
    started = time.time()
    try:
        with sync_playwright() as p, tempfile.TemporaryDirectory() as profile:
            context = p.chromium.launch_persistent_context(
                profile, executable_path="/usr/bin/chromium", headless=True, args=CHROMIUM_ARGS)
            page = context.new_page()
            page.on("console", lambda m: m.type == "error" and print("console:", m.text))
            passes = [(threads, runtime, model, dtype) for threads in args.threads
                      for runtime in args.runtimes
                      for model in args.models for dtype in args.dtypes]
            page_workers = None
            for threads, runtime, model, dtype in passes:
                if (threads, runtime) != page_workers:  # fresh workers for this pass
                    query = urlencode({k: v for k, v in
                                       (("threads", threads), ("runtime", runtime)) if v})
                    page.goto(server.url + "bench/embed.html" + (f"?{query}" if query else ""))
                    page.wait_for_selector("#ready:not(:empty)")
                    page_workers = (threads, runtime)
                load_before = os.getloadavg()[0]
                t0 = time.time()
                out = page.evaluate(JS_BENCH, [model, dtype, texts, BATCHES, args.rounds])
                for batch in BATCHES:
                    ours = summarize(out["times"]["ours"][str(batch)], len(texts))
                    raw = summarize(out["times"]["raw"][str(batch)], len(texts))
                    row = {"model": model, "dtype": dtype, "batch": batch, "ours": ours,
                           "runtime": out["loaded"]["ours"].get("runtime"),
                           "raw": raw,
                           "ratio_median": ours["median_texts_s"] / raw["median_texts_s"],
                           "ratio_best": ours["best_texts_s"] / raw["best_texts_s"],
                           "min_cosine": out["min_cosine"], "loaded": out["loaded"],
                           "cross_origin_isolated": out["crossOriginIsolated"],
                           "load_average": [load_before, os.getloadavg()[0]],
                           "seconds": round(time.time() - t0, 1)}
                    results.append(row)
                    print(json.dumps({k: v for k, v in row.items() if k != "loaded"}),
                          flush=True)
                write_results(results, args.rounds, started, stem=args.out, texts=args.texts)
            context.close()
    finally:
        server.stop()
    write_results(results, args.rounds, started, stem=args.out, texts=args.texts)


def dialogue_texts(count: int) -> list[str]:
    """The texts bench/boot_browser.py's re-vectorization embeds (the first ``count``)."""
    from bench.boot_browser import DIALOGUE
    return [f"{DIALOGUE[i % 8]} (note {i}, app)" for i in range(count)]

if __name__ == "__main__":
    main()
