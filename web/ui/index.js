// Mounts the screens once the engine is ready.
import { mountCharacters } from "./characters.js";
import { mountClients } from "./clients.js";
import { mountMaintenance } from "./maintenance.js";
import { mountMemories } from "./memories.js";
import { mountRecall } from "./recall.js";
import { setupShell } from "./shell.js";
import { mountTavern } from "./tavern.js";

export async function startUI(ctx) {
  const screens = {
    characters: mountCharacters(document.getElementById("panel-characters"), ctx),
    memories: mountMemories(document.getElementById("panel-memories"), ctx),
    recall: mountRecall(document.getElementById("panel-recall"), ctx),
    maintenance: mountMaintenance(document.getElementById("panel-maintenance"), ctx),
  };
  // Chat-app boxes of the maintenance tab, in their own modules, above the engine details.
  const maintenancePanel = document.getElementById("panel-maintenance");
  const about = document.getElementById("about");
  for (const box of [mountTavern(ctx), mountClients(ctx)]) {
    if (about?.parentElement === maintenancePanel) about.before(box);
    else maintenancePanel.append(box);
  }
  const loading = Promise.allSettled([ctx.refreshCharacters(), ctx.refreshModelState()]);
  setupShell(ctx, screens);
  for (const result of await loading) {
    if (result.status === "rejected") ctx.notify(ctx.errorText(result.reason), { kind: "error" });
  }
  ctx.ready = true;
  document.getElementById("app").dataset.ready = "true";
  return screens;
}
