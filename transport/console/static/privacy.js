// The Privacy card: pause and resume capture, forget or export a time range, the apps and
// window titles the relay never watches, how long it keeps the agent's entries, and what each
// place gets of what the relay sees. It drives GET/POST /privacy, POST /privacy/forget and
// GET /export with the page's token (console.js's api and headers), and plugs in on CARDS.
"use strict";

(() => {
  const MINUTE_MS = 60000;
  const KINDS = { ocr: "Screen text", images: "Pictures", audio: "Speech", titles: "Window titles" };
  const PLACES = {
    localBuffer: "Stored here",
    openrouter: "Model over HTTP",
    localLlm: "Model on this machine",
    agentGateway: "Agents",
  };
  const LEVELS = { full: "all of it", redacted: "secrets removed", summary: "a summary", none: "nothing" };
  // What a forget removed, by the answer's field: [one, more than one].
  const COUNTS = [
    ["feed", "feed item", "feed items"],
    ["transcripts", "of them a transcript", "of them transcripts"],
    ["screen", "screen event", "screen events"],
    ["entries", "agent entry", "agent entries"],
    ["escalations", "waiting escalation", "waiting escalations"],
    ["heard", "transcript held in memory", "transcripts held in memory"],
    ["situationLines", "line of SITUATION.md", "lines of SITUATION.md"],
  ];

  let controls = null; // the controls in force, as GET /privacy answers them
  let asked = null; // the range a forget waits to be confirmed for

  const hhmm = (ms) => new Date(ms).toLocaleTimeString([], { hour: "2-digit", minute: "2-digit" });
  const same = (a, b) => a.trim().toLowerCase() === b.trim().toLowerCase();
  const excluded = (app) => controls !== null && controls.excludeApps.some((name) => same(name, app));

  // An action of the card: its answer (or the relay's refusal, a 400's error) in `line`.
  async function act(line, action) {
    const out = $(line);
    out.className = "meta";
    out.textContent = "…";
    try {
      out.textContent = (await action()) || "";
    } catch (error) {
      if (error instanceof TokenNeeded) return askToken();
      out.className = "error";
      out.textContent = "Not done: " + error.message;
    }
  }

  async function change(body) {
    show(await post("/privacy", body));
  }

  // -- the pause, the lists and the retention ------------------------------------------------

  function show(found) {
    controls = Object.assign({}, controls, found);
    const paused = controls.paused;
    const until = controls.pausedUntil;
    state.pause = paused ? (until ? "paused until " + hhmm(until) : "paused") : "";
    showLink();
    $("privacy-state").textContent = !paused
      ? "Watching: what capture sends is kept and read by the agent."
      : (until ? "Paused until " + new Date(until).toLocaleString() : "Paused until you resume") +
        ": what capture sends is dropped, and nothing goes to a model.";
    $("privacy-state").className = paused ? "state-paused" : "state-ok";
    $("privacy-resume").hidden = !paused;
    showList("exclude-apps", "excludeApps", "app");
    showList("exclude-titles", "excludeTitles", "expression");
    if (document.activeElement !== $("retention")) $("retention").value = controls.retentionDays;
  }

  function showList(id, field, what) {
    const names = controls[field];
    $(id).replaceChildren(...(names.length ? names.map((name) => {
      const remove = el("button", { type: "button", class: "plain", "aria-label": "Watch " + name + " again" }, "Remove");
      remove.addEventListener("click", () => act("watch-answer", async () => {
        await change({ [field]: controls[field].filter((n) => n !== name) });
        return "Removed the " + what + " " + name + ".";
      }));
      return el("li", {}, el("span", { class: "text" }, name), " ", remove);
    }) : [el("li", { class: "meta" }, "None.")]));
  }

  function addTo(field, input, what) {
    const name = $(input).value.trim();
    if (!name) return;
    act("watch-answer", async () => {
      const names = controls[field];
      if (!names.includes(name)) await change({ [field]: [...names, name] });
      $(input).value = "";
      return "The relay never watches the " + what + " " + name + " from now on.";
    });
  }

  // -- forget and export -----------------------------------------------------------------------

  // The range of the two datetime-local fields (this device's time zone), both ends included.
  function chosenRange() {
    const since = new Date($("range-since").value).getTime();
    const until = new Date($("range-until").value).getTime();
    if (Number.isNaN(since) || Number.isNaN(until)) throw new Error("choose when the range starts and ends.");
    return { since, until: until + 999 };
  }

  function lastMinutes(minutes) {
    const now = Date.now();
    return { since: now - minutes * MINUTE_MS, until: now };
  }

  function described(range) {
    return new Date(range.since).toLocaleString() + " to " + new Date(range.until).toLocaleString();
  }

  function askForget(range) {
    asked = range;
    $("forget-question").textContent = "Forget everything the relay kept from " + described(range) +
      "? It cannot be undone, and what a model provider was already sent stays with it.";
    $("forget-confirm").hidden = false;
    $("forget-yes").focus();
  }

  function counted(forgotten) {
    const parts = COUNTS.filter(([field]) => forgotten[field]).map(([field, one, more]) =>
      number(forgotten[field]) + " " + (forgotten[field] === 1 ? one : more));
    return parts.length ? "Forgotten: " + parts.join(", ") + "." : "The relay kept nothing from that time.";
  }

  // The range forgotten, then what the page shows of it: its feed rows, what the agent sees
  // and the newest digest are asked again.
  async function forget() {
    const range = asked;
    $("forget-confirm").hidden = true;
    asked = null;
    const answer = await post("/privacy/forget", range);
    for (const row of [...$("feed").children]) {
      const ts = Number(row.dataset.ts);
      if (ts >= range.since && ts <= range.until) row.remove();
    }
    state.pictures.clear();
    const last = await api("/agent/last");
    if (last.result) onAgentEntry(last.result);
    else $("digest").textContent = "No digest yet.";
    await loadContext();
    return counted(answer.forgotten);
  }

  // The export as a download: fetched with the token, saved under the relay's file name.
  async function download(range) {
    const res = await fetch("/export?since=" + range.since + "&until=" + range.until,
      { headers: headers({ Accept: "application/x-ndjson" }), cache: "no-store" });
    if (res.status === 401) throw new TokenNeeded();
    if (!res.ok) {
      const body = await res.json().catch(() => ({}));
      throw new Error(body.error || res.status + " " + res.statusText);
    }
    const blob = await res.blob();
    const named = /filename="([^"]+)"/.exec(res.headers.get("Content-Disposition") || "");
    const name = named ? named[1] : "sinain-relay-export.ndjson";
    const link = el("a", { href: URL.createObjectURL(blob), download: name });
    link.click();
    setTimeout(() => URL.revokeObjectURL(link.href), MINUTE_MS);
    return "Saved " + name + " (" + number(blob.size) + " bytes): what the relay keeps from " +
      described(range) + ", without pictures.";
  }

  // -- the matrix ------------------------------------------------------------------------------

  function showMatrix(mode, matrix) {
    $("matrix-meta").textContent = mode === "default"
      ? "The relay's own preset (PRIVACY_MODE is not set)."
      : "The " + mode + " preset (PRIVACY_MODE=" + mode + ").";
    $("matrix").tBodies[0].replaceChildren(...Object.entries(KINDS).map(([kind, label]) =>
      el("tr", { "data-kind": kind }, el("th", { scope: "row" }, label),
        ...Object.keys(PLACES).map((place) => {
          const level = matrix[kind][place];
          return el("td", { class: "level-" + level, "data-level": level }, LEVELS[level] || level);
        }))));
  }

  // -- the card --------------------------------------------------------------------------------

  function wire() {
    $("matrix").tHead.rows[0].append(...Object.values(PLACES).map((p) => el("th", { scope: "col" }, p)));
    for (const button of document.querySelectorAll("[data-pause]")) {
      const minutes = Number(button.dataset.pause);
      button.addEventListener("click", () => act("privacy-answer", async () => {
        await change(minutes ? { pauseMinutes: minutes } : { paused: true });
        return "";
      }));
    }
    $("privacy-resume").addEventListener("click", () => act("privacy-answer", async () => {
      await change({ paused: false });
      return "";
    }));
    for (const button of document.querySelectorAll("[data-forget]")) {
      button.addEventListener("click", () => askForget(lastMinutes(Number(button.dataset.forget))));
    }
    $("forget-range").addEventListener("click", () => act("forget-answer", async () => askForget(chosenRange())));
    $("forget-yes").addEventListener("click", () => act("forget-answer", forget));
    $("forget-no").addEventListener("click", () => {
      $("forget-confirm").hidden = true;
      $("forget-answer").textContent = "Nothing was forgotten.";
    });
    $("export-hour").addEventListener("click", () => act("export-answer", () => download(lastMinutes(60))));
    $("export-range").addEventListener("click", () => act("export-answer", () => download(chosenRange())));
    $("exclude-apps-form").addEventListener("submit", (event) => {
      event.preventDefault();
      addTo("excludeApps", "exclude-app", "app");
    });
    $("exclude-titles-form").addEventListener("submit", (event) => {
      event.preventDefault();
      addTo("excludeTitles", "exclude-title", "windows whose title matches");
    });
    $("retention-form").addEventListener("submit", (event) => {
      event.preventDefault();
      act("keep-answer", async () => {
        await change({ retentionDays: Number($("retention").value) });
        return "The agent's entries are kept " + controls.retentionDays + " days.";
      });
    });
  }

  // "never watch this app" beside an app of "What the agent sees"; once excluded, it says so.
  function appRow(summary, app) {
    if (!app || controls === null) return;
    if (excluded(app)) {
      summary.append(" ", el("span", { class: "tag excluded" }, "never watched"));
      return;
    }
    const button = el("button", { type: "button", class: "plain" }, "never watch this app");
    button.addEventListener("click", (event) => {
      event.preventDefault(); // not the row's open or close
      act("watch-answer", async () => {
        if (!excluded(app)) await change({ excludeApps: [...controls.excludeApps, app] });
        button.replaceWith(el("span", { class: "tag excluded" }, "never watched"));
        return "The relay never watches " + app + " from now on; what it saw before stays until you forget it.";
      });
    });
    summary.append(" ", button);
  }

  wire();
  CARDS.push({
    async start() {
      await act("privacy-answer", async () => {
        const found = await api("/privacy");
        showMatrix(found.mode, found.matrix);
        show(found);
        refreshContextSoon(); // its rows get their "never watch" controls
        return "";
      });
    },
    health(health) {
      if (!health.privacy || controls === null) return;
      const found = Object.assign({}, health.privacy);
      for (const field of ["excludeApps", "excludeTitles"]) if (found[field] === null) delete found[field];
      show(found);
    },
    appRow,
  });
})();
