// Playground tab: a dry run of retrieval (POST /api/memory/retrieve-preview). Shows the
// ranked memories with their tier and scores, how the query was resolved (embedding
// source, vector store, fallback) and how much of the token budget they use.
import { api } from "./api.js";
import { clear, el, field, toast } from "./ui.js";

const BUDGET = { min: 100, max: 16000, step: 100, initial: 2000 };
const LIMIT = 20;
const STRATEGIES = [
  ["hybrid", "hybrid (keyword + vector)"],
  ["semantic", "semantic (vector)"],
  ["exact", "exact (newest first)"],
];
const TIER_HELP = {
  fts5: "keyword match (SQLite FTS5)",
  meaning: "near in meaning (word vectors, no embedding model)",
  vector: "vector similarity (sqlite-vec)",
  "hybrid-rrf": "keyword and vector scores fused",
  qdrant: "vector similarity from Qdrant",
  recent: "newest memory, filling the budget",
};

const ui = {};
const keyNames = new Map(); // apiKeyId → key name, to name the owner of each memory

export function mount(panel) {
  panel.append(
    buildForm(),
    (ui.error = el("p", { class: "error pg-error", role: "alert", hidden: true })),
    (ui.announce = el("p", { class: "pg-sr-only", role: "status" })),
    (ui.results = el("div", { class: "pg-results" }, introText())),
  );
}

/** Called whenever the tab is selected (also right after mount): keys may have been added
 * on the keys page since. */
export function show() {
  loadKeys();
}

// -- the form --------------------------------------------------------------------------

function buildForm() {
  ui.query = el("input", {
    type: "search",
    id: "pg-query",
    required: true,
    maxlength: 16000,
    autocomplete: "off",
    placeholder: "e.g. which editor do I use?",
  });
  ui.key = el("select", { id: "pg-key" }, el("option", { value: "" }, "All keys"));
  ui.user = el("input", {
    type: "text",
    id: "pg-user",
    maxlength: 128,
    autocomplete: "off",
    spellcheck: "false",
    placeholder: "the key's own",
  });
  ui.strategy = el("select", { id: "pg-strategy" }, STRATEGIES.map(([value, label]) => el("option", { value }, label)));
  ui.strategy.value = "hybrid";
  ui.submit = el("button", { type: "submit", class: "primary" }, "Simulate");
  const query = field("Query", ui.query, "Press Enter or Simulate: nothing is written, no memory is marked as used.");
  besides(ui.query, ui.submit);
  query.wrap.classList.add("pg-query");
  return el(
    "form",
    { class: "card pg-form", "aria-label": "Retrieval simulation", onsubmit: onSubmit },
    query.wrap,
    el(
      "div",
      { class: "pg-options" },
      field("API key", ui.key).wrap,
      field("End user", ui.user).wrap,
      field("Strategy", ui.strategy).wrap,
      budgetField(),
    ),
  );
}

function budgetField() {
  const { min, max, step, initial } = BUDGET;
  ui.budget = el("input", { type: "number", id: "pg-budget", min, max, step, value: initial, required: true });
  ui.budgetRange = el("input", {
    type: "range",
    id: "pg-budget-range",
    min,
    max,
    step,
    value: initial,
    "aria-label": "Token budget slider",
  });
  ui.budget.addEventListener("input", () => {
    if (ui.budget.validity.valid) ui.budgetRange.value = ui.budget.value;
  });
  ui.budgetRange.addEventListener("input", () => (ui.budget.value = ui.budgetRange.value));
  const ends = [el("span", {}, String(min)), el("span", {}, String(max))];
  const scale = el("div", { class: "pg-range-labels", "aria-hidden": "true" }, ends);
  const { wrap } = field("Token budget", ui.budget);
  wrap.classList.add("pg-budget");
  besides(ui.budget, el("div", { class: "pg-range" }, ui.budgetRange, scale));
  return wrap;
}

/** Put `nodes` on one line with `control`, which keeps its label. */
function besides(control, ...nodes) {
  const line = el("div", { class: "pg-inline" });
  control.replaceWith(line);
  line.append(control, ...nodes);
}

async function loadKeys() {
  try {
    const { keys } = await api("/api/keys");
    keyNames.clear();
    for (const key of keys) keyNames.set(key.id, key.name);
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
  if (ui.key.value && ui.user.value.trim()) body.userId = ui.user.value.trim();
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
    const body = requestBody();
    const preview = await api("/api/memory/retrieve-preview", { method: "POST", body });
    showError(null);
    renderPreview(preview, !body.apiKeyId);
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

function countMemories(count) {
  return `${count} ${count === 1 ? "memory" : "memories"}`;
}

function introText() {
  return el("p", { class: "muted" }, "Simulate a query to see which memories retrieval would inject, and why.");
}

// -- results ---------------------------------------------------------------------------

function renderPreview(preview, allKeys) {
  const { memories, totalTokensUsed, budgetMaxTokens } = preview;
  const used = `${totalTokensUsed} of ${budgetMaxTokens} tokens`;
  ui.announce.textContent = `${countMemories(memories.length)} retrieved, ${used}.`;
  clear(ui.results).append(
    el("div", { class: "pg-summary" }, budgetCard(preview), resolutionCard(preview.resolution)),
    rankedList(preview.memories, allKeys),
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
    el("h3", { id: "pg-budget-title" }, "Budget used"),
    meter,
    el(
      "p",
      { class: "pg-budget-text" },
      el("strong", { class: "pg-used" }, String(totalTokensUsed)),
      " of ",
      el("strong", { class: "pg-max" }, String(budgetMaxTokens)),
      ` tokens used (${percent}%) by ${countMemories(memories.length)}`,
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
    rows.flatMap(([term, value]) => [el("dt", {}, term), el("dd", { dataset: { term } }, value)]),
  );
  const fallback = list.querySelector('[data-term="Fallback reason"]');
  if (resolution.fallbackReason) fallback.classList.add("pg-fallback");
  const heading = el("h3", { id: "pg-res-title" }, "Resolution");
  return el("section", { class: "card", "aria-labelledby": heading.id }, heading, list);
}

function rankedList(memories, allKeys) {
  if (!memories.length) {
    return el("p", { class: "card muted pg-empty" }, "No memory would be retrieved for this query.");
  }
  return el(
    "section",
    { "aria-labelledby": "pg-list-title" },
    el("h3", { id: "pg-list-title" }, `Ranked memories (${memories.length})`),
    el("ol", { class: "pg-list" }, memories.map((item, index) => rankedItem(item, index, allKeys))),
  );
}

function ownerName(apiKeyId) {
  if (!apiKeyId) return "unowned";
  return keyNames.get(apiKeyId) || `key ${apiKeyId.slice(0, 8)}`;
}

function rankedItem(item, index, allKeys) {
  const facts = [
    el("span", { class: "pg-rank" }, `#${index + 1}`),
    el("span", { class: `badge tier tier-${item.tier}`, title: TIER_HELP[item.tier] || item.tier }, item.tier),
    metric("score", item.score, "pg-score"),
    el("span", { class: "pg-tokens" }, `${item.tokens} tokens`),
    item.vecScore !== null && item.vecScore !== undefined ? metric("vec", item.vecScore, "pg-vec") : null,
    item.ftsScore !== null && item.ftsScore !== undefined ? metric("fts", item.ftsScore, "pg-fts") : null,
    el("span", { class: "badge off" }, item.type),
    item.truncated ? el("span", { class: "badge bad" }, "truncated") : null,
    allKeys ? el("span", { class: "pg-owner" }, `owner: ${ownerName(item.apiKeyId)}`) : null,
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
  const attrs = { class: `pg-metric ${cls}`, title: `${label} ${value}` };
  return el("span", attrs, `${label} `, el("strong", {}, fixed3(value)));
}

/** Three decimals, without a "-0.000" for tiny negative bm25 scores. */
function fixed3(value) {
  const text = Number(value).toFixed(3);
  return text === "-0.000" ? "0.000" : text;
}
