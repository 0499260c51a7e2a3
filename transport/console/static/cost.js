// The Cost card: calls, tokens and known USD per hour over the last hours, stacked by model,
// and the totals per model since the counters began, from each /health (its agent section).
"use strict";

(() => {
  const CHART_HOURS = 12;
  const PALETTE = ["#1f6feb", "#bf3989", "#1a7f37", "#bc4c00", "#8250df", "#9a6700", "#57606a"];
  const models = new Map(); // each model's colour, kept while the page is open

  // A known amount of USD; "unknown" where the relay has no price (never "$0.00000").
  function usd(n) {
    if (n == null) return "unknown";
    return "$" + Number(n).toFixed(n >= 1 || n === 0 ? 2 : 5);
  }

  function colour(model) {
    if (!models.has(model)) models.set(model, PALETTE[models.size % PALETTE.length]);
    return models.get(model);
  }

  // One model's cost as far as it is known: "unknown" without a price, and a known amount with
  // "+ unknown" when some of its calls had none.
  function modelCost(m) {
    if (m.costUsd == null) return "unknown";
    return usd(m.costUsd) + (m.unpricedCalls ? " + unknown (" + times(m.unpricedCalls, "call") + ")" : "");
  }

  // The cost in all: the known amount, or "unknown" when no call had a price, saying how many
  // calls had none and the setting that prices them.
  function totalCost(models) {
    const unpriced = models.reduce((n, m) => n + (m.costUsd == null ? m.calls : m.unpricedCalls || 0), 0);
    const priced = models.filter((m) => m.costUsd != null);
    if (!unpriced) return "Cost in all: " + usd(priced.reduce((sum, m) => sum + m.costUsd, 0));
    const known = priced.length ? usd(priced.reduce((sum, m) => sum + m.costUsd, 0)) + " known, the rest unknown" : "unknown";
    return "Cost in all: " + known + " (" + times(unpriced, "call") + " at no known price: RELAY_PRICES can name one)";
  }

  function showCost(agent) {
    const byModel = agent.costByModel || {};
    $("cost-table").tBodies[0].replaceChildren(...Object.entries(byModel).map(([model, m]) =>
      el("tr", {}, el("th", { scope: "row" }, model), el("td", { class: "num" }, number(m.calls)),
        el("td", { class: "num" }, number(m.tokensIn)), el("td", { class: "num" }, number(m.tokensOut)),
        el("td", { class: "num" }, modelCost(m)))));
    const hours = agent.costByHour || [];
    const priced = new Set(Object.entries(byModel).filter(([, m]) => m.costUsd != null).map(([model]) => model));
    $("cost-meta").textContent = totalCost(Object.values(byModel)) + "; per hour, the last " + CHART_HOURS + " hours:";
    const now = Date.now();
    const start = now - (now % 3600000) - (CHART_HOURS - 1) * 3600000;
    const slots = Array.from({ length: CHART_HOURS }, (_, i) => start + i * 3600000);
    const found = new Map(hours.map((h) => [h.hour, h.models]));
    const models = [...new Set(hours.flatMap((h) => Object.keys(h.models)))];
    $("cost-chart").replaceChildren(
      chart("Calls per hour", slots, models, found, (f) => f.calls, number),
      chart("Tokens per hour", slots, models, found, (f) => f.tokensIn + f.tokensOut, number),
      !models.length || models.some((m) => priced.has(m))
        ? chart("USD per hour, of the calls with a known price", slots, models.filter((m) => priced.has(m)), found, (f) => f.costUsd, usd)
        : el("p", { class: "meta" }, "USD per hour: unknown, no model above has a known price."),
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


  CARDS.push({ health: (health) => showCost(health.agent || {}) });
})();
