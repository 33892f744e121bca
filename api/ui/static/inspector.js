// The inspector's only script. It fetches server-rendered fragments (escaped by the server's templates) with the
// API key from this tab's session storage, and inserts them where they were asked for. Elements say what they do:
//   data-get / data-post="URL"   on a button or link (a click), or on a form (its submit; fields sent as a form)
//   data-action="URL"            on a form's submit button: that URL instead of the form's
//   data-target="#id"            where the answer goes (default: <main>)
//   data-confirm="sentence"      ask first; nothing is sent unless the user agrees
// Text that comes from outside the server's templates (an error's detail) is set with textContent only.
"use strict";

(() => {
  const KEY = "context-memory-inspector-key";
  const main = document.getElementById("main");
  const problem = document.getElementById("problem");
  const keyPanel = document.getElementById("key-panel");
  const keyForm = document.getElementById("key-form");
  const keyInput = document.getElementById("key-input");
  const keyMessage = document.getElementById("key-message");
  const forget = document.getElementById("forget-key");
  let pending = null; // what to send again once a key is given

  const storedKey = () => sessionStorage.getItem(KEY);

  function showProblem(text) {
    problem.textContent = text;
    problem.hidden = !text;
  }

  function showKeyState() {
    forget.hidden = !storedKey();
  }

  function askForKey(detail, again) {
    pending = again;
    const rejected = storedKey() !== null;
    sessionStorage.removeItem(KEY); // a key the service refused is not kept
    showKeyState();
    keyMessage.textContent = rejected
      ? "The key was not accepted (" + detail + "). Type the right key."
      : "This service needs an API key (" + detail + ").";
    keyPanel.hidden = false;
    keyInput.focus();
  }

  function insert(target, html) {
    const holder = document.createElement("template");
    holder.innerHTML = html; // a fragment the server rendered with every stored value escaped
    target.replaceChildren(holder.content);
    target.hidden = false;
    target.removeAttribute("aria-busy");
  }

  async function detailOf(response) {
    try {
      const body = await response.json();
      return typeof body.detail === "string" ? body.detail : response.statusText;
    } catch (_) {
      return response.statusText || "no detail";
    }
  }

  async function run(url, method, body, target) {
    const headers = { "X-Inspector": "1", Accept: "text/html" };
    const key = storedKey();
    if (key) headers.Authorization = "Bearer " + key;
    target.setAttribute("aria-busy", "true");
    let response;
    try {
      response = await fetch(url, { method, headers, body, credentials: "omit", cache: "no-store" });
    } catch (err) {
      target.removeAttribute("aria-busy");
      showProblem("The service did not answer: " + err.message);
      return;
    }
    if (response.ok) {
      showProblem("");
      insert(target, await response.text());
      return;
    }
    target.removeAttribute("aria-busy");
    const detail = await detailOf(response);
    if (response.status === 401) {
      askForKey(detail, () => run(url, method, body, target));
      return;
    }
    showProblem(response.status + " " + response.statusText + ": " + detail);
  }

  function targetOf(element) {
    const selector = element.dataset.target;
    return (selector && document.querySelector(selector)) || main;
  }

  function confirmed(element) {
    return !element.dataset.confirm || window.confirm(element.dataset.confirm);
  }

  document.addEventListener("click", (event) => {
    const element = event.target.closest("button[data-get], button[data-post], a[data-get]");
    if (!element || element.form) return;
    event.preventDefault();
    if (!confirmed(element)) return;
    const method = element.dataset.post ? "POST" : "GET";
    run(element.dataset.post || element.dataset.get, method, null, targetOf(element));
  });

  document.addEventListener("submit", (event) => {
    const form = event.target;
    if (form === keyForm || !(form.dataset.get || form.dataset.post)) return;
    event.preventDefault();
    const button = event.submitter;
    const chooser = button && button.dataset.action ? button : form;
    if (!confirmed(chooser)) return;
    const fields = new URLSearchParams(new FormData(form));
    const target = targetOf(chooser);
    if (chooser.dataset.action || form.dataset.post) {
      run(chooser.dataset.action || form.dataset.post, "POST", fields, target);
    } else {
      const url = form.dataset.get;
      run(url + (url.includes("?") ? "&" : "?") + fields.toString(), "GET", null, target);
    }
  });

  keyForm.addEventListener("submit", (event) => {
    event.preventDefault();
    sessionStorage.setItem(KEY, keyInput.value.trim());
    keyInput.value = "";
    keyPanel.hidden = true;
    showKeyState();
    const again = pending || load;
    pending = null;
    again();
  });

  forget.addEventListener("click", () => {
    sessionStorage.removeItem(KEY);
    showKeyState();
    window.location.reload();
  });

  function load() {
    run(main.dataset.src + window.location.search, "GET", null, main);
  }

  showKeyState();
  load();
})();
