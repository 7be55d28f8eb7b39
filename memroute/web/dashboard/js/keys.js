import { renderTopbar } from "./nav.js";

renderTopbar();
