// The relay's console: what it sees, hears, sends to a model and what that costs, live.
// Everything comes from the relay's own API on this origin: the streams (/feed/stream,
// /agent/stream, /health/stream) keep it live, read with fetch so that the token travels in
// a header. Text from the API is only ever set as text (textContent), never parsed as HTML.
"use strict";

const FEED_MAX = 1000; // rows kept in the feed; older ones leave the page
const CONTEXT_EVERY_MS = 1500; // the context window is asked again at most this often
const RECONNECT_MS = 3000;
const TOKEN_KEY = "sinain-relay-token";

const $ = (id) => document.getElementById(id);
const state = {
  token: sessionStorage.getItem(TOKEN_KEY) || "",
  started: false,
  lastSense: 0,
  senseCount: null,
  contextAt: 0,
  contextTimer: null,
  pictures: new Map(),
  streams: [],
  troubles: [],
  troublesSaid: "[]",
  baseUrl: "",
  pause: "", // while capture is paused, what the header says in place of "live"
};

// A card of another feature plugs in here: its <section class="card"> goes in index.html
// where the comment says, its script in a file of its own (listed in transport/auth.py's
// CONSOLE_FILES and loaded by index.html after this one), and an object it pushes on CARDS
// is called with what the page learns:
// `start()` once the page is open (the token given), `health(health)` with each /health, and
// `appRow(summary, app)` with the <summary> of each app in "What the agent sees", to add a
// control to it. Each call is guarded: a card that fails leaves the rest of the page working.
const CARDS = [];

function eachCard(hook, ...args) {
  for (const card of CARDS) {
    try {
      if (card[hook]) card[hook](...args);
    } catch (error) {
      console.warn("sinain-relay console: a card failed:", error.message);
    }
  }
}

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

// The pill says the page is live only while every stream is open, nothing is wrong and
// capture is not paused: with trouble (the banner says which) it says how much, in the
// banner's colour; while paused, "paused" and until when.
function showLink() {
  const link = $("link");
  const open = state.streams.filter((s) => s.open).length;
  const live = state.streams.length > 0 && open === state.streams.length;
  const problems = state.troubles.length;
  if (live && (problems || state.pause)) {
    const said = problems ? ", " + problems + (problems === 1 ? " problem" : " problems") : "";
    link.textContent = (state.pause || "live") + said;
    link.className = "pill " + (problems ? "trouble" : "paused");
    return;
  }
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

function times(n, what) {
  return number(n) + " " + what + (n === 1 ? "" : "s");
}

function seconds(ms) {
  return Math.max(1, Math.round(ms / 1000)) + " s";
}

// -- the feed --------------------------------------------------------------------------------

// The marks a transcript's text may start with, and whose words they say it holds; the older
// mark says neither, and is shown as heard, as are transcripts with no mark.
const MARKS = [["[🔊]", "heard"], ["[🎙]", "said"], ["[📝]", "heard"]];
const BRIDGE_PREFIX = /^\[.*?openrouter\]\s*/;

function joined(lines) {
  return lines.map((line) => line.trim()).filter(Boolean).join(" ");
}

// A feed item's transcript as the agent hears it (actors/core/window.py, extract_audio): posted
// with source "audio" or starting with a mark, the text without its mark; in the audio bridge's
// form ("[PERIODIC]" or "openrouter]"), its lines naming openrouter without their prefix.
// Anything else is null.
function transcript(item) {
  const text = item.text || "";
  if (item.source === "agent") return null;
  const mark = MARKS.find(([m]) => text.startsWith(m));
  if (item.source === "audio" || mark) {
    const said = joined((mark ? text.slice(mark[0].length) : text).split("\n"));
    return said ? { kind: mark ? mark[1] : "heard", text: said } : null;
  }
  if (!text.includes("[PERIODIC]") && !text.includes("openrouter]")) return null;
  const lines = text.split("\n").filter((line) => line.includes("openrouter]"));
  const said = joined(lines.map((line) => line.replace(BRIDGE_PREFIX, "")));
  return said ? { kind: "heard", text: said } : null;
}

// What a feed item is, and the text to show of it.
function kindOf(item) {
  const text = item.text || "";
  if (item.source === "agent" || text.startsWith("[🧠]")) return { kind: "agent", text };
  if (item.source === "openclaw" || text.startsWith("[🤖]")) return { kind: "escalation", text };
  return transcript(item) || { kind: "message", text };
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
  const { kind, text } = kindOf(item);
  addRow(item.ts, kind, text);
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
    const summary = el("summary", {}, (app || "unknown app") + " (" + lines.length + ")");
    eachCard("appRow", summary, app);
    parts.push(el("details", { open: "" }, summary, list));
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

// -- health ----------------------------------------------------------------------------------

// Each /health goes to every card (the banner of trouble, the Health card, ...); new screen
// events it counts are asked for.
function onHealth(health) {
  eachCard("health", health);
  if (health.senseEvents !== state.senseCount) {
    state.senseCount = health.senseEvents;
    if (state.started) loadSense().then(refreshContextSoon).catch(showError);
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
  await Promise.all([loadSense(), loadContext()]).catch(showError);
  stream("/feed/stream", { after: lastFeed, feed: onFeedItem });
  stream("/agent/stream", { after: lastEntry, agent: onAgentEntry });
  stream("/health/stream", { after: 0, health: onHealth, tick: onTick });
  eachCard("start");
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
  $("filters").addEventListener("change", (event) => {
    $("feed").classList.toggle("hide-" + event.target.value, !event.target.checked);
  });
}

// After every script of the page has run (they are deferred): each card is on CARDS.
document.addEventListener("DOMContentLoaded", () => {
  wire();
  start();
});
