// The Memories tab: browse (search, type and owner filters, paging, stats), add, inline
// edit, delete, history, export/import, "Compact old" and the pipeline health dot.
// Memory text is untrusted: it is only ever set as text (el()/textContent), never as HTML.
import { api, request } from "./api.js";
import { confirmAction, debounce, download, el, field, formatDate, modal, toast } from "./ui.js";

const PAGE_SIZE = 20;
const TYPES = ["factual", "episodic", "procedural", "semantic"];
const HEALTH_EVERY_MS = 60_000;
const SEARCH_DEBOUNCE_MS = 300;
const COLUMNS = 6;

// Owner pickers mix real owner ids with choices like "all keys". Owner ids are stored as
// "=<id>" option values, so no id (not even "" = unowned) can be taken for a choice.
const ALL = "*all";
const OTHER = "*other";
const FROM_FILE = "*file";

const state = { page: 1, type: "", q: "", user: "", keys: [], request: 0 };
const ui = {};
let healthTimer = null;

// -- owners ------------------------------------------------------------------------------

function keyName(id) {
  return state.keys.find((key) => key.id === id)?.name;
}

function describeOwner(owner) {
  if (owner === null) return "all keys";
  if (owner === "") return "no key (unowned)";
  return keyName(owner) || owner;
}

/**
 * A labelled owner select: the client keys by name (value: key id), "Unowned", "Other
 * owner id…" (reveals a text box, for owners that are not keys) and an optional first
 * choice (e.g. "All keys") that `read()` returns as null.
 */
function ownerPicker(label, { first, selected, revoked = false } = {}) {
  const keys = state.keys.filter((key) => revoked || key.active);
  const select = el(
    "select",
    {},
    first && el("option", { value: first.value }, first.label),
    keys.map((key) => el("option", { value: `=${key.id}` }, key.active ? key.name : `${key.name} (revoked)`)),
    el("option", { value: "=" }, "Unowned (no key)"),
    el("option", { value: OTHER }, "Other owner id…"),
  );
  const other = el("input", {
    type: "text",
    class: "owner-other",
    "aria-label": `${label}: owner id`,
    placeholder: "owner id",
    maxlength: 256,
    hidden: true,
  });
  if (typeof selected === "string") {
    select.value = `=${selected}`;
    if (!select.value) {
      // An owner that is not a listed key: preselect it as a typed owner id.
      select.value = OTHER;
      other.value = selected;
      other.hidden = false;
    }
  }
  select.addEventListener("change", () => {
    other.hidden = select.value !== OTHER;
    if (!other.hidden) other.focus();
  });
  const { wrap } = field(label, select);
  wrap.classList.add("owner-picker");
  wrap.append(other);
  return {
    wrap,
    select,
    other,
    /** The owner id ("" = unowned), or null for the first choice; throws if incomplete. */
    read() {
      if (select.value === OTHER) {
        const id = other.value.trim();
        if (!id) throw new Error(`${label}: type the owner id`);
        return id;
      }
      return select.value.startsWith("=") ? select.value.slice(1) : null;
    },
  };
}

/** The owner chosen in the list's filter: an id, null (all keys), or undefined (incomplete). */
function filterOwner() {
  try {
    return ui.owner.read();
  } catch {
    return undefined;
  }
}

/** The owner new memories go to by default: the filtered key, else the first active key. */
function defaultOwner() {
  const owner = filterOwner();
  if (typeof owner === "string") return owner;
  return state.keys.find((key) => key.active)?.id ?? "";
}

// -- list ----------------------------------------------------------------------------------

async function load() {
  const owner = filterOwner();
  if (owner === undefined) return; // "Other owner id…" chosen but nothing typed yet
  // Several requests can be queued (typing, paging): only the newest may render.
  const ticket = ++state.request;
  const params = new URLSearchParams({ page: String(state.page), limit: String(PAGE_SIZE) });
  if (state.type) params.set("type", state.type);
  if (state.q) params.set("q", state.q);
  if (owner !== null) params.set("apiKeyId", owner);
  if (state.user) params.set("userId", state.user);
  ui.table.setAttribute("aria-busy", "true");
  try {
    const result = await api(`/api/memory?${params}`);
    if (ticket !== state.request) return;
    if (result.data.length === 0 && result.totalPages > 0 && state.page > result.totalPages) {
      state.page = result.totalPages; // the last page emptied (delete, compaction): step back
      return load();
    }
    renderStats(result.stats);
    renderRows(result.data);
    renderPager(result.page, Math.max(1, result.totalPages));
  } catch (error) {
    if (ticket === state.request) toast(`Could not load memories: ${error.message}`, "error");
  } finally {
    if (ticket === state.request) ui.table.removeAttribute("aria-busy");
  }
}

function reloadFromFirstPage() {
  state.page = 1;
  load();
}

function renderStats(stats) {
  ui.total.textContent = String(stats.total);
  ui.byType.textContent = TYPES.filter((type) => stats.byType[type])
    .map((type) => `${stats.byType[type]} ${type}`)
    .join(" · ");
  ui.tokens.textContent = stats.tokensUsed.toLocaleString();
  // The server counts tokens per owner, whatever the type and search filters.
  const owner = filterOwner();
  ui.tokensDetail.textContent = `estimated, all memories of ${owner === null ? "every key" : "this owner"}`;
  const { hits, misses } = stats.cacheStats;
  ui.hitRateCard.hidden = hits + misses === 0; // unknown until the cache has been used
  if (hits + misses > 0) {
    ui.hitRate.textContent = `${((100 * hits) / (hits + misses)).toFixed(1)} %`;
    ui.hitRateDetail.textContent = `${hits} hits · ${misses} misses`;
  }
}

function renderPager(page, pages) {
  state.page = page;
  ui.pageLabel.textContent = `Page ${page} of ${pages}`;
  ui.prev.disabled = page <= 1;
  ui.next.disabled = page >= pages;
}

function renderRows(memories) {
  ui.editing = null; // an open editor goes with the rows it belonged to
  if (memories.length === 0) {
    const filtered = state.q || state.type || filterOwner() !== null;
    const text = filtered ? "No memory matches these filters." : "No memories yet.";
    ui.rows.replaceChildren(el("tr", {}, el("td", { colspan: COLUMNS, class: "empty" }, text)));
    return;
  }
  ui.rows.replaceChildren(...memories.map(memoryRow));
}

function ownerCell(owner, user = "") {
  const key = owner === "" ? el("span", { class: "muted" }, "unowned") : keyCell(owner);
  if (!user) return key;
  return [key, el("div", { class: "help end-user" }, "end user ", el("code", {}, user))];
}

function keyCell(owner) {
  const name = keyName(owner);
  return name ? el("span", { title: owner }, name) : el("code", {}, owner);
}

/** How a memory is named in labels and messages: its key, or (without one) its text. */
function memoryName(memory) {
  if (memory.key) return memory.key;
  return memory.content.length > 40 ? `${memory.content.slice(0, 40)}…` : memory.content;
}

function memoryRow(memory) {
  const row = el("tr", { dataset: { id: memory.id } });
  const edit = el(
    "button",
    { type: "button", "aria-label": `Edit ${memoryName(memory)}`, "aria-expanded": "false" },
    "Edit",
  );
  edit.addEventListener("click", () => toggleEditor(row, edit, memory));
  row.append(
    el("td", {}, el("span", { class: `badge type-${memory.type}` }, memory.type)),
    el(
      "td",
      { class: "key" },
      memory.key ? el("code", {}, memory.key) : el("span", { class: "muted" }, "no key"),
      memory.expiresAt && el("div", { class: "help" }, `expires ${formatDate(memory.expiresAt)}`),
    ),
    el("td", { class: "content" }, el("div", { class: "clamp", title: memory.content }, memory.content)),
    el("td", { class: "owner" }, ownerCell(memory.apiKeyId, memory.userId)),
    el("td", { class: "date" }, el("time", { datetime: memory.createdAt }, formatDate(memory.createdAt))),
    el(
      "td",
      { class: "actions" },
      edit,
      el(
        "button",
        { type: "button", "aria-label": `History of ${memoryName(memory)}`, onclick: () => showHistory(memory) },
        "History",
      ),
      el(
        "button",
        {
          type: "button",
          class: "delete",
          "aria-label": `Delete ${memoryName(memory)}`,
          onclick: () => remove(memory),
        },
        "Delete",
      ),
    ),
  );
  return row;
}

// -- forms ---------------------------------------------------------------------------------

function showError(node, message) {
  node.textContent = message;
  node.hidden = !message;
}

function typeSelect(selected = "factual") {
  return el("select", {}, TYPES.map((t) => el("option", { value: t, selected: t === selected }, t)));
}

// -- inline edit ------------------------------------------------------------------------

/** ISO time → the local "YYYY-MM-DDTHH:MM" a datetime-local input shows. */
function toLocalInput(iso) {
  if (!iso) return "";
  const date = new Date(iso);
  return new Date(date.getTime() - date.getTimezoneOffset() * 60_000).toISOString().slice(0, 16);
}

/** The metadata text as an object; throws a message fit for the user. */
function parseMetadata(text) {
  if (!text.trim()) return {};
  let value;
  try {
    value = JSON.parse(text);
  } catch (error) {
    throw new Error(`Metadata is not valid JSON (${error.message}). Nothing was saved.`);
  }
  if (value === null || typeof value !== "object" || Array.isArray(value)) {
    throw new Error('Metadata must be a JSON object, e.g. {"source": "manual"}. Nothing was saved.');
  }
  return value;
}

function closeEditor() {
  if (!ui.editing) return;
  ui.editing.row.remove();
  ui.editing.button.setAttribute("aria-expanded", "false");
  ui.editing.button.focus();
  ui.editing = null;
}

function cancelOnEscape(event) {
  if (event.key === "Escape") closeEditor();
}

function toggleEditor(row, button, memory) {
  const wasOpen = ui.editing?.button === button;
  closeEditor();
  if (wasOpen) return;
  const form = editForm(memory);
  const editRow = el("tr", { class: "edit-row" }, el("td", { colspan: COLUMNS }, form));
  row.after(editRow);
  button.setAttribute("aria-expanded", "true");
  ui.editing = { row: editRow, button };
  form.querySelector("textarea").focus();
}

function editForm(memory) {
  const type = typeSelect(memory.type);
  // A key can be changed or given, not removed: only a memory that has one must keep one.
  const key = el("input", {
    type: "text",
    required: Boolean(memory.key),
    maxlength: 512,
    value: memory.key,
  });
  const content = el("textarea", { required: true, rows: 3 }, memory.content);
  const metadataText = JSON.stringify(memory.metadata, null, 2);
  const metadata = el("textarea", { class: "code", rows: 3, spellcheck: "false" }, metadataText);
  const expires = el("input", { type: "datetime-local", value: toLocalInput(memory.expiresAt) });
  const error = el("p", { class: "error", role: "alert", hidden: true });
  const save = el("button", { type: "submit", class: "primary" }, "Save");

  async function submit(event) {
    event.preventDefault();
    showError(error, "");
    metadata.removeAttribute("aria-invalid");
    let parsed;
    try {
      parsed = parseMetadata(metadata.value);
    } catch (problem) {
      metadata.setAttribute("aria-invalid", "true");
      showError(error, problem.message);
      metadata.focus();
      return;
    }
    // Only changed fields are sent: an untouched expiry keeps its seconds, and the
    // history records an UPDATE only for a real change.
    const changes = {};
    if (type.value !== memory.type) changes.type = type.value;
    if (key.value !== memory.key) changes.key = key.value;
    if (content.value !== memory.content) changes.content = content.value;
    if (JSON.stringify(parsed) !== JSON.stringify(memory.metadata)) changes.metadata = parsed;
    if (expires.value !== toLocalInput(memory.expiresAt)) {
      changes.expiresAt = expires.value ? new Date(expires.value).toISOString() : null;
    }
    if (Object.keys(changes).length === 0) {
      closeEditor();
      toast("Nothing changed");
      return;
    }
    save.disabled = true;
    try {
      await api(`/api/memory/${encodeURIComponent(memory.id)}`, { method: "PUT", body: changes });
      closeEditor();
      toast(`Saved ${memoryName({ key: key.value, content: content.value })}`);
      load();
    } catch (problem) {
      showError(error, `Could not save: ${problem.message}`);
      save.disabled = false;
    }
  }

  return el(
    "form",
    {
      class: "editor",
      "aria-label": `Edit memory ${memoryName(memory)}`,
      onsubmit: submit,
      onkeydown: cancelOnEscape,
    },
    el(
      "p",
      { class: "help editor-meta" },
      "id ",
      el("code", {}, memory.id),
      ` · updated ${formatDate(memory.updatedAt)} · retrieved ${memory.accessCount} times`,
    ),
    // Where it came from (read from its metadata by the server), when the metadata says.
    memory.provenance && el("p", { class: "help provenance" }, memory.provenance.summary),
    el(
      "div",
      { class: "editor-grid" },
      field("Type", type).wrap,
      field("Key", key).wrap,
      field("Expires", expires, "Empty = never expires (your local time).").wrap,
      field("Content", content).wrap,
      field("Metadata (JSON object)", metadata).wrap,
    ),
    error,
    el(
      "div",
      { class: "editor-actions" },
      el("button", { type: "button", onclick: closeEditor }, "Cancel"),
      save,
    ),
  );
}

// -- delete and history --------------------------------------------------------------------

async function remove(memory) {
  const sure = await confirmAction(
    "Delete memory?",
    `Delete "${memoryName(memory)}" (owner: ${describeOwner(memory.apiKeyId)})? Its history is kept.`,
  );
  if (!sure) return;
  try {
    await api(`/api/memory/${encodeURIComponent(memory.id)}`, { method: "DELETE" });
    toast(`Deleted ${memoryName(memory)}`);
    load();
  } catch (error) {
    toast(`Could not delete: ${error.message}`, "error");
  }
}

/** What an entry did to the content: the old text struck through when it changed. */
function historyContent(entry) {
  if (entry.event === "UPDATE" && entry.oldContent !== entry.newContent) {
    return [el("del", {}, entry.oldContent), el("ins", {}, entry.newContent)];
  }
  return [entry.newContent ?? entry.oldContent];
}

function historyEntry(entry) {
  const keyChanged = entry.oldKey && entry.newKey && entry.oldKey !== entry.newKey;
  return el(
    "tr",
    {},
    el("td", { class: "date" }, formatDate(entry.at)),
    el("td", {}, el("span", { class: "badge" }, entry.event), " by ", entry.actor),
    el(
      "td",
      { class: "content" },
      keyChanged && el("div", { class: "help" }, `key ${entry.oldKey} → ${entry.newKey}`),
      historyContent(entry),
    ),
  );
}

async function showHistory(memory) {
  try {
    const { history } = await api(`/api/memory/${encodeURIComponent(memory.id)}/history`);
    const table = el(
      "table",
      {},
      el("thead", {}, el("tr", {}, el("th", {}, "When"), el("th", {}, "Change"), el("th", {}, "Content"))),
      el("tbody", {}, history.map(historyEntry)),
    );
    await modal(`History of ${memoryName(memory)}`, el("div", { class: "table-wrap history-wrap" }, table));
  } catch (error) {
    toast(`Could not load the history: ${error.message}`, "error");
  }
}

// -- dialogs with forms (stay open on errors, unlike ui.modal) -----------------------------

function openDialog(title, ...children) {
  const heading = el("h2", { id: `dialog-${Date.now()}` }, title);
  const dialog = el("dialog", { class: "modal", "aria-labelledby": heading.id }, heading, ...children);
  dialog.addEventListener("close", () => dialog.remove());
  document.body.append(dialog);
  dialog.showModal();
  return dialog;
}

function openAdd() {
  const owner = ownerPicker("Owner (API key)", { selected: defaultOwner() });
  owner.wrap.append(el("p", { class: "help" }, "The key whose chats will use this memory."));
  const type = typeSelect();
  const key = el("input", { type: "text", maxlength: 512, placeholder: "preference:editor" });
  const content = el("textarea", { required: true, rows: 4 });
  const error = el("p", { class: "error", role: "alert", hidden: true });
  const save = el("button", { type: "submit", class: "primary" }, "Add memory");
  const form = el(
    "form",
    { onsubmit: submit },
    owner.wrap,
    field("Type", type).wrap,
    field("Key", key, "Optional. An existing memory of this owner with the same key is replaced.").wrap,
    field("Content", content).wrap,
    error,
    el(
      "div",
      { class: "actions" },
      el("button", { type: "button", onclick: () => dialog.close() }, "Cancel"),
      save,
    ),
  );
  const dialog = openDialog("Add memory", form);

  async function submit(event) {
    event.preventDefault();
    showError(error, "");
    save.disabled = true;
    try {
      const body = { apiKeyId: owner.read(), type: type.value, key: key.value, content: content.value };
      await api("/api/memory", { method: "POST", body });
      dialog.close();
      toast(`Added ${memoryName(body)} to ${describeOwner(body.apiKeyId)}`);
      reloadFromFirstPage();
    } catch (problem) {
      showError(error, problem.message);
      save.disabled = false;
    }
  }
}

// -- export and import -----------------------------------------------------------------------

function fileSlug(text) {
  return text.replace(/[^A-Za-z0-9_-]+/g, "-").replace(/^-|-$/g, "") || "memories";
}

/** Every memory of the key filter (all pages; type and search do not apply) as JSON Lines. */
async function exportMemories() {
  const owner = filterOwner();
  if (owner === undefined) {
    toast("Type the owner id to export first", "error");
    return;
  }
  ui.exportButton.disabled = true;
  try {
    const query = owner === null ? "" : `?apiKeyId=${encodeURIComponent(owner)}`;
    const text = await (await request(`/api/memory/export${query}`)).text();
    const count = text.split("\n").filter((line) => line.trim()).length;
    if (count === 0) {
      toast(`No memories of ${describeOwner(owner)} to export`);
      return;
    }
    const day = new Date().toISOString().slice(0, 10);
    const name = `memroute-${fileSlug(owner === null ? "all-keys" : describeOwner(owner))}-${day}.jsonl`;
    download(new Blob([text], { type: "application/x-ndjson" }), name);
    const unfiltered = state.q || state.type ? " (search and type filters do not apply)" : "";
    toast(`Exported ${count} memories of ${describeOwner(owner)}${unfiltered}`);
  } catch (error) {
    toast(`Could not export: ${error.message}`, "error");
  } finally {
    ui.exportButton.disabled = false;
  }
}

/** The server's counts; `unit` names what an error's number counts ("line" or "record"). */
function importReport(report, unit) {
  const errors = report.errors.length;
  const failed = `${errors} ${errors === 1 ? "error" : "errors"}`;
  const counts = `Imported ${report.imported} · skipped ${report.skipped} (unchanged) · ${failed}`;
  return el(
    "div",
    {},
    el("p", { class: "import-counts" }, counts),
    errors > 0 &&
      el(
        "ul",
        { class: "import-errors" },
        report.errors.map((problem) => el("li", {}, `${unit} ${problem.line}: ${problem.error}`)),
      ),
  );
}

function openImport() {
  const accept = ".jsonl,.ndjson,.json,application/json,application/x-ndjson";
  const file = el("input", { type: "file", required: true, accept });
  const owner = ownerPicker("Owner (API key)", {
    first: { value: FROM_FILE, label: "As in the file (each record's apiKeyId)" },
    selected: defaultOwner(),
  });
  const error = el("p", { class: "error", role: "alert", hidden: true });
  const result = el("div", { "aria-live": "polite" });
  const start = el("button", { type: "submit", class: "primary" }, "Import");
  const form = el(
    "form",
    { onsubmit: submit },
    field("File", file, "JSON Lines (as exported) or a JSON array of memories.").wrap,
    owner.wrap,
    el("p", { class: "help" }, "Records are upserted: importing the same file twice changes nothing."),
    error,
    result,
    el(
      "div",
      { class: "actions" },
      el("button", { type: "button", onclick: () => dialog.close() }, "Close"),
      start,
    ),
  );
  const dialog = openDialog("Import memories", form);

  async function submit(event) {
    event.preventDefault();
    showError(error, "");
    result.replaceChildren();
    start.disabled = true;
    try {
      const target = owner.read();
      const chosen = file.files[0];
      // The route takes JSON Lines or a JSON array; its start tells which one this is. The
      // file itself is the body: the browser sends it from disk, whatever its size.
      const start = await chosen.slice(0, 4096).text();
      const array = start.replace(/^\uFEFF/, "").trimStart().startsWith("[");
      const contentType = array ? "application/json" : "application/x-ndjson";
      const query = target === null ? "" : `?apiKeyId=${encodeURIComponent(target)}`;
      const response = await request(`/api/memory/import${query}`, {
        method: "POST",
        body: chosen,
        raw: true,
        headers: { "content-type": contentType },
      });
      result.replaceChildren(importReport(await response.json(), array ? "record" : "line"));
      load();
    } catch (problem) {
      showError(error, problem.message);
    } finally {
      start.disabled = false;
    }
  }
}

// -- compact old ---------------------------------------------------------------------------

function candidateTable(candidates) {
  return el(
    "div",
    { class: "table-wrap candidates" },
    el(
      "table",
      {},
      el(
        "thead",
        {},
        el("tr", {}, ["Key", "Owner", "Updated", "Content"].map((h) => el("th", { scope: "col" }, h))),
      ),
      el(
        "tbody",
        {},
        candidates.map((memory) =>
          el(
            "tr",
            {},
            el("td", { class: "key" }, el("code", {}, memory.key)),
            el("td", {}, ownerCell(memory.apiKeyId, memory.userId)),
            el("td", { class: "date" }, formatDate(memory.updatedAt)),
            el("td", { class: "content" }, el("div", { class: "clamp" }, memory.content)),
          ),
        ),
      ),
    ),
  );
}

function compactOutcome(result) {
  if (result.summaries.length === 1) {
    const [summary] = result.summaries;
    const owner = describeOwner(summary.apiKeyId);
    return `Compacted ${result.deletedCount} memories of ${owner} into summary ${summary.summaryId}.`;
  }
  const perKey = result.summaries.map((s) => `${describeOwner(s.apiKeyId)}: ${s.count} → ${s.summaryId}`);
  const total = result.summaries.length;
  return `Compacted ${result.deletedCount} memories into ${total} summaries (${perKey.join("; ")}).`;
}

function openCompact() {
  const owner = ownerPicker("Key to compact", {
    first: { value: ALL, label: "All keys (each into its own summaries)" },
    selected: defaultOwner(),
    revoked: true,
  });
  const days = el("input", { type: "number", min: 1, max: 365, step: 1, value: 30, required: true });
  const error = el("p", { class: "error", role: "alert", hidden: true });
  const plan = el("div", { "aria-live": "polite" });
  const preview = el("button", { type: "submit", class: "primary" }, "Find candidates");
  const run = el("button", { type: "button", class: "danger", disabled: true, onclick: compact }, "Compact");
  // The real run sends exactly the body of the dry run the user has seen.
  let planned = null;

  function forget() {
    planned = null;
    run.disabled = true;
    run.textContent = "Compact";
    plan.replaceChildren();
  }

  const form = el(
    "form",
    { onsubmit: dryRun, oninput: forget },
    el(
      "p",
      { class: "help" },
      "Memories not updated for this many days are replaced by summary memories of their key; " +
        "the originals stay in their history.",
    ),
    owner.wrap,
    field("Older than (days)", days).wrap,
    error,
    plan,
    el(
      "div",
      { class: "actions" },
      el("button", { type: "button", onclick: () => dialog.close() }, "Close"),
      preview,
      run,
    ),
  );
  const dialog = openDialog("Compact old memories", form);

  function bodyFor(dry) {
    const target = owner.read();
    const body = { olderThanDays: Number(days.value), dryRun: dry };
    if (target === null) body.allKeys = true;
    else body.apiKeyId = target;
    return body;
  }

  async function dryRun(event) {
    event.preventDefault();
    forget();
    showError(error, "");
    try {
      const body = bodyFor(true);
      const result = await api("/api/memory/summarize", { method: "POST", body });
      const scope = body.allKeys ? "any key" : describeOwner(body.apiKeyId);
      if (result.candidates.length === 0) {
        plan.append(el("p", {}, `No memory of ${scope} is older than ${body.olderThanDays} days.`));
        return;
      }
      const count = result.candidateCount;
      const shown = count > result.candidates.length ? ` (the oldest ${result.candidates.length} listed)` : "";
      plan.append(
        el("p", {}, `${count} memories of ${scope} (${result.totalTokens} tokens) would be compacted${shown}:`),
        candidateTable(result.candidates),
      );
      planned = { ...body, dryRun: false };
      run.textContent = `Compact ${count} memories`;
      run.disabled = false;
    } catch (problem) {
      showError(error, problem.message);
    }
  }

  async function compact() {
    const body = planned;
    forget();
    try {
      const result = await api("/api/memory/summarize", { method: "POST", body });
      const text = result.deletedCount > 0 ? compactOutcome(result) : "Nothing was old enough any more.";
      plan.append(el("p", { class: "compact-done" }, text));
      load();
    } catch (problem) {
      showError(error, problem.message);
    }
  }
}

// -- health ------------------------------------------------------------------------------

function showHealth(ok, text, detail) {
  ui.healthDot.className = `dot ${ok ? "ok" : "bad"}`;
  ui.healthText.textContent = text;
  ui.healthDetail.textContent = detail;
}

/** Runs the server's pipeline probe, which cleans up after itself (no visible memory). */
async function checkHealth() {
  ui.healthCheck.disabled = true;
  try {
    const health = await api("/api/memory/health");
    const checked = `${health.latencyMs.toFixed(1)} ms · checked ${new Date().toLocaleTimeString()}`;
    if (health.working) showHealth(true, "Working", checked);
    else showHealth(false, `Broken: ${health.error || "unknown error"}`, checked);
  } catch (error) {
    showHealth(false, "Check failed", error.message);
  } finally {
    ui.healthCheck.disabled = false;
  }
}

// -- layout ------------------------------------------------------------------------------

function statCard(label, value, detail) {
  return el("div", { class: "stat" }, el("div", { class: "label" }, label), value, detail);
}

function buildStats() {
  ui.total = el("div", { class: "value" }, "—");
  ui.byType = el("div", { class: "help" });
  ui.tokens = el("div", { class: "value" }, "—");
  ui.tokensDetail = el("div", { class: "help" });
  ui.hitRate = el("div", { class: "value" });
  ui.hitRateDetail = el("div", { class: "help" });
  ui.hitRateCard = statCard("Cache hit rate", ui.hitRate, ui.hitRateDetail);
  ui.hitRateCard.hidden = true;
  ui.healthDot = el("span", { class: "dot", "aria-hidden": "true" });
  ui.healthText = el("span", { class: "health-text" }, "Not checked yet");
  ui.healthDetail = el("span", {});
  ui.healthCheck = el("button", { type: "button", class: "link", onclick: checkHealth }, "Check now");
  const health = statCard(
    "Pipeline health",
    el("div", { class: "value health" }, ui.healthDot, ui.healthText),
    el("div", { class: "help" }, ui.healthDetail, " ", ui.healthCheck),
  );
  health.classList.add("health-card");
  return el(
    "div",
    { class: "grid stats" },
    statCard("Memories", ui.total, ui.byType),
    statCard("Tokens used", ui.tokens, ui.tokensDetail),
    ui.hitRateCard,
    health,
  );
}

function buildFilters() {
  const search = el("input", { type: "search", placeholder: "text in key or content", maxlength: 2000 });
  const types = TYPES.map((t) => el("option", {}, t));
  const type = el("select", {}, el("option", { value: "" }, "All types"), types);
  ui.owner = ownerPicker("API key", { first: { value: ALL, label: "All keys" }, revoked: true });
  const user = el("input", {
    type: "search",
    placeholder: "any (a key's own and its users')",
    maxlength: 128,
    autocomplete: "off",
    spellcheck: "false",
  });

  search.addEventListener(
    "input",
    debounce(() => {
      state.q = search.value.trim();
      reloadFromFirstPage();
    }, SEARCH_DEBOUNCE_MS),
  );
  type.addEventListener("change", () => {
    state.type = type.value;
    reloadFromFirstPage();
  });
  user.addEventListener(
    "input",
    debounce(() => {
      state.user = user.value.trim();
      reloadFromFirstPage();
    }, SEARCH_DEBOUNCE_MS),
  );
  ui.owner.select.addEventListener("change", reloadFromFirstPage);
  ui.owner.other.addEventListener("input", debounce(reloadFromFirstPage, SEARCH_DEBOUNCE_MS));

  return el(
    "div",
    { class: "filters" },
    field("Search", search).wrap,
    field("Type", type).wrap,
    ui.owner.wrap,
    field("End user", user, "One end user's memories (the id an app sends as user).").wrap,
  );
}

function buildActions() {
  ui.exportButton = el(
    "button",
    { type: "button", onclick: exportMemories, title: "All memories of the selected API key, as JSON Lines" },
    "Export",
  );
  return el(
    "div",
    { class: "mem-actions" },
    el("button", { type: "button", class: "primary", onclick: openAdd }, "Add memory"),
    ui.exportButton,
    el("button", { type: "button", onclick: openImport }, "Import"),
    el("button", { type: "button", onclick: openCompact }, "Compact old"),
  );
}

function buildTable() {
  ui.rows = el("tbody", {});
  ui.prev = el("button", { type: "button", "aria-label": "Previous page", disabled: true }, "‹ Prev");
  ui.next = el("button", { type: "button", "aria-label": "Next page", disabled: true }, "Next ›");
  ui.pageLabel = el("span", { class: "page-label", "aria-live": "polite" });
  ui.prev.addEventListener("click", () => {
    state.page -= 1;
    load();
  });
  ui.next.addEventListener("click", () => {
    state.page += 1;
    load();
  });
  const head = ["Type", "Key", "Content", "Owner key", "Created", "Actions"];
  // aria-busy is on while a list request runs (and until the first one has answered).
  ui.table = el(
    "table",
    { "aria-label": "Memories", "aria-busy": "true" },
    el("thead", {}, el("tr", {}, head.map((h) => el("th", { scope: "col" }, h)))),
    ui.rows,
  );
  return [
    el("div", { class: "table-wrap memories" }, ui.table),
    el("nav", { class: "pager", "aria-label": "Pages" }, ui.prev, ui.pageLabel, ui.next),
  ];
}

// -- tab lifecycle -----------------------------------------------------------------------------

export async function mount(panel) {
  try {
    state.keys = (await api("/api/keys")).keys;
  } catch (error) {
    toast(`Could not load the API keys: ${error.message}`, "error");
  }
  panel.classList.add("memories-tab");
  panel.append(
    buildStats(),
    el("div", { class: "card toolbar" }, buildFilters(), buildActions()),
    ...buildTable(),
  );
}

export function show() {
  load();
  checkHealth();
  clearInterval(healthTimer);
  healthTimer = setInterval(() => {
    if (!document.hidden) checkHealth();
  }, HEALTH_EVERY_MS);
}

export function hide() {
  clearInterval(healthTimer);
  healthTimer = null;
}
