// Engine tab: which search tiers are active (GET /api/memory/engine-status, polled every
// 5 s while the tab is visible), re-indexing, the embedding source, the vector store,
// Qdrant (tier 2) and rerank. Memory settings are saved one change at a time with
// PUT /api/settings/memory; the Qdrant card sends only the fields the user changed
// (its `enabled` also resets the memory setting `vectorStore`, so it is never resent).
import { api } from "./api.js";
import { clear, confirmAction, el, field, toast } from "./ui.js";

const POLL_MS = 5000;
const SOURCES = [
  ["auto", "auto — the best one configured"],
  ["transformers", "transformers — bundled MiniLM (best quality)"],
  ["static", "static — Model2Vec (fast, light)"],
  ["remote", "remote — a provider's embeddings"],
  ["hashing", "hashing — tests and demos only"],
];
const SOURCE_HELP = {
  auto:
    "Uses remote if a provider/model is set below, else static if enabled, else transformers if enabled, " +
    "else keyword search only.",
  transformers: "all-MiniLM-L6-v2 (int8 ONNX), 384 dimensions, runs offline in the server. Needs its switch.",
  static: "A Model2Vec static model, 256 dimensions, ~0.1 ms per query. Needs its switch.",
  remote: "POST /v1/embeddings of a configured provider, with its credentials. Pick the provider and model below.",
  hashing: "Hashed words and trigrams: deterministic and instant, but weak. Never picked by auto.",
};
const VECTOR_STORES = [
  ["auto", "auto — sqlite-vec (Qdrant when enabled and serving)"],
  ["sqlite-vec", "sqlite-vec — tier 1, in the SQLite file"],
  ["qdrant", "qdrant — tier 2, a Qdrant server"],
];
const QUANTIZATIONS = ["none", "int8", "binary"];
const DEFAULT_QDRANT_MODELS = [{ value: "", label: "Memory embedding source" }];
const PROVIDERS_LINK = () => el("a", { href: "/dashboard/providers" }, "Providers page");

const state = {
  settings: null, // memory settings, as the server last answered
  qdrant: null, // Qdrant settings, as the server last answered
  qdrantModels: null, // choices for Qdrant's embedding model
  providers: [], // configured providers with a key (for remote embeddings and rerank)
  timer: null,
  visible: false,
  inFlight: false,
  asked: 0, // engine-status requests sent
  shown: 0, // the latest request whose answer is shown (an older answer arriving late is dropped)
  reindexFrom: null, // the pending count when Reindex Now started (for the progress bar)
};
const ui = {};

export function mount(panel) {
  panel.append(
    statusCard(),
    el("div", { class: "eng-columns" }, embeddingCard(), vectorStoreCard()),
    qdrantCard(),
    rerankCard(),
  );
  loadSettings();
}

export function show() {
  state.visible = true;
  refreshStatus();
  clearInterval(state.timer);
  state.timer = setInterval(refreshStatus, POLL_MS);
}

export function hide() {
  state.visible = false;
  clearInterval(state.timer);
  state.timer = null;
}

// -- small helpers -----------------------------------------------------------------------

function card(id, title, ...children) {
  const heading = el("h2", { id: `${id}-title` }, title);
  return el("section", { class: "card eng-card", id, "aria-labelledby": heading.id }, heading, ...children);
}

function switchControl(id, label, onchange) {
  const input = el("input", { id, type: "checkbox", role: "switch", onchange });
  return { input, wrap: el("label", { class: "switch" }, input, " ", el("span", {}, label)) };
}

function statusLine(id) {
  return el("p", { id, class: "eng-result", role: "status" });
}

function setLine(node, message, kind = "") {
  node.textContent = message || "";
  node.className = `eng-result ${kind}`;
}

function options(select, pairs, current) {
  select.replaceChildren(...pairs.map(([value, label]) => el("option", { value }, label)));
  if (current !== undefined) select.value = current;
}

function facts(rows) {
  return rows.flatMap(([term, value]) => [el("dt", {}, term), el("dd", { dataset: { term } }, value)]);
}

/** Controls that stay disabled until their settings have loaded (`unlock(group)`), so
 * nothing the user types is overwritten by the first answer. */
const locks = { memory: [], qdrant: [] };

function locked(group, ...children) {
  const set = el("fieldset", { class: "eng-bare", role: "presentation", disabled: true }, ...children);
  locks[group].push(set);
  return set;
}

function unlock(group) {
  for (const set of locks[group]) set.disabled = false;
}

function plural(count, word, words = `${word}s`) {
  return `${count} ${count === 1 ? word : words}`;
}

function memories(count) {
  return plural(count, "memory", "memories");
}

// -- loading -----------------------------------------------------------------------------

async function loadSettings() {
  const [settings, qdrant, providers] = await Promise.allSettled([
    api("/api/settings/memory"),
    api("/api/settings/qdrant"),
    api("/api/memory/embedding-providers"),
  ]);
  if (providers.status === "fulfilled") showProviders(providers.value.providers);
  if (settings.status === "fulfilled") {
    showSettings(settings.value);
    unlock("memory");
  } else {
    toast(`Could not load memory settings: ${settings.reason.message}`, "error");
  }
  if (qdrant.status === "fulfilled") {
    showQdrantSettings(qdrant.value);
    unlock("qdrant");
  } else setLine(ui.qdSaveResult, `Could not load Qdrant settings: ${qdrant.reason.message}`, "error");
  loadQdrantModels();
}

/** Poll once; `now` also asks while a poll is running (after a save, whose effect an
 * answer already on its way may not show). */
async function refreshStatus({ now = false } = {}) {
  if (!state.visible || document.hidden || (state.inFlight && !now)) return;
  const ticket = ++state.asked;
  state.inFlight = true;
  try {
    const status = await api("/api/memory/engine-status");
    if (ticket > state.shown) {
      state.shown = ticket;
      showStatus(status);
    }
    ui.statusError.hidden = true;
  } catch (error) {
    ui.statusError.hidden = false;
    ui.statusError.textContent = `Could not load the engine status: ${error.message}`;
  } finally {
    if (ticket === state.asked) state.inFlight = false;
  }
}

function refreshSoon() {
  refreshStatus({ now: true });
}

// -- status chips ------------------------------------------------------------------------

function statusCard() {
  ui.chips = el("ul", { class: "eng-chips", "aria-label": "Search tiers" });
  ui.updated = el("span", { class: "help" }, "Loading…");
  ui.queue = el("span", { class: "help" });
  ui.statusError = el("p", { class: "error", role: "alert", hidden: true });
  const meta = el("p", { class: "eng-meta" }, ui.updated, " ", ui.queue);
  return card("eng-status", "Engine status", ui.chips, ui.statusError, meta);
}

function chip(name, label, [kind, stateText], detail, reason) {
  const dot = kind === "ok" || kind === "bad" ? kind : "";
  return el(
    "li",
    { class: `eng-chip ${kind}`, dataset: { chip: name } },
    el("span", { class: `dot ${dot}`, "aria-hidden": "true" }),
    el("span", { class: "eng-chip-name" }, label),
    el("span", { class: "eng-chip-state" }, stateText),
    detail ? el("span", { class: "eng-chip-detail" }, detail) : null,
    reason ? el("span", { class: "eng-chip-reason", title: reason }, reason) : null,
  );
}

function availability(available) {
  return available ? ["ok", "available"] : ["bad", "unavailable"];
}

function qdrantChip(q) {
  if (!q.enabled) return chip("qdrant", "Qdrant", ["off", "off"], null, "not enabled (tier 2 is optional)");
  const where = [q.where, q.collection].filter(Boolean).join(" · ");
  if (!q.healthy) {
    return chip("qdrant", "Qdrant", availability(false), where, q.error || q.lastError || "not reachable");
  }
  if (!q.serving) {
    const progress = `${q.backfill.pushed} of ${q.backfill.total} pushed; sqlite-vec answers meanwhile`;
    return chip("qdrant", "Qdrant", ["warn", "back-filling"], where, progress);
  }
  return chip("qdrant", "Qdrant", availability(true), where, `serving, ${plural(q.points ?? 0, "point")}`);
}

function rerankChip(r) {
  if (!r.enabled) return chip("rerank", "Rerank", ["off", "off"], null, r.reason);
  const model = [r.provider, r.model].filter(Boolean).join("/");
  return chip("rerank", "Rerank", availability(r.available), model || null, r.reason);
}

function embeddingChip(e) {
  const dims = e.dimensions && `${e.dimensions} d`;
  const detail = e.source ? [e.source, e.model, dims].filter(Boolean).join(" · ") : "none";
  return chip("embedding", "Embedding", availability(e.available), detail, e.reason);
}

function showStatus(status) {
  const { keyword, embedding, vectorStore, extractionQueue: queue } = status;
  const vectors = `${vectorStore.backend} · ${plural(vectorStore.rowCount, "vector")}`;
  ui.chips.replaceChildren(
    chip(
      "keyword",
      "Keyword",
      availability(keyword.available),
      `${keyword.backend} · related words ${keyword.relatedWords} · meanings ${keyword.meanings}`,
      null,
    ),
    embeddingChip(embedding),
    chip("vector-store", "Vector store", availability(vectorStore.available), vectors, vectorStore.reason),
    qdrantChip(status.qdrant),
    rerankChip(status.rerank),
  );
  ui.updated.textContent = `Updated ${new Date().toLocaleTimeString()} · refreshed every ${POLL_MS / 1000} s.`;
  ui.queue.textContent = queue ? `Extraction queue: ${queue.pending} waiting, ${queue.failed} failed.` : "";
  const word = embedding.available ? "available" : "unavailable";
  setLine(ui.embeddingState, `Now: ${word} — ${embedding.reason}`, embedding.available ? "ok" : "error");
  showReindex(status);
  showQdrantStatus(status.qdrant);
  showRerankStatus(status.rerank);
}

// -- vector store and re-index -------------------------------------------------------------

function vectorStoreCard() {
  ui.vectorStore = el("select", { id: "eng-vector-store", onchange: saveVectorStore });
  options(ui.vectorStore, VECTOR_STORES);
  ui.vectorResult = statusLine("eng-vector-result");
  ui.pending = el("strong", { id: "eng-pending" }, "…");
  ui.rows = el("strong", { id: "eng-rows" }, "…");
  ui.worker = el("span", { id: "eng-worker" }, "…");
  ui.force = el("input", { id: "eng-force", type: "checkbox" });
  ui.reindexButton = el("button", { type: "button", class: "primary", onclick: reindex }, "Reindex now");
  ui.reindexProgress = el("progress", { id: "eng-reindex-progress", max: 1, value: 0, hidden: true });
  ui.reindexProgress.setAttribute("aria-label", "Re-index progress");
  ui.reindexResult = statusLine("eng-reindex-result");
  const help = "Enabling Qdrant below also sets this to qdrant; disabling it, to auto.";
  return card(
    "eng-vectors",
    "Vector store and re-index",
    locked("memory", field("Vector store", ui.vectorStore, help).wrap),
    ui.vectorResult,
    el(
      "dl",
      { class: "eng-facts" },
      facts([
        ["Waiting for a vector", ui.pending],
        ["Vectors stored", ui.rows],
        ["Background worker", ui.worker],
      ]),
    ),
    el("label", { class: "switch" }, ui.force, " ", el("span", {}, "Re-embed everything, not only what waits")),
    el("div", { class: "row eng-actions" }, ui.reindexButton),
    ui.reindexProgress,
    ui.reindexResult,
  );
}

function saveVectorStore() {
  saveSettings({ vectorStore: ui.vectorStore.value }, ui.vectorResult);
}

function showReindex({ vectorStore, reindex }) {
  ui.pending.textContent = String(vectorStore.needsReindex);
  ui.rows.textContent = String(vectorStore.rowCount);
  const running = reindex.running ? "running" : "idle";
  const errors = plural(reindex.errors, "error");
  ui.worker.textContent = `${running} · ${reindex.processed} embedded · ${errors} since start`;
  const from = state.reindexFrom;
  if (from === null) return;
  const done = Math.max(0, from - vectorStore.needsReindex);
  ui.reindexProgress.max = Math.max(1, from);
  ui.reindexProgress.value = done;
  if (vectorStore.needsReindex === 0) {
    setLine(ui.reindexResult, `Re-index finished: ${memories(from)} embedded, none waiting.`, "ok");
    state.reindexFrom = null;
  } else {
    setLine(ui.reindexResult, `Re-indexing: ${done} of ${from} done, ${vectorStore.needsReindex} waiting.`);
  }
}

async function confirmForce() {
  const message = "Every memory is embedded again in the background. Searches keep working meanwhile.";
  return confirmAction("Re-embed everything?", message, "Re-embed");
}

async function reindex() {
  const force = ui.force.checked;
  if (force && !(await confirmForce())) return;
  ui.reindexButton.disabled = true;
  try {
    const answer = await api("/api/memory/reindex", { method: "POST", body: { force } });
    if (answer.started) {
      state.reindexFrom = answer.pending;
      ui.reindexProgress.hidden = answer.pending === 0;
      setLine(ui.reindexResult, `Started: ${memories(answer.pending)} waiting.`, "ok");
    } else {
      setLine(ui.reindexResult, `Not started: ${answer.reason} (${answer.pending} waiting).`, "error");
    }
    refreshSoon();
  } catch (error) {
    setLine(ui.reindexResult, `Reindex failed: ${error.message}`, "error");
  } finally {
    ui.reindexButton.disabled = false;
  }
}

// -- provider/model pickers (remote embeddings, rerank) --------------------------------------

/** A provider select (providers with a key) and a model input; value "provider/model" or null. */
function providerModelPicker(prefix, legend, [providerLabel, modelLabel], onsave) {
  const provider = el("select", { id: `${prefix}-provider` });
  const model = el("input", { id: `${prefix}-model`, type: "text", autocomplete: "off", placeholder: "model id" });
  const save = el("button", { type: "button", onclick: onsave }, "Save");
  model.addEventListener("keydown", (event) => {
    if (event.key === "Enter") onsave();
  });
  const row = el(
    "div",
    { class: "row" },
    field(providerLabel, provider).wrap,
    field(modelLabel, model).wrap,
    el("div", { class: "field" }, save),
  );
  return { wrap: el("fieldset", { class: "eng-picker" }, el("legend", {}, legend), row), provider, model };
}

function fillPicker(picker, value) {
  const [providerId, ...rest] = (value || "").split("/");
  const pairs = [["", "— none —"], ...state.providers.map((p) => [p.id, p.id])];
  if (providerId && !state.providers.some((p) => p.id === providerId)) {
    pairs.push([providerId, `${providerId} (no key)`]);
  }
  options(picker.provider, pairs, value ? providerId : "");
  picker.model.value = rest.join("/");
}

function pickerValue(picker) {
  const provider = picker.provider.value;
  const model = picker.model.value.trim();
  if (!provider && !model) return { value: null };
  if (!provider || !model) return { error: "Pick a provider and type a model id (or clear both to unset)." };
  return { value: `${provider}/${model}` };
}

function showProviders(providers) {
  state.providers = providers.filter((p) => p.kind === "provider" && p.hasKey);
  const local = Object.fromEntries(providers.filter((p) => p.kind === "local").map((p) => [p.source, p]));
  for (const [source, node] of [
    ["transformers", ui.transformersHelp],
    ["static", ui.staticHelp],
  ]) {
    const info = local[source];
    node.textContent = info ? `${info.model}: ${info.available ? "" : "not available — "}${info.reason}` : "";
  }
  ui.noProvider.hidden = state.providers.length > 0;
  ui.rerankNoProvider.hidden = state.providers.length > 0;
}

// -- embedding source ------------------------------------------------------------------------

function embeddingCard() {
  ui.source = el("select", { id: "eng-source", onchange: () => save("embeddingSource", ui.source.value) });
  options(ui.source, SOURCES);
  ui.sourceHelp = el("p", { class: "help", id: "eng-source-help" });
  ui.source.setAttribute("aria-describedby", ui.sourceHelp.id);
  const transformers = switchControl("eng-transformers", "Enable transformers (MiniLM)", () =>
    save("transformersEnabled", ui.transformers.checked),
  );
  const staticModel = switchControl("eng-static", "Enable static model", () =>
    save("staticEnabled", ui.static.checked),
  );
  ui.transformers = transformers.input;
  ui.static = staticModel.input;
  ui.transformersHelp = el("p", { class: "help" });
  ui.staticHelp = el("p", { class: "help" });
  ui.ramWarning = el(
    "p",
    { class: "warning", id: "eng-ram-warning", hidden: true },
    "The transformers model runs inside the memroute server: it needs about 300 MB of RAM " +
      "(~20 ms per query on 2 cores).",
  );
  ui.remote = providerModelPicker("eng-remote", "Remote embeddings", ["Remote provider", "Remote model"], saveRemote);
  const noKey = "No provider with a key is configured: add one on the ";
  ui.noProvider = el("p", { class: "help" }, noKey, PROVIDERS_LINK(), ".");
  ui.embeddingResult = statusLine("eng-embedding-result");
  ui.embeddingState = statusLine("eng-embedding-state");
  return card(
    "eng-embedding",
    "Embeddings",
    locked(
      "memory",
      el("div", { class: "field" }, el("label", { for: ui.source.id }, "Embedding source"), ui.source, ui.sourceHelp),
      el("div", { class: "eng-switches" }, transformers.wrap, ui.transformersHelp, staticModel.wrap, ui.staticHelp),
      ui.ramWarning,
      ui.remote.wrap,
    ),
    ui.noProvider,
    ui.embeddingResult,
    ui.embeddingState,
  );
}

function save(name, value) {
  saveSettings({ [name]: value }, ui.embeddingResult);
}

function saveRemote() {
  savePicker(ui.remote, "embeddingProviderModel", ui.embeddingResult);
}

function savePicker(picker, name, line) {
  const { value, error } = pickerValue(picker);
  if (error) return setLine(line, error, "error");
  if (value === state.settings?.[name]) return setLine(line, "No change to save.");
  saveSettings({ [name]: value }, line);
}

// -- memory settings: render and save ----------------------------------------------------------

const FIELD_LABELS = {
  embeddingSource: "embedding source",
  transformersEnabled: "transformers",
  staticEnabled: "static model",
  embeddingProviderModel: "remote provider/model",
  vectorStore: "vector store",
  rerankEnabled: "rerank",
  rerankProviderModel: "rerank provider/model",
};

/** How each memory setting shows in the controls. */
const RENDER = {
  embeddingSource: (s) => {
    ui.source.value = s.embeddingSource;
    ui.sourceHelp.textContent = SOURCE_HELP[s.embeddingSource] || "";
  },
  transformersEnabled: (s) => (ui.transformers.checked = s.transformersEnabled),
  staticEnabled: (s) => (ui.static.checked = s.staticEnabled),
  embeddingProviderModel: (s) => fillPicker(ui.remote, s.embeddingProviderModel),
  vectorStore: (s) => (ui.vectorStore.value = s.vectorStore),
  rerankEnabled: (s) => (ui.rerankEnabled.checked = s.rerankEnabled),
  rerankProviderModel: (s) => fillPicker(ui.rerank, s.rerankProviderModel),
};

function describe(name, value) {
  if (typeof value === "boolean") return `${FIELD_LABELS[name]} ${value ? "on" : "off"}`;
  return `${FIELD_LABELS[name]} = ${value ?? "unset"}`;
}

/** Save `patch` and show the server's answer in `line`. */
async function saveSettings(patch, line) {
  const fields = Object.keys(patch);
  setLine(line, "Saving…");
  try {
    const saved = await api("/api/settings/memory", { method: "PUT", body: patch });
    showSettings(saved, fields);
    setLine(line, `Saved: ${fields.map((name) => describe(name, saved[name])).join(", ")}.`, "ok");
    refreshSoon();
  } catch (error) {
    if (state.settings) showSettings(state.settings, fields); // put the controls back
    setLine(line, `Not saved: ${error.message}`, "error");
  }
}

/** Show the server's settings in the controls of `fields` (all by default), so saving one
 * control leaves what the user is typing in another alone. */
function showSettings(settings, fields = Object.keys(RENDER)) {
  state.settings = settings;
  for (const name of fields) RENDER[name]?.(settings);
  ui.ramWarning.hidden = !(settings.transformersEnabled || settings.embeddingSource === "transformers");
}

// -- Qdrant: the card ----------------------------------------------------------------------------

function qdrantExplainer() {
  const item = (title, text) => el("li", {}, title ? el("strong", {}, title) : null, text);
  return el(
    "details",
    { class: "eng-explainer", open: true },
    el("summary", {}, "Tier 1 (sqlite-vec) or tier 2 (Qdrant)?"),
    el(
      "ul",
      {},
      item(
        "Tier 1, sqlite-vec: ",
        "vectors live in the SQLite file and each search reads the searching key's vectors exactly. " +
          "Nothing to run; fast up to tens of thousands of memories per key.",
      ),
      item(
        "Tier 2, Qdrant: ",
        "a separate server with an HNSW index and quantisation, for keys with ~100,000 memories or more. " +
          "It adds a network round trip, so below ~50,000 per key it is not faster.",
      ),
      item(
        null,
        "SQLite stays the source of truth and sqlite-vec the fallback: enabling Qdrant back-fills every " +
          "memory, and Qdrant answers searches only once the back-fill has finished.",
      ),
    ),
  );
}

function qdrantInputs() {
  ui.qdEnabled = el("input", { id: "qd-enabled", type: "checkbox", role: "switch" });
  ui.qdHost = el("input", {
    id: "qd-host",
    type: "text",
    autocomplete: "off",
    placeholder: "localhost, https://xyz.cloud.qdrant.io or :memory:",
  });
  ui.qdPort = el("input", { id: "qd-port", type: "number", min: 1, max: 65535, step: 1, required: true });
  ui.qdHttps = el("input", { id: "qd-https", type: "checkbox" });
  ui.qdCollection = el("input", { id: "qd-collection", type: "text", autocomplete: "off", maxlength: 100 });
  ui.qdModel = el("select", { id: "qd-model" });
  ui.qdQuant = el("select", { id: "qd-quantization" });
  options(ui.qdQuant, QUANTIZATIONS.map((q) => [q, q]));
  ui.qdKey = el("input", {
    id: "qd-api-key",
    type: "password",
    autocomplete: "new-password",
    placeholder: "type a new key to replace it",
  });
  ui.qdKeyState = el("span", { id: "qd-key-state", class: "help" }, "not set");
  const remove = { type: "button", class: "link", onclick: removeQdrantKey, hidden: true };
  ui.qdRemoveKey = el("button", remove, "Remove key");
}

function qdrantForm() {
  qdrantInputs();
  ui.qdSave = el("button", { type: "submit", class: "primary" }, "Save Qdrant settings");
  ui.qdChanges = el("span", { class: "help", id: "qd-changes" });
  ui.qdSaveResult = statusLine("qd-save-result");
  return el(
    "form",
    {
      class: "eng-qdrant-form",
      "aria-label": "Qdrant settings",
      onsubmit: saveQdrant,
      oninput: showQdrantChanges,
      onchange: showQdrantChanges,
    },
    locked(
      "qdrant",
      el("label", { class: "switch" }, ui.qdEnabled, " ", el("span", {}, "Use Qdrant (tier 2)")),
      el(
        "div",
        { class: "eng-form-grid" },
        field("Host", ui.qdHost, ":memory: runs Qdrant's local mode in the server (tests and demos only).").wrap,
        field("Port", ui.qdPort).wrap,
        field("Collection", ui.qdCollection, "Base name: the collection is <name>_<dimension>.").wrap,
        field("Embedding model", ui.qdModel).wrap,
        field("Quantization", ui.qdQuant, "int8 and binary re-score with the full vectors.").wrap,
        keyField(),
      ),
      el("label", { class: "switch" }, ui.qdHttps, " ", el("span", {}, "HTTPS (for a host given without a scheme)")),
      el("div", { class: "row eng-actions" }, ui.qdSave, ui.qdChanges),
    ),
    ui.qdSaveResult,
  );
}

/** Write-only: the field starts empty; the stored key shows only as "set (***abcd)". */
function keyField() {
  const { wrap } = field("API key", ui.qdKey);
  ui.qdKey.setAttribute("aria-describedby", ui.qdKeyState.id);
  wrap.append(el("div", { class: "eng-key-state" }, ui.qdKeyState, ui.qdRemoveKey));
  return wrap;
}

function qdrantTools() {
  ui.qdTestResult = statusLine("qd-test-result");
  ui.qdSearchQuery = el("input", { id: "qd-search-query", type: "search", maxlength: 4096, autocomplete: "off" });
  ui.qdTopK = el("input", { id: "qd-top-k", type: "number", min: 1, max: 50, value: 5 });
  ui.qdSearchResult = el("div", { id: "qd-search-result", "aria-live": "polite" });
  ui.qdCleanupResult = el("div", { id: "qd-cleanup-result", "aria-live": "polite" });
  return el(
    "div",
    { class: "eng-tools" },
    el("h3", {}, "Check"),
    el(
      "div",
      { class: "row eng-actions" },
      el("button", { type: "button", id: "qd-test", onclick: qdrantHealth }, "Test connection"),
      el("button", { type: "button", id: "qd-cleanup", onclick: qdrantCleanup }, "Cleanup"),
    ),
    ui.qdTestResult,
    ui.qdCleanupResult,
    el(
      "form",
      { class: "row", "aria-label": "Qdrant search test", onsubmit: qdrantSearch },
      field("Search test query", ui.qdSearchQuery).wrap,
      field("Top K", ui.qdTopK).wrap,
      el("div", { class: "field" }, el("button", { type: "submit" }, "Search test")),
    ),
    ui.qdSearchResult,
  );
}

function qdrantCard() {
  ui.qdStatus = el("dl", { class: "eng-facts", id: "qd-status" });
  ui.qdBackfill = el("progress", { id: "qd-backfill", max: 1, value: 0, "aria-label": "Qdrant back-fill progress" });
  const side = el("div", { class: "eng-state" }, el("h3", {}, "State"), ui.qdStatus, qdrantTools());
  const columns = el("div", { class: "eng-columns" }, qdrantForm(), side);
  return card("eng-qdrant", "Qdrant (vector tier 2)", qdrantExplainer(), columns);
}

// -- Qdrant: settings ------------------------------------------------------------------------------

async function loadQdrantModels() {
  try {
    state.qdrantModels = (await api("/api/settings/qdrant/embedding-models")).models;
  } catch (error) {
    state.qdrantModels = DEFAULT_QDRANT_MODELS;
    toast(`Could not list embedding models: ${error.message}`, "error");
  }
  if (state.qdrant) fillQdrantModels(state.qdrant.embeddingModel);
  showQdrantChanges();
}

function fillQdrantModels(current) {
  const models = state.qdrantModels || DEFAULT_QDRANT_MODELS;
  const pairs = models.map((m) => [m.value, m.label]);
  if (current && !models.some((m) => m.value === current)) pairs.push([current, `${current} (not listed now)`]);
  options(ui.qdModel, pairs, current || "");
}

/** Show the server's Qdrant settings; `keyOnly` keeps the user's other unsaved edits. */
function showQdrantSettings(settings, { keyOnly = false } = {}) {
  state.qdrant = settings;
  ui.qdKey.value = "";
  ui.qdKeyState.textContent = settings.hasApiKey ? `set (${settings.apiKeyMasked || "***"})` : "not set";
  ui.qdRemoveKey.hidden = !settings.hasApiKey;
  if (!keyOnly) {
    ui.qdEnabled.checked = settings.enabled;
    ui.qdHost.value = settings.host;
    ui.qdPort.value = String(settings.port);
    ui.qdHttps.checked = settings.https;
    ui.qdCollection.value = settings.collection;
    ui.qdQuant.value = settings.quantization;
    fillQdrantModels(settings.embeddingModel);
  }
  showQdrantChanges();
}

/** The fields the user changed, compared with what the server last answered. */
function qdrantChanges() {
  const saved = state.qdrant;
  if (!saved) return {};
  const form = {
    enabled: ui.qdEnabled.checked,
    host: ui.qdHost.value.trim(),
    port: Number(ui.qdPort.value),
    https: ui.qdHttps.checked,
    collection: ui.qdCollection.value.trim(),
    embeddingModel: ui.qdModel.value || null,
    quantization: ui.qdQuant.value,
  };
  const changes = {};
  for (const [name, value] of Object.entries(form)) {
    if (value !== saved[name]) changes[name] = value;
  }
  if (ui.qdKey.value) changes.apiKey = ui.qdKey.value;
  return changes;
}

function showQdrantChanges() {
  const names = Object.keys(qdrantChanges());
  ui.qdChanges.textContent = names.length ? `Unsaved: ${names.join(", ")}` : "No unsaved changes";
  ui.qdSave.disabled = names.length === 0;
}

async function saveQdrant(event) {
  event.preventDefault();
  const changes = qdrantChanges();
  if (!Object.keys(changes).length) return;
  if (!ui.qdPort.validity.valid) return setLine(ui.qdSaveResult, "The port is a number from 1 to 65535.", "error");
  await putQdrant(changes, `Saved: ${Object.keys(changes).join(", ")}.`);
}

async function removeQdrantKey() {
  const confirmed = await confirmAction(
    "Remove the Qdrant API key?",
    "memroute will connect to Qdrant without a key.",
    "Remove key",
  );
  if (confirmed) await putQdrant({ apiKey: "" }, "API key removed.", { keyOnly: true });
}

async function putQdrant(body, message, how = {}) {
  ui.qdSave.disabled = true;
  setLine(ui.qdSaveResult, "Saving…");
  try {
    showQdrantSettings(await api("/api/settings/qdrant", { method: "PUT", body }), how);
    setLine(ui.qdSaveResult, message, "ok");
    if ("enabled" in body) showSettings(await api("/api/settings/memory"), ["vectorStore"]); // it followed
    refreshSoon();
  } catch (error) {
    setLine(ui.qdSaveResult, `Not saved: ${error.message}`, "error");
    showQdrantChanges();
  }
}

// -- Qdrant: state and checks ----------------------------------------------------------------------

function backfillText({ done, pushed, total, pending, orphansRemoved }) {
  if (!done) return `${pushed} of ${total} pushed, ${pending} left`;
  const orphans = orphansRemoved ? `, ${orphansRemoved} orphans removed` : "";
  return `done: ${pushed} of ${total} pushed${orphans}`;
}

function qdrantRows(q) {
  if (!q.enabled) return [["State", "off: sqlite-vec (tier 1) serves vector search"]];
  return [
    ["Serving searches", q.serving ? "yes" : "no — sqlite-vec answers until the back-fill is done"],
    ["Back-fill", backfillText(q.backfill)],
    ["Health", q.healthy ? `ready (${q.latencyMs ?? "?"} ms)` : `not ready: ${q.error || "unknown"}`],
    ["Where", q.where || "—"],
    ["Collection", q.collection ? `${q.collection} (${plural(q.points ?? 0, "point")})` : "—"],
    ["Vectors from", q.embedding || "—"],
    ["Queued changes", String(q.outbox)],
    ["Last error", q.lastError || "none"],
  ];
}

function showQdrantStatus(q) {
  const { backfill } = q;
  ui.qdBackfill.max = Math.max(1, backfill.total);
  ui.qdBackfill.value = backfill.done ? ui.qdBackfill.max : backfill.pushed;
  ui.qdStatus.replaceChildren(...facts(qdrantRows(q)));
  ui.qdStatus.querySelector('[data-term="Back-fill"]')?.append(ui.qdBackfill);
}

async function qdrantHealth() {
  setLine(ui.qdTestResult, "Testing…");
  const unsaved = Object.keys(qdrantChanges()).length ? " (of the saved settings: save to test your changes)" : "";
  try {
    const answer = await api("/api/settings/qdrant/health");
    if (answer.ok) setLine(ui.qdTestResult, `Connection OK · ${answer.latencyMs} ms${unsaved}`, "ok");
    else setLine(ui.qdTestResult, `Connection failed: ${answer.error} (${answer.latencyMs} ms)${unsaved}`, "error");
  } catch (error) {
    setLine(ui.qdTestResult, `Test failed: ${error.message}`, "error");
  }
}

async function qdrantSearch(event) {
  event.preventDefault();
  const query = ui.qdSearchQuery.value.trim();
  if (!query) return showSearch(el("p", { class: "eng-result error" }, "Type a query to search Qdrant."));
  const body = { query, topK: Number(ui.qdTopK.value) || 5 };
  try {
    const answer = await api("/api/settings/qdrant/search", { method: "POST", body });
    if (!answer.ok) return showSearch(el("p", { class: "eng-result error" }, `Search failed: ${answer.error}`));
    showSearch(searchResults(answer.results));
  } catch (error) {
    showSearch(el("p", { class: "eng-result error" }, `Search failed: ${error.message}`));
  }
}

function showSearch(node) {
  clear(ui.qdSearchResult).append(node);
}

function searchHit(hit) {
  const payload = hit.payload || {};
  return el(
    "li",
    { class: "eng-hit" },
    el("span", { class: "eng-hit-score" }, `score ${hit.score.toFixed(3)}`),
    el("code", {}, payload.key || hit.id),
    payload.type ? el("span", { class: "badge off" }, payload.type) : null,
    el("span", { class: "eng-hit-content" }, String(payload.content ?? "(no payload)")),
  );
}

function searchResults(results) {
  if (!results.length) return el("p", { class: "muted" }, "No points found.");
  return el("ol", { class: "eng-hits" }, results.map(searchHit));
}

async function qdrantCleanup() {
  const retention = state.settings ? `${state.settings.retentionDays} days` : "the retention period";
  const message =
    "Delete the Qdrant points of expired memories and of memories not updated within " +
    `${retention}? SQLite is not touched.`;
  if (!(await confirmAction("Clean up Qdrant?", message, "Clean up"))) return;
  const report = (node) => clear(ui.qdCleanupResult).append(node);
  report(el("p", { class: "eng-result" }, "Cleaning up…"));
  try {
    report(cleanupReport(await api("/api/settings/qdrant/cleanup", { method: "POST" })));
    refreshSoon();
  } catch (error) {
    report(el("p", { class: "eng-result error" }, `Cleanup failed: ${error.message}`));
  }
}

function cleanupReport(answer) {
  if (!answer.ok) return el("p", { class: "eng-result error" }, `Cleanup failed: ${answer.error}`);
  const text = `Cleanup: ${plural(answer.deletedCount, "point")} deleted (retention ${answer.retentionDays} days).`;
  const summary = el("p", { class: "eng-result ok" }, text);
  if (!answer.deletedIds.length) return summary;
  const ids = el("ul", { class: "eng-ids" }, answer.deletedIds.map((id) => el("li", {}, el("code", {}, id))));
  return el("div", {}, summary, ids);
}

// -- rerank --------------------------------------------------------------------------------------

function rerankCard() {
  const toggle = switchControl("eng-rerank", "Rerank vector results", () =>
    saveSettings({ rerankEnabled: ui.rerankEnabled.checked }, ui.rerankResult),
  );
  ui.rerankEnabled = toggle.input;
  ui.rerank = providerModelPicker("eng-rerank", "Rerank model", ["Rerank provider", "Rerank model id"], () =>
    savePicker(ui.rerank, "rerankProviderModel", ui.rerankResult),
  );
  ui.rerankNoProvider = el(
    "p",
    { class: "help" },
    "No provider with a key is configured: rerank stays unavailable until one is added on the ",
    PROVIDERS_LINK(),
    ".",
  );
  ui.rerankResult = statusLine("eng-rerank-result");
  ui.rerankState = statusLine("eng-rerank-state");
  return card(
    "eng-rerank-card",
    "Rerank",
    el(
      "p",
      { class: "help" },
      "Sends the vector results to the provider's POST /rerank (Cohere/Jina shape) and reorders them by its " +
        "scores; any failure keeps the vector order.",
    ),
    locked("memory", toggle.wrap),
    el(
      "p",
      { class: "warning", id: "eng-rerank-warning" },
      "Rerank adds a network call to every retrieval: expect +200–500 ms per chat request.",
    ),
    locked("memory", ui.rerank.wrap),
    ui.rerankNoProvider,
    ui.rerankResult,
    ui.rerankState,
  );
}

function showRerankStatus(rerank) {
  let [kind, word] = rerank.available ? ["ok", "available"] : ["error", "unavailable"];
  if (!rerank.enabled) [kind, word] = ["", "off"];
  setLine(ui.rerankState, `Now: ${word} — ${rerank.reason}`, kind);
}
