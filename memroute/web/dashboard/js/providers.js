// The providers page: the upstream LLM providers the gateway routes to. An upstream key
// is write-only: the API never returns a stored one and this page never shows one, only
// whether it is set. One form adds a provider or edits the one picked in the list.
import { api } from "./api.js";
import { renderTopbar } from "./nav.js";
import { confirmAction, el, field, formatDate, toast } from "./ui.js";

const LABELS = {
  id: "ID",
  baseUrl: "Base URL",
  apiKey: "API key",
  apiKeyEnv: "Environment variable",
  format: "Wire format",
};
const FORMATS = [
  ["openai", "OpenAI (chat completions, responses)"],
  ["anthropic", "Anthropic (messages)"],
];

const page = document.getElementById("page");
let editing = null; // the provider being edited; null while adding

// -- the form -------------------------------------------------------------------------

const inputs = {
  id: el("input", {
    type: "text",
    id: "provider-id",
    maxlength: 64,
    autocomplete: "off",
    spellcheck: "false",
    autocapitalize: "none",
    placeholder: "openai",
    required: true,
  }),
  baseUrl: el("input", {
    type: "text",
    inputmode: "url",
    id: "provider-base-url",
    maxlength: 2048,
    autocomplete: "off",
    spellcheck: "false",
    autocapitalize: "none",
    placeholder: "https://api.openai.com/v1",
    required: true,
  }),
  apiKey: el("input", {
    type: "password",
    id: "provider-api-key",
    autocomplete: "off",
    spellcheck: "false",
    maxlength: 4096,
  }),
  apiKeyEnv: el("input", {
    type: "text",
    id: "provider-key-env",
    autocomplete: "off",
    spellcheck: "false",
    autocapitalize: "none",
    maxlength: 128,
    placeholder: "OPENAI_API_KEY",
  }),
  format: el(
    "select",
    { id: "provider-format" },
    FORMATS.map(([value, label]) => el("option", { value }, label)),
  ),
};
const fields = {
  id: field("ID", inputs.id, "Lower-case letters, digits, . _ -. Models named id/model go to this provider."),
  baseUrl: field(
    "Base URL",
    inputs.baseUrl,
    "The provider's API, http:// or https://, e.g. https://api.openai.com/v1 or https://api.anthropic.com/v1.",
  ),
  format: field(
    "Wire format",
    inputs.format,
    "What it speaks: /v1/chat/completions and /v1/responses go to OpenAI-format providers," +
      " /v1/messages to Anthropic-format ones.",
  ),
  apiKey: field("API key", inputs.apiKey, "Stored in memroute's database; never shown again."),
  apiKeyEnv: field(
    "Environment variable",
    inputs.apiKeyEnv,
    "Read by the server when it calls the provider. Upper case, ending in _API_KEY, _KEY or _TOKEN;" +
      " not MEMROUTE_*, MEMORY_*, VECTOR_STORE_* or QDRANT_*.",
  ),
};
const keyHelp = fields.apiKey.wrap.querySelector(".help");

const modes = [
  ["stored", "Store a key"],
  ["env", "From an environment variable"],
  ["none", "No key"],
];
const radios = Object.fromEntries(
  modes.map(([value]) => [
    value,
    el("input", { type: "radio", name: "key-source", value, id: `key-source-${value}`, onchange: showKeyMode }),
  ]),
);
const keySource = el(
  "fieldset",
  { class: "key-source" },
  el("legend", {}, "Upstream key"),
  el(
    "div",
    { class: "choices" },
    modes.map(([value, label]) => el("label", { class: "choice", for: `key-source-${value}` }, radios[value], label)),
  ),
  fields.apiKey.wrap,
  fields.apiKeyEnv.wrap,
);

const defaultSwitch = el("input", {
  type: "checkbox",
  role: "switch",
  id: "provider-default",
  "aria-describedby": "provider-default-help",
});
const defaultField = el(
  "div",
  { class: "field" },
  el("label", { class: "switch" }, defaultSwitch, "Default provider"),
  el(
    "p",
    { class: "help", id: "provider-default-help" },
    "Models without a provider prefix go here (it takes the default from any other provider).",
  ),
);

const formTitle = el("h2", { id: "form-title" });
const formError = el("p", { id: "provider-error", class: "error form-error", role: "alert", hidden: true });
const submitButton = el("button", { type: "submit", class: "primary" });
const cancelButton = el("button", { type: "button", onclick: () => resetForm(true) }, "Cancel edit");
const form = el(
  "form",
  { id: "provider-form", novalidate: true, "aria-labelledby": "form-title", onsubmit: submit },
  el("div", { class: "form-grid" }, fields.id.wrap, fields.baseUrl.wrap, fields.format.wrap),
  keySource,
  defaultField,
  formError,
  el("div", { class: "form-actions" }, submitButton, cancelButton),
);

function keyMode() {
  return Object.keys(radios).find((mode) => radios[mode].checked) || "none";
}

function showKeyMode() {
  const mode = keyMode();
  fields.apiKey.wrap.classList.toggle("hidden", mode !== "stored");
  fields.apiKeyEnv.wrap.classList.toggle("hidden", mode !== "env");
}

function clearError() {
  formError.hidden = true;
  formError.textContent = "";
  form.querySelector(".form-actions").before(formError); // back above the buttons
  for (const input of Object.values(inputs)) {
    input.removeAttribute("aria-invalid");
    input.setAttribute("aria-describedby", `${input.id}-help`);
  }
}

/** Show an error next to the form: under the field it names ("baseUrl: …"), if any. */
function showError(message, name) {
  clearError();
  const match = /^(\w+): (.*)$/s.exec(message);
  if (!name && match && inputs[match[1]]) {
    name = match[1];
    message = `${LABELS[name]}: ${match[2]}`;
  }
  formError.textContent = message;
  formError.hidden = false;
  const input = inputs[name];
  if (input && !fields[name].wrap.classList.contains("hidden")) {
    input.after(formError);
    input.setAttribute("aria-invalid", "true");
    input.setAttribute("aria-describedby", `${formError.id} ${input.id}-help`);
    input.focus();
  }
}

function resetForm(focus = false) {
  editing = null;
  form.reset();
  clearError();
  formTitle.textContent = "Add a provider";
  submitButton.textContent = "Add provider";
  cancelButton.hidden = true;
  inputs.id.readOnly = false;
  inputs.apiKey.placeholder = "sk-…";
  keyHelp.textContent = "Stored in memroute's database; never shown again, not even here.";
  radios.stored.checked = true;
  showKeyMode();
  if (focus) inputs.id.focus();
}

function editProvider(provider) {
  resetForm();
  editing = provider;
  formTitle.textContent = `Edit provider ${provider.id}`;
  submitButton.textContent = "Save changes";
  cancelButton.hidden = false;
  inputs.id.value = provider.id;
  inputs.id.readOnly = true;
  inputs.baseUrl.value = provider.baseUrl;
  inputs.format.value = provider.format || "openai";
  inputs.apiKeyEnv.value = provider.apiKeyEnv || "";
  if (provider.hasStoredKey) {
    inputs.apiKey.placeholder = "unchanged";
    keyHelp.textContent = "A key is set. Leave this empty to keep it, or paste a new one to replace it.";
  }
  radios[provider.hasStoredKey ? "stored" : provider.apiKeyEnv ? "env" : "none"].checked = true;
  defaultSwitch.checked = provider.default;
  showKeyMode();
  form.scrollIntoView({ block: "start" });
  inputs.baseUrl.focus();
}

class FormError extends Error {
  constructor(message, name) {
    super(message);
    this.field = name;
  }
}

/** The POST/PUT body. An empty key field while editing a provider with a stored key
 * leaves the key alone (the field is write-only); "No key" removes either kind. */
function formBody() {
  const body = editing ? {} : { id: inputs.id.value.trim() };
  body.baseUrl = inputs.baseUrl.value.trim();
  body.format = inputs.format.value;
  const mode = keyMode();
  if (mode === "stored") {
    const secret = inputs.apiKey.value.trim();
    if (secret) body.apiKey = secret;
    else if (!editing?.hasStoredKey) throw new FormError("Paste the API key, or choose another option.", "apiKey");
  } else if (mode === "env") {
    const name = inputs.apiKeyEnv.value.trim();
    if (!name) throw new FormError("Enter the variable's name, e.g. OPENAI_API_KEY.", "apiKeyEnv");
    // The server's rule (it checks it too, and says which part failed).
    if (!/^[A-Z][A-Z0-9_]*(_KEY|_TOKEN)$/.test(name) || /^(MEMROUTE|MEMORY|VECTOR_STORE|QDRANT)_/.test(name)) {
      throw new FormError(
        "Name a key variable in upper case ending in _API_KEY, _KEY or _TOKEN" +
          " (not one of memroute's own settings).",
        "apiKeyEnv",
      );
    }
    body.apiKeyEnv = name;
  } else if (editing && (editing.hasStoredKey || editing.apiKeyEnv)) {
    body.apiKey = null;
    body.apiKeyEnv = null;
  }
  body.default = defaultSwitch.checked;
  return body;
}

async function submit(event) {
  event.preventDefault();
  clearError();
  let body;
  try {
    body = formBody();
  } catch (error) {
    showError(error.message, error.field);
    return;
  }
  const id = editing ? editing.id : body.id;
  const path = editing ? `/api/providers/${encodeURIComponent(id)}` : "/api/providers";
  submitButton.disabled = true;
  try {
    await api(path, { method: editing ? "PUT" : "POST", body });
  } catch (error) {
    if (error.status === 409) showError(error.message, "id");
    else if (error.status !== 401) showError(error.message);
    return;
  } finally {
    submitButton.disabled = false;
  }
  toast(editing ? `Provider ${id} saved.` : `Provider ${id} added.`);
  resetForm();
  await load();
}

// -- the list -------------------------------------------------------------------------

const listStatus = el("p", { class: "error", role: "alert", hidden: true });
const count = el("span", { class: "muted" });
const tbody = el("tbody");
const table = el(
  "table",
  { class: "admin-table", "aria-labelledby": "providers-title" },
  el(
    "thead",
    {},
    el(
      "tr",
      {},
      ["ID", "Base URL", "Format", "Upstream key", "Default", "Updated"].map((label) =>
        el("th", { scope: "col" }, label),
      ),
      el("th", { scope: "col" }, el("span", { class: "sr-only" }, "Actions")),
    ),
  ),
  tbody,
);
const empty = el(
  "p",
  { class: "empty", hidden: true },
  "No providers yet. Until you add one, models go to MEMROUTE_UPSTREAM_BASE_URL, if the server has it.",
);

function keyCell(provider) {
  if (provider.hasStoredKey) {
    return [el("span", { class: "badge ok" }, "key set"), el("span", { class: "help block" }, "stored")];
  }
  if (provider.apiKeyEnv) {
    return [el("span", { class: "badge" }, "from env"), el("code", { class: "block" }, provider.apiKeyEnv)];
  }
  return el("span", { class: "badge off" }, "no key");
}

function providerRow(provider) {
  return el(
    "tr",
    { dataset: { providerId: provider.id } },
    el("th", { scope: "row" }, el("code", {}, provider.id)),
    el("td", { class: "url" }, el("code", {}, provider.baseUrl)),
    el("td", { class: "format" }, provider.format),
    el("td", { class: "key" }, keyCell(provider)),
    el("td", {}, provider.default ? el("span", { class: "badge ok" }, "default") : el("span", { class: "muted" }, "no")),
    el("td", { class: "nowrap" }, formatDate(provider.updatedAt)),
    el(
      "td",
      { class: "actions" },
      el(
        "button",
        { type: "button", "aria-label": `Edit provider ${provider.id}`, onclick: () => editProvider(provider) },
        "Edit",
      ),
      el(
        "button",
        {
          type: "button",
          class: "danger-text",
          "aria-label": `Delete provider ${provider.id}`,
          onclick: () => deleteProvider(provider),
        },
        "Delete",
      ),
    ),
  );
}

async function load() {
  let providers;
  try {
    providers = (await api("/api/providers")).providers;
  } catch (error) {
    if (error.status === 401) return;
    listStatus.textContent = `Could not load the providers: ${error.message}`;
    listStatus.hidden = false;
    return;
  }
  listStatus.hidden = true;
  count.textContent = providers.length ? `${providers.length}` : "";
  tbody.replaceChildren(...providers.map(providerRow));
  table.hidden = providers.length === 0;
  empty.hidden = providers.length > 0;
}

async function deleteProvider(provider) {
  const confirmed = await confirmAction(
    "Delete this provider?",
    `Models named ${provider.id}/… will no longer be routed to ${provider.baseUrl}.` +
      (provider.default ? " It is the default provider: other models lose their route too." : ""),
  );
  if (!confirmed) return;
  try {
    await api(`/api/providers/${encodeURIComponent(provider.id)}`, { method: "DELETE" });
    toast(`Provider ${provider.id} deleted.`);
    if (editing?.id === provider.id) resetForm();
  } catch (error) {
    if (error.status !== 401) toast(`Could not delete: ${error.message}`, "error");
  }
  await load();
}

// -- the page -------------------------------------------------------------------------

function render() {
  page.append(
    el(
      "p",
      { class: "lead" },
      "A model named ",
      el("code", {}, "provider/model"),
      " (say ",
      el("code", {}, "openai/gpt-4o-mini"),
      ") goes to that provider without the prefix; any other model goes to the default provider.",
    ),
    el(
      "section",
      { class: "card", "aria-labelledby": "providers-title" },
      el("div", { class: "section-head" }, el("h2", { id: "providers-title" }, "Configured providers"), count),
      listStatus,
      el("div", { class: "table-wrap" }, table, empty),
    ),
    el("section", { class: "card" }, formTitle, form),
  );
  resetForm();
}

renderTopbar();
render();
load();
