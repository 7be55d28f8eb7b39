// Playground tab: a dry run of retrieval (POST /api/memory/retrieve-preview). Shows the
// ranked memories with their tier and scores, how the query was resolved (embedding
// source, vector store, fallback) and how much of the token budget they use.
import { api } from "./api.js";
import { clear, el, field, toast } from "./ui.js";

const BUDGET = { min: 100, max: 16000, step: 100, initial: 2000 };
const LIMIT = 20;
const STRATEGIES = [
  ["hybrid", "hybrid — keyword + vector fused (RRF)"],
  ["semantic", "semantic — vector similarity"],
  ["exact", "exact — newest first"],
];
const TIER_HELP = {
  fts5: "keyword match (SQLite FTS5)",
  vector: "vector similarity (sqlite-vec)",
  "hybrid-rrf": "keyword and vector ranks fused by RRF",
  qdrant: "vector similarity from Qdrant",
  recent: "newest memory, filling the budget",
};

const ui = {};

export function mount(panel) {
  panel.append(
    el("h2", { class: "visually-hidden" }, "Retrieval playground"),
    buildForm(),
    (ui.error = el("p", { class: "error pg-error", role: "alert", hidden: true })),
    (ui.results = el("div", { class: "pg-results", "aria-live": "polite" }, introText())),
  );
  loadKeys();
}

/** Called whenever the tab is selected: keys may have been added on the keys page. */
export function show() {
  loadKeys();
}

// -- the form --------------------------------------------------------------------------

function buildForm() {
  ui.query = el("input", { type: "search", id: "pg-query", required: true, maxlength: 16000, autocomplete: "off", placeholder: "e.g. which editor do I use?" });
  ui.key = el("select", { id: "pg-key" }, el("option", { value: "" }, "All keys"));
  ui.strategy = el("select", { id: "pg-strategy" }, STRATEGIES.map(([value, label]) => el("option", { value }, label)));
  ui.strategy.value = "hybrid";
  ui.submit = el("button", { type: "submit", class: "primary" }, "Simulate");
  const form = el(
    "form",
    { class: "card pg-form", "aria-label": "Retrieval simulation", onsubmit: onSubmit },
    el("div", { class: "pg-query" }, field("Query", ui.query, "Press Enter or Simulate: nothing is written.").wrap),
    el(
      "div",
      { class: "pg-options" },
      field("API key", ui.key).wrap,
      field("Strategy", ui.strategy).wrap,
      budgetField(),
      el("div", { class: "pg-submit" }, ui.submit),
    ),
  );
  return form;
}

function budgetField() {
  const { min, max, step, initial } = BUDGET;
  ui.budget = el("input", { type: "number", id: "pg-budget", min, max, step, value: initial, required: true });
  ui.budgetRange = el("input", { type: "range", id: "pg-budget-range", min, max, step, value: initial, "aria-label": "Token budget slider" });
  ui.budget.addEventListener("input", () => {
    if (ui.budget.validity.valid) ui.budgetRange.value = ui.budget.value;
  });
  ui.budgetRange.addEventListener("input", () => (ui.budget.value = ui.budgetRange.value));
  const { wrap } = field("Token budget", ui.budget);
  wrap.classList.add("pg-budget");
  wrap.append(
    ui.budgetRange,
    el("div", { class: "pg-range-labels", "aria-hidden": "true" }, el("span", {}, String(min)), el("span", {}, String(max))),
  );
  return wrap;
}

async function loadKeys() {
  try {
    const { keys } = await api("/api/keys");
    const chosen = ui.key.value;
    ui.key.replaceChildren(el("option", { value: "" }, "All keys"), ...keys.map(keyOption));
    ui.key.value = keys.some((k) => k.id === chosen) ? chosen : "";
  } catch (error) {
    toast(`Could not load API keys: ${error.message}`, "error");
  }
}

function keyOption(key) {
  const label = key.active ? key.name : `${key.name} (revoked)`;
  return el("option", { value: key.id }, `${label} · ${key.prefix}…`);
}

// -- simulate --------------------------------------------------------------------------

function requestBody() {
  const body = {
    query: ui.query.value.trim(),
    strategy: ui.strategy.value,
    maxTokens: Number(ui.budget.value),
    limit: LIMIT,
  };
  if (ui.key.value) body.apiKeyId = ui.key.value;
  return body;
}

async function onSubmit(event) {
  event.preventDefault();
  if (!ui.query.value.trim()) return showError("Type a query first.");
  if (!ui.budget.validity.valid) {
    return showError(`The budget is a multiple of ${BUDGET.step} from ${BUDGET.min} to ${BUDGET.max}.`);
  }
  ui.submit.disabled = true;
  ui.results.setAttribute("aria-busy", "true");
  try {
    const preview = await api("/api/memory/retrieve-preview", { method: "POST", body: requestBody() });
    showError(null);
    renderPreview(preview);
  } catch (error) {
    showError(`Simulation failed: ${error.message}`);
  } finally {
    ui.submit.disabled = false;
    ui.results.removeAttribute("aria-busy");
  }
}

function showError(message) {
  ui.error.hidden = !message;
  ui.error.textContent = message || "";
}

function introText() {
  return el("p", { class: "muted" }, "Simulate a query to see which memories retrieval would inject, and why.");
}

// -- results ---------------------------------------------------------------------------

function renderPreview(preview) {
  clear(ui.results).append(
    el("div", { class: "pg-summary" }, budgetCard(preview), resolutionCard(preview.resolution)),
    rankedList(preview.memories),
  );
}

function budgetCard({ totalTokensUsed, budgetMaxTokens, memories }) {
  const percent = budgetMaxTokens ? Math.round((totalTokensUsed / budgetMaxTokens) * 100) : 0;
  const meter = el("meter", {
    id: "pg-budget-meter",
    min: 0,
    max: budgetMaxTokens,
    value: totalTokensUsed,
    high: Math.round(budgetMaxTokens * 0.9),
    "aria-labelledby": "pg-budget-title",
  });
  return el(
    "section",
    { class: "card pg-budget-card", "aria-labelledby": "pg-budget-title" },
    el("h3", { id: "pg-budget-title" }, "Token budget"),
    meter,
    el(
      "p",
      { class: "pg-budget-text" },
      el("strong", { class: "pg-used" }, String(totalTokensUsed)),
      " of ",
      el("strong", { class: "pg-max" }, String(budgetMaxTokens)),
      ` tokens used (${percent}%) by ${memories.length} ${memories.length === 1 ? "memory" : "memories"}`,
    ),
  );
}

function resolutionCard(resolution) {
  const rows = [
    ["Embedding source", resolution.embeddingSource ?? "none"],
    ["Embedding model", resolution.embeddingModel ?? "—"],
    ["Vector store", resolution.vectorStore],
    ["Strategy used", resolution.strategyUsed],
    ["Rerank applied", resolution.rerankApplied ? "yes" : "no"],
    ["Fallback reason", resolution.fallbackReason ?? "none"],
  ];
  const list = el(
    "dl",
    { class: "pg-resolution" },
    rows.map(([term, value]) => [el("dt", {}, term), el("dd", { dataset: { term } }, value)]),
  );
  const fallback = list.querySelector('[data-term="Fallback reason"]');
  if (resolution.fallbackReason) fallback.classList.add("pg-fallback");
  return el("section", { class: "card", "aria-labelledby": "pg-res-title" }, el("h3", { id: "pg-res-title" }, "Resolution"), list);
}

function rankedList(memories) {
  if (!memories.length) {
    return el("p", { class: "card muted pg-empty" }, "No memory would be retrieved for this query.");
  }
  return el(
    "section",
    { "aria-labelledby": "pg-list-title" },
    el("h3", { id: "pg-list-title" }, `Ranked memories (${memories.length})`),
    el("ol", { class: "pg-list" }, memories.map(rankedItem)),
  );
}

function rankedItem(item, index) {
  const facts = [
    el("span", { class: "pg-rank", "aria-label": `rank ${index + 1}` }, `#${index + 1}`),
    el("span", { class: `badge tier tier-${item.tier}`, title: TIER_HELP[item.tier] || item.tier }, item.tier),
    metric("score", item.score, "pg-score"),
    el("span", { class: "pg-tokens" }, `${item.tokens} tokens`),
    item.vecScore !== null && item.vecScore !== undefined ? metric("vec", item.vecScore, "pg-vec") : null,
    item.ftsScore !== null && item.ftsScore !== undefined ? metric("fts", item.ftsScore, "pg-fts") : null,
    el("span", { class: "badge off" }, item.type),
    item.truncated ? el("span", { class: "badge bad" }, "truncated") : null,
  ];
  return el(
    "li",
    { class: "card pg-item", dataset: { id: item.id } },
    el("div", { class: "pg-facts" }, facts),
    el("p", { class: "pg-key" }, el("code", {}, item.key)),
    el("p", { class: "pg-content" }, item.content),
  );
}

function metric(label, value, cls) {
  return el("span", { class: `pg-metric ${cls}` }, `${label} `, el("strong", {}, Number(value).toFixed(3)));
}
