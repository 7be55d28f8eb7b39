// The API keys page: list client keys with their ids (the owner id that the CLI's -k,
// the REST API's apiKeyId and the MCP tools ask for) and their gateway limits, create one
// (its secret is shown once, in a dialog, and is gone from the page when the dialog
// closes), change an active key's limits, revoke one, and how to point an
// OpenAI-compatible client at this server.
import { api } from "./api.js";
import { renderTopbar } from "./nav.js";
import { confirmAction, el, field, formatDate, modal, toast } from "./ui.js";

const BASE_URL = `${location.origin}/v1`;
const PLACEHOLDER = "YOUR_MEMROUTE_KEY";

const page = document.getElementById("page");
const nameInput = el("input", {
  type: "text",
  id: "key-name",
  name: "name",
  maxlength: 100,
  autocomplete: "off",
  placeholder: "e.g. laptop, ci, chat-app",
  required: true,
});
const createButton = el("button", { type: "submit", class: "primary" }, "Create key");
const createError = el("p", { id: "key-name-error", class: "error field-error", role: "alert", hidden: true });
const listStatus = el("p", { class: "error", role: "alert", hidden: true });
const count = el("span", { class: "muted" });
const tbody = el("tbody");
const table = el(
  "table",
  { class: "admin-table", "aria-labelledby": "keys-title" },
  el(
    "thead",
    {},
    el(
      "tr",
      {},
      ["Name", "Id", "Prefix", "Created", "Last used", "Status"].map((label) => el("th", { scope: "col" }, label)),
      el("th", { scope: "col" }, el("span", { class: "sr-only" }, "Actions")),
    ),
  ),
  tbody,
);
const empty = el("p", { class: "empty", hidden: true }, "No keys yet: create one above.");

/** The client code for a key: the real secret only inside the one-time dialog. */
function snippet(secret) {
  return [
    "# Python, with the openai package",
    "from openai import OpenAI",
    "",
    "client = OpenAI(",
    `    base_url="${BASE_URL}",`,
    `    api_key="${secret}",`,
    ")",
    "",
    "# any OpenAI-compatible tool",
    `export OPENAI_BASE_URL=${BASE_URL}`,
    `export OPENAI_API_KEY=${secret}`,
  ].join("\n");
}

function setCreateError(message) {
  createError.textContent = message || "";
  createError.hidden = !message;
  if (message) {
    nameInput.setAttribute("aria-invalid", "true");
    nameInput.setAttribute("aria-describedby", `${createError.id} key-name-help`);
  } else {
    nameInput.removeAttribute("aria-invalid");
    nameInput.setAttribute("aria-describedby", "key-name-help");
  }
}

/** A key's limits as text: its own values, or "default" (the server's settings). */
function limitsText(key) {
  const atOnce = key.maxConcurrent ?? "default";
  const perMinute = key.requestsPerMinute === 0 ? "no limit" : key.requestsPerMinute ?? "default";
  const users = key.requiresUserId ? " · end user required" : "";
  return `${atOnce} at once · ${perMinute} a minute${users}`;
}

function keyRow(key) {
  const status = key.active
    ? el("span", { class: "badge ok" }, "active")
    : [
        el("span", { class: "badge bad" }, "revoked"),
        el("span", { class: "help block" }, formatDate(key.revokedAt)),
      ];
  const revoke = key.active
    ? el(
        "button",
        { type: "button", class: "danger-text", "aria-label": `Revoke key ${key.name}`, onclick: () => revokeKey(key) },
        "Revoke",
      )
    : null;
  const limits = key.active
    ? el(
        "button",
        { type: "button", "aria-label": `Limits of key ${key.name}`, onclick: () => editLimits(key) },
        "Limits",
      )
    : null;
  return el(
    "tr",
    { class: key.active ? "" : "revoked", dataset: { keyId: key.id } },
    el("th", { scope: "row", class: "name" }, key.name, el("span", { class: "help block limits" }, limitsText(key))),
    el("td", { class: "id" }, el("code", { class: "key-id" }, key.id)),
    el("td", {}, el("code", {}, `${key.prefix}…`)),
    el("td", { class: "nowrap" }, formatDate(key.createdAt)),
    el("td", { class: "nowrap" }, key.lastUsedAt ? formatDate(key.lastUsedAt) : "never"),
    el("td", { class: "status" }, status),
    el("td", { class: "actions" }, limits, revoke),
  );
}

async function loadKeys() {
  let keys;
  try {
    keys = (await api("/api/keys")).keys;
  } catch (error) {
    if (error.status === 401) return;
    listStatus.textContent = `Could not load the keys: ${error.message}`;
    listStatus.hidden = false;
    return;
  }
  listStatus.hidden = true;
  keys.sort((a, b) => (a.createdAt < b.createdAt ? 1 : a.createdAt > b.createdAt ? -1 : 0));
  const active = keys.filter((k) => k.active).length;
  count.textContent = keys.length ? `${active} active, ${keys.length - active} revoked` : "";
  tbody.replaceChildren(...keys.map(keyRow));
  table.hidden = keys.length === 0;
  empty.hidden = keys.length > 0;
}

/** The dialog that shows a new key's secret, once. Closing it removes it (and the
 * secret) from the page; nothing else keeps the secret. */
async function showSecret(key, secret) {
  const secretBox = el("code", { class: "secret", id: "new-secret", tabindex: -1 }, secret);
  const copyStatus = el("p", { class: "help", id: "copy-status", "aria-live": "polite" });

  async function copy() {
    try {
      if (!navigator.clipboard) throw new Error("no clipboard");
      await navigator.clipboard.writeText(secretBox.textContent);
      copyStatus.textContent = "Copied to the clipboard.";
    } catch {
      // No clipboard (plain http, headless, permission): select it for Ctrl+C instead.
      const range = document.createRange();
      range.selectNodeContents(secretBox);
      const selection = window.getSelection();
      selection.removeAllRanges();
      selection.addRange(range);
      secretBox.focus();
      copyStatus.textContent = "Selected: press Ctrl+C (⌘C on a Mac) to copy it.";
    }
  }

  const body = el(
    "div",
    { class: "secret-dialog" },
    el(
      "p",
      { class: "warning" },
      el("strong", {}, "Copy this key now: you will not see it again."),
      " memroute keeps only a hash of it. If you lose it, revoke it and create a new one.",
    ),
    el(
      "div",
      { class: "secret-row" },
      secretBox,
      el("button", { type: "button", class: "primary", onclick: copy }, "Copy"),
    ),
    copyStatus,
    el(
      "p",
      { class: "help" },
      "Its id, which owns its memories (",
      el("code", {}, "-k"),
      " in the CLI, ",
      el("code", {}, "apiKeyId"),
      " in the API): ",
      el("code", { class: "key-id", id: "new-key-id" }, key.id),
    ),
    el("h3", { class: "snippet-title" }, "Use it"),
    el("pre", { class: "snippet" }, el("code", {}, snippet(secret))),
  );
  await modal(`Key “${key.name}” created`, body, [{ label: "Done", value: "close" }]);
  window.getSelection().removeAllRanges();
}

async function createKey(event) {
  event.preventDefault();
  setCreateError("");
  const name = nameInput.value.trim();
  if (!name) {
    setCreateError("Enter a name for the key, e.g. the app or machine that will use it.");
    nameInput.focus();
    return;
  }
  createButton.disabled = true;
  let created;
  try {
    created = await api("/api/keys", { method: "POST", body: { name } });
  } catch (error) {
    if (error.status !== 401) setCreateError(error.message);
    return;
  } finally {
    createButton.disabled = false;
  }
  nameInput.value = "";
  await loadKeys();
  await showSecret(created.key, created.secret);
  created = null;
  toast(`Key “${name}” created.`);
  nameInput.focus();
}

/** A number input for one limit; empty means the server's default. */
function limitInput(id, value, min) {
  return el("input", { type: "number", id, min, step: 1, inputmode: "numeric", value: value ?? "", placeholder: "default" });
}

function limitValue(input) {
  if (input.validity.badInput) throw new Error(`${input.labels[0].textContent}: enter a whole number, or nothing`);
  const text = input.value.trim();
  return text === "" ? null : Number(text);
}

/** The dialog that changes a key's own limits; the server checks the values. */
async function editLimits(key) {
  const atOnce = limitInput("limit-concurrent", key.maxConcurrent, 1);
  const perMinute = limitInput("limit-rpm", key.requestsPerMinute, 0);
  const requireUser = el("input", {
    type: "checkbox",
    role: "switch",
    id: "limit-require-user",
    "aria-describedby": "limit-require-user-help",
  });
  requireUser.checked = key.requiresUserId;
  const body = el(
    "div",
    { class: "limits-dialog" },
    field("Requests at once", atOnce, "Upstream calls this key may run at the same time. Empty: the server's default.").wrap,
    field("Requests a minute", perMinute, "0: no per-minute limit. Empty: the server's default.").wrap,
    el(
      "div",
      { class: "field" },
      el("label", { class: "switch" }, requireUser, "Require an end user"),
      el(
        "p",
        { class: "help", id: "limit-require-user-help" },
        "A request that names no end user (x-memroute-user-id, user, safety_identifier or metadata.user_id)" +
          " gets no memory.",
      ),
    ),
  );
  const answer = await modal(`Limits of “${key.name}”`, body, [
    { label: "Cancel", value: "cancel" },
    { label: "Save", value: "save", class: "primary" },
  ]);
  if (answer !== "save") return;
  try {
    const limits = {
      maxConcurrent: limitValue(atOnce),
      requestsPerMinute: limitValue(perMinute),
      requiresUserId: requireUser.checked,
    };
    await api(`/api/keys/${encodeURIComponent(key.id)}`, { method: "PATCH", body: limits });
    toast(`Limits of “${key.name}” saved.`);
  } catch (error) {
    if (error.status !== 401) toast(`Could not save the limits: ${error.message}`, "error");
  }
  await loadKeys();
}

async function revokeKey(key) {
  const confirmed = await confirmAction(
    "Revoke this key?",
    `Applications using “${key.name}” (${key.prefix}…) are refused from now on. ` +
      "The memories it owns stay. This cannot be undone.",
    "Revoke",
  );
  if (!confirmed) return;
  try {
    await api(`/api/keys/${encodeURIComponent(key.id)}`, { method: "DELETE" });
    toast(`Key “${key.name}” revoked.`);
  } catch (error) {
    if (error.status !== 401) toast(`Could not revoke: ${error.message}`, "error");
  }
  await loadKeys();
}

function render() {
  const name = field("Name", nameInput, "What uses the key; 1–100 characters.");
  name.wrap.append(createError);
  const form = el(
    "form",
    { id: "create-key", class: "inline-form", novalidate: true, onsubmit: createKey },
    name.wrap,
    createButton,
  );
  page.append(
    el(
      "p",
      { class: "lead" },
      "Applications send a key to the gateway as their OpenAI API key. Each key owns the memories " +
        "learned through it; its id names it in the CLI (-k), the REST API (apiKeyId) and the MCP tools. " +
        "memroute stores only a hash: the secret is shown once, when the key is created.",
    ),
    el(
      "section",
      { class: "card", "aria-labelledby": "create-title" },
      el("h2", { id: "create-title" }, "Create a key"),
      form,
    ),
    el(
      "section",
      { class: "card", "aria-labelledby": "keys-title" },
      el("div", { class: "section-head" }, el("h2", { id: "keys-title" }, "Keys"), count),
      listStatus,
      el("div", { class: "table-wrap" }, table, empty),
    ),
    el(
      "section",
      { class: "card", "aria-labelledby": "howto-title" },
      el("h2", { id: "howto-title" }, "How to use a key"),
      el(
        "p",
        {},
        "Point any OpenAI-compatible client at this server, with a key as its API key. Base URL: ",
        el("code", { id: "base-url" }, BASE_URL),
      ),
      el("pre", { class: "snippet", id: "howto-snippet" }, el("code", {}, snippet(PLACEHOLDER))),
    ),
  );
  setCreateError("");
}

renderTopbar();
render();
loadKeys();
