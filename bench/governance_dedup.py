"""Governance benchmark: write-time dedup on 10,000 ingested memories, 20% of them paraphrased
duplicates, plus 1,000 negations that contradict an earlier fact, on a labelled synthetic set,
with the real e5 (q8) model.

The set (deterministic, seed 7): 8,000 distinct facts from templates x vocabularies
(English preferences about dishes and tools, decisions about components, habits; Japanese
preferences and habits), each said once, plus 2,000 paraphrases of 2,000 of them (other verb
wording: "I really love X", "I can't stand X", "Let's go with X for Y", "I tend to X",
「Xが大好きです」..., and ~15% with the subject itself reworded), plus 1,000 contradictions:
the same subject with the other polarity, said after the fact ("I don't like X anymore",
"We won't use X", "I never X", 「Xは好きじゃないです」...). Every message carries the label of
its fact and side (the fact as first said, or its negation), so the result can be scored:

- records kept, duplicates merged;
- false merges: a message merged into a record that holds a DIFFERENT fact, or the same fact
  with the other polarity (a negation folded into what it negates: the data loss of issue 14);
- contradictions: superseded (the negation replaced the record of its fact, which went to the
  trash as history), false supersedes (a record of another fact replaced), stored beside;
- missed duplicates: a message of a fact that already had a live record, stored as a new one;
- skipped: messages the pattern extractor found nothing in (reported, not scored).

Messages go through ``omoide.governance.ingest`` (pattern extraction with the model's second
stage, as ingest runs it with a model loaded + dedup + write + tier rebalance, cold
maintenance included) in conversations of 10 messages, in a shuffled order.
The e5 vectors of the extracted contents are computed once and cached under ``.cache/bench/``
(``bench/common.py``), so the main run measures governance itself; an end-to-end run with the
real model on the first ``--e2e`` messages measures the throughput an app sees.

A second, similarity-only track replays the same candidates with their keys removed (what
keyless notes, e.g. LLM diary notes, go through: cosine >= threshold, same kind, same
polarity) at several thresholds, to show what the embedding alone would merge.

    PYTHONPATH=py:. .venv/bin/python bench/governance_dedup.py [--facts 8000 --paraphrases 2000
        --contradictions 1000]
"""

from __future__ import annotations

import argparse
import dataclasses
import random
import sys
import time
from collections import Counter
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "py"))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.common import CachedModel, machine_info, md_table, write_results  # noqa: E402
from omoide.engine import MemoryEngine  # noqa: E402
from omoide.engine.remember import build_memory  # noqa: E402
from omoide.governance.clause_model import classifier_for  # noqa: E402
from omoide.governance.dedup import DEFAULT_THRESHOLD, DedupIndex  # noqa: E402
from omoide.governance.extract import extract  # noqa: E402
from omoide.governance.ingest import ingest  # noqa: E402
from omoide.governance.log import AuditLog  # noqa: E402
from omoide.governance.tiers import TierPolicy, cold_count, hot_usage  # noqa: E402

SEED = 7
BATCH = 10  # messages per ingest call (one conversation)

# -- vocabularies ---------------------------------------------------------------------------

ADJ = ["spicy", "cold", "grilled", "fried", "steamed", "sweet", "sour", "smoked", "raw",
       "baked", "creamy", "crispy", "salty", "fresh", "homemade", "instant"]
FOOD = ["ramen", "soba", "udon", "curry", "sushi", "tofu", "dumplings", "pancakes", "salmon",
        "chicken", "noodles", "rice", "tempura", "pizza", "pasta", "tacos", "eggplant",
        "mushrooms", "cheese", "bread", "oysters", "squid", "pork buns", "omelettes"]
PLACE = ["Osaka", "Kyoto", "Sapporo", "Fukuoka", "Nagoya", "Sendai", "Kobe", "Hiroshima",
         "Okinawa", "Nara", "Yokohama", "Kanazawa"]
TOOL = ["Postgres", "SQLite", "Redis", "Kafka", "RabbitMQ", "MongoDB", "MySQL", "DuckDB",
        "ClickHouse", "Elasticsearch", "Terraform", "Ansible", "Docker", "Podman", "Kubernetes",
        "Nomad", "React", "Vue", "Svelte", "Angular", "Django", "Flask", "FastAPI", "Rails",
        "Spring", "Express", "Nginx", "Caddy", "Traefik", "Grafana", "Prometheus", "Jaeger",
        "Sentry", "Celery", "Airflow", "Dagster", "Pandas", "Polars", "NumPy", "PyTorch"]
COMPONENT = ["billing service", "search page", "admin panel", "login flow", "mobile app",
             "data pipeline", "report generator", "chat backend", "image uploader",
             "notification worker", "payment gateway", "audit trail", "metrics dashboard",
             "signup form", "recommendation engine", "export job", "invoice printer",
             "inventory tracker", "shipping calculator", "feature flags", "rate limiter",
             "session store", "email sender", "backup job", "log shipper", "cache layer",
             "booking system", "comment system", "media transcoder", "tax engine",
             "survey tool", "chat widget", "map view", "calendar sync", "pdf renderer",
             "webhook relay", "user directory", "price engine", "help center", "status page",
             "job scheduler", "access control", "translation service", "onboarding wizard",
             "A/B testing", "fraud checks", "address lookup", "photo gallery",
             "payroll export", "time tracker", "ticket queue", "wiki", "sms gateway",
             "crash reporter", "release notes", "changelog page", "usage meter",
             "quota checker", "team invites", "dark mode"]
TASK = ["data analysis", "web scraping", "unit tests", "prototypes", "small scripts",
        "batch jobs", "dashboards", "side projects", "production APIs", "teaching",
        "quick experiments", "internal tools", "load tests", "migrations", "demos",
        "hackathons", "CLI tools", "ETL work", "embedded work", "code reviews",
        "game jams", "research code", "config management", "log parsing", "reporting",
        "monitoring", "deployment scripts", "interviews", "pair programming", "benchmarks",
        "documentation", "infrastructure", "mobile work", "frontend work", "backend work"]
HABIT = ["review the diff", "run the tests", "write a short plan", "check the logs",
         "update the changelog", "rebase on main", "read the error twice", "take a walk",
         "drink a glass of water", "stretch for five minutes", "back up my notes",
         "close every tab", "clear my inbox", "check the calendar", "water the plants",
         "tidy the desk", "review open pull requests", "write down three goals",
         "turn off notifications", "sketch the design", "read the docs", "pin the versions",
         "squash my commits", "check the build", "restart the laptop", "sync my fork",
         "profile the slow query", "measure twice", "ask for a review", "lint the code",
         "call my sister", "feed the cat", "lock the screen", "charge my phone",
         "make green tea", "stand up", "log my hours", "plan the week", "journal",
         "meditate"]
WHEN = ["before merging", "before lunch", "after lunch", "before pushing", "after standup",
        "on Monday mornings", "on Friday afternoons", "before a release", "after a release",
        "before bed", "after waking up", "before meetings", "after meetings",
        "before deploying", "after deploying", "on weekends", "at the end of the day",
        "at the start of the day", "before a demo", "after a demo", "before travelling",
        "after an incident", "before an interview", "after an interview", "before holidays",
        "after holidays", "before code freeze", "on rainy days", "on busy days",
        "when I am stuck", "when I am tired", "during long builds", "between tasks",
        "every evening", "every morning", "on payday", "before reviews", "after reviews",
        "before writing tests", "after writing tests", "before retros", "after retros",
        "on the train", "at the cafe", "in the office"]
JA_ADJ = ["辛い", "冷たい", "甘い", "温かい", "酸っぱい", "柔らかい", "固い", "濃い", "薄い",
          "熱い"]
JA_FOOD = ["ラーメン", "うどん", "そば", "カレー", "お寿司", "豆腐", "餃子", "焼き鳥", "天ぷら",
           "おにぎり", "味噌汁", "納豆", "お好み焼き", "たこ焼き", "抹茶", "ケーキ", "パン",
           "チーズ", "コーヒー", "紅茶"]
JA_TIME = ["朝", "夜", "昼", "週末", "月曜日", "金曜日", "休日", "仕事の前", "寝る前", "出張中"]
JA_HABIT = [("コーヒー", "飲みます"), ("日記", "書きます"), ("メール", "確認します"),
            ("本", "読みます"), ("音楽", "聴きます"), ("ニュース", "見ます"),
            ("散歩", "します"), ("ストレッチ", "します"), ("掃除", "します"),
            ("料理", "します"), ("テスト", "実行します"), ("ログ", "確認します"),
            ("計画", "立てます"), ("写真", "撮ります"), ("お茶", "飲みます"),
            ("英語", "勉強します"), ("部屋", "片付けます"), ("植物", "水やりします"),
            ("ヨガ", "します"), ("家計簿", "つけます")]

# original and paraphrase templates per category; {s} is the subject, polarity decides
LIKE = {
    "en_pref": (["I like {s}", "I love {s}", "I prefer {s}", "I enjoy {s}"],
                ["I really love {s}", "Honestly, I prefer {s}", "I enjoy {s} a lot",
                 "I really like {s} very much"]),
    "en_dislike": (["I hate {s}", "I don't like {s}", "I dislike {s}"],
                   ["I can't stand {s}", "I really don't like {s}", "Honestly, I hate {s}"]),
    "decision": (["We'll use {s}", "I decided to use {s}", "We're going with {s}"],
                 ["Let's go with {s}", "We decided to use {s}", "I'll use {s}",
                  "Let's use {s}"]),
    "habit": (["I always {s}", "I usually {s}"], ["I tend to {s}", "I normally {s}",
                                                  "I almost always {s}"]),
    "never": (["I never {s}"], ["I never ever {s}", "Honestly, I never {s}"]),
    "ja_pref": (["{s}が好きです"], ["{s}が大好きです", "{s}がとても好きです"]),
    "ja_habit": (["いつも{s}"], ["必ず{s}", "普段は{s}"]),
}
# the same subject with the other polarity, said later
NEGATE = {
    "en_pref": ["I don't like {s} anymore", "I no longer like {s}",
                "I don't really like {s} these days"],
    "en_dislike": ["I love {s} now", "Actually, I like {s} now"],
    "decision": ["We won't use {s}", "I decided not to use {s}"],
    "habit": ["I never {s}"],
    "never": ["I always {s}"],
    "ja_pref": ["{s}は好きじゃないです", "{s}は嫌いになりました"],
    "ja_habit": ["決して{s}"],
}
JA_NEGATIVE_VERB = {"ます": "ません"}  # いつも朝にコーヒーを飲みます -> 決して…飲みません


@dataclasses.dataclass
class Message:
    text: str
    fact: int
    paraphrase: bool
    lang: str
    category: str
    reworded: bool = False
    contradicts: bool = False  # the fact's negation (the other polarity of its subject)

    @property
    def label(self) -> tuple[int, bool]:
        return self.fact, self.contradicts


def _subjects(rng: random.Random) -> list[tuple[str, str, str | None]]:
    """(category, subject, reworded subject or None) for every distinct fact available."""
    out: list[tuple[str, str, str | None]] = []
    for a in ADJ:
        for f in FOOD:
            for p in PLACE:
                cat = "en_pref" if rng.random() < 0.7 else "en_dislike"
                out.append((cat, f"{a} {f} from {p}", f"{a} {f} made in {p}"))
    for t in TOOL:
        for k in TASK:
            out.append(("en_pref", f"{t} for {k}", f"{t} when doing {k}"))
    for t in TOOL:
        for c in COMPONENT:
            out.append(("decision", f"{t} for the {c}", f"{t} in the {c}"))
    for h in HABIT:
        for w in WHEN:
            cat = "habit" if rng.random() < 0.85 else "never"
            subject = f"{h} {w}"
            out.append((cat, subject, None))
    for a in JA_ADJ:
        for f in JA_FOOD:
            out.append(("ja_pref", f"{a}{f}", None))
    for t in JA_TIME:
        for obj, verb in JA_HABIT:
            out.append(("ja_habit", f"{t}に{obj}を{verb}", None))
    return out


def build_dataset(n_facts: int, n_paraphrases: int, n_contradictions: int = 0,
                  seed: int = SEED) -> list[Message]:
    rng = random.Random(seed)
    pool = _subjects(rng)
    by_cat: dict[str, list[tuple[str, str, str | None]]] = {}
    for item in pool:
        by_cat.setdefault(item[0], []).append(item)
    # a fixed mix: ~60% preferences, ~20% decisions, ~15% habits, ~5% Japanese
    share = {"en_pref": 0.45, "en_dislike": 0.13, "decision": 0.2, "habit": 0.13,
             "never": 0.03, "ja_pref": 0.03, "ja_habit": 0.03}
    chosen: list[tuple[str, str, str | None]] = []
    rest: list[tuple[str, str, str | None]] = []
    for cat, frac in share.items():
        items = by_cat[cat]
        rng.shuffle(items)
        take = min(len(items), round(frac * n_facts))
        chosen += items[:take]
        rest += items[take:]
    rng.shuffle(chosen)
    rng.shuffle(rest)
    chosen = (chosen + rest)[:n_facts]  # categories short of their share: topped up
    rng.shuffle(chosen)
    messages = []
    for fact, (cat, subject, _) in enumerate(chosen):
        template = rng.choice(LIKE[cat][0])
        messages.append(Message(template.format(s=subject), fact, False,
                                "ja" if cat.startswith("ja") else "en", cat))
    for fact in rng.sample(range(len(chosen)), min(n_paraphrases, len(chosen))):
        cat, subject, reworded = chosen[fact]
        use_reworded = reworded is not None and rng.random() < 0.15
        template = rng.choice(LIKE[cat][1])
        messages.append(Message(template.format(s=reworded if use_reworded else subject), fact,
                                True, "ja" if cat.startswith("ja") else "en", cat,
                                use_reworded))
    rng.shuffle(messages)
    # contradictions: each placed at a random point after the first message of its fact
    first = {}
    for index, msg in enumerate(messages):
        first.setdefault(msg.fact, index)
    placed = [(float(i), msg) for i, msg in enumerate(messages)]
    for fact in rng.sample(range(len(chosen)), min(n_contradictions, len(chosen))):
        cat, subject, _ = chosen[fact]
        if cat == "ja_habit":
            subject = subject.removesuffix("ます") + "ません"
        text = rng.choice(NEGATE[cat]).format(s=subject)
        at = rng.uniform(first[fact] + 0.5, len(messages) + 0.5)
        placed.append((at, Message(text, fact, False, "ja" if cat.startswith("ja") else "en",
                                   cat, contradicts=True)))
    placed.sort(key=lambda pair: pair[0])
    return [msg for _, msg in placed]


# -- embedding -------------------------------------------------------------------------------


class TextCacheEmbedder:
    """The engine's Embedder protocol over vectors computed beforehand, looked up by text
    (a text not computed beforehand goes to the real model and is counted). Query vectors
    (the second extraction stage's clauses) are kept once computed."""

    def __init__(self, model: CachedModel, table: dict[str, np.ndarray]) -> None:
        self.model = model
        self.model_id, self.dtype = model.model_id, model.dtype
        self.dimension, self.stamp = model.dimension, model.stamp
        self.table = table
        self.queries: dict[str, np.ndarray] = {}
        self.misses = 0

    def embed_passages(self, texts: list[str]) -> np.ndarray:
        missing = [t for t in texts if t not in self.table]
        if missing:
            self.misses += len(missing)
            rows = self.model.embedder.embed_passages_array(missing)
            self.table.update(zip(missing, rows, strict=True))
        return np.stack([self.table[t] for t in texts])

    def embed_queries(self, texts: list[str]) -> np.ndarray:
        missing = list(dict.fromkeys(t for t in texts if t not in self.queries))
        if missing:
            rows = self.model.embedder.embed_queries_array(missing)
            self.queries.update(zip(missing, rows, strict=True))
        return np.stack([self.queries[t] for t in texts])


class Clock:
    def __init__(self) -> None:
        self.t = 1_700_000_000.0

    def __call__(self) -> float:
        self.t += 1.0
        return self.t


# -- scoring --------------------------------------------------------------------------------


@dataclasses.dataclass
class Score:
    merged: int = 0
    false_merges: int = 0
    missed: int = 0
    missed_reworded: int = 0  # of which the fact's paraphrase reworded its subject
    stored: int = 0
    skipped: int = 0
    failed: int = 0
    negation_merges: int = 0  # of the false merges: same fact, the other polarity
    contradictions: int = 0  # contradiction messages extracted
    superseded: int = 0  # replaced the record of their own fact (history kept): the
    # contradictions, and paraphrases of the fact said after its contradiction
    false_supersedes: int = 0  # replaced a record of another fact
    contradictions_stored_beside: int = 0  # stored while their fact had a live record
    false_examples: list = dataclasses.field(default_factory=list)
    missed_examples: list = dataclasses.field(default_factory=list)

    def as_dict(self) -> dict:
        return dataclasses.asdict(self)


class Scorer:
    """Labels of records as messages land in them: record id -> (fact, side) of the message
    that made it; ``fact_records``: the live records of each fact."""

    def __init__(self, reworded_facts: set[int]) -> None:
        self.reworded_facts = reworded_facts
        self.record_fact: dict[str, tuple[int, bool]] = {}
        self.record_text: dict[str, str] = {}  # the message that created the record
        self.fact_records: dict[int, set[str]] = {}
        self.score = Score()

    def stored(self, memory_id: str, msg: Message) -> None:
        s = self.score
        s.stored += 1
        s.contradictions += msg.contradicts
        if self.fact_records.get(msg.fact) and msg.contradicts:
            s.contradictions_stored_beside += 1
        elif self.fact_records.get(msg.fact):
            s.missed += 1
            s.missed_reworded += msg.fact in self.reworded_facts
            if len(s.missed_examples) < 12:
                s.missed_examples.append({"text": msg.text, "fact": msg.fact,
                                          "reworded": msg.reworded})
        self.record_fact[memory_id] = msg.label
        self.record_text[memory_id] = msg.text
        self.fact_records.setdefault(msg.fact, set()).add(memory_id)

    def merged(self, memory_id: str, msg: Message) -> None:
        s = self.score
        s.merged += 1
        s.contradictions += msg.contradicts
        into = self.record_fact.get(memory_id)
        if into != msg.label:
            s.false_merges += 1
            s.negation_merges += into is not None and into[0] == msg.fact
            if len(s.false_examples) < 12:
                s.false_examples.append({"text": msg.text,
                                         "into": self.record_text.get(memory_id)})
        self.fact_records.setdefault(msg.fact, set()).add(memory_id)

    def replaced(self, new_id: str, old_id: str, msg: Message, *, merge: bool) -> None:
        """``new_id`` superseded ``old_id`` (a contradiction, or a merge that grew the
        text): the old record left for the trash."""
        if merge:
            self.merged(old_id, msg)
        else:
            s = self.score
            s.contradictions += msg.contradicts
            if self.record_fact.get(old_id, (None,))[0] == msg.fact:
                s.superseded += 1
            else:
                s.false_supersedes += 1
                if len(s.false_examples) < 12:
                    s.false_examples.append({"text": msg.text, "replaced":
                                             self.record_text.get(old_id)})
        old = self.record_fact.get(old_id)
        if old is not None:
            self.fact_records.get(old[0], set()).discard(old_id)
        self.record_fact[new_id] = self.record_fact[old_id] if merge and old else msg.label
        self.record_text[new_id] = msg.text
        self.fact_records.setdefault(msg.fact, set()).add(new_id)


def run_ingest(messages: list[Message], embedder, policy: TierPolicy, threshold: float
               ) -> dict:
    clock = Clock()
    engine = MemoryEngine(embedder, clock=clock)
    log = AuditLog(max_events=100_000)
    scorer = Scorer({m.fact for m in messages if m.reworded})
    seconds = 0.0
    cold_reports = []
    for start in range(0, len(messages), BATCH):
        batch = messages[start:start + BATCH]
        t0 = time.perf_counter()
        report = ingest(engine, "bench", [m.text for m in batch], tier_policy=policy,
                        dedup_threshold=threshold, log=log)
        seconds += time.perf_counter() - t0
        if (start // BATCH) % 100 == 0:
            print(f"  {start + len(batch)} messages, {seconds:.1f}s", flush=True)
        clock.t += 600.0  # ten minutes between conversations
        for item in report.items:
            msg = batch[item.source]
            if item.action == "skipped":
                scorer.score.skipped += 1
            elif item.action == "failed":
                scorer.score.failed += 1
            elif item.action == "stored":
                scorer.stored(item.memory_id, msg)
            elif item.supersedes:
                scorer.replaced(item.memory_id, item.supersedes, msg,
                                merge=item.action == "merged")
            else:
                scorer.merged(item.memory_id, msg)
        if report.rebalance is not None and report.rebalance.cold is not None:
            cold = report.rebalance.cold
            cold_reports.append({"before": cold.before, "after": cold.after,
                                 "trigger": cold.trigger, "passes": cold.passes,
                                 "superseded": len(cold.superseded),
                                 "merged": len(cold.merged)})
    store = engine.stores["bench"]
    return {
        "engine": engine, "score": scorer.score, "seconds": seconds,
        "records_kept": len(store.records), "trashed": len(store.trash),
        "cold": cold_count(engine, "bench"), "hot_chars": hot_usage(engine, "bench"),
        "cold_maintenance": cold_reports, "log_events": len(log),
    }


def similarity_only(messages: list[Message], embedder: TextCacheEmbedder,
                    threshold: float) -> dict:
    """Same candidates, keys removed: merged iff cosine >= threshold with the same kind and
    the same polarity (the text of the record is kept)."""
    table = embedder.table
    stage = classifier_for(embedder)
    engine = MemoryEngine(embedder, clock=Clock())
    store = engine.writable_store("sim")
    scorer = Scorer({m.fact for m in messages if m.reworded})
    t0 = time.perf_counter()
    for msg in messages:
        candidates, _ = extract([msg.text], classifier=stage)
        for c in candidates:
            vec = table[c.text]
            found = DedupIndex(store, threshold).match(c.kind, None, vec, c.polarity)
            if found is None:
                memory = build_memory(engine, "sim", c.text, kind=c.kind,
                                      importance=c.importance, key=None, meta={})
                store.put(memory, vec)
                scorer.stored(memory.id, msg)
            else:
                scorer.merged(found.memory_id, msg)
    return {"threshold": threshold, "score": scorer.score, "records_kept": len(store.records),
            "seconds": time.perf_counter() - t0}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--facts", type=int, default=8_000)
    ap.add_argument("--paraphrases", type=int, default=2_000)
    ap.add_argument("--contradictions", type=int, default=1_000)
    ap.add_argument("--e2e", type=int, default=500, help="messages for the real-model run")
    ap.add_argument("--limit", type=int, default=None,
                    help="ingest only the first N messages of the (shuffled) set; the "
                         "vectors of the whole set are still the cached ones")
    ap.add_argument("--thresholds", default="0.92,0.95,0.97")
    ap.add_argument("--name", default="governance_dedup")
    args = ap.parse_args()

    info = machine_info()
    messages = build_dataset(args.facts, args.paraphrases, args.contradictions)
    n = len(messages)
    print(f"{n} messages ({args.facts} facts, {args.paraphrases} paraphrases, "
          f"{args.contradictions} contradictions)", flush=True)

    # every extracted content (patterns + the second stage ingest runs with the model),
    # embedded once (passages cached on disk; the stage's query vectors kept in memory)
    model = CachedModel("e5-q8", threads=2)
    cached = TextCacheEmbedder(model, {})
    stage = classifier_for(cached)
    t0 = time.perf_counter()
    contents = sorted({c.text for m in messages
                       for c in extract([m.text], classifier=stage)[0]})
    stage_s = time.perf_counter() - t0
    t0 = time.perf_counter()
    vectors = model.embed("passages", contents)
    print(f"{len(contents)} contents embedded/cached in {time.perf_counter() - t0:.1f}s "
          f"(extraction with the {stage.via} stage: {stage_s:.1f}s, "
          f"{len(cached.queries)} clauses embedded)", flush=True)
    cached.table.update(zip(contents, vectors, strict=True))
    if args.limit is not None:
        messages = messages[:args.limit]
        n = len(messages)
        print(f"limited to the first {n} messages", flush=True)
    if model.embedded["passages"]:
        embed_s, embed_n = model.embed_seconds["passages"], model.embedded["passages"]
    else:
        embed_s, embed_n = model.cached_seconds["passages"], model.cached["passages"]

    policy = TierPolicy()
    main_run = run_ingest(messages, cached, policy, DEFAULT_THRESHOLD)
    score: Score = main_run["score"]
    print(f"ingest: {main_run['records_kept']} kept, {score.merged} merged, "
          f"{score.false_merges} false, {score.missed} missed, {score.superseded} superseded, "
          f"{score.false_supersedes} false supersedes, {main_run['seconds']:.1f}s", flush=True)

    # end to end with the real model on a prefix
    e2e_msgs = messages[:args.e2e]
    e2e_engine = MemoryEngine(model.embedder, clock=Clock())
    t0 = time.perf_counter()
    for start in range(0, len(e2e_msgs), BATCH):
        ingest(e2e_engine, "bench", [m.text for m in e2e_msgs[start:start + BATCH]],
               tier_policy=policy)
    e2e_s = time.perf_counter() - t0
    print(f"end to end: {len(e2e_msgs)} messages in {e2e_s:.1f}s", flush=True)

    sims = []
    for thr in [float(x) for x in args.thresholds.split(",")]:
        sim = similarity_only(messages, cached, thr)
        sims.append(sim)
        print(f"similarity only @{thr}: {sim['records_kept']} kept, "
              f"{sim['score'].false_merges} false, {sim['score'].missed} missed", flush=True)

    paraphrases = sum(m.paraphrase for m in messages)
    contradictions = sum(m.contradicts for m in messages)
    reworded = sum(m.reworded for m in messages)
    ja = sum(m.lang == "ja" for m in messages)
    expected_records = len({m.fact for m in messages})
    payload = {
        "benchmark": "governance_dedup",
        "machine": info,
        "model": {"name": "e5-q8", "stamp": model.stamp},
        "dataset": {"seed": SEED, "messages": n, "facts": expected_records,
                    "paraphrases": paraphrases, "reworded_paraphrases": reworded,
                    "contradictions": contradictions,
                    "japanese_messages": ja, "by_category": dict(Counter(
                        m.category for m in messages)), "batch": BATCH,
                    "extracted_contents": len(contents)},
        "ingest": {
            "records_kept": main_run["records_kept"], "expected_records": expected_records,
            **score.as_dict(),
            "trashed": main_run["trashed"], "cold_entries": main_run["cold"],
            "hot_chars": main_run["hot_chars"],
            "cold_maintenance_passes": main_run["cold_maintenance"],
            "governance_seconds": round(main_run["seconds"], 2),
            "governance_messages_per_s": round(n / main_run["seconds"], 1),
            "embedding_seconds": round(embed_s, 2), "embedded_texts": embed_n,
            "embedding_texts_per_s": round(embed_n / embed_s, 1) if embed_s else None,
            "end_to_end": {"messages": len(e2e_msgs), "seconds": round(e2e_s, 2),
                           "messages_per_s": round(len(e2e_msgs) / e2e_s, 1)},
        },
        "similarity_only": [{"threshold": s["threshold"], "records_kept": s["records_kept"],
                             "seconds": round(s["seconds"], 2), **s["score"].as_dict()}
                            for s in sims],
    }
    ing = payload["ingest"]
    md = [f"# Governance dedup benchmark ({n} messages)\n\n",
          f"{info['date']}, commit {info['git_commit']}, {info['cpu']} ({info['cpus']} CPUs), "
          f"model {model.stamp}.\n\n",
          f"Labelled synthetic set (seed {SEED}): {expected_records} distinct facts, "
          f"{paraphrases} paraphrased duplicates ({reworded} with the subject reworded), "
          f"{contradictions} contradictions (a later negation of a fact), "
          f"{ja} Japanese messages; ingested through `omoide.governance.ingest` in "
          f"conversations of {BATCH} messages.\n\n",
          "## Ingest (pattern extraction + key/cosine dedup + tiers)\n\n",
          md_table(["records kept", "expected", "merged", "false merges",
                    "(negation into what it negates)", "missed duplicates",
                    "(reworded subject)", "skipped", "trashed (history)"],
                   [[ing["records_kept"], expected_records, ing["merged"],
                     ing["false_merges"], ing["negation_merges"], ing["missed"],
                     ing["missed_reworded"], ing["skipped"], ing["trashed"]]]),
          "\n",
          md_table(["contradictions extracted", "supersedes of the fact's own record",
                    "false supersedes", "stored beside", "merged (loss)"],
                   [[ing["contradictions"], ing["superseded"], ing["false_supersedes"],
                     ing["contradictions_stored_beside"], ing["negation_merges"]]]),
          "\n",
          md_table(["throughput", "messages", "seconds", "messages/s"],
                   [["governance only (cached vectors)", n, ing["governance_seconds"],
                     ing["governance_messages_per_s"]],
                    ["end to end with e5 q8", len(e2e_msgs), ing["end_to_end"]["seconds"],
                     ing["end_to_end"]["messages_per_s"]],
                    ["embedding alone (contents)", embed_n, round(embed_s, 2),
                     ing["embedding_texts_per_s"]]]),
          "\nCold maintenance passes during the run: "
          f"{len(ing['cold_maintenance_passes'])} "
          f"({sum(p['merged'] + p['superseded'] for p in ing['cold_maintenance_passes'])} "
          "entries folded).\n\n",
          "Missed duplicates (examples): "
          + "; ".join(f"\"{x['text']}\"" for x in score.missed_examples[:5]) + "\n\n",
          "## Similarity only (keys removed: cosine >= threshold, same kind and polarity)\n\n",
          md_table(["threshold", "records kept", "merged", "false merges",
                    "(negation merges)", "missed"],
                   [[s["threshold"], s["records_kept"], s["score"].merged,
                     s["score"].false_merges, s["score"].negation_merges, s["score"].missed]
                    for s in sims]),
          "\nFalse merges at the default threshold (examples): "
          + "; ".join(f"\"{x['text']}\" -> \"{x['into']}\""
                      for x in sims[0]["score"].false_examples[:5]) + "\n"]
    json_path, md_path = write_results(args.name, payload, "".join(md))
    print(f"wrote {json_path} and {md_path}")


if __name__ == "__main__":
    main()
