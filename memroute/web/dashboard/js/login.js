// The login form: exchanges the admin token for an HttpOnly session cookie.
const form = document.getElementById("login-form");
const input = document.getElementById("admin-token");
const error = document.getElementById("login-error");

function nextPage() {
  const target = new URLSearchParams(location.search).get("next") || "";
  if (target === "/docs" || target === "/redoc") return target;
  return target.startsWith("/dashboard/") && !target.startsWith("//") ? target : "/dashboard/memory";
}

form.addEventListener("submit", async (event) => {
  event.preventDefault();
  error.hidden = true;
  const token = input.value.trim();
  if (!token) {
    error.textContent = "Enter the admin token.";
    error.hidden = false;
    return;
  }
  const response = await fetch("/api/session", {
    method: "POST",
    credentials: "same-origin",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ token }),
  });
  if (response.ok) {
    location.assign(nextPage());
    return;
  }
  let message = `Sign-in failed (HTTP ${response.status}).`;
  try {
    message = (await response.json()).error.message;
  } catch {
    /* keep the generic message */
  }
  error.textContent = message.charAt(0).toUpperCase() + message.slice(1) + ".";
  error.hidden = false;
  input.select();
});
