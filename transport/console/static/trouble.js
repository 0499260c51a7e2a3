// Trouble first: a banner naming what keeps the relay from its work and what fixes it, from
// each /health; the pill in the header says how many problems (console.js's showLink).
"use strict";

(() => {
  const SOURCES = { system: "system audio (AUDIO_SOURCE)", mic: "the microphone (MIC_SOURCE)" };

  // What is wrong, each as [what, how to fix it], from one /health: the model failing or
  // missing its key, a check of the started relay failing (sinain-relay doctor's, which name
  // their setting), an actor restarting or stopped, an audio capture or the speech service
  // failing, the store. The errors of the model and the speech service name their setting.
  function troubles(health) {
    const found = [];
    const agent = health.agent || {};
    const model = agent.local ? "The model on this machine" : "The model at " + (state.baseUrl || "AGENT_BASE_URL");
    if (agent.state === "degraded" || agent.state === "open") {
      const pause = agent.state === "open" ? "; the agent waits " + seconds(agent.circuitOpenForMs || 0) + " before it tries again" : "";
      found.push([model + " is failing (" + times(agent.consecutiveFailures, "failed call") + " in a row" + pause + ").",
        agent.lastError || "Check AGENT_BASE_URL, OPENROUTER_API_KEY and AGENT_MODEL: sinain-relay doctor checks each."]);
    }
    if (agent.state === "no_key") {
      found.push(["The agent is on but has no key, so it asks no model.",
        "Set OPENROUTER_API_KEY, or AGENT_BASE_URL to a model server on this machine (it needs no key)."]);
    }
    for (const check of health.checks || []) {
      if (check.verdict === "FAIL") found.push(["The " + check.name + " check failed: " + (check.found || "see sinain-relay doctor") + ".", sentence(check.remedy || "sinain-relay doctor says what to do.")]);
    }
    if (!health.ok) found.push(["Some of the relay's actors do not answer: " + (health.error || "") + ".", "The relay's log says why; restart the relay if it lasts."]);
    for (const [name, actor] of Object.entries(health.actors || {})) {
      if (actor.state === "backoff") found.push(["The " + name + " actor stopped; the relay restarts it in a moment (" + actor.restarts + " restarts so far).", actor.lastError || "Its last error is in the relay's log."]);
      else if (actor.state === "stopped") found.push(["The " + name + " actor stopped and is not restarted.", (actor.lastError ? actor.lastError + ". " : "") + "Restart the relay."]);
    }
    const audio = health.audio || { sources: {} };
    for (const [name, source] of Object.entries(audio.sources)) {
      const what = "Capture of " + (SOURCES[name] || name);
      const detail = source.lastStderr ? source.lastStderr + ". " : "";
      if (source.state === "failed") found.push([what + " stopped: it gave up after runs without audio.", detail + "Check " + (name === "mic" ? "MIC_SOURCE" : "AUDIO_SOURCE") + "; “Mute or resume audio” below tries again."]);
      else if (source.state === "backoff") found.push([what + " stopped; the relay starts it again in a moment.", detail + "Check " + (name === "mic" ? "MIC_SOURCE" : "AUDIO_SOURCE") + " if it keeps stopping."]);
    }
    const stt = audio.transcriber;
    if (stt && (stt.state === "degraded" || stt.state === "open")) {
      found.push(["The speech service is failing (" + times(stt.consecutiveFailures, "failed request") + " in a row).", stt.lastError || "Check STT_BASE_URL and STT_API_KEY: sinain-relay doctor checks them."]);
    }
    if (health.storage && health.storage.problem) found.push(["The store: " + health.storage.problem, "See the relay's log; the data directory is RELAY_DATA_DIR."]);
    return found;
  }

  function sentence(text) {
    return text.charAt(0).toUpperCase() + text.slice(1) + (/[.!?]$/.test(text) ? "" : ".");
  }

  // The banner is rewritten only when what it says changed: a screen reader announces each change.
  function showTroubles(found) {
    const said = JSON.stringify(found);
    if (said === state.troublesSaid) return;
    state.troublesSaid = said;
    state.troubles = found;
    $("trouble").hidden = !found.length;
    $("trouble-list").replaceChildren(...found.map(([what, fix]) =>
      el("li", {}, el("strong", {}, what), " ", el("span", { class: "fix" }, fix))));
    showLink();
  }

  CARDS.push({ health: (health) => showTroubles(troubles(health)) });
})();
