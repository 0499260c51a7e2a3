// The Health card: each actor's state, restarts and last error, the agent's LLM path, the audio
// sources with the overlay's two switches, and the escalation waiting for an answer.
"use strict";

(() => {
  let pendingId = null; // the escalation the answer box answers

  function showHealth(health) {
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
    const waiting = agent.escalation && agent.escalation.pending;
    if (waiting && pendingId === null) loadPending().catch(showError);
    if (!waiting && pendingId !== null) showPending(null);
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
    pendingId = escalation ? escalation.id : null;
    $("respond").hidden = !escalation;
    $("escalation").replaceChildren(escalation
      ? el("div", {}, el("p", { class: "meta" }, clock(escalation.ts), " score " + escalation.score), el("p", { class: "digest" }, cut(escalation.message, 2000)))
      : el("p", { class: "meta" }, "Nothing waits for an answer."));
  }

  $("toggle-audio").addEventListener("click", () => command("toggle_audio").catch(showError));
  $("switch-device").addEventListener("click", () => command("switch_device").catch(showError));
  $("respond").addEventListener("submit", async (event) => {
    event.preventDefault();
    const response = $("response").value.trim();
    if (!response || pendingId === null) return;
    try {
      await post("/escalation/respond", { id: pendingId, response });
      $("respond-answer").textContent = "Answered.";
      $("response").value = "";
      await loadPending();
    } catch (error) {
      $("respond-answer").textContent = error.message;
      showError(error);
    }
  });

  CARDS.push({ start: () => loadPending().catch(showError), health: showHealth });
})();
