// Replaced by the memories tab implementation.
import { el } from "./ui.js";

export function mount(panel) {
  panel.append(el("h2", {}, "memories"));
}
