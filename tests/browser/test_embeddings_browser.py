"""Transformers.js in the embedding worker: download progress, cache, parity with CPython."""

from __future__ import annotations

import json
import math

import pytest

from .conftest import DIST, wait_ready

MINILM = "omoide/all-MiniLM-L6-v2"
E5 = "omoide/multilingual-e5-small"

TEXTS = [
    "I prefer TypeScript over JavaScript for large projects.",
    "We decided to use Postgres for this project.",
    "She always commits before pushing to the remote.",
    "He does not like Python very much.",
    "The cat slept on the warm windowsill all afternoon.",
    "Our flight to Osaka leaves at seven in the morning.",
    "Remember to water the tomatoes every evening.",
    "The meeting was moved to Thursday because of the holiday.",
    "My sister is learning to play the violin.",
    "Coffee tastes better when the beans are freshly ground.",
    "The library closes early on Sundays.",
    "I lost my umbrella on the train yesterday.",
    "Quantum computers use qubits instead of bits.",
    "The recipe needs two eggs and a cup of flour.",
    "Caroline went to the LGBTQ support group last week.",
    "A strong password mixes letters, numbers and symbols.",
    "The museum has a new exhibition about ancient Egypt.",
    "He runs five kilometres every morning before work.",
    "Please send me the report by Friday.",
    "Mount Fuji is the highest mountain in Japan.",
    "私はTypeScriptが好きです。",
    "このプロジェクトではPostgresを使います。",
    "いつもプッシュする前にコミットします。",
    "Pythonは好きではありません。",
    "猫は午後ずっと暖かい窓辺で寝ていた。",
    "大阪行きの便は朝七時に出発します。",
    "毎晩トマトに水をやるのを忘れないでください。",
    "祝日のため会議は木曜日に変更されました。",
    "妹はバイオリンを習っています。",
    "豆を挽きたてにするとコーヒーはもっとおいしい。",
    "図書館は日曜日は早く閉まります。",
    "昨日電車に傘を忘れてしまった。",
    "量子コンピュータはビットの代わりに量子ビットを使う。",
    "このレシピには卵二個と小麦粉一カップが必要です。",
    "東京タワーは一九五八年に完成した。",
    "強いパスワードは文字と数字と記号を組み合わせる。",
    "博物館で古代エジプトの新しい展示が始まった。",
    "彼は毎朝仕事の前に五キロ走る。",
    "金曜日までに報告書を送ってください。",
    "富士山は日本で一番高い山です。",
]


def manifest() -> dict:
    return json.loads((DIST / "models" / "manifest.json").read_text())


def model_files(model: str, dtype: str) -> dict[str, int]:
    files = manifest()["models"][model]["files"]
    onnx = "onnx/model.onnx" if dtype == "fp32" else "onnx/model_quantized.onnx"
    wanted = ["config.json", "tokenizer.json", "tokenizer_config.json", onnx]
    return {f: files[f]["size"] for f in wanted}


def load_model(page, model: str, dtype: str) -> dict:
    return page.evaluate("(o) => window.omoide.loadModel(o)", {"model": model, "dtype": dtype})


def embed_in_browser(page, texts: list[str], kind: str = "passage") -> list[list[float]]:
    return page.evaluate(
        """async ([texts, kind]) => {
             const { dims, data } = await window.omoide.embed(texts, { kind });
             const rows = [];
             for (let i = 0; i < dims[0]; i++) {
               rows.push(Array.from(data.subarray(i * dims[1], (i + 1) * dims[1])));
             }
             return rows;
           }""",
        [texts, kind],
    )


def open_app(launch, app_url, profile):
    context = launch(profile)
    requests: list[str] = []
    context.on("request", lambda r: requests.append(r.url))
    page = context.new_page()
    page.goto(app_url)
    wait_ready(page)
    return context, page, requests


def test_download_progress_then_cache_hits(launch, app_url, tmp_path):
    profile = tmp_path / "profile"
    expected = model_files(MINILM, "q8")
    context, page, requests = open_app(launch, app_url, profile)
    result = load_model(page, MINILM, "q8")
    log = page.evaluate("() => window.omoide.progressLog")
    final = result["progress"]
    assert final["done"] and final["error"] is None
    assert final["fromNetwork"] == len(expected) and final["fromCache"] == 0
    assert final["bytesTotal"] == sum(expected.values())
    assert final["bytesDone"] == final["bytesTotal"]
    assert any(s["downloading"] for s in log), "a first load must show a download"
    model_requests = [u for u in requests if "/models/omoide/" in u]
    assert sorted(u.split(f"{MINILM}/")[1] for u in model_requests) == sorted(expected)
    context.close()

    # Second visit on the same profile: every file is a cache hit and nothing is downloaded.
    context, page, requests = open_app(launch, app_url, profile)
    result = load_model(page, MINILM, "q8")
    log = page.evaluate("() => window.omoide.progressLog")
    final = result["progress"]
    assert final["fromCache"] == len(expected) and final["fromNetwork"] == 0
    assert final["bytesTotal"] == 0 and final["cachedBytes"] == sum(expected.values())
    assert not any(s["downloading"] for s in log)
    assert page.is_hidden("#downloads")
    assert [u for u in requests if "/models/omoide/" in u] == []


def test_device_is_reported_with_reason(launch, app_url, tmp_path):
    _, page, _ = open_app(launch, app_url, tmp_path / "profile")
    result = load_model(page, MINILM, "q8")
    # Headless Chromium here has no GPU adapter: WebAssembly, and the page is told why.
    assert result["device"] in {"wasm", "webgpu"}
    assert result["reason"]
    assert result["dimension"] == 384


def cosine(a: list[float], b: list[float]) -> float:
    dot = sum(x * y for x, y in zip(a, b, strict=True))
    return dot / math.sqrt(sum(x * x for x in a) * sum(y * y for y in b))


@pytest.mark.parametrize(("model", "dtype", "floor"), [
    (MINILM, "fp32", 0.999), (MINILM, "q8", 0.98), (E5, "fp32", 0.999), (E5, "q8", 0.98),
])
def test_browser_matches_cpython(launch, app_url, tmp_path, model, dtype, floor):
    from omoide.embeddings.onnx_provider import OnnxEmbedder

    reference = OnnxEmbedder(DIST / "models" / model, dtype=dtype)
    _, page, _ = open_app(launch, app_url, tmp_path / "profile")
    load_model(page, model, dtype)
    for kind in ("passage", "query"):
        browser = embed_in_browser(page, TEXTS, kind)
        embed = reference.embed_queries if kind == "query" else reference.embed_passages
        local = embed(TEXTS)
        sims = [cosine(list(a), list(b)) for a, b in zip(browser, local, strict=True)]
        assert min(sims) >= floor, (kind, min(sims), sims.index(min(sims)))
