// Replaced by the engine tab implementation.
import { el } from "./ui.js";

export function mount(panel) {
  panel.append(el("h2", {}, "engine"));
}
