// The Search card: words in the history (GET /agent/history?q=), each result linking to its
// moment (#t=<ms> in the address), the entries of the five minutes around it.
"use strict";

(() => {
  function entryRow(entry, at) {
    const link = el("a", { href: "#t=" + entry.ts }, clock(entry.ts));
    return el("li", { class: entry.ts === at ? "at" : null }, link, el("span", { class: "tag agent" }, "agent"),
      el("span", { class: "text" }, (entry.hud ? entry.hud + " — " : "") + cut(entry.digest || "", 500)));
  }

  // The moment shown belongs to an earlier search: a new one puts it away (and out of the address).
  function closeMoment() {
    $("moment").hidden = true;
    $("moment-list").replaceChildren();
    if (location.hash.startsWith("#t=")) history.replaceState(null, "", location.pathname + location.search);
  }

  async function search(words) {
    closeMoment();
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

  $("search").addEventListener("submit", (event) => {
    event.preventDefault();
    const words = $("q").value.trim();
    if (words) search(words).catch((error) => { $("search-meta").textContent = error.message; showError(error); });
  });
  window.addEventListener("hashchange", () => showMoment().catch(showError));
  CARDS.push({ start: () => showMoment().catch(showError) });
})();
