// A memory-aware chat page on its own origin: Omoide's JS client (its own copy, ./client.js)
// gives each turn the character's memories; any OpenAI-compatible endpoint (llama.cpp
// server, LM Studio, Ollama) writes the reply. Every user turn is ingested (extraction +
// dedup in Omoide); before each reply, context(...) goes into the system prompt. The side
// panel shows what was recalled and remembered for the turn. Text is only ever textContent.
import { connect } from "./client.js";

const $ = (id) => document.getElementById(id);
const params = new URLSearchParams(location.search);
const saved = JSON.parse(localStorage.getItem("omoide-demo") ?? "{}");
$("omoide-url").value = params.get("omoide") ?? saved.omoide ?? "http://127.0.0.1:8742/";
$("endpoint").value = params.get("endpoint") ?? saved.endpoint ?? "";
$("model").value = saved.model ?? "local-model";

let omoide = null;
const history = []; // {role, content} of this conversation

function status(text, error = false) {
  $("status").textContent = text;
  $("status").classList.toggle("error", error);
}

function item(text, className) {
  const li = document.createElement("li");
  li.textContent = text;
  if (className) li.className = className;
  return li;
}

function chatUrl(endpoint) {
  const base = endpoint.replace(/\/+$/, "");
  if (base.endsWith("/chat/completions")) return base;
  return base + (base.endsWith("/v1") ? "/chat/completions" : "/v1/chat/completions");
}

async function loadCharacters() {
  try {
    const characters = await omoide.characters();
    $("character").replaceChildren(...characters.map((c) => {
      return Object.assign(document.createElement("option"), { value: c.id,
        textContent: `${c.name} (${c.count})` });
    }));
    $("send").disabled = characters.length === 0;
    status(characters.length ? "Connected to Omoide." : "Connected, but no character is " +
      "shared with this page: allow some on Omoide's maintenance tab.", !characters.length);
  } catch (err) {
    $("send").disabled = true;
    status(`${err.code ?? "ERROR"}: ${err.message}`, true);
  }
}

$("setup").addEventListener("submit", async (event) => {
  event.preventDefault();
  localStorage.setItem("omoide-demo", JSON.stringify({ omoide: $("omoide-url").value,
    endpoint: $("endpoint").value, model: $("model").value }));
  omoide?.close();
  status("Connecting to Omoide…");
  try {
    omoide = await connect({ url: $("omoide-url").value });
  } catch (err) {
    status(`${err.code ?? "ERROR"}: ${err.message}`, true);
    return;
  }
  omoide.on("boot", (e) => status(`Omoide is starting: ${e.stage}`));
  omoide.on("download", (e) => status(`Downloading ${e.state.model}…`));
  $("open-window").hidden = !omoide.needsWindow;
  if (omoide.needsWindow) {
    status("This page is on another site than Omoide: open the Omoide window to connect.");
    return;
  }
  await loadCharacters();
});

$("open-window").addEventListener("click", async () => {
  try {
    await omoide.openWindow();
    $("open-window").hidden = true;
    await loadCharacters();
  } catch (err) {
    status(`${err.code ?? "ERROR"}: ${err.message}`, true);
  }
});

async function reply(character, name, memoryBlock) {
  const system = `You are ${name}. Stay in character.\n\n` +
    (memoryBlock ? `What you remember (date, kind, memory):\n${memoryBlock}` : "");
  const headers = { "Content-Type": "application/json" };
  if ($("api-key").value) headers.Authorization = `Bearer ${$("api-key").value}`;
  const response = await fetch(chatUrl($("endpoint").value), { method: "POST", headers,
    body: JSON.stringify({ model: $("model").value || "local-model",
      messages: [{ role: "system", content: system }, ...history] }) });
  if (!response.ok) throw new Error(`the chat endpoint answered HTTP ${response.status}`);
  const data = await response.json();
  const text = data?.choices?.[0]?.message?.content;
  if (typeof text !== "string") throw new Error("the chat endpoint gave no message");
  return text;
}

$("composer").addEventListener("submit", async (event) => {
  event.preventDefault();
  const text = $("input").value.trim();
  const select = $("character");
  if (!text || !omoide || !select.value) return;
  const character = select.value;
  const name = select.selectedOptions[0].textContent.replace(/ \(\d+\)$/, "");
  $("input").value = "";
  $("send").disabled = true;
  $("messages").append(item(text, "user"));
  const previous = history.at(-1)?.role === "assistant" ? [history.at(-1)] : [];
  history.push({ role: "user", content: text });
  try {
    const context = await omoide.context(character, text,
      { tokenBudget: Number($("budget").value) || 600 });
    $("recalled").replaceChildren(...[...context.hot, ...context.recalled]
      .map((m) => item(m.text)));
    const [ingested, answer] = await Promise.all([
      // The reply it answers goes along as the turn's index context (only user turns are
      // extracted from).
      omoide.ingest(character, [...previous, { role: "user", content: text }]),
      reply(character, name, context.text),
    ]);
    $("remembered").replaceChildren(...[...ingested.stored, ...ingested.merged]
      .map((m) => item(m.action === "stored" ? m.text : `${m.text} (merged)`)));
    history.push({ role: "assistant", content: answer });
    $("messages").append(item(answer, "assistant"));
    status("");
  } catch (err) {
    status(`${err.code ?? "ERROR"}: ${err.message}`, true);
  } finally {
    $("send").disabled = false;
  }
});
