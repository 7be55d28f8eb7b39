// The one way the dashboard talks to memroute: the REST API, with the session cookie.
// A 401 (session expired or logged out elsewhere) goes back to the login page.

export class ApiError extends Error {
  constructor(message, status, type) {
    super(message);
    this.status = status;
    this.type = type;
  }
}

// Set once the user signs out: a request that fails with 401 after that (a poll of the
// Engine tab, say) must not send the page to the login with a `next` back here.
let signingOut = false;

function toLogin() {
  if (signingOut) return;
  const here = location.pathname + location.search;
  location.assign(`/dashboard/login?next=${encodeURIComponent(here)}`);
}

/** Raw fetch with the dashboard header; returns the Response (for downloads). */
export async function request(path, { method = "GET", body, headers = {}, raw = false } = {}) {
  const init = {
    method,
    credentials: "same-origin",
    headers: { "x-memroute-dashboard": "1", ...headers },
  };
  if (body !== undefined) {
    if (raw) {
      init.body = body;
    } else {
      init.headers["content-type"] = "application/json";
      init.body = JSON.stringify(body);
    }
  }
  const response = await fetch(path, init);
  if (response.status === 401) {
    toLogin();
    throw new ApiError("signed out", 401, "authentication_error");
  }
  if (!response.ok) {
    let message = `HTTP ${response.status}`;
    let type = "error";
    try {
      const error = (await response.json()).error;
      message = error.message || message;
      type = error.type || type;
    } catch {
      /* not JSON */
    }
    throw new ApiError(message, response.status, type);
  }
  return response;
}

/** JSON call: `api("/api/memory?page=1")`, `api(path, {method: "PUT", body})`. */
export async function api(path, options = {}) {
  const response = await request(path, options);
  return response.status === 204 ? null : response.json();
}

export async function logout() {
  signingOut = true;
  await fetch("/api/session", { method: "DELETE", credentials: "same-origin" });
  location.assign("/dashboard/login");
}
