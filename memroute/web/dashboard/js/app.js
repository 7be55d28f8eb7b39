// Memory Studio: the header switches and the tabs (`?tab=memories|playground|engine`).
// Each tab module exports `mount(panel)` (called once) and may export `show()` and
// `hide()` (called when its tab is selected or left, e.g. to start or stop polling).
import { api } from "./api.js";
import { renderTopbar } from "./nav.js";
import { toast } from "./ui.js";

const TABS = ["memories", "playground", "engine"];
const modules = {};
let current = null;

async function loadTab(name) {
  if (!modules[name]) {
    const module = await import(`./${name}.js`);
    modules[name] = module;
    await module.mount(document.getElementById(`panel-${name}`));
  }
  return modules[name];
}

async function selectTab(name, { push = true } = {}) {
  if (!TABS.includes(name)) name = "memories";
  if (current === name) return;
  if (current && modules[current]?.hide) modules[current].hide();
  current = name;
  for (const tab of TABS) {
    const selected = tab === name;
    const button = document.getElementById(`tab-${tab}`);
    button.setAttribute("aria-selected", String(selected));
    button.tabIndex = selected ? 0 : -1;
    document.getElementById(`panel-${tab}`).hidden = !selected;
  }
  if (push) {
    const url = new URL(location.href);
    url.searchParams.set("tab", name);
    history.pushState({ tab: name }, "", url);
  }
  const module = await loadTab(name);
  if (module.show) module.show();
}

function wireTabs() {
  const list = document.querySelector('[role="tablist"]');
  list.addEventListener("click", (event) => {
    const button = event.target.closest('[role="tab"]');
    if (button) selectTab(button.dataset.tab);
  });
  list.addEventListener("keydown", (event) => {
    if (event.key !== "ArrowRight" && event.key !== "ArrowLeft") return;
    const index = TABS.indexOf(current) + (event.key === "ArrowRight" ? 1 : -1);
    const next = TABS[(index + TABS.length) % TABS.length];
    selectTab(next).then(() => document.getElementById(`tab-${next}`).focus());
  });
  window.addEventListener("popstate", () => {
    selectTab(new URLSearchParams(location.search).get("tab") || "memories", { push: false });
  });
}

const SWITCHES = {
  "memory-enabled": "enabled",
  "extraction-enabled": "extractionEnabled",
  "injection-enabled": "injectionEnabled",
};

function showSettings(settings) {
  for (const [id, field] of Object.entries(SWITCHES)) {
    document.getElementById(id).checked = Boolean(settings[field]);
  }
  document.getElementById("cost-tokens").textContent = String(settings.maxTokens);
  document.getElementById("cost-warning").hidden = !settings.enabled;
  for (const id of ["extraction-enabled", "injection-enabled"]) {
    document.getElementById(id).disabled = !settings.enabled;
  }
  const capture = document.getElementById("capture-turns");
  capture.value = settings.captureTurns;
  capture.disabled = !settings.enabled || !settings.extractionEnabled;
}

function wireCapture() {
  const select = document.getElementById("capture-turns");
  select.addEventListener("change", async () => {
    const wanted = select.value;
    select.disabled = true;
    try {
      showSettings(await api("/api/settings/memory", { method: "PUT", body: { captureTurns: wanted } }));
      toast(`Keeping ${select.options[select.selectedIndex].textContent}`);
    } catch (error) {
      showSettings(await api("/api/settings/memory"));
      toast(`Could not save: ${error.message}`, "error");
    }
  });
}

// The switches come disabled and are enabled once they show the saved settings: a click
// made before then would be undone when the settings arrive.
async function wireSwitches() {
  wireCapture();
  for (const [id, field] of Object.entries(SWITCHES)) {
    const input = document.getElementById(id);
    input.addEventListener("change", async () => {
      input.disabled = true;
      try {
        const saved = await api("/api/settings/memory", { method: "PUT", body: { [field]: input.checked } });
        showSettings(saved);
        toast(`${input.labels[0].textContent.trim()} ${input.checked ? "on" : "off"}`);
      } catch (error) {
        input.checked = !input.checked;
        toast(`Could not save: ${error.message}`, "error");
      } finally {
        input.disabled = id !== "memory-enabled" && !document.getElementById("memory-enabled").checked;
      }
    });
  }
  showSettings(await api("/api/settings/memory"));
  document.getElementById("memory-enabled").disabled = false;
}

renderTopbar();
wireTabs();
wireSwitches().catch((error) => toast(`Could not load settings: ${error.message}`, "error"));
selectTab(new URLSearchParams(location.search).get("tab") || "memories", { push: false });
