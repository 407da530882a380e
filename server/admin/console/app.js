// slipstream console: reads /admin/api/ with the admin token kept in
// sessionStorage (sent as Authorization: Bearer, never in a URL), and
// follows the live feed with a streaming fetch.
"use strict";
(function () {
  const API = "/admin/api/";
  const sections = ["overview", "providers", "keys", "live", "usage"];
  let token = sessionStorage.getItem("slipstream.admin") || "";
  let signedIn = false;
  let live = [];
  let feedAbort = null;
  const $ = (id) => document.getElementById(id);

  function headers(extra) {
    const h = Object.assign({}, extra || {});
    if (token) h["Authorization"] = "Bearer " + token;
    return h;
  }

  async function api(path, opts) {
    opts = opts || {};
    const init = { method: opts.method || "GET", headers: headers(opts.body ? { "Content-Type": "application/json" } : {}), cache: "no-store" };
    if (opts.body) init.body = JSON.stringify(opts.body);
    const r = await fetch(API + path, init);
    let data = null;
    try { data = await r.json(); } catch (e) { data = null; }
    if (!r.ok) {
      const msg = data && data.error ? data.error.message : "HTTP " + r.status;
      const err = new Error(msg);
      err.status = r.status;
      throw err;
    }
    return data;
  }

  function el(tag, attrs, ...kids) {
    const e = document.createElement(tag);
    for (const [k, v] of Object.entries(attrs || {})) {
      if (k === "text") e.textContent = v;
      else if (k.startsWith("on")) e.addEventListener(k.slice(2), v);
      else e.setAttribute(k, v);
    }
    for (const k of kids) if (k != null) e.append(k);
    return e;
  }

  const fmtInt = (n) => (n == null ? "–" : Number(n).toLocaleString("en-US"));
  const fmtUSD = (n) => (n == null ? "n/a" : "$" + Number(n).toFixed(4));
  function fmtAge(s) {
    s = Math.max(0, Math.floor(s));
    if (s < 60) return s + "s";
    if (s < 3600) return Math.floor(s / 60) + "m " + (s % 60) + "s";
    return Math.floor(s / 3600) + "h " + Math.floor((s % 3600) / 60) + "m";
  }
  function until(t) {
    if (!t) return "";
    const s = (new Date(t) - Date.now()) / 1000;
    return s > 0 ? "for " + fmtAge(s) : "ending";
  }
  function say(msg) { $("message").textContent = msg || ""; }

  // Sign-in.
  async function signIn(t) {
    token = t;
    try {
      await api("status");
    } catch (e) {
      $("login-error").textContent = "Sign-in failed: " + e.message;
      token = "";
      sessionStorage.removeItem("slipstream.admin");
      return false;
    }
    sessionStorage.setItem("slipstream.admin", token);
    $("login-error").textContent = "";
    signedIn = true;
    $("nav").hidden = false;
    show();
    refreshAll();
    follow();
    return true;
  }

  function signOut() {
    sessionStorage.removeItem("slipstream.admin");
    token = "";
    signedIn = false;
    if (feedAbort) feedAbort.abort();
    $("nav").hidden = true;
    show();
  }

  function show() {
    const want = (location.hash || "#overview").slice(1);
    const cur = signedIn ? (sections.includes(want) ? want : "overview") : "login";
    for (const s of ["login"].concat(sections)) $(s).hidden = s !== cur;
    for (const a of document.querySelectorAll("nav a")) a.classList.toggle("current", a.getAttribute("href") === "#" + cur);
    if (cur === "usage" && signedIn) refreshUsage();
  }

  // Overview.
  async function refreshStatus() {
    const s = await api("status");
    const t = s.traffic;
    const cards = [
      ["Requests", fmtInt(t.requests)], ["Errors", fmtInt(t.errors)], ["In flight", fmtInt(t.in_flight)],
      ["Tokens in", fmtInt(t.input_tokens)], ["Tokens out", fmtInt(t.output_tokens)],
      ["Spend today", fmtUSD(t.spent_usd_today)], ["Uptime", fmtAge(s.uptime_seconds)], ["Version", s.version],
      ["Last reload", s.last_reload ? (s.last_reload.ok ? "ok " : "failed ") + new Date(s.last_reload.at).toLocaleTimeString() : "none"],
    ];
    $("overview-cards").replaceChildren(...cards.map(([k, v]) => el("div", { class: "card" }, el("div", { class: "k", text: k }), el("div", { class: "v", text: String(v) }))));
  }

  // Providers.
  function credentialRow(p, c) {
    const icon = { ready: "✓", cooling: "◐", disabled: "✕" }[c.state] || "?";
    const detail = [];
    if (c.state === "cooling") detail.push("cooling " + until(c.cooling_until) + (c.why ? " (" + c.why + ")" : ""));
    if (c.in_flight) detail.push(c.in_flight + " in flight");
    if (c.last_error) detail.push("last error: " + c.last_error);
    for (const q of c.quota || []) detail.push(q.window + " window " + Math.round(q.utilisation * 100) + "% used");
    const act = (action, label, cls) => el("button", { type: "button", class: cls || "", "data-action": action, "data-provider": p.name, "data-credential": c.name, onclick: () => credentialAction(action, p.name, c.name) , text: label });
    return el("div", { class: "cred", "data-cred": p.name + "/" + c.name, "data-state": c.state },
      el("span", { class: "name", text: c.name }),
      el("span", { class: "state " + c.state, text: icon + " " + c.state }),
      el("span", { class: "detail", text: detail.join(" · ") }),
      c.state === "cooling" ? act("end-cooldown", "End cooldown") : null,
      c.state === "disabled" ? act("enable", "Enable") : act("disable", "Disable", "danger"));
  }

  async function refreshProviders() {
    const ps = await api("providers");
    $("providers-list").replaceChildren(...ps.map((p) => el("div", { class: "provider", "data-provider": p.name },
      el("h3", { text: p.name + " (" + p.kind + ")" }),
      el("div", { class: "note", text: (p.models || []).join(", ") + (p.in_flight ? " · " + p.in_flight + " in flight" : "") }),
      ...(p.credentials.length ? p.credentials.map((c) => credentialRow(p, c)) : [el("div", { class: "note", text: "no credentials (keyless)" })]))));
    $("health").replaceChildren(...ps.map((p) => {
      const n = p.credentials.length, ready = p.credentials.filter((c) => c.state === "ready").length;
      const word = n === 0 || ready === n ? "✓ healthy" : ready ? "⚠ degraded" : "✕ down";
      return el("li", { "data-health": p.name, text: p.name + ": " + word + (n ? " (" + ready + " of " + n + " credentials ready)" : "") });
    }));
    scheduleCoolingEnd(ps);
  }

  let coolTimer = null;
  function scheduleCoolingEnd(ps) {
    clearTimeout(coolTimer);
    let soonest = Infinity;
    for (const p of ps) for (const c of p.credentials) if (c.cooling_until) soonest = Math.min(soonest, new Date(c.cooling_until) - Date.now());
    if (soonest !== Infinity) coolTimer = setTimeout(() => refreshProviders().catch(report), Math.max(soonest, 0) + 250);
  }

  async function credentialAction(action, provider, credential) {
    try {
      await api("credentials/" + action, { method: "POST", body: { provider, credential } });
      say(action + " " + provider + "/" + credential + ": done");
    } catch (e) { say(action + " failed: " + e.message); }
    refreshProviders().catch(report);
  }

  // Keys.
  async function refreshKeys() {
    const ks = await api("keys");
    $("keys-table").tBodies[0].replaceChildren(...ks.map((k) => {
      const budget = k.budget ? fmtInt(k.budget_used) + " / " + fmtInt(k.budget_left) + " (" + k.period + ")" : "no budget";
      const bar = k.budget ? el("meter", { min: "0", max: String(k.budget), value: String(Math.min(k.budget_used, k.budget)), title: Math.round(100 * k.budget_used / k.budget) + "% used" }) : null;
      const money = k.budget_usd != null ? fmtUSD(k.spent_usd) + " / " + fmtUSD(k.budget_usd) : (k.spent_usd != null ? fmtUSD(k.spent_usd) : "n/a");
      return el("tr", { "data-key": k.name },
        el("td", { "data-label": "Key", text: k.name }),
        el("td", { "data-label": "Requests", class: "requests", text: fmtInt(k.requests) }),
        el("td", { "data-label": "Tokens", class: "tokens", text: fmtInt(k.input_tokens) + " / " + fmtInt(k.output_tokens) }),
        el("td", { "data-label": "RPM", text: fmtInt(k.rpm_now) + " / " + (k.rpm ? fmtInt(k.rpm) : "∞") }),
        el("td", { "data-label": "TPM", text: fmtInt(k.tpm_now) + " / " + (k.tpm ? fmtInt(k.tpm) : "∞") }),
        el("td", { "data-label": "Budget", text: budget }, bar),
        el("td", { "data-label": "Spend", text: money }));
    }));
  }

  // Live requests.
  async function refreshLive() {
    live = await api("live");
    renderLive();
  }
  function renderLive() {
    $("live-empty").hidden = live.length > 0;
    $("live-table").tBodies[0].replaceChildren(...live.map((r) => el("tr", { "data-live": r.id },
      el("td", { "data-label": "Id", text: r.id }),
      el("td", { "data-label": "Key", text: r.key || "–" }),
      el("td", { "data-label": "Model", text: r.model }),
      el("td", { "data-label": "Provider", text: r.provider + (r.credential ? "/" + r.credential : "") }),
      el("td", { "data-label": "Transport", text: r.transport + (r.stream ? " stream" : "") }),
      el("td", { "data-label": "Age", class: "age", "data-started": r.started_at, text: fmtAge((Date.now() - new Date(r.started_at)) / 1000) }),
      el("td", { "data-label": "Bytes out", text: fmtInt(r.bytes_out) }),
      el("td", { "data-label": "Tokens", text: fmtInt(r.tokens) }),
      el("td", {}, el("button", { type: "button", class: "danger", "data-cancel": r.id, onclick: () => cancel(r.id), text: "Cancel" })))));
  }
  async function cancel(id) {
    try {
      await api("live/cancel", { method: "POST", body: { id } });
      say("cancelled " + id);
    } catch (e) { say("cancel failed: " + e.message); }
    refreshLive().catch(report);
  }
  setInterval(() => {
    for (const td of document.querySelectorAll("#live-table .age")) td.textContent = fmtAge((Date.now() - new Date(td.dataset.started)) / 1000);
  }, 1000);

  // Usage.
  async function refreshUsage() {
    const by = $("usage-by").value, days = Number($("usage-days").value);
    const from = new Date(Date.now() - days * 86400000).toISOString();
    let u;
    try {
      u = await api("usage?by=" + encodeURIComponent(by) + "&from=" + encodeURIComponent(from));
    } catch (e) {
      $("usage-note").textContent = e.message;
      $("usage-chart").replaceChildren();
      $("usage-table").tBodies[0].replaceChildren();
      return;
    }
    $("usage-note").textContent = u.rows.length ? "" : "No request in this range.";
    $("usage-chart").replaceChildren(chart(u.rows, (r) => r.input_tokens + r.output_tokens, "tokens"));
    $("usage-table").tBodies[0].replaceChildren(...u.rows.map((r) => el("tr", {},
      el("td", { text: r.group }), el("td", { text: fmtInt(r.requests) }), el("td", { text: fmtInt(r.errors) }),
      el("td", { text: fmtInt(r.input_tokens) }), el("td", { text: fmtInt(r.output_tokens) }), el("td", { text: fmtUSD(r.cost_usd) }))));
    try {
      const rq = await api("requests?limit=20");
      $("requests-table").tBodies[0].replaceChildren(...rq.map((r) => el("tr", {},
        el("td", { text: new Date(r.time).toLocaleString() }), el("td", { text: r.key }), el("td", { text: r.model }),
        el("td", { text: r.provider }), el("td", { text: String(r.status) + (r.cause ? " " + r.cause : "") }),
        el("td", { text: fmtInt(r.input_tokens + r.output_tokens) }), el("td", { text: fmtUSD(r.cost_usd) }),
        el("td", { text: r.guardrails || "" }))));
    } catch (e) { /* the note above already says why */ }
  }

  // chart draws rows as an SVG bar chart of value(row), labelled by group.
  function chart(rows, value, unit) {
    const NS = "http://www.w3.org/2000/svg";
    const W = 600, H = 200, pad = 24;
    const svg = document.createElementNS(NS, "svg");
    svg.setAttribute("viewBox", "0 0 " + W + " " + H);
    svg.setAttribute("role", "img");
    svg.setAttribute("aria-label", "Usage chart, " + unit + " per group");
    const max = Math.max(1, ...rows.map(value));
    const bw = rows.length ? (W - 2 * pad) / rows.length : 0;
    const axis = document.createElementNS(NS, "line");
    for (const [k, v] of [["x1", pad], ["y1", H - pad], ["x2", W - pad], ["y2", H - pad], ["class", "axis"]]) axis.setAttribute(k, v);
    svg.append(axis);
    rows.forEach((r, i) => {
      const h = (H - 2 * pad) * value(r) / max;
      const rect = document.createElementNS(NS, "rect");
      for (const [k, v] of [["x", pad + i * bw + 2], ["y", H - pad - h], ["width", Math.max(bw - 4, 1)], ["height", h], ["class", "b"]]) rect.setAttribute(k, v);
      const title = document.createElementNS(NS, "title");
      title.textContent = r.group + ": " + fmtInt(value(r)) + " " + unit;
      rect.append(title);
      const label = document.createElementNS(NS, "text");
      for (const [k, v] of [["x", pad + i * bw + bw / 2], ["y", H - 8], ["text-anchor", "middle"], ["class", "l"]]) label.setAttribute(k, v);
      label.textContent = r.group.length > 12 ? r.group.slice(0, 11) + "…" : r.group;
      svg.append(rect, label);
    });
    return svg;
  }

  // Live feed: fetch() streaming, so the token stays in a header.
  async function follow() {
    if (feedAbort) feedAbort.abort();
    const ctl = new AbortController();
    feedAbort = ctl;
    while (signedIn && !ctl.signal.aborted) {
      try {
        const r = await fetch(API + "events", { headers: headers(), signal: ctl.signal, cache: "no-store" });
        if (!r.ok) throw new Error("HTTP " + r.status);
        $("feed").textContent = "● live";
        const rd = r.body.getReader(), dec = new TextDecoder();
        let buf = "";
        for (;;) {
          const { value, done } = await rd.read();
          if (done) break;
          buf += dec.decode(value, { stream: true });
          let i;
          while ((i = buf.indexOf("\n\n")) >= 0) {
            const frame = buf.slice(0, i);
            buf = buf.slice(i + 2);
            const m = /^event: (.*)$/m.exec(frame);
            if (m) onEvent(m[1]);
          }
        }
      } catch (e) {
        if (ctl.signal.aborted) return;
      }
      $("feed").textContent = "○ reconnecting";
      await new Promise((ok) => setTimeout(ok, 2000));
      refreshAll();
    }
  }

  let pending = new Set(), flushTimer = null;
  function onEvent(type) {
    if (type === "credential" || type === "action" || type === "reload") pending.add("providers").add("status");
    if (type.startsWith("live.")) pending.add("live");
    if (type === "live.end" || type === "action" || type === "reload") pending.add("keys").add("status");
    if (!flushTimer) flushTimer = setTimeout(() => {
      flushTimer = null;
      const p = pending;
      pending = new Set();
      if (p.has("status")) refreshStatus().catch(report);
      if (p.has("providers")) refreshProviders().catch(report);
      if (p.has("keys")) refreshKeys().catch(report);
      if (p.has("live")) refreshLive().catch(report);
    }, 100);
  }

  function report(e) {
    if (e && e.status === 401) { signOut(); $("login-error").textContent = "The admin token was refused; sign in again."; return; }
    say(e ? e.message : "");
  }
  function refreshAll() {
    refreshStatus().catch(report);
    refreshProviders().catch(report);
    refreshKeys().catch(report);
    refreshLive().catch(report);
  }

  $("login-form").addEventListener("submit", (ev) => { ev.preventDefault(); signIn($("token").value.trim()); });
  $("logout").addEventListener("click", signOut);
  $("usage-form").addEventListener("submit", (ev) => { ev.preventDefault(); refreshUsage(); });
  window.addEventListener("hashchange", show);
  show();
  if (token) signIn(token);
})();
