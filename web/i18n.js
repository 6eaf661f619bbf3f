// Message catalogues: every user-visible string, in English and Japanese.
export const CATALOGUES = {
  en: {
    tagline: "Long-term memory for your characters, on this device.",
    "boot.title": "Starting the memory engine",
    "boot.runtime": "Downloading runtime",
    "boot.python": "Starting Python",
    "boot.engine": "Loading engine",
    "boot.ready": "Ready",
    "boot.failed": "The engine could not start: {reason}",
    "about.title": "Engine",
    "about.runtime": "Runtime",
    "about.version": "Omoide version",
    "about.offline": "Works offline",
    yes: "yes",
    no: "not yet (first visit still caching)",
    "download.progress": "Downloading {model}: {pct}% ({done} / {total} MB)",
    "download.error": "Download of {model} failed: {reason}",
  },
  ja: {
    tagline: "キャラクターの長期記憶を、この端末の中だけで。",
    "boot.title": "メモリエンジンを起動しています",
    "boot.runtime": "ランタイムをダウンロード中",
    "boot.python": "Python を起動中",
    "boot.engine": "エンジンを読み込み中",
    "boot.ready": "準備完了",
    "boot.failed": "エンジンを起動できませんでした: {reason}",
    "about.title": "エンジン",
    "about.runtime": "ランタイム",
    "about.version": "Omoide のバージョン",
    "about.offline": "オフラインで動作",
    yes: "はい",
    no: "まだです（初回のキャッシュ中）",
    "download.progress": "{model} をダウンロード中: {pct}%（{done} / {total} MB）",
    "download.error": "{model} のダウンロードに失敗しました: {reason}",
  },
};

export function pickLanguage(preferred = navigator.languages ?? [navigator.language]) {
  const stored = localStorage.getItem("omoide.lang");
  if (stored && stored in CATALOGUES) return stored;
  const match = preferred.map((l) => l.slice(0, 2)).find((l) => l in CATALOGUES);
  return match ?? "en";
}

export function translator(lang) {
  const table = CATALOGUES[lang] ?? CATALOGUES.en;
  return (key, fields = {}) =>
    (table[key] ?? CATALOGUES.en[key] ?? key).replace(/\{(\w+)\}/g, (_, k) => String(fields[k]));
}

// Text only: catalogues and memory text are never parsed as HTML.
export function translatePage(root, t) {
  for (const el of root.querySelectorAll("[data-i18n]")) el.textContent = t(el.dataset.i18n);
}
