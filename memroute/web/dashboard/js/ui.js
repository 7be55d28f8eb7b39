// Small DOM helpers. Text from memories is always set as text (never parsed as HTML),
// so a memory cannot inject markup into the dashboard.

/** el("button", {class: "primary", onclick: fn, "aria-label": "Close"}, "text", child…) */
export function el(tag, attrs = {}, ...children) {
  const node = document.createElement(tag);
  for (const [name, value] of Object.entries(attrs)) {
    if (value === undefined || value === null || value === false) continue;
    if (name.startsWith("on") && typeof value === "function") {
      node.addEventListener(name.slice(2), value);
    } else if (name === "class") {
      node.className = value;
    } else if (name === "dataset") {
      Object.assign(node.dataset, value);
    } else if (value === true) {
      node.setAttribute(name, "");
    } else {
      node.setAttribute(name, String(value));
    }
  }
  for (const child of children.flat()) {
    if (child === undefined || child === null || child === false) continue;
    node.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
  return node;
}

export function clear(node) {
  node.replaceChildren();
  return node;
}

let toastTimer;
let dialogCount = 0;
/** A short message in the live region (kind: "ok" | "error"). */
export function toast(message, kind = "ok") {
  const box = document.getElementById("toast");
  if (!box) return;
  box.textContent = message;
  box.className = `toast ${kind}`;
  box.hidden = false;
  clearTimeout(toastTimer);
  toastTimer = setTimeout(() => (box.hidden = true), kind === "error" ? 8000 : 4000);
}

/** A modal <dialog> with a title, body nodes and buttons; resolves with the button's value. */
export function modal(title, body, buttons = [{ label: "Close", value: "close" }]) {
  return new Promise((resolve) => {
    dialogCount += 1;
    const heading = el("h2", { id: `dlg-${dialogCount}` }, title);
    const actions = el(
      "div",
      { class: "actions" },
      buttons.map((b) =>
        el("button", { type: "button", class: b.class || "", onclick: () => close(b.value), dataset: { value: b.value } }, b.label),
      ),
    );
    const dialog = el("dialog", { class: "modal", "aria-labelledby": heading.id }, heading, body, actions);
    function close(value) {
      dialog.close();
      dialog.remove();
      resolve(value);
    }
    dialog.addEventListener("cancel", (event) => {
      event.preventDefault();
      close("cancel");
    });
    document.body.append(dialog);
    dialog.showModal();
  });
}

/** Yes/no confirmation; resolves true when confirmed. */
export async function confirmAction(title, message, confirmLabel = "Delete") {
  const answer = await modal(title, el("p", {}, message), [
    { label: "Cancel", value: "cancel" },
    { label: confirmLabel, value: "confirm", class: "danger" },
  ]);
  return answer === "confirm";
}

export function debounce(fn, ms) {
  let timer;
  return (...args) => {
    clearTimeout(timer);
    timer = setTimeout(() => fn(...args), ms);
  };
}

export function formatDate(iso) {
  if (!iso) return "—";
  const date = new Date(iso);
  return Number.isNaN(date.getTime()) ? iso : date.toLocaleString();
}

/** A labelled form field: el("label") + control, returning {wrap, input}. */
export function field(label, control, help) {
  const id = control.id || `f-${Math.random().toString(36).slice(2, 9)}`;
  control.id = id;
  const wrap = el("div", { class: "field" }, el("label", { for: id }, label), control);
  if (help) {
    const helpNode = el("p", { class: "help", id: `${id}-help` }, help);
    control.setAttribute("aria-describedby", helpNode.id);
    wrap.append(helpNode);
  }
  return { wrap, input: control };
}

/** Save a Blob as a download. */
export function download(blob, filename) {
  const url = URL.createObjectURL(blob);
  const link = el("a", { href: url, download: filename });
  document.body.append(link);
  link.click();
  link.remove();
  setTimeout(() => URL.revokeObjectURL(url), 1000);
}
