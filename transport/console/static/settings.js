// The Settings card: every setting POST /agent/config takes, as a form made from the API's own
// description (/openapi.json), with what the relay clamped noted beside its field.
"use strict";

(() => {
  const ALIASES = new Set(["maxAge"]); // settings the form does not show (another name's alias)
  let schema = null; // POST /agent/config's fields, from the API's description

  const ALIAS_OF = { maxAge: "maxAgeMs" }; // a clamped alias is noted on the field shown

  async function loadSettings() {
    const [answer, doc] = await Promise.all([api("/agent/config"), schema ? null : api("/openapi.json")]);
    if (doc) schema = doc.components.schemas.AgentConfigUpdate.properties;
    showSettings(answer.config, answer.clamped);
  }

  // What the relay did with a value it clamped: "raised to 5000 ms", "capped at 10000 ms".
  function clampNote(clamped, unit) {
    return (clamped.used > clamped.given ? "raised to " : "capped at ") + clamped.used + (unit ? " " + unit : "");
  }

  // The form, made from the API's description of POST /agent/config: each field's title as its
  // label, its unit beside it and its help below; a value the relay clamped says so.
  function showSettings(config, clamped) {
    state.baseUrl = config.baseUrl;
    const notes = new Map((clamped || []).map((c) => [ALIAS_OF[c.setting] || c.setting, c]));
    const fields = [];
    for (const [name, spec] of Object.entries(schema)) {
      if (ALIASES.has(name)) continue;
      const id = "setting-" + name;
      const unit = spec["x-unit"] || "";
      const input = settingInput(name, spec, config);
      input.dataset.kind = spec.enum ? "string" : spec.type;
      input.dataset.initial = input.type === "checkbox" ? String(input.checked) : input.value;
      input.setAttribute("aria-describedby", id + "-note " + id + "-help");
      const note = notes.has(name) ? clampNote(notes.get(name), unit) : "";
      fields.push(el("label", { for: id }, spec.title || name),
        el("div", { class: "field" }, input, unit ? el("span", { class: "unit" }, unit) : null,
          el("strong", { id: id + "-note", class: "note" }, note),
          el("p", { id: id + "-help", class: "help meta" }, spec.description || "")));
    }
    fields.push(el("button", { type: "submit" }, "Apply changes"));
    $("settings-form").replaceChildren(...fields);
  }

  function settingInput(name, spec, config) {
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
    return input;
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
      const answer = await post("/agent/config", changes);
      showSettings(answer.config, answer.clamped);
      const clamped = new Map(answer.clamped.map((c) => [ALIAS_OF[c.setting] || c.setting, c]));
      const applied = Object.keys(changes).map((name) => {
        const spec = schema[name];
        const note = clamped.has(name) ? " (" + clampNote(clamped.get(name), spec["x-unit"]) + ")" : "";
        return (spec.title || name) + note;
      });
      $("settings-answer").textContent = "Applied: " + applied.join(", ") + ".";
    } catch (error) {
      if (error instanceof TokenNeeded) return askToken();
      $("settings-answer").textContent = "Refused: " + error.message;
    }
  }

  $("settings-form").addEventListener("submit", applySettings);
  CARDS.push({ start: () => loadSettings().catch(showError) });
})();
