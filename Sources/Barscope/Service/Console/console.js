// Barscope's console: the service's own API, drawn in plain DOM. One event stream carries every instance's events
// and everyone's status (a browser holds at most six connections to a host); live views are fetched frame by frame
// (frame.jpg waits for the next frame, so a card follows the stream at up to 5 frames/s on shared connections).
"use strict";

const TABLE_ROWS = 200;       // the events table shows the newest N; older rows are removed
const KEPT_EVENTS = 1000;     // what a filter change redraws from: the newest N detections and N other events,
                              // so that a flood of --every-frame detections never pushes out the rarer events
const HISTORY_SECONDS = 300;  // the chart's span
const FRAME_INTERVAL_MS = 200;

const $ = (selector, root = document) => root.querySelector(selector);
const state = {
  token: sessionStorage.getItem("barscope-token") || "",
  cards: new Map(),          // instance id → card
  kept: { detections: [], others: [] },  // newest events, oldest first: {n, instance, seq, event, arrived}
  pending: [],               // arrived, not yet in the table
  firstRows: new Map(),      // "instance/track" → the table row of a track's first event, for its snapshot
  tracksSeen: new Set(),      // "instance/track" seen (the first row of each gets the snapshot)
  snapshots: new Map(),      // "instance/track" → snapshot URL
  types: new Set(),
  lastSeq: new Map(),        // instance → the newest event's number in the service's ring
  received: 0,               // events since the page opened (the test and the rate read it)
  rate: 0,
  stream: null,
};
window.barscope = state;

// MARK: requests

function headers(extra = {}) {
  return state.token ? { ...extra, Authorization: "Bearer " + state.token } : extra;
}

// The service's answer as {status, body}; a network failure is status 0 with the reason as the error.
async function call(method, path, body) {
  const init = { method, headers: headers(body ? { "Content-Type": "application/json" } : {}) };
  if (body) init.body = JSON.stringify(body);
  try {
    const r = await fetch(path, init);
    const text = await r.text();
    let json = null;
    try { json = text ? JSON.parse(text) : null; } catch (_) { json = { error: text.trim() }; }
    if (r.status === 401) askForToken(state.token ? "the service refused this token" : "");
    return { status: r.status, body: json };
  } catch (e) {
    return { status: 0, body: { error: "the service cannot be reached (" + e.message + ")" } };
  }
}

function askForToken(why) {
  const form = $("#token-form");
  form.hidden = false;
  $("#token-error").textContent = why;
  setConnection("needs a token", "down");
  if (state.stream) { state.stream.close(); state.stream = null; }
}

$("#token-form").addEventListener("submit", (e) => {
  e.preventDefault();
  state.token = $("#token").value.trim();
  sessionStorage.setItem("barscope-token", state.token);
  // The event stream (EventSource) cannot send a header: for GET only, the service also reads this cookie.
  // (Named for this service's port: a cookie goes to every port of the host.)
  document.cookie = `barscope_token_${location.port || 80}=${encodeURIComponent(state.token)}; path=/; SameSite=Strict`;
  $("#token-form").hidden = true;
  start();
});

function setConnection(text, kind) {
  const badge = $("#connection");
  badge.textContent = text;
  badge.className = "badge " + (kind || "");
}

// MARK: the start form

async function loadPipelines() {
  const r = await call("GET", "v1/pipelines");
  if (r.status !== 200) return false;
  const select = $("#f-pipeline");
  const chosen = select.value;
  select.replaceChildren(...r.body.map((p) => {
    const o = new Option(p.name, p.name);
    o.dataset.description = p.description || "";
    return o;
  }));
  if (chosen) select.value = chosen;
  showDescription();
  return true;
}

function showDescription() {
  const o = $("#f-pipeline").selectedOptions[0];
  $("#f-pipeline-description").textContent = o ? o.dataset.description : "";
}
$("#f-pipeline").addEventListener("change", showDescription);

function clearErrors(form) {
  for (const e of form.querySelectorAll(".error[data-for]")) e.textContent = "";
  for (const e of form.querySelectorAll(".invalid")) e.classList.remove("invalid");
}

// Which field the service's one line is about: "[source] input: ..." is source.input's (or "More settings"' when
// typed there), "no pipeline named ..." the pipeline's; anything else goes beside the Start button.
function errorSlot(form, message, moreKeys) {
  const named = /\[([a-z-]+)\] ([a-z-]+):/.exec(message);
  if (named) {
    const key = named[1] + "." + named[2];
    if (moreKeys.has(key)) return "more";
    if (form.querySelector(`[data-key="${key}"]`)) return key;
  }
  if (/^no pipeline|^pipeline name/.test(message)) return "pipeline";
  if (moreKeys.size > 0 && (named || /\[[a-z-]+\]:|SECTION\.KEY/.test(message))) return "more";
  return "form";
}

function showError(form, slot, message) {
  form.querySelector(`.error[data-for="${slot}"]`).textContent = message;
  const field = slot === "more" ? $("#f-more") : slot === "pipeline" ? $("#f-pipeline")
    : form.querySelector(`[data-key="${slot}"]`);
  if (field) { field.classList.add("invalid"); field.focus(); }
}

$("#start-form").addEventListener("submit", async (e) => {
  e.preventDefault();
  const form = e.currentTarget;
  clearErrors(form);
  const set = {};
  for (const input of form.querySelectorAll("[data-key]")) {
    if (input.value.trim() !== "") set[input.dataset.key] = input.value.trim();
  }
  const moreKeys = new Set();
  const lines = $("#f-more").value.split(/[\n,]/).map((l) => l.trim()).filter((l) => l !== "");
  for (const [i, line] of lines.entries()) {
    const eq = line.indexOf("=");
    const key = eq > 0 ? line.slice(0, eq).trim() : "";
    if (!/^[a-z-]+(\.[A-Za-z0-9_-]+)+$/.test(key)) {
      showError(form, "more", `setting ${i + 1}, '${line}': expected SECTION.KEY=VALUE`);
      return;
    }
    set[key] = line.slice(eq + 1).trim();
    moreKeys.add(key);
  }
  const pipeline = $("#f-pipeline").value;
  if (!pipeline) { showError(form, "pipeline", "no pipeline to start (the service lists none)"); return; }
  const button = $("#start-button");
  button.disabled = true;
  const r = await call("POST", `v1/pipelines/${encodeURIComponent(pipeline)}/instances`, { set });
  button.disabled = false;
  if (r.status === 201 || r.status === 401) return;
  const message = (r.body && r.body.error) || `the service answered ${r.status}`;
  showError(form, errorSlot(form, message, moreKeys), message);
});

// MARK: instance cards

function card(id) {
  let c = state.cards.get(id);
  if (c) return c;
  const root = $("#instance-template").content.firstElementChild.cloneNode(true);
  root.dataset.id = id;
  c = {
    id, root, status: null, ended: false, history: [], frames: 0,
    img: $(".live", root), view: $(".view", root), vf: $(".vf", root),
    region: null, drag: null, pendingRegion: null, naturalWidth: 0, naturalHeight: 0,
  };
  $(".name", root).textContent = id;
  c.img.alt = "live view of " + id;
  for (const b of root.querySelectorAll("button[data-action]")) {
    b.addEventListener("click", () => act(c, b.dataset.action));
  }
  setUpViewfinder(c);
  state.cards.set(id, c);
  $("#instances").append(root);
  const option = new Option(id, id);
  $("#filter-instance").append(option);
  c.option = option;
  live(c);
  return c;
}

function update(c, s) {
  c.status = s;
  const r = c.root;
  const stateBadge = $(".state", r);
  stateBadge.textContent = s.state;
  stateBadge.className = "state " + s.state;
  $(".pipeline", r).textContent = s.pipeline + (s.recording ? " → " + s.recording : "");
  $(".fps", r).textContent = s.fps.toFixed(1);
  $(".latency", r).textContent = s.latency_ms ? `${s.latency_ms.p50} / ${s.latency_ms.p95} ms` : "–";
  $(".codes", r).textContent = s.codes;
  $(".frames", r).textContent = s.frames;
  $(".dropped", r).textContent = s.frames_dropped;
  $(".restarts", r).textContent = s.restarts;
  const cycles = $(".cycles", r);
  cycles.parentElement.hidden = !s.cycles;
  if (s.cycles) {
    cycles.textContent = `${s.cycles.good}/${s.cycles.total} good (${(s.cycles.read_rate * 100).toFixed(1)} %)`;
    cycles.title = `noread ${s.cycles.noread}, multiple ${s.cycles.multiple}, mismatch ${s.cycles.mismatch}`;
  }
  $(".last-error", r).textContent = s.error || "";
  c.ended = ["completed", "stopped", "failed"].includes(s.state);
  r.classList.toggle("ended", c.ended);
  $('[data-action="pause"]', r).disabled = s.state !== "playing";
  $('[data-action="resume"]', r).disabled = s.state !== "paused";
  $('[data-action="stop"]', r).disabled = c.ended;
  $('[data-action="dismiss"]', r).hidden = !c.ended;
  // The region follows the service's, except just after a drag, until the service has taken the new one.
  if (s.frame_size && !c.drag) {
    c.naturalWidth = s.frame_size.width;
    c.naturalHeight = s.frame_size.height;
    if (!c.pendingRegion || performance.now() > c.pendingRegion.until || near(c.pendingRegion, s.viewfinder)) {
      c.pendingRegion = null;
      c.region = s.viewfinder;
    }
  }
  drawViewfinder(c);
}

// The status every second: the chart's points (codes/min from the change in codes, over ten seconds).
function record(c, s) {
  const now = Date.now() / 1000;
  c.history.push({
    t: now, fps: s.state === "playing" ? s.fps : 0, codes: s.codes,
    readRate: s.cycles ? s.cycles.read_rate * 100 : null,
  });
  while (c.history.length && c.history[0].t < now - HISTORY_SECONDS) c.history.shift();
  drawChart(c);
}

async function act(c, action) {
  const slot = $(".action-error", c.root);
  slot.textContent = "";
  if (action === "dismiss") {
    // One that ended by itself is still listed by the service: forget it there too.
    if (!c.final) await call("DELETE", `v1/instances/${encodeURIComponent(c.id)}`);
    remove(c);
    return;
  }
  if (action === "stop") {
    $('[data-action="stop"]', c.root).disabled = true;
    $(".state", c.root).textContent = "stopping";
    const r = await call("DELETE", `v1/instances/${encodeURIComponent(c.id)}`);
    if (r.status === 200) { c.final = true; update(c, r.body); } else if (r.body) slot.textContent = r.body.error;
    return;
  }
  const r = await call("POST", `v1/instances/${encodeURIComponent(c.id)}/control`, { command: action });
  if (r.status === 200) update(c, r.body); else if (r.body) slot.textContent = r.body.error;
}

function remove(c) {
  c.root.remove();
  c.option.remove();
  state.cards.delete(c.id);
  c.gone = true;
}

// The live view: one frame at a time, each request waiting for the next frame; nothing while the tab is hidden.
async function live(c) {
  let shown = null;
  while (!c.gone) {
    const begun = performance.now();
    if (document.hidden || (c.ended && shown)) { await sleep(1000); continue; }
    try {
      const r = await fetch(`v1/instances/${encodeURIComponent(c.id)}/frame.jpg`, { headers: headers() });
      if (r.ok) {
        const url = URL.createObjectURL(await r.blob());
        await new Promise((resolve) => { c.img.onload = c.img.onerror = resolve; c.img.src = url; });
        if (shown) URL.revokeObjectURL(shown);
        shown = url;
        c.frames += 1;
        if (!c.naturalWidth) { c.naturalWidth = c.img.naturalWidth; c.naturalHeight = c.img.naturalHeight; }
        $(".waiting", c.root).hidden = true;
        drawViewfinder(c);
      } else {
        await sleep(1000);
      }
    } catch (_) {
      await sleep(1000);
    }
    await sleep(Math.max(0, FRAME_INTERVAL_MS - (performance.now() - begun)));
  }
}

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

// MARK: the viewfinder, dragged and resized on the live view

function near(pending, region) {
  if (!pending || !region || !pending.pixels) return false;
  const p = pending.pixels;
  return Math.abs(p.x - region.x) <= 4 && Math.abs(p.y - region.y) <= 4
    && Math.abs(p.width - region.width) <= 4 && Math.abs(p.height - region.height) <= 4;
}

// The region as fractions of the frame (nil: the whole frame).
function normalized(c) {
  if (!c.naturalWidth) return null;
  const r = c.region || { x: 0, y: 0, width: c.naturalWidth, height: c.naturalHeight };
  return { x: r.x / c.naturalWidth, y: r.y / c.naturalHeight, w: r.width / c.naturalWidth, h: r.height / c.naturalHeight };
}

function drawViewfinder(c, n = c.drag ? c.drag.box : c.pendingRegion ? c.pendingRegion.box : normalized(c)) {
  if (!n || c.ended) { c.vf.hidden = true; return; }
  c.vf.hidden = false;
  Object.assign(c.vf.style, {
    left: n.x * 100 + "%", top: n.y * 100 + "%", width: n.w * 100 + "%", height: n.h * 100 + "%",
  });
}

function setUpViewfinder(c) {
  const MIN = 0.04;
  const clamp = (v, lo, hi) => Math.min(hi, Math.max(lo, v));
  c.view.addEventListener("pointerdown", (e) => {
    if (e.button !== 0 || c.ended || !c.naturalWidth) return;
    const rect = c.view.getBoundingClientRect();
    const at = { x: (e.clientX - rect.left) / rect.width, y: (e.clientY - rect.top) / rect.height };
    // What is drawn: a region just sent counts before the service's status confirms it.
    const box = c.pendingRegion ? { ...c.pendingRegion.box } : normalized(c);
    let mode = "draw";
    if (e.target.dataset.corner) mode = e.target.dataset.corner;
    else if (e.target === c.vf) mode = "move";
    c.drag = { mode, start: at, from: { ...box }, box: mode === "draw" ? { x: at.x, y: at.y, w: 0, h: 0 } : { ...box } };
    c.vf.classList.add("dragging");
    c.view.setPointerCapture(e.pointerId);
    e.preventDefault();
  });
  c.view.addEventListener("pointermove", (e) => {
    const d = c.drag;
    if (!d) return;
    const rect = c.view.getBoundingClientRect();
    const at = { x: clamp((e.clientX - rect.left) / rect.width, 0, 1), y: clamp((e.clientY - rect.top) / rect.height, 0, 1) };
    const dx = at.x - d.start.x, dy = at.y - d.start.y, f = d.from;
    let x0 = f.x, y0 = f.y, x1 = f.x + f.w, y1 = f.y + f.h;
    if (d.mode === "move") {
      const x = clamp(f.x + dx, 0, 1 - f.w), y = clamp(f.y + dy, 0, 1 - f.h);
      d.box = { x, y, w: f.w, h: f.h };
    } else {
      if (d.mode === "draw") {
        x0 = d.start.x; y0 = d.start.y; x1 = at.x; y1 = at.y;
      } else {
        // A corner: "nw", "ne", "sw" or "se" moves its two edges.
        if (d.mode[1] === "w") x0 = clamp(f.x + dx, 0, x1 - MIN);
        if (d.mode[1] === "e") x1 = clamp(f.x + f.w + dx, x0 + MIN, 1);
        if (d.mode[0] === "n") y0 = clamp(f.y + dy, 0, y1 - MIN);
        if (d.mode[0] === "s") y1 = clamp(f.y + f.h + dy, y0 + MIN, 1);
      }
      d.box = { x: Math.min(x0, x1), y: Math.min(y0, y1), w: Math.abs(x1 - x0), h: Math.abs(y1 - y0) };
    }
    drawViewfinder(c);
  });
  const release = async () => {
    const d = c.drag;
    if (!d) return;
    c.drag = null;
    c.vf.classList.remove("dragging");
    const b = d.box;
    if (b.w < MIN || b.h < MIN) { drawViewfinder(c); return; }   // a click, not a drag
    const r4 = (v) => Math.round(v * 10000) / 10000;
    const command = `region ${r4(b.x)},${r4(b.y)},${r4(b.w)},${r4(b.h)}`;
    c.pendingRegion = {
      box: b,
      until: performance.now() + 3000,
      pixels: { x: b.x * c.naturalWidth, y: b.y * c.naturalHeight, width: b.w * c.naturalWidth, height: b.h * c.naturalHeight },
    };
    drawViewfinder(c, b);
    const r = await call("POST", `v1/instances/${encodeURIComponent(c.id)}/control`, { command });
    $(".action-error", c.root).textContent = r.status === 200 ? "" : (r.body && r.body.error) || "";
    if (r.status !== 200) { c.pendingRegion = null; drawViewfinder(c); }
  };
  c.view.addEventListener("pointerup", release);
  c.view.addEventListener("pointercancel", release);
}

// MARK: the chart

function drawChart(c) {
  const canvas = $(".chart", c.root);
  const ratio = window.devicePixelRatio || 1;
  const w = canvas.clientWidth, h = canvas.clientHeight;
  if (!w || !h) return;
  if (canvas.width !== Math.round(w * ratio)) { canvas.width = Math.round(w * ratio); canvas.height = Math.round(h * ratio); }
  const g = canvas.getContext("2d");
  g.setTransform(ratio, 0, 0, ratio, 0, 0);
  g.clearRect(0, 0, w, h);
  const pts = c.history;
  const now = Date.now() / 1000;
  // codes/min over the last ten seconds at each point
  const perMin = pts.map((p, i) => {
    let j = i;
    while (j > 0 && pts[j - 1].t >= p.t - 10) j--;
    const dt = p.t - pts[j].t;
    return dt > 0 ? Math.max(0, (p.codes - pts[j].codes) * 60 / dt) : 0;
  });
  const series = [
    { values: pts.map((p) => p.fps), color: "#1f6feb", label: "frames/s" },
    { values: perMin, color: "#1a7f37", label: "codes/min" },
  ];
  // Read cycles: the read rate (good reads of all cycles, %), once there are any.
  if (pts.some((p) => p.readRate !== null)) {
    series.push({ values: pts.map((p) => p.readRate ?? 0), color: "#9a6700", label: "read rate %" });
  }
  g.font = "10px system-ui, sans-serif";
  series.forEach((s, k) => {
    const max = Math.max(1, ...s.values);
    g.strokeStyle = s.color;
    g.lineWidth = 1.5;
    g.beginPath();
    s.values.forEach((v, i) => {
      const x = w - ((now - pts[i].t) / HISTORY_SECONDS) * w;
      const y = h - 4 - (v / max) * (h - 16);
      if (i === 0) g.moveTo(x, y); else g.lineTo(x, y);
    });
    g.stroke();
    g.fillStyle = s.color;
    const last = s.values.length ? s.values[s.values.length - 1] : 0;
    g.fillText(`${s.label} ${last.toFixed(1)}`, 4 + k * 105, 10);
  });
  g.fillStyle = "#6b7280";
  g.fillText("5 min", w - 28, h - 3);
}

// MARK: events

function connect() {
  if (state.stream) state.stream.close();
  const es = new EventSource("v1/events?backlog=50");
  state.stream = es;
  es.onopen = () => setConnection("live", "live");
  es.onerror = () => {
    setConnection("reconnecting", "down");
    // A refused token closes the stream for good: ask the service why.
    if (es.readyState === EventSource.CLOSED) call("GET", "v1/pipelines");
  };
  es.addEventListener("status", (m) => {
    const all = JSON.parse(m.data);
    const seen = new Set();
    for (const s of all) {
      seen.add(s.id);
      const c = card(s.id);
      update(c, s);
      record(c, s);
    }
    // Gone from the service (stopped from elsewhere, or here): the card keeps its last state until dismissed.
    for (const c of state.cards.values()) {
      if (!seen.has(c.id) && !c.ended) {
        c.ended = true;
        update(c, { ...c.status, state: c.status && c.status.state === "failed" ? "failed" : "stopped" });
      }
    }
    $("#no-instances").hidden = state.cards.size > 0;
  });
  es.onmessage = (m) => {
    const item = JSON.parse(m.data);
    // A reconnect sends the backlog again: what was seen already is skipped (far lower: the service restarted).
    const last = state.lastSeq.get(item.instance) || 0;
    if (item.seq <= last && item.seq > last - 1000) return;
    state.lastSeq.set(item.instance, item.seq);
    item.arrived = new Date();
    state.received += 1;
    item.n = state.received;
    const e = item.event;
    const kept = e.event === "detection" ? state.kept.detections : state.kept.others;
    kept.push(item);
    if (kept.length > KEPT_EVENTS) kept.splice(0, kept.length - KEPT_EVENTS);
    if (e.track !== undefined && (e.event === "appeared" || e.event === "detection")) {
      const key = item.instance + "/" + e.track;
      if (!state.tracksSeen.has(key)) { state.tracksSeen.add(key); item.first = true; }
      if (state.tracksSeen.size > 4 * KEPT_EVENTS) state.tracksSeen.delete(state.tracksSeen.values().next().value);
    }
    if (e.event === "snapshot") {
      const url = `v1/instances/${encodeURIComponent(item.instance)}/snapshots/${encodeURIComponent(e.path.split("/").pop())}`;
      for (const t of e.tracks) {
        const key = item.instance + "/" + t;
        state.snapshots.set(key, url);
        const row = state.firstRows.get(key);
        if (row) attachSnapshot(row, url);
      }
      if (state.snapshots.size > KEPT_EVENTS) state.snapshots.delete(state.snapshots.keys().next().value);
    }
    state.pending.push(item);
    if (state.pending.length > TABLE_ROWS) state.pending.splice(0, state.pending.length - TABLE_ROWS);
    scheduleTable();
  };
}

function typeOf(e) { return e.type ? "code:" + e.type : "event:" + e.event; }

function visible(item) {
  const instance = $("#filter-instance").value, type = $("#filter-type").value;
  return (!instance || item.instance === instance) && (!type || typeOf(item.event) === type);
}

function addType(e) {
  const t = typeOf(e);
  if (state.types.has(t)) return;
  state.types.add(t);
  const select = $("#filter-type");
  const label = t.startsWith("code:") ? t.slice(5) : t.slice(6) + " (event)";
  const group = t.startsWith("code:") ? "codes" : "events";
  let og = select.querySelector(`optgroup[label="${group}"]`);
  if (!og) { og = document.createElement("optgroup"); og.label = group; select.append(og); }
  og.append(new Option(label, t));
}

let tableScheduled = false;
function scheduleTable() {
  if (tableScheduled) return;
  tableScheduled = true;
  requestAnimationFrame(() => {
    tableScheduled = false;
    flushTable();
  });
}

// New rows go on top in one DOM change per animation frame; the table never holds more than TABLE_ROWS.
function flushTable() {
  const items = state.pending;
  state.pending = [];
  for (const item of items) addType(item.event);
  if ($("#hold").checked) return;
  const body = $("#events tbody");
  const rows = items.filter(visible).slice(-TABLE_ROWS).reverse().map(row);
  body.prepend(...rows);
  while (body.rows.length > TABLE_ROWS) {
    const last = body.lastElementChild;
    if (last.dataset.key) state.firstRows.delete(last.dataset.key);
    last.remove();
  }
}

function redrawTable() {
  const body = $("#events tbody");
  body.replaceChildren();
  state.firstRows.clear();
  // Both lists, in the order they arrived.
  const a = state.kept.detections, b = state.kept.others, all = [];
  let i = 0, j = 0;
  while (i < a.length || j < b.length) all.push(j >= b.length || (i < a.length && a[i].n < b[j].n) ? a[i++] : b[j++]);
  state.pending = all;
  flushTable();
}
$("#filter-instance").addEventListener("change", redrawTable);
$("#filter-type").addEventListener("change", redrawTable);
$("#hold").addEventListener("change", () => { if (!$("#hold").checked) redrawTable(); });

function cell(tr, text, cls) {
  const td = tr.insertCell();
  if (text !== undefined && text !== null) td.textContent = text;
  if (cls) td.className = cls;
  return td;
}

function row(item) {
  const e = item.event;
  const tr = document.createElement("tr");
  tr.className = e.event;
  const t = item.arrived;
  cell(tr, t.toLocaleTimeString([], { hour12: false }) + "." + String(t.getMilliseconds()).padStart(3, "0"));
  cell(tr, item.instance);
  cell(tr, e.track ?? "");
  cell(tr, e.event);
  cell(tr, e.type ?? "");
  const text = e.data ?? e.message ?? e.reason ?? e.state ?? (e.region ? JSON.stringify(e.region) : "");
  const data = cell(tr, text, "data");
  data.title = text;
  cell(tr, "");
  if (item.first) {
    // A new code: its snapshot (which comes once the frame is drawn) goes on this row.
    const key = item.instance + "/" + e.track;
    tr.dataset.key = key;
    state.firstRows.set(key, tr);
    if (state.snapshots.has(key)) attachSnapshot(tr, state.snapshots.get(key));
  }
  if (e.event === "snapshot") {
    attachSnapshot(tr, `v1/instances/${encodeURIComponent(item.instance)}/snapshots/${encodeURIComponent(e.path.split("/").pop())}`);
  }
  const copy = cell(tr, "");
  if (e.data !== undefined) {
    const b = document.createElement("button");
    b.textContent = "copy";
    b.title = "copy the data";
    b.addEventListener("click", () => copyText(e.data, b));
    copy.append(b);
  }
  return tr;
}

// The snapshot by its route (a GET: the token, when there is one, goes in the cookie), loaded lazily.
function attachSnapshot(tr, url) {
  const td = tr.cells[6];
  if (!td || td.dataset.snapshot) return;
  td.dataset.snapshot = url;
  const img = document.createElement("img");
  img.className = "thumb";
  img.alt = "snapshot " + url.split("/").pop();
  img.loading = "lazy";
  img.onerror = () => { td.textContent = "–"; };
  img.src = url;
  const a = document.createElement("a");
  a.target = "_blank";
  a.href = url;
  a.append(img);
  td.replaceChildren(a);
}

async function copyText(text, button) {
  try {
    await navigator.clipboard.writeText(text);
  } catch (_) {
    // Not a secure context (http on another host): the old way.
    const area = document.createElement("textarea");
    area.value = text;
    document.body.append(area);
    area.select();
    document.execCommand("copy");
    area.remove();
  }
  button.textContent = "copied";
  setTimeout(() => { button.textContent = "copy"; }, 1200);
}

// Events per second over the last five seconds, shown above the table.
let lastCount = 0;
setInterval(() => {
  state.rate = (state.received - lastCount) / 5;
  lastCount = state.received;
  $("#event-rate").textContent = `${state.rate.toFixed(1)} events/s · newest ${TABLE_ROWS} shown`;
}, 5000);

// MARK: find a code

// The sightings index: where and when a code passed, each sighting's recording played from two seconds before
// its first sight.
async function findSightings(event) {
  event.preventDefault();
  const text = $("#search-code").value.trim();
  const params = new URLSearchParams();
  if (text.endsWith("*")) params.set("prefix", text.slice(0, -1));
  else if (text) params.set("code", text);
  for (const [key, id] of [["from", "#search-from"], ["to", "#search-to"]]) {
    const v = $(id).value.trim();
    if (v) params.set(key, v);
  }
  params.set("limit", "100");
  $("#search-error").textContent = "";
  const r = await call("GET", "v1/sightings?" + params.toString());
  const body = $("#sightings tbody");
  body.replaceChildren();
  if (r.status !== 200) {
    $("#search-error").textContent = (r.body && r.body.error) || "the search failed";
    $("#sightings").hidden = true;
    return;
  }
  const found = r.body.sightings || [];
  $("#search-summary").textContent = found.length === 0 ? "No sighting." :
    `${found.length} sighting${found.length === 1 ? "" : "s"}, newest first` + (r.body.next ? " (more: narrow the time)" : "");
  $("#sightings").hidden = found.length === 0;
  for (const s of found) {
    const tr = document.createElement("tr");
    tr.className = "sighting";
    cell(tr, new Date(s.first_seen).toLocaleString());
    cell(tr, s.camera);
    cell(tr, s.type);
    cell(tr, s.code, "data");
    cell(tr, String(s.frames));
    const snap = cell(tr, "–");
    if (s.snapshot && state.cards.has(s.camera)) {
      // The instance still runs: its snapshot route serves the file.
      const url = `v1/instances/${encodeURIComponent(s.camera)}/snapshots/${encodeURIComponent(s.snapshot.split("/").pop())}`;
      const img = document.createElement("img");
      img.className = "thumb";
      img.alt = "snapshot";
      img.loading = "lazy";
      img.onerror = () => { snap.textContent = s.snapshot.split("/").pop(); };
      img.src = url;
      snap.replaceChildren(img);
    } else if (s.snapshot) {
      snap.textContent = s.snapshot.split("/").pop();
    }
    const td = cell(tr, "");
    if (s.recording) {
      const b = playButton(s, () => play(s));
      // The moment as an MP4 of its own (10 s either side, cut without re-encoding).
      const a = document.createElement("a");
      a.textContent = "export clip";
      a.className = "clip";
      a.download = "";
      a.href = `v1/clips?run=${encodeURIComponent(s.run)}&track=${s.track}`;
      td.append(b, " ", a);
    } else {
      td.textContent = "–";
    }
    body.append(tr);
  }
}

// The recording from two seconds before the first sight (the service answers byte ranges, so the video seeks).
function play(s) {
  playFrom(`v1/sightings/recording?run=${encodeURIComponent(s.run)}&track=${s.track}`, s.offset_s,
    `${s.type} ${s.code} · ${s.camera} · ${new Date(s.first_seen).toLocaleString()} · ${s.recording.split("/").pop()}`,
    { run: s.run, track: s.track });
}

// A row's "play" button: its recording at its moment (`row.recording`, `row.offset_s`).
function playButton(row, onclick) {
  const b = document.createElement("button");
  b.textContent = "play";
  b.className = "play";
  b.title = `${row.recording} at ${row.offset_s} s`;
  b.onclick = onclick;
  return b;
}

// `url` in the page's player from two seconds before `offset` (seconds in the recording).
function playFrom(url, offset, caption, what) {
  const video = $("#player-video");
  const start = Math.max(0, (offset || 0) - 2);
  $("#player").hidden = false;
  $("#player-caption").textContent = `${caption} from ${start.toFixed(1)} s`;
  state.playing = { ...what, start };
  video.onloadedmetadata = () => {
    video.currentTime = start;
    video.play().catch(() => {});
  };
  video.src = url;
  $("#player").scrollIntoView({ block: "nearest" });
}

$("#search-form").addEventListener("submit", findSightings);

// MARK: read cycles

// Read cycles' results from the index (a result, a label, a time window), each played from its opening.
async function listCycles(event) {
  event.preventDefault();
  const params = new URLSearchParams();
  for (const [key, id] of [["result", "#cycles-result"], ["label", "#cycles-label"], ["from", "#cycles-from"],
                           ["to", "#cycles-to"]]) {
    const v = $(id).value.trim();
    if (v) params.set(key, v);
  }
  params.set("limit", "100");
  $("#cycles-error").textContent = "";
  const r = await call("GET", "v1/cycles?" + params.toString());
  const body = $("#cycles tbody");
  body.replaceChildren();
  if (r.status !== 200) {
    $("#cycles-error").textContent = (r.body && r.body.error) || "the list failed";
    $("#cycles").hidden = true;
    return;
  }
  const found = r.body.cycles || [];
  $("#cycles-summary").textContent = found.length === 0 ? "No read cycle." :
    `${found.length} read cycle${found.length === 1 ? "" : "s"}, newest first` + (found.length === 100 ? " (narrow the time for older ones)" : "");
  $("#cycles").hidden = found.length === 0;
  for (const c of found) {
    const tr = document.createElement("tr");
    tr.className = `cycle ${c.result}`;
    cell(tr, new Date(c.opened).toLocaleString());
    cell(tr, c.camera);
    cell(tr, c.label || "–");
    cell(tr, c.result.toUpperCase(), "result");
    cell(tr, c.codes.length ? c.codes.map(k => k.code + (k.expected ? "" : " (unexpected)")).join(", ") : "–", "data");
    const td = cell(tr, "");
    if (c.recording) {
      const b = playButton(c, () => playFrom(`v1/cycles/recording?run=${encodeURIComponent(c.run)}&cycle=${c.cycle}`, c.offset_s,
        `cycle ${c.cycle} ${c.result.toUpperCase()}${c.label ? " " + c.label : ""} · ${c.camera} · ${new Date(c.opened).toLocaleString()} · ${c.recording.split("/").pop()}`,
        { run: c.run, cycle: c.cycle }));
      td.append(b);
    } else {
      td.textContent = "–";
    }
    body.append(tr);
  }
}

$("#cycles-form").addEventListener("submit", listCycles);

// MARK: start

async function start() {
  if (await loadPipelines()) connect();
  else if ($("#token-form").hidden) {
    setConnection("cannot reach the service", "down");
    setTimeout(start, 2000);
  }
}
start();
