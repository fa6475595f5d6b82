// The memory centre: a store owner's page over Arbor's JSON API (/api/v1/memory/…).
//
// Every word shown comes from the API and is put on the page as text, never as markup. The
// operator token lives in this tab's session storage and travels only as a bearer header.
"use strict";

const API = "/api/v1/memory";
const TOKEN_KEY = "arbor.operator";
const state = { memories: [], chosen: null, trees: [] };

// ---- small helpers ----

function el(tag, attrs, ...children) {
  const node = document.createElement(tag);
  for (const [key, value] of Object.entries(attrs || {})) {
    if (key === "on") {
      for (const [event, handler] of Object.entries(value)) node.addEventListener(event, handler);
    } else if (value !== undefined && value !== null && value !== false) {
      node.setAttribute(key, value === true ? "" : String(value));
    }
  }
  for (const child of children.flat()) {
    if (child === undefined || child === null || child === false) continue;
    node.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
  return node;
}

const $ = (id) => document.getElementById(id);

function clear(node) {
  while (node.firstChild) node.firstChild.remove();
  return node;
}

function when(text) {
  if (!text) return "—";
  const date = new Date(text);
  return Number.isNaN(date.getTime()) ? text : date.toLocaleString();
}

function notice(text, isError) {
  const box = $("notice");
  box.textContent = text;
  box.className = isError ? "error" : "";
  box.hidden = !text;
}

class ApiError extends Error {
  constructor(status, code, message) {
    super(message);
    this.status = status;
    this.code = code;
  }
}

async function api(path, options = {}) {
  const headers = { Accept: "application/json" };
  const token = sessionStorage.getItem(TOKEN_KEY);
  if (token) headers.Authorization = `Bearer ${token}`;
  const init = { method: options.method || "GET", headers, cache: "no-store" };
  if (options.body !== undefined) {
    headers["Content-Type"] = "application/json";
    init.body = JSON.stringify(options.body);
  }
  Object.assign(headers, options.headers || {});
  const response = await fetch(API + path, init);
  const text = await response.text();
  let value = null;
  try {
    value = text ? JSON.parse(text) : null;
  } catch (_) {
    throw new ApiError(response.status, "invalid_response", `the server answered ${response.status}, not JSON`);
  }
  if (!response.ok) {
    const error = (value && value.error) || {};
    throw new ApiError(response.status, error.code || "error", error.message || `HTTP ${response.status}`);
  }
  return value;
}

function query(params) {
  const pairs = Object.entries(params).filter(([, v]) => v !== undefined && v !== null && v !== "");
  return pairs.length ? "?" + new URLSearchParams(pairs).toString() : "";
}

// Each action reports its own failure on the page instead of leaving it half-shown.
function guarded(action) {
  return async (event) => {
    if (event && event.preventDefault) event.preventDefault();
    try {
      await action(event);
    } catch (error) {
      notice(error.message || String(error), true);
    }
  };
}

// ---- signing in ----

function takeTokenFromAddress() {
  // `arbor serve` prints the centre's address with the token after `#`: the fragment never
  // reaches a server or a log. It is moved to session storage and out of the address bar.
  const match = /^#operator=([A-Za-z0-9._~-]+)$/.exec(location.hash);
  if (match) {
    sessionStorage.setItem(TOKEN_KEY, match[1]);
    history.replaceState(null, "", location.pathname);
  }
}

function showSignIn(message) {
  $("sign-in").hidden = false;
  $("tabs").hidden = true;
  $("centre").hidden = true;
  $("sign-out").hidden = true;
  $("sign-in-error").textContent = message || "";
}

async function openCentre() {
  const hadToken = sessionStorage.getItem(TOKEN_KEY) !== null;
  try {
    await api("/review");
  } catch (error) {
    if (error.status === 401 || error.status === 403) {
      sessionStorage.removeItem(TOKEN_KEY);
      showSignIn(hadToken ? `That token does not open the memory centre: ${error.message}` : "");
      return;
    }
    throw error;
  }
  $("sign-in").hidden = true;
  $("tabs").hidden = false;
  $("centre").hidden = false;
  $("sign-out").hidden = false;
  const status = await api("/status");
  $("scope").textContent =
    `${status.read_chain.join(" → ")} · writes to ${status.write_namespace} · ` +
    `${status.active_leaves} current memories in ${status.trees} trees · ${status.store_backend}`;
  await showTab("memories");
}

// ---- tabs ----

const loaders = {
  memories: loadMemories,
  pending: loadPending,
  profile: loadProfile,
  namespaces: loadNamespaces,
  usage: loadAudit,
  reports: loadReports,
  settings: loadSettings,
};

async function showTab(name) {
  for (const button of document.querySelectorAll("nav#tabs button")) {
    button.classList.toggle("active", button.dataset.tab === name);
  }
  for (const section of document.querySelectorAll("section.tab")) {
    section.hidden = section.id !== `tab-${name}`;
  }
  document.body.dataset.tab = name;
  await loaders[name]();
}

// ---- Memories ----

function fillSelect(select, values) {
  const current = select.value;
  while (select.options.length > 1) select.remove(1);
  for (const value of values) select.append(el("option", { value }, value));
  if (values.includes(current)) select.value = current;
}

async function loadMemories() {
  const browse = await api("/browse");
  state.trees = browse.trees;
  fillSelect($("filter-tree"), browse.trees.map((t) => t.tree_id));
  fillSelect($("filter-namespace"), [...new Set(browse.trees.map((t) => t.namespace))]);
  await listMemories();
  await outlineTrees();
}

async function listMemories() {
  const listed = await api(
    "/memories" + query({ tree: $("filter-tree").value, kind: $("filter-kind").value, limit: 500 }),
  );
  state.memories = listed.memories;
  if (!$("filter-kind").value) fillSelect($("filter-kind"), [...new Set(listed.memories.map((m) => m.kind))].sort());
  fillSelect($("filter-sensitivity"), [...new Set(listed.memories.map((m) => m.sensitivity))].sort());
  $("memory-more").hidden = !listed.more;
  renderMemoryList();
}

function renderMemoryList() {
  const sensitivity = $("filter-sensitivity").value;
  const namespace = $("filter-namespace").value;
  const rows = state.memories.filter(
    (m) => (!sensitivity || m.sensitivity === sensitivity) && (!namespace || m.namespace === namespace),
  );
  const body = clear(document.querySelector("#memory-list tbody"));
  for (const memory of rows) {
    const badge = memory.sensitivity === "normal" ? null : el("span", { class: `badge ${memory.sensitivity}` }, memory.sensitivity);
    body.append(
      el(
        "tr",
        { "data-id": memory.id, class: state.chosen === memory.id ? "chosen" : null },
        el("td", {}, el("a", { href: "#", on: { click: guarded(() => showMemory(memory.id)) } }, memory.title || memory.summary), " ", badge),
        el("td", {}, memory.kind),
        el("td", {}, memory.tree_id),
        el("td", {}, when(memory.observed_at)),
      ),
    );
  }
  if (!rows.length) body.append(el("tr", {}, el("td", { colspan: 4, class: "muted" }, "No current memories here.")));
}

async function outlineTrees() {
  const box = clear($("tree-outlines"));
  const chosenTree = $("filter-tree").value;
  const trees = state.trees.filter((t) => !chosenTree || t.tree_id === chosenTree).slice(0, 12);
  for (const tree of trees) {
    const browse = await api("/browse" + query({ tree: tree.tree_id, depth: 3 }));
    const outline = browse.outline;
    if (!outline) continue;
    const render = (nodes) =>
      el(
        "ul",
        {},
        nodes.map((node) =>
          el(
            "li",
            {},
            node.id.type === "leaf"
              ? el("a", { href: "#", on: { click: guarded(() => showMemory(node.id.id)) } }, node.title)
              : el("strong", {}, node.title),
            " ",
            el("span", { class: "badge" }, node.level === "leaf" ? node.status : `${node.level} · ${node.status}`),
            node.children.length ? render(node.children) : null,
            node.hidden_children ? el("span", { class: "muted" }, ` (+${node.hidden_children} more)`) : null,
          ),
        ),
      );
    box.append(
      el(
        "div",
        { class: "tree-outline" },
        el("strong", {}, `${outline.title} `),
        el("span", { class: "muted" }, `${outline.tree_id} · ${tree.active_leaves} current · ${tree.summaries} summaries`),
        render(outline.nodes),
      ),
    );
  }
}

function facts(pairs) {
  return el(
    "dl",
    { class: "facts" },
    pairs.filter(([, v]) => v !== undefined && v !== null && v !== "").flatMap(([k, v]) => [el("dt", {}, k), el("dd", {}, v)]),
  );
}

async function earlierVersions(node) {
  // Earlier versions, newest first, by following `supersedes`; at most twenty.
  const versions = [];
  let previous = node.supersedes;
  while (previous && versions.length < 20) {
    let version;
    try {
      version = await api("/get" + query({ id: previous }));
    } catch (_) {
      break;
    }
    versions.push(version);
    previous = version.supersedes;
  }
  return versions;
}

async function showMemory(id) {
  state.chosen = id;
  renderMemoryList();
  const node = await api("/get" + query({ id }));
  const listed = state.memories.find((m) => m.id === id);
  const [versions, pending] = await Promise.all([earlierVersions(node), api("/review")]);
  const conflicts = pending.items.filter((item) => item.would_supersede.includes(id));
  const box = clear($("memory-detail"));
  const validity = node.validity
    ? `${node.validity.valid_from ? when(node.validity.valid_from) : "always"} → ${node.validity.valid_to ? when(node.validity.valid_to) : "now"}`
    : null;
  box.append(
    el("h2", {}, node.title),
    el("div", { class: "body", "data-role": "body" }, node.text ?? "(no text: forgotten or replaced)"),
    facts([
      ["Id", node.id],
      ["Version", node.version],
      ["Kind", node.kind],
      ["Status", node.status],
      ["Namespace", node.namespace],
      ["Tree", node.tree_id],
      ["Said by", node.actor],
      ["Source", node.source],
      ["Observed", when(node.observed_at)],
      ["Valid", validity],
      ["Sensitivity", node.sensitivity],
      ["Confidence", listed ? listed.confidence.toFixed(2) : null],
      ["Salience", listed ? listed.salience.toFixed(2) : null],
    ]),
  );
  if (conflicts.length) {
    box.append(el("h3", {}, "Waiting to replace it"), el("ul", {}, conflicts.map((c) => el("li", {}, `${c.summary} `, el("span", { class: "muted" }, c.conflict || "suggestion")))));
  }
  if (node.node === "leaf" && node.status === "active") {
    const text = el("textarea", { rows: 4, "aria-label": "Corrected text" }, node.text || "");
    box.append(
      el("h3", {}, "Correct"),
      el(
        "form",
        { id: "correct-form", on: { submit: guarded(() => correctMemory(node, text.value)) } },
        text,
        el("button", { type: "submit" }, "Save as a new version"),
      ),
      el("h3", {}, "Forget"),
      el(
        "p",
        { class: "muted" },
        "Forgetting removes every version of this memory: rows, text, index entries and the summaries built on it. Only a fingerprint stays, as a receipt.",
      ),
      el("button", { type: "button", class: "danger", id: "forget", on: { click: guarded(() => forgetMemory(node)) } }, "Forget this memory"),
    );
  }
  if (versions.length) {
    box.append(
      el("h3", {}, "Earlier versions"),
      el(
        "table",
        { class: "list" },
        el(
          "tbody",
          {},
          versions.map((version) =>
            el(
              "tr",
              {},
              el("td", {}, `v${version.version}`),
              el("td", {}, version.title),
              el("td", {}, version.status),
              el(
                "td",
                {},
                node.status === "active"
                  ? el("button", { type: "button", on: { click: guarded(() => restoreVersion(version, node)) } }, "Make current again")
                  : null,
              ),
            ),
          ),
        ),
      ),
    );
  }
  if (node.node === "leaf") {
    const usage = await api("/usage" + query({ id }));
    box.append(el("p", { class: "muted" }, `Used by ${usage.retrievals} recorded retrievals, in the answer ${usage.entered_context} times; last ${when(usage.last_used)}.`));
  }
}

async function correctMemory(node, text) {
  if (!text.trim()) throw new Error("A correction needs some text.");
  const corrected = await api("/correct", {
    method: "POST",
    body: { id: node.id, version: node.version, text },
    headers: { "If-Match": `"${node.version}"` },
  });
  notice(`Saved as version ${corrected.version} (${corrected.status}); version ${corrected.replaced_version} is kept as history.`);
  await listMemories();
  await showMemory(corrected.leaf_id);
}

async function forgetMemory(node) {
  const button = $("forget");
  if (button.dataset.armed !== "yes") {
    button.dataset.armed = "yes";
    button.textContent = "Forget for good — press again";
    return;
  }
  const receipt = await api("/forget", { method: "POST", body: { id: node.id } });
  state.chosen = null;
  const box = clear($("memory-detail"));
  box.append(
    el(
      "div",
      { class: "receipt", id: "forget-receipt" },
      el("h3", {}, "Forgotten"),
      facts([
        ["Memory", receipt.leaf_id],
        ["Namespace", receipt.namespace],
        ["Versions removed", receipt.versions],
        ["Fingerprint kept", receipt.fingerprint],
      ]),
    ),
  );
  notice(`Forgot ${receipt.versions} version(s) of ${receipt.leaf_id}.`);
  await listMemories();
}

async function restoreVersion(version, current) {
  const restored = await api("/restore", { method: "POST", body: { id: version.id, current_version: current.version } });
  notice(`Version ${version.version}'s words are current again, as version ${restored.version}.`);
  await listMemories();
  await showMemory(restored.leaf_id);
}

// ---- Pending ----

async function loadPending() {
  const pending = await api("/review");
  const body = clear(document.querySelector("#pending-list tbody"));
  for (const item of pending.items) {
    const decide = (verb) =>
      guarded(async () => {
        const reviewed = await api(`/review/${verb}`, { method: "POST", body: { id: item.id } });
        const replaced = reviewed.superseded.length ? `; it replaced ${reviewed.superseded.join(", ")}` : "";
        notice(`${reviewed.leaf_id} is ${reviewed.status}${replaced}.`);
        await loadPending();
      });
    body.append(
      el(
        "tr",
        { "data-id": item.id },
        el("td", {}, el("strong", {}, item.title), el("div", {}, item.summary), item.conflict ? el("div", { class: "warning" }, `conflict: ${item.conflict}`) : null),
        el("td", {}, `${item.actor} · ${item.source}`, el("div", { class: "muted" }, `${item.tree_id} · ${when(item.created_at)}`)),
        el("td", {}, item.would_supersede.join(", ") || "—"),
        el(
          "td",
          {},
          el("button", { type: "button", class: "confirm", on: { click: decide("confirm") } }, "Confirm"),
          " ",
          item.conflict ? el("button", { type: "button", class: "keep-both", on: { click: decide("keep_both") } }, "Keep both") : null,
          item.conflict ? " " : null,
          el("button", { type: "button", class: "edit", on: { click: guarded(() => editSuggestion(item)) } }, "Edit"),
          " ",
          el("button", { type: "button", class: "reject danger", on: { click: decide("reject") } }, "Reject"),
        ),
      ),
    );
  }
  if (!pending.items.length) body.append(el("tr", {}, el("td", { colspan: 4, class: "muted" }, "Nothing waits for you.")));
}

async function editSuggestion(item) {
  const row = document.querySelector(`#pending-list tr[data-id="${item.id}"]`);
  if (!row || row.querySelector("form")) return;
  // The whole text, not the list's start of it.
  const node = await api("/get" + query({ id: item.id }));
  const text = el("textarea", { rows: 3, "aria-label": "Suggestion text" }, node.text ?? item.summary);
  const save = guarded(async () => {
    const edited = await api("/review/edit", { method: "POST", body: { id: item.id, text: text.value } });
    notice(`Edited: ${edited.leaf_id} waits for your confirmation.`);
    await loadPending();
  });
  row.firstChild.append(el("form", { class: "edit-form", on: { submit: save } }, text, el("button", { type: "submit" }, "Save the edit")));
}

// ---- Profile: what memory believes now, and what rules replaced ----

function said(value) {
  const since = value.since ? ` [${value.since}]` : "";
  const doubt = value.possibly_outdated_by ? el("span", { class: "warning" }, ` may be outdated by ${value.possibly_outdated_by}`) : null;
  return el("li", {}, el("strong", {}, value.value), since, el("span", { class: "muted" }, ` · ${when(value.said_at)} · ${value.source} · ${value.leaf}`), doubt);
}

async function loadProfile() {
  const profile = await api("/profile" + query({ subject: $("profile-subject").value.trim() }));
  const box = clear($("profile"));
  for (const subject of profile.subjects) {
    const rows = subject.facts.map((fact) =>
      el(
        "tr",
        {},
        el("td", {}, fact.name, el("div", { class: "muted" }, fact.holds === "many" ? "several values" : "one value")),
        el("td", {}, el("ul", {}, fact.current.map(said)), fact.current.length ? null : el("span", { class: "muted" }, "nothing current")),
        el(
          "td",
          {},
          el(
            "ul",
            {},
            fact.history.map((change) =>
              el("li", {}, `${change.value ?? "(no value named)"} `, el("span", { class: "muted" }, `· ${change.rule === "ended" ? "ended" : "replaced"} ${when(change.changed_at)} by ${change.changed_by}`)),
            ),
          ),
        ),
      ),
    );
    box.append(
      el("h3", {}, subject.subject.name),
      el("table", { class: "list profile" }, el("thead", {}, el("tr", {}, el("th", {}, "Attribute"), el("th", {}, "Now"), el("th", {}, "Before"))), el("tbody", {}, rows)),
    );
  }
  if (!profile.subjects.length) box.append(el("p", { class: "muted" }, "No current memory in scope says an attribute of anyone yet."));
  await loadRetired();
}

async function loadRetired() {
  const retired = await api("/retired" + query({ limit: 50 }));
  const body = clear(document.querySelector("#retired-list tbody"));
  for (const item of retired.items) {
    const restore = guarded(async () => {
      const restored = await api("/retired/restore", { method: "POST", body: { id: item.leaf_id } });
      notice(`${item.leaf_id}'s words are current again as ${restored.leaf_id}, beside ${restored.kept_with}; no rule will retire either for the other again.`);
      await loadProfile();
    });
    body.append(
      el(
        "tr",
        { "data-id": item.leaf_id },
        el("td", {}, el("div", {}, item.text), el("div", { class: "muted" }, `${item.leaf_id} · said ${when(item.said_at)}`)),
        el("td", {}, `${item.attribute_name}: `, el("strong", {}, item.was ?? "—"), " → ", el("strong", {}, item.now ?? "—"), el("div", { class: "muted" }, `${item.rule} · ${when(item.retired_at)}`)),
        el("td", {}, item.by ? item.by.text : el("span", { class: "muted" }, "a memory out of scope")),
        el("td", {}, el("button", { type: "button", class: "restore-retired", on: { click: restore } }, "Restore")),
      ),
    );
  }
  if (!retired.items.length) body.append(el("tr", {}, el("td", { colspan: 4, class: "muted" }, "No rule has replaced anything.")));
}

// ---- Namespaces ----

function figureRow(label, figures, warnings) {
  return el(
    "tr",
    {},
    el("td", {}, label),
    el("td", {}, figures.active),
    el("td", {}, figures.duplicates),
    el("td", {}, figures.superseded),
    el("td", {}, `${figures.summaries_awaiting_reseal}/${figures.summaries}`),
    el("td", {}, figures.candidates, figures.oldest_candidate ? el("div", { class: "muted" }, `oldest ${when(figures.oldest_candidate)}`) : null),
    el("td", {}, figures.active ? Math.round(figures.body_bytes / figures.active).toLocaleString() : "—"),
    el("td", { class: "warning" }, warnings.join(" · ")),
  );
}

async function loadNamespaces() {
  const [status, health] = await Promise.all([api("/status"), api("/health")]);
  $("chain").textContent = `This server reads ${status.read_chain.join(", then ")} and writes to ${status.write_namespace}.`;
  const box = clear($("health"));
  for (const ns of health.namespaces) {
    box.append(
      el("h3", {}, ns.namespace, " ", el("span", { class: "muted" }, `read by this chain at position ${status.read_chain.indexOf(ns.namespace) + 1}`)),
      el(
        "table",
        { class: "list health" },
        el(
          "thead",
          {},
          el("tr", {}, ["", "Current", "Duplicates", "History", "Stale summaries", "Waiting", "Bytes per memory", "Warnings"].map((h) => el("th", {}, h))),
        ),
        el("tbody", {}, figureRow("whole namespace", ns.figures, ns.warnings), ns.trees.map((t) => figureRow(t.tree_id, t.figures, t.warnings))),
      ),
    );
  }
  if (health.unreadable.length) box.append(el("p", { class: "error" }, `Could not read: ${health.unreadable.join("; ")}`));
}

// ---- Usage ----

async function loadAudit() {
  const audit = await api("/audit" + query({ limit: 200 }));
  const body = clear(document.querySelector("#audit-list tbody"));
  for (const event of audit.events) {
    body.append(el("tr", {}, el("td", {}, when(event.at)), el("td", {}, event.action), el("td", {}, event.node || "—"), el("td", {}, event.actor)));
  }
  if (state.chosen) $("usage-id").value = state.chosen;
}

async function showUsage() {
  const usage = await api("/usage" + query({ id: $("usage-id").value.trim() }));
  const box = clear($("usage-result"));
  box.append(
    el("p", {}, `${usage.id}: considered by ${usage.retrievals} recorded retrievals, in the answer ${usage.entered_context} times; last used ${when(usage.last_used)}.`),
    el(
      "table",
      { class: "list" },
      el("tbody", {}, usage.records.map((r) => el("tr", {}, el("td", {}, when(r.at)), el("td", {}, r.retrieval), el("td", {}, r.entered_context ? "in the answer" : "considered")))),
    ),
  );
}

// ---- Reports ----

function utcOffset() {
  const minutes = -new Date().getTimezoneOffset();
  const sign = minutes < 0 ? "-" : "+";
  const abs = Math.abs(minutes);
  return `${sign}${String(Math.floor(abs / 60)).padStart(2, "0")}:${String(abs % 60).padStart(2, "0")}`;
}

async function loadReports() {
  await showDay();
  const dream = await api("/dream" + query({ limit: 5 }));
  const box = clear($("reports"));
  for (const report of dream.reports) box.append(el("h4", {}, report.name), el("pre", { class: "report" }, report.markdown));
  if (!dream.reports.length) box.append(el("p", { class: "muted" }, "No consolidation has run yet."));
}

async function showDay() {
  const daily = await api("/daily" + query({ date: $("daily-date").value, utc_offset: utcOffset() }));
  if (!$("daily-date").value) $("daily-date").value = daily.day.date;
  const box = clear($("daily"));
  const highlighted = new Set(daily.highlights);
  box.append(
    el("p", { class: "muted" }, `${daily.memories.length} memories in ${daily.trees} trees${daily.more ? " (more not shown)" : ""}.`),
    el("h4", { hidden: !daily.highlights.length }, "Highlights"),
    el("ul", {}, daily.highlights.map((i) => daily.memories[i]).map((m) => el("li", {}, el("strong", {}, m.title), ` — ${m.text}`))),
    el("h4", {}, "The day, newest first"),
    el(
      "ul",
      {},
      daily.memories.map((m, i) => el("li", { class: highlighted.has(i) ? "highlight" : null }, `${when(m.observed_at)} · ${m.kind} · ${m.tree_id}: ${m.text}`)),
    ),
  );
}

// ---- Settings ----

async function loadSettings() {
  try {
    const settings = await api("/settings");
    $("settings-text").value = settings.text;
    $("settings-text").disabled = false;
  } catch (error) {
    if (error.status !== 404) throw error;
    $("settings-text").value = "";
    $("settings-text").disabled = true;
    notice("This server does not serve its store's settings; edit arbor.json beside the store.", true);
  }
}

async function saveSettings() {
  const saved = await api("/settings", { method: "PUT", body: { text: $("settings-text").value } });
  $("settings-text").value = saved.text;
  notice("Settings saved to arbor.json; they apply when the server starts again.");
}

// ---- wiring ----

document.addEventListener("DOMContentLoaded", () => {
  takeTokenFromAddress();
  for (const button of document.querySelectorAll("nav#tabs button")) {
    button.addEventListener(
      "click",
      guarded(() => {
        notice("");
        return showTab(button.dataset.tab);
      }),
    );
  }
  $("sign-in-form").addEventListener(
    "submit",
    guarded(async () => {
      sessionStorage.setItem(TOKEN_KEY, $("token").value.trim());
      $("token").value = "";
      await openCentre();
    }),
  );
  $("sign-out").addEventListener("click", () => {
    sessionStorage.removeItem(TOKEN_KEY);
    showSignIn("");
  });
  $("filter-tree").addEventListener("change", guarded(async () => {
    await listMemories();
    await outlineTrees();
  }));
  $("filter-kind").addEventListener("change", guarded(listMemories));
  $("filter-sensitivity").addEventListener("change", renderMemoryList);
  $("filter-namespace").addEventListener("change", renderMemoryList);
  $("usage-form").addEventListener("submit", guarded(showUsage));
  $("profile-form").addEventListener("submit", guarded(loadProfile));
  $("daily-form").addEventListener("submit", guarded(showDay));
  $("settings-form").addEventListener("submit", guarded(saveSettings));
  guarded(openCentre)();
});
