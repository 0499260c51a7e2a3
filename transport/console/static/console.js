// The relay's console: what it sees, hears, sends to a model and what that costs, live.
// Everything comes from the relay's own API on this origin: the streams (/feed/stream,
// /agent/stream, /health/stream) keep it live, read with fetch so that the token travels in
// a header. Text from the API is only ever set as text (textContent), never parsed as HTML.
"use strict";

const FEED_MAX = 1000; // rows kept in the feed; older ones leave the page
const CONTEXT_EVERY_MS = 1500; // the context window is asked again at most this often
const RECONNECT_MS = 3000;
const CHART_HOURS = 12;
const TOKEN_KEY = "sinain-relay-token";
const ALIASES = new Set(["maxAge"]); // settings the form does not show (another name's alias)
const PALETTE = ["#1f6feb", "#bf3989", "#1a7f37", "#bc4c00", "#8250df", "#9a6700", "#57606a"];

const $ = (id) => document.getElementById(id);
const state = {
  token: sessionStorage.getItem(TOKEN_KEY) || "",
  started: false,
  lastSense: 0,
  senseCount: null,
  contextAt: 0,
  contextTimer: null,
  pictures: new Map(),
  pendingId: null,
  models: new Map(),
  streams: [],
};

class TokenNeeded extends Error {}

// -- the API ---------------------------------------------------------------------------------

function headers(extra) {
  const h = Object.assign({ Accept: "application/json" }, extra || {});
  if (state.token) h.Authorization = "Bearer " + state.token;
  return h;
}

async function api(path, options) {
  const init = Object.assign({ cache: "no-store" }, options || {});
  init.headers = headers(init.body ? { "Content-Type": "application/json" } : {});
  const res = await fetch(path, init);
  if (res.status === 401) throw new TokenNeeded();
  const body = await res.json().catch(() => ({}));
  if (!res.ok || body.ok === false) {
    throw new Error(body.error || res.status + " " + res.statusText);
  }
  return body;
}

function post(path, body) {
  return api(path, { method: "POST", body: body === undefined ? undefined : JSON.stringify(body) });
}

// Server-Sent Events over fetch: a header carries the token, and a stream that ends or fails
// is opened again after the relay's retry delay, resuming after the last id it gave.
async function stream(path, handlers) {
  let after = handlers.after;
  const entry = { open: false };
  state.streams.push(entry);
  for (;;) {
    try {
      const sep = path.includes("?") ? "&" : "?";
      const url = after == null ? path : path + sep + "after=" + after;
      const res = await fetch(url, { headers: headers({ Accept: "text/event-stream" }), cache: "no-store" });
      if (res.status === 401) throw new TokenNeeded();
      if (!res.ok || !res.body) throw new Error("stream " + res.status);
      entry.open = true;
      showLink();
      const reader = res.body.pipeThrough(new TextDecoderStream()).getReader();
      let buffer = "";
      for (;;) {
        const { value, done } = await reader.read();
        if (done) break;
        buffer += value;
        let end;
        while ((end = buffer.indexOf("\n\n")) >= 0) {
          const block = buffer.slice(0, end);
          buffer = buffer.slice(end + 2);
          const id = dispatch(block, handlers);
          if (id != null) after = id;
        }
      }
    } catch (error) {
      if (error instanceof TokenNeeded) {
        state.streams.splice(state.streams.indexOf(entry), 1);
        return askToken("The relay asks for its token again.");
      }
    }
    entry.open = false;
    showLink();
    await new Promise((resolve) => setTimeout(resolve, RECONNECT_MS));
  }
}

function dispatch(block, handlers) {
  let event = "message";
  let id = null;
  const data = [];
  for (const line of block.split("\n")) {
    if (line.startsWith("data:")) data.push(line.slice(line.startsWith("data: ") ? 6 : 5));
    else if (line.startsWith("event:")) event = line.slice(6).trim();
    else if (line.startsWith("id:")) id = line.slice(3).trim();
  }
  if (data.length && handlers[event]) handlers[event](JSON.parse(data.join("\n")));
  return id && /^\d+$/.test(id) ? Number(id) : null;
}

function showLink() {
  const link = $("link");
  const open = state.streams.filter((s) => s.open).length;
  const live = state.streams.length > 0 && open === state.streams.length;
  link.textContent = live ? "live" : open ? "reconnecting…" : "offline, reconnecting…";
  link.className = "pill " + (live ? "live" : "down");
}

// -- building blocks -------------------------------------------------------------------------

function el(tag, attrs, ...children) {
  const node = document.createElement(tag);
  for (const [key, value] of Object.entries(attrs || {})) {
    if (value == null) continue;
    if (key === "class") node.className = value;
    else node.setAttribute(key, value);
  }
  for (const child of children) {
    if (child == null) continue;
    node.append(child instanceof Node ? child : String(child));
  }
  return node;
}

function clock(ts) {
  const d = new Date(ts);
  return el("time", { datetime: d.toISOString(), title: d.toLocaleString() }, d.toLocaleTimeString());
}

function cut(text, n) {
  return text.length > n ? text.slice(0, n) + "…" : text;
}

function number(n) {
  return n == null ? "–" : Number(n).toLocaleString();
}

function usd(n) {
  return n == null ? "–" : "$" + Number(n).toFixed(n >= 1 ? 2 : 5);
}

// -- the feed --------------------------------------------------------------------------------

function kindOf(item) {
  const text = item.text || "";
  if (item.source === "agent" || text.startsWith("[🧠]")) return "agent";
  if (item.source === "openclaw" || text.startsWith("[🤖]")) return "escalation";
  if (text.startsWith("[🔊]")) return "heard";
  if (text.startsWith("[🎙]")) return "said";
  return "message";
}

const pending = [];
let flushing = false;

function addRow(ts, kind, text) {
  pending.push({ ts, kind, text });
  if (!flushing) {
    flushing = true;
    requestAnimationFrame(flushRows);
  }
}

// New rows go in once a frame, newest first; the feed keeps FEED_MAX rows at most.
function flushRows() {
  flushing = false;
  const feed = $("feed");
  pending.sort((a, b) => a.ts - b.ts);
  for (const row of pending.splice(0)) {
    const li = el("li", { class: row.kind }, clock(row.ts), el("span", { class: "tag " + row.kind }, row.kind), el("span", { class: "text" }, row.text));
    li.dataset.ts = row.ts;
    let before = feed.firstElementChild;
    while (before && Number(before.dataset.ts) > row.ts) before = before.nextElementSibling;
    feed.insertBefore(li, before);
  }
  while (feed.childElementCount > FEED_MAX) feed.lastElementChild.remove();
  $("feed-count").textContent = "(" + feed.childElementCount + " shown)";
}

function onFeedItem(item) {
  const kind = kindOf(item);
  addRow(item.ts, kind, item.text);
  if (kind === "agent") $("hud").textContent = item.text;
  refreshContextSoon();
}

function onSenseEvent(event) {
  state.lastSense = Math.max(state.lastSense, event.id);
  const meta = event.meta || {};
  const where = [meta.app, meta.windowTitle].filter(Boolean).join(" — ");
  const text = event.ocr ? cut(event.ocr.replace(/\s+/g, " "), 400) : "(" + event.type + ")";
  addRow(Math.round(event.receivedAt || event.ts), "screen", (where ? where + ": " : "") + text);
}

function onTick(tick) {
  const parts = ["tick " + tick.id + ": " + tick.outcome];
  if (tick.reason) parts.push(tick.reason);
  if (tick.model) parts.push(tick.model);
  if (tick.latencyMs != null) parts.push(tick.latencyMs + " ms");
  if (tick.tokensIn != null) parts.push(tick.tokensIn + " → " + tick.tokensOut + " tokens");
  if (tick.error) parts.push(tick.error);
  addRow(tick.ts, "tick", parts.join(" · "));
}

async function loadSense() {
  const answer = await api("/sense?meta_only=true&after=" + state.lastSense);
  for (const event of answer.events) onSenseEvent(event);
}

// -- now: hud, digest, context -----------------------------------------------------------------

function onAgentEntry(entry) {
  $("digest").textContent = entry.digest || "—";
  const meta = [entry.model, entry.latencyMs != null ? entry.latencyMs + " ms" : null];
  $("digest-meta").replaceChildren(clock(entry.ts), " " + meta.filter(Boolean).join(" · "));
  if ($("hud").textContent === "—" && entry.hud) $("hud").textContent = entry.hud;
}

function refreshContextSoon() {
  if (state.contextTimer) return;
  const wait = Math.max(0, state.contextAt + CONTEXT_EVERY_MS - Date.now());
  state.contextTimer = setTimeout(() => {
    state.contextTimer = null;
    state.contextAt = Date.now();
    loadContext().catch(showError);
  }, wait);
}

async function loadContext() {
  const { context } = await api("/agent/context");
  $("context-meta").textContent =
    "Current app: " + (context.currentApp || "–") + " · " + context.screenCount + " screen events, " +
    context.audioCount + " transcripts in the last " + Math.round(context.windowMs / 1000) + " s";
  const byApp = new Map();
  for (const line of context.screen) {
    if (!byApp.has(line.app)) byApp.set(line.app, []);
    byApp.get(line.app).push(line);
  }
  const parts = [];
  for (const [app, lines] of byApp) {
    const list = el("ol", { class: "results" });
    for (const line of lines.slice().reverse()) {
      const text = [line.windowTitle, line.ocr ? cut(line.ocr, 600) : null].filter(Boolean).join(": ");
      list.append(el("li", {}, clock(line.ts), el("span", { class: "tag screen" }, line.type), el("span", { class: "text" }, text)));
    }
    parts.push(el("details", { open: "" }, el("summary", {}, (app || "unknown app") + " (" + lines.length + ")"), list));
  }
  if (context.audio.length) {
    const list = el("ol", { class: "results" });
    for (const chunk of context.audio.slice().reverse()) {
      const kind = chunk.source === "mic" || chunk.text.startsWith("[🎙]") ? "said" : "heard";
      list.append(el("li", {}, clock(chunk.ts), el("span", { class: "tag " + kind }, kind), el("span", { class: "text" }, chunk.text)));
    }
    parts.push(el("details", { open: "" }, el("summary", {}, "Transcripts (" + context.audio.length + ")"), list));
  }
  $("context").replaceChildren(...(parts.length ? parts : [el("p", { class: "meta" }, "The window is empty.")]));
  await showPictures(context.images);
}

async function showPictures(images) {
  const shown = [];
  for (const image of images) {
    let src = state.pictures.get(image.senseId);
    if (src === undefined) {
      const answer = await api("/sense?after=" + (image.senseId - 1));
      const event = answer.events.find((e) => e.id === image.senseId);
      src = event && event.roi && event.roi.data ? "data:" + image.type + ";base64," + event.roi.data : null;
      state.pictures.set(image.senseId, src);
    }
    if (src) shown.push(el("figure", {}, el("img", { src, alt: "Screen picture " + image.senseId + " the next call sends" }), el("figcaption", { class: "meta" }, "screen event " + image.senseId + ", " + number(image.bytes) + " bytes")));
  }
  $("pictures").replaceChildren(...shown);
}

// -- health, audio, escalation, cost -----------------------------------------------------------

function onHealth(health) {
  const rows = Object.entries(health.actors).map(([name, actor]) => {
    const stateText = actor.alive ? actor.state : actor.state === "running" ? "dead" : actor.state;
    const error = actor.lastError ? cut(actor.lastError, 200) : actor.lastExit ? "(hidden)" : "";
    return el("tr", { "data-actor": name },
      el("th", { scope: "row" }, name),
      el("td", { class: "state-" + stateText }, stateText),
      el("td", { class: "num" }, actor.restarts),
      el("td", {}, actor.lastExit ? clock(actor.lastExit) : null, actor.lastExit ? " " : null, error));
  });
  $("actors").tBodies[0].replaceChildren(...rows);
  $("health-meta").textContent = health.ok ? "" : "(" + (health.error || "not ok") + ")";
  const agent = health.agent || {};
  $("agent-state").textContent = [
    "LLM path: " + (agent.state || "–"),
    agent.model,
    number(agent.totalCalls) + " calls",
    agent.nextTickInMs != null ? "next tick in " + Math.round(agent.nextTickInMs / 1000) + " s" : null,
    localModel(agent.local),
    agent.lastError ? "last error: " + cut(agent.lastError, 160) : null,
  ].filter(Boolean).join(" · ");
  showAudio(health.audio);
  showCost(agent);
  if (health.senseEvents !== state.senseCount) {
    state.senseCount = health.senseEvents;
    if (state.started) loadSense().then(refreshContextSoon).catch(showError);
  }
  const waiting = agent.escalation && agent.escalation.pending;
  if (waiting && state.pendingId === null) loadPending().catch(showError);
  if (!waiting && state.pendingId !== null) showPending(null);
}

function localModel(local) {
  // The agent's own model (AGENT_API=local): its worker's state, memory and speed.
  if (!local) return null;
  return [
    "on this machine: " + local.state,
    local.rssMb != null ? Math.round(local.rssMb) + " MB" : null,
    local.tokensPerSecond != null ? local.tokensPerSecond + " tokens/s" : null,
    local.restarts ? local.restarts + " restarts" : null,
  ].filter(Boolean).join(", ");
}

function showAudio(audio) {
  if (!audio) return;
  const rows = Object.entries(audio.sources).map(([name, source]) =>
    el("tr", {},
      el("th", { scope: "row" }, name === "mic" ? "mic (said)" : "system (heard)"),
      el("td", { class: "state-" + source.state }, source.state + (source.alt ? " (alternative device)" : "")),
      el("td", { class: "num" }, Math.round(source.speechShare * 100) + " % speech"),
      el("td", { class: "num" }, number(source.utterances) + " utterances")));
  const t = audio.transcriber;
  const table = el("table", {}, el("caption", {}, "Sources; speech service: " + t.state + " (" + t.model + ")"), el("tbody", {}, ...rows));
  $("audio").replaceChildren(rows.length ? table : el("p", { class: "meta" }, "The relay captures no audio itself (no AUDIO_SOURCE or MIC_SOURCE); speech service: " + t.state + "."));
}

async function command(action) {
  const answer = await post("/overlay/command?action=" + action);
  $("audio-answer").textContent = answer.text;
}

async function loadPending() {
  const answer = await api("/escalation/pending");
  showPending(answer.escalation);
}

function showPending(escalation) {
  state.pendingId = escalation ? escalation.id : null;
  $("respond").hidden = !escalation;
  $("escalation").replaceChildren(escalation
    ? el("div", {}, el("p", { class: "meta" }, clock(escalation.ts), " score " + escalation.score), el("p", { class: "digest" }, cut(escalation.message, 2000)))
    : el("p", { class: "meta" }, "Nothing waits for an answer."));
}

function colour(model) {
  if (!state.models.has(model)) state.models.set(model, PALETTE[state.models.size % PALETTE.length]);
  return state.models.get(model);
}

function showCost(agent) {
  const byModel = agent.costByModel || {};
  $("cost-table").tBodies[0].replaceChildren(...Object.entries(byModel).map(([model, m]) =>
    el("tr", {}, el("th", { scope: "row" }, model), el("td", { class: "num" }, number(m.calls)),
      el("td", { class: "num" }, number(m.tokensIn)), el("td", { class: "num" }, number(m.tokensOut)),
      el("td", { class: "num" }, m.costUsd == null ? "unknown" : usd(m.costUsd)))));
  const hours = agent.costByHour || [];
  $("cost-meta").textContent = "Known cost in all: " + usd(agent.estimatedCost) + "; per hour, the last " + CHART_HOURS + " hours:";
  const now = Date.now();
  const start = now - (now % 3600000) - (CHART_HOURS - 1) * 3600000;
  const slots = Array.from({ length: CHART_HOURS }, (_, i) => start + i * 3600000);
  const found = new Map(hours.map((h) => [h.hour, h.models]));
  const models = [...new Set(hours.flatMap((h) => Object.keys(h.models)))];
  $("cost-chart").replaceChildren(
    chart("Calls per hour", slots, models, found, (f) => f.calls, number),
    chart("Tokens per hour", slots, models, found, (f) => f.tokensIn + f.tokensOut, number),
    chart("USD per hour", slots, models, found, (f) => f.costUsd, usd),
    el("p", { class: "meta" }, ...models.flatMap((m) => [el("span", { style: null, class: "tag", "data-model": m }, m), " "])));
  for (const tag of $("cost-chart").querySelectorAll("[data-model]")) tag.style.color = colour(tag.dataset.model);
}

// A small stacked bar chart: one bar an hour, one colour a model.
function chart(title, slots, models, found, valueOf, format) {
  const ns = "http://www.w3.org/2000/svg";
  const svgEl = (tag, attrs) => {
    const node = document.createElementNS(ns, tag);
    for (const [k, v] of Object.entries(attrs)) node.setAttribute(k, v);
    return node;
  };
  const W = 360, H = 90, top = 14, bottom = 14, width = W / slots.length;
  const totals = slots.map((hour) => models.reduce((sum, m) => sum + ((found.get(hour) || {})[m] ? valueOf(found.get(hour)[m]) : 0), 0));
  const max = Math.max(...totals, 0);
  const svg = svgEl("svg", { viewBox: "0 0 " + W + " " + H, class: "chart", role: "img", "aria-label": title + ", the last " + slots.length + " hours; at most " + format(max) });
  const label = svgEl("text", { x: 0, y: 10 });
  label.textContent = title + " (max " + format(max) + ")";
  svg.append(label, svgEl("line", { x1: 0, x2: W, y1: H - bottom, y2: H - bottom, class: "axis" }));
  slots.forEach((hour, i) => {
    let y = H - bottom;
    for (const m of models) {
      const figures = (found.get(hour) || {})[m];
      const value = figures ? valueOf(figures) : 0;
      if (!value || !max) continue;
      const h = (value / max) * (H - top - bottom);
      y -= h;
      const bar = svgEl("rect", { x: i * width + 1, y, width: width - 2, height: h, fill: colour(m) });
      const tip = svgEl("title", {});
      tip.textContent = new Date(hour).toLocaleTimeString([], { hour: "2-digit", minute: "2-digit" }) + " " + m + ": " + format(value);
      bar.append(tip);
      svg.append(bar);
    }
    if (i % 3 === 0) {
      const tick = svgEl("text", { x: i * width + 1, y: H - 2 });
      tick.textContent = new Date(hour).toLocaleTimeString([], { hour: "2-digit", minute: "2-digit" });
      svg.append(tick);
    }
  });
  return svg;
}

// -- search and moments ----------------------------------------------------------------------

function entryRow(entry, at) {
  const link = el("a", { href: "#t=" + entry.ts }, clock(entry.ts));
  return el("li", { class: entry.ts === at ? "at" : null }, link, el("span", { class: "tag agent" }, "agent"),
    el("span", { class: "text" }, (entry.hud ? entry.hud + " — " : "") + cut(entry.digest || "", 500)));
}

async function search(words) {
  $("search-meta").textContent = "Searching…";
  const answer = await api("/agent/history?limit=50&q=" + encodeURIComponent(words));
  $("results").replaceChildren(...answer.results.map((entry) => entryRow(entry)));
  const n = answer.results.length;
  $("search-meta").textContent = n ? n + (answer.next ? "+" : "") + " found for “" + words + "”" : "Nothing found for “" + words + "”.";
}

async function showMoment() {
  const match = /^#t=(\d+)$/.exec(location.hash);
  if (!match) return;
  const at = Number(match[1]);
  const answer = await api("/agent/history?limit=40&since=" + (at - 300000) + "&until=" + (at + 300001));
  $("moment").hidden = false;
  $("moment-h").textContent = "Around " + new Date(at).toLocaleString();
  $("moment-list").replaceChildren(...answer.results.map((entry) => entryRow(entry, at)));
  $("moment-h").focus();
}

// -- settings --------------------------------------------------------------------------------

async function loadSettings() {
  const [{ config }, doc] = await Promise.all([api("/agent/config"), api("/openapi.json")]);
  const schema = doc.components.schemas.AgentConfigUpdate.properties;
  const form = $("settings-form");
  const fields = [];
  for (const [name, spec] of Object.entries(schema)) {
    if (ALIASES.has(name)) continue;
    const id = "setting-" + name;
    const secret = name.toLowerCase().includes("key");
    const value = config[name];
    let input;
    if (spec.enum) {
      input = el("select", { id, name }, ...spec.enum.map((v) => el("option", { value: v }, v)));
      input.value = value;
    } else if (spec.type === "boolean") {
      input = el("input", { id, name, type: "checkbox" });
      input.checked = Boolean(value);
    } else if (spec.type === "number" || spec.type === "integer") {
      input = el("input", { id, name, type: "number", min: spec.minimum, max: spec.maximum, step: spec.multipleOf || (spec.type === "integer" ? 1 : "any") });
      input.value = value == null ? "" : value;
    } else {
      input = el("input", { id, name, type: secret ? "password" : "text", autocomplete: "off", placeholder: secret ? (config.hasApiKey ? "set (never shown)" : "not set") : null });
      input.value = secret ? "" : Array.isArray(value) ? value.join(", ") : value == null ? "" : value;
    }
    input.dataset.kind = spec.enum ? "string" : spec.type;
    input.dataset.initial = input.type === "checkbox" ? String(input.checked) : input.value;
    if (spec.description) input.title = spec.description;
    fields.push(el("label", { for: id }, name), input);
  }
  fields.push(el("button", { type: "submit" }, "Apply changes"));
  form.replaceChildren(...fields);
}

async function applySettings(event) {
  event.preventDefault();
  const changes = {};
  for (const input of $("settings-form").querySelectorAll("input, select")) {
    const now = input.type === "checkbox" ? String(input.checked) : input.value;
    if (now === input.dataset.initial) continue;
    const kind = input.dataset.kind;
    changes[input.name] = kind === "boolean" ? input.checked
      : kind === "number" || kind === "integer" ? Number(input.value)
      : kind === "array" ? input.value.split(",").map((s) => s.trim()).filter(Boolean)
      : input.value;
  }
  if (!Object.keys(changes).length) {
    $("settings-answer").textContent = "Nothing changed.";
    return;
  }
  try {
    await post("/agent/config", changes);
    $("settings-answer").textContent = "Applied: " + Object.keys(changes).join(", ") + ".";
    await loadSettings();
  } catch (error) {
    if (error instanceof TokenNeeded) return askToken();
    $("settings-answer").textContent = "Refused: " + error.message;
  }
}

// -- start -----------------------------------------------------------------------------------

function showError(error) {
  if (error instanceof TokenNeeded) return askToken();
  console.warn("sinain-relay console:", error.message);
}

function askToken(message) {
  $("console").hidden = true;
  $("token").hidden = false;
  $("forget").hidden = true;
  $("token-error").textContent = message || "";
  $("link").textContent = "locked";
  $("link").className = "pill down";
  $("token-input").focus();
}

async function start() {
  let feed, last;
  try {
    [feed, last] = await Promise.all([api("/feed?after=0"), api("/agent/last")]);
  } catch (error) {
    if (error instanceof TokenNeeded) return askToken(state.token ? "That token is not this relay's." : "");
    $("link").textContent = "offline: " + error.message;
    $("link").className = "pill down";
    return setTimeout(start, RECONNECT_MS);
  }
  if (state.started) $("feed").replaceChildren(); // a new token: the page starts over
  state.started = true;
  state.lastSense = 0;
  $("token").hidden = true;
  $("console").hidden = false;
  $("forget").hidden = !state.token;
  for (const item of feed.messages) onFeedItem(item);
  if (last.result) onAgentEntry(last.result);
  const lastFeed = feed.messages.length ? feed.messages[feed.messages.length - 1].id : 0;
  const lastEntry = last.result ? last.result.id : 0;
  await Promise.all([loadSense(), loadSettings(), loadPending(), loadContext(), showMoment()]).catch(showError);
  stream("/feed/stream", { after: lastFeed, feed: onFeedItem });
  stream("/agent/stream", { after: lastEntry, agent: onAgentEntry });
  stream("/health/stream", { after: 0, health: onHealth, tick: onTick });
}

function wire() {
  $("token").addEventListener("submit", (event) => {
    event.preventDefault();
    state.token = $("token-input").value.trim();
    sessionStorage.setItem(TOKEN_KEY, state.token);
    $("token-input").value = "";
    start();
  });
  $("forget").addEventListener("click", () => {
    sessionStorage.removeItem(TOKEN_KEY);
    location.reload();
  });
  $("search").addEventListener("submit", (event) => {
    event.preventDefault();
    const words = $("q").value.trim();
    if (words) search(words).catch((error) => { $("search-meta").textContent = error.message; showError(error); });
  });
  $("filters").addEventListener("change", (event) => {
    $("feed").classList.toggle("hide-" + event.target.value, !event.target.checked);
  });
  $("toggle-audio").addEventListener("click", () => command("toggle_audio").catch(showError));
  $("switch-device").addEventListener("click", () => command("switch_device").catch(showError));
  $("respond").addEventListener("submit", async (event) => {
    event.preventDefault();
    const response = $("response").value.trim();
    if (!response || state.pendingId === null) return;
    try {
      await post("/escalation/respond", { id: state.pendingId, response });
      $("respond-answer").textContent = "Answered.";
      $("response").value = "";
      await loadPending();
    } catch (error) {
      $("respond-answer").textContent = error.message;
      showError(error);
    }
  });
  $("settings-form").addEventListener("submit", applySettings);
  window.addEventListener("hashchange", () => showMoment().catch(showError));
}

wire();
start();
