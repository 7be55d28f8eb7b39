// The top bar shared by every dashboard page: brand, page links, sign out.
import { logout } from "./api.js";
import { el } from "./ui.js";

const PAGES = [
  ["memory", "/dashboard/memory", "Memory"],
  ["keys", "/dashboard/keys", "API keys"],
  ["providers", "/dashboard/providers", "Providers"],
];

export function renderTopbar() {
  const bar = document.getElementById("topbar");
  const page = bar.dataset.page;
  bar.replaceChildren(
    el("div", { class: "brand" }, "memroute ", el("span", { class: "muted" }, "Memory Studio")),
    el(
      "nav",
      { "aria-label": "Dashboard pages" },
      PAGES.map(([name, href, label]) => el("a", { href, "aria-current": name === page ? "page" : null }, label)),
    ),
    el("button", { id: "logout", type: "button", class: "link", onclick: logout }, "Sign out"),
  );
}
