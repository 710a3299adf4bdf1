// The Flux Inspector's page: reads the log (from the server's /log, or from the data inside a
// self-contained file), shows it, and follows the server's /events while the log grows.
(function () {
  "use strict";

  const ROW = 26;           // the height of a row, in pixels, as in the style sheet's --row
  const OVERSCAN = 8;       // rows drawn above and below the visible ones
  const DIFF_LIMIT = 400;   // changes listed at most for one action

  const $ = (id) => document.getElementById(id);
  const ui = {
    source: $("source"), status: $("status"), follow: $("follow"), banner: $("banner"),
    store: $("filter-store"), action: $("filter-action"), outcome: $("filter-outcome"),
    search: $("search"), count: $("count"), rows: $("rows"), spacer: $("spacer"),
    slider: $("slider"), position: $("position"), empty: $("detail-empty"), detail: $("detail"),
    title: $("detail-title"), facts: $("detail-facts"), actionTree: $("detail-action"),
    stateTree: $("detail-state"), diff: $("detail-diff"),
    durations: $("chart-durations"), stores: $("chart-stores"),
  };

  // The model: every line of the log, the events they make (a global dispatch is one event),
  // and the events that pass the filters.
  let model;
  function emptyModel() {
    return {
      entries: [], events: [], byDispatch: new Map(), lastState: new Map(),
      stores: new Map(), actions: new Map(), errors: 0,
      end: 0, lines: 0, partial: false, path: "", file: "",
    };
  }
  let shown = [];           // indices into model.events, in order
  let selected = -1;        // index into model.events
  let drawn = { first: -1, last: -1, count: -1 };

  // Reading lines.

  function caseOf(action) {
    if (action !== null && typeof action === "object" && !Array.isArray(action)) {
      const keys = Object.keys(action);
      if (keys.length === 1) return keys[0];
    }
    if (typeof action === "string") return action;
    return Array.isArray(action) ? "[…]" : typeof action;
  }

  function short(value, limit) {
    let text = JSON.stringify(value);
    if (text === undefined) text = String(value);
    return text.length > limit ? text.slice(0, limit - 1) + "…" : text;
  }

  // `add(2)`, `edit(2, "Milk")`, `rename(title: "Milk")`, `clear`: an action as Swift writes it.
  function describeAction(action) {
    const name = caseOf(action);
    if (action === null || typeof action !== "object" || Array.isArray(action)) return short(action, 90);
    const payload = action[name];
    if (payload === null || typeof payload !== "object" || Array.isArray(payload)) {
      return name + "(" + short(payload, 80) + ")";
    }
    const keys = Object.keys(payload);
    if (keys.length === 0) return name;
    const positional = keys.every((key) => /^_\d+$/.test(key));
    const parts = keys.map((key) => (positional ? "" : key + ": ") + short(payload[key], 40));
    const text = name + "(" + parts.join(", ") + ")";
    return text.length > 120 ? text.slice(0, 119) + "…" : text;
  }

  function entryFrom(item) {
    const entry = { line: item.line, raw: item.raw, index: model.entries.length };
    if (item.error !== undefined) {
      entry.error = item.error;
      entry.outcome = "error";
      entry.store = "";
      return entry;
    }
    let fields;
    try {
      fields = JSON.parse(item.raw);
    } catch (problem) {
      entry.error = "not JSON to this page: " + problem.message;
      entry.outcome = "error";
      entry.store = "";
      return entry;
    }
    entry.store = String(fields.store);
    entry.time = String(fields.time);
    entry.outcome = fields.outcome;
    entry.duration = typeof fields.durationNanoseconds === "number" ? fields.durationNanoseconds : null;
    entry.action = fields.action;
    entry.actionCase = caseOf(fields.action);
    entry.label = describeAction(fields.action);
    entry.sequence = typeof fields.sequence === "number" ? fields.sequence : null;
    entry.hasState = Object.prototype.hasOwnProperty.call(fields, "state");
    if (entry.hasState) entry.state = fields.state;
    entry.holds = Array.isArray(fields.holds) ? fields.holds : [];
    entry.held = entry.holds.reduce((sum, hold) => sum + (Number(hold.nanoseconds) || 0), 0);
    entry.cancelledBy = typeof fields.cancelledBy === "string" ? fields.cancelledBy : null;
    entry.dispatch = typeof fields.dispatch === "string" ? fields.dispatch : null;
    return entry;
  }

  function add(item) {
    const entry = entryFrom(item);
    model.entries.push(entry);
    if (entry.error !== undefined) {
      model.errors += 1;
    } else {
      model.stores.set(entry.store, (model.stores.get(entry.store) || 0) + 1);
      model.actions.set(entry.actionCase, (model.actions.get(entry.actionCase) || 0) + 1);
      if (entry.hasState) {
        entry.before = model.lastState.has(entry.store) ? model.lastState.get(entry.store) : -1;
        model.lastState.set(entry.store, entry.index);
      }
    }
    const group = entry.dispatch !== null && entry.dispatch !== undefined ? model.byDispatch.get(entry.dispatch) : undefined;
    if (group !== undefined) {
      model.events[group].entries.push(entry.index);
      entry.event = group;
    } else {
      entry.event = model.events.length;
      model.events.push({ entries: [entry.index], index: model.events.length });
      if (entry.dispatch) model.byDispatch.set(entry.dispatch, entry.event);
    }
  }

  // Takes back the last entry: a line read before its line break came, read again now.
  function removeLast() {
    const entry = model.entries.pop();
    if (!entry) return;
    const event = model.events[entry.event];
    event.entries.pop();
    if (event.entries.length === 0) {
      model.events.pop();
      if (entry.dispatch) model.byDispatch.delete(entry.dispatch);
    }
    if (entry.error !== undefined) {
      model.errors -= 1;
      return;
    }
    decrement(model.stores, entry.store);
    decrement(model.actions, entry.actionCase);
    if (entry.hasState) {
      if (entry.before >= 0) model.lastState.set(entry.store, entry.before);
      else model.lastState.delete(entry.store);
    }
  }

  function decrement(map, key) {
    const count = (map.get(key) || 0) - 1;
    if (count > 0) map.set(key, count); else map.delete(key);
  }

  function ingest(document) {
    if (model.partial) removeLast();
    for (const item of document.entries) add(item);
    model.end = document.end;
    model.lines = document.lines;
    model.partial = document.partial;
    if (document.path) model.path = document.path;
    if (document.file) model.file = document.file;
  }

  // Filters.

  function fillSelect(select, counts) {
    const current = select.value;
    const names = Array.from(counts.keys()).sort((a, b) => a.localeCompare(b));
    const wanted = [select.options[0].textContent].concat(names);
    const have = Array.from(select.options).map((option) => option.textContent.replace(/ \(\d+\)$/, ""));
    if (wanted.length === have.length && wanted.every((name, i) => name === have[i])) {
      for (let i = 1; i < select.options.length; i += 1) {
        select.options[i].textContent = names[i - 1] + " (" + counts.get(names[i - 1]) + ")";
      }
      return;
    }
    while (select.options.length > 1) select.remove(1);
    for (const name of names) {
      const option = document.createElement("option");
      option.value = name;
      option.textContent = name + " (" + counts.get(name) + ")";
      select.appendChild(option);
    }
    select.value = names.includes(current) ? current : "";
  }

  function searchText(entry) {
    if (entry.search === undefined) entry.search = (entry.raw + " " + (entry.error || "")).toLowerCase();
    return entry.search;
  }

  function matches(entry, filter) {
    if (filter.store && entry.store !== filter.store) return false;
    if (filter.action && entry.actionCase !== filter.action) return false;
    if (filter.outcome === "held" ? !(entry.holds && entry.holds.length) : filter.outcome && entry.outcome !== filter.outcome) return false;
    if (filter.text && !searchText(entry).includes(filter.text)) return false;
    return true;
  }

  function currentFilter() {
    return {
      store: ui.store.value, action: ui.action.value, outcome: ui.outcome.value,
      text: ui.search.value.trim().toLowerCase(),
    };
  }

  function applyFilters() {
    const filter = currentFilter();
    const plain = !filter.store && !filter.action && !filter.outcome && !filter.text;
    shown = [];
    for (const event of model.events) {
      if (plain || event.entries.some((index) => matches(model.entries[index], filter))) shown.push(event.index);
    }
    drawn = { first: -1, last: -1, count: -1 };
    ui.spacer.style.height = shown.length * ROW + "px";
    // A selection that the filters hide is dropped.
    if (selected >= 0 && shown.indexOf(selected) < 0) selected = -1;
    updateCount();
    updateSlider();
    draw();
  }

  function updateCount() {
    const count = (value) => value.toLocaleString("en-US");
    const actions = model.entries.length - model.errors;
    const parts = [count(shown.length) + " of " + count(model.events.length) + " events"];
    parts.push(count(actions) + " actions", model.stores.size + (model.stores.size === 1 ? " store" : " stores"));
    if (model.errors) parts.push(model.errors + (model.errors === 1 ? " bad line" : " bad lines"));
    ui.count.textContent = parts.join(" · ");
  }

  // The timeline: only the rows in view are in the document.

  function draw() {
    const top = ui.rows.scrollTop;
    const height = ui.rows.clientHeight || 600;
    const first = Math.max(0, Math.floor(top / ROW) - OVERSCAN);
    const last = Math.min(shown.length, Math.ceil((top + height) / ROW) + OVERSCAN);
    if (first === drawn.first && last === drawn.last && shown.length === drawn.count) return;
    drawn = { first, last, count: shown.length };
    const fragment = document.createDocumentFragment();
    for (let position = first; position < last; position += 1) fragment.appendChild(rowFor(position));
    for (const row of Array.from(ui.rows.querySelectorAll(".row"))) row.remove();
    ui.rows.appendChild(fragment);
  }

  function span(className, text) {
    const element = document.createElement("span");
    if (className) element.className = className;
    if (text !== undefined) element.textContent = text;
    return element;
  }

  function badge(kind, text) {
    return span("badge " + kind, text);
  }

  function formatNanoseconds(value) {
    if (value === null || value === undefined) return "";
    if (value < 1e3) return value + " ns";
    if (value < 1e6) return (value / 1e3).toFixed(value < 1e4 ? 2 : 1) + " µs";
    if (value < 1e9) return (value / 1e6).toFixed(value < 1e7 ? 2 : 1) + " ms";
    return (value / 1e9).toFixed(2) + " s";
  }

  function rowFor(position) {
    const event = model.events[shown[position]];
    const entries = event.entries.map((index) => model.entries[index]);
    const first = entries[0];
    const row = document.createElement("div");
    row.className = "row" + (first.error !== undefined ? " error" : "") + (event.index === selected ? " selected" : "");
    row.style.top = position * ROW + "px";
    row.dataset.position = String(position);
    row.dataset.line = String(first.line);
    row.setAttribute("role", "option");
    row.setAttribute("aria-selected", event.index === selected ? "true" : "false");
    row.appendChild(span("seq", first.sequence !== null && first.sequence !== undefined ? String(first.sequence) : "L" + first.line));
    if (first.error !== undefined) {
      row.appendChild(span("time", ""));
      row.appendChild(span("", "line " + first.line));
      row.appendChild(span("action", first.error));
      const outcome = span("");
      outcome.appendChild(badge("error", "bad line"));
      row.appendChild(outcome);
      row.appendChild(span("num", ""));
      return row;
    }
    row.appendChild(span("time", first.time.length >= 23 ? first.time.slice(11, 23) : first.time));
    const stores = span("stores");
    for (const entry of entries) stores.appendChild(span("store-tag", entry.store));
    row.appendChild(stores);
    row.appendChild(span("action", first.label));
    const outcome = span("");
    if (entries.length > 1) outcome.appendChild(badge("dispatch", "×" + entries.length));
    const committed = entries.filter((entry) => entry.outcome === "committed").length;
    const cancelled = entries.filter((entry) => entry.outcome === "cancelled").length;
    if (committed) outcome.appendChild(badge("committed", entries.length > 1 ? committed + " committed" : "committed"));
    if (cancelled) outcome.appendChild(badge("cancelled", entries.length > 1 ? cancelled + " cancelled" : "cancelled"));
    const held = entries.reduce((sum, entry) => sum + entry.held, 0);
    if (entries.some((entry) => entry.holds.length)) outcome.appendChild(badge("held", "held " + formatNanoseconds(held)));
    row.appendChild(outcome);
    const durations = entries.map((entry) => entry.duration).filter((value) => value !== null);
    row.appendChild(span("num", durations.length ? formatNanoseconds(Math.max.apply(null, durations)) : ""));
    return row;
  }

  // Selection, the slider and the keys.

  function select(eventIndex, options) {
    selected = eventIndex;
    const position = shown.indexOf(eventIndex);
    if (position >= 0 && options && options.scroll) {
      const top = position * ROW;
      if (top < ui.rows.scrollTop) ui.rows.scrollTop = top;
      else if (top + ROW > ui.rows.scrollTop + ui.rows.clientHeight) ui.rows.scrollTop = top + ROW - ui.rows.clientHeight;
    }
    drawn = { first: -1, last: -1, count: -1 };
    draw();
    updateSlider();
    showDetail();
    drawCursor();
  }

  function selectPosition(position, byUser) {
    if (shown.length === 0) return;
    const clamped = Math.max(0, Math.min(shown.length - 1, position));
    if (byUser && clamped !== shown.length - 1) ui.follow.checked = false;
    select(shown[clamped], { scroll: true });
  }

  function updateSlider() {
    ui.slider.max = String(Math.max(0, shown.length - 1));
    ui.slider.disabled = shown.length === 0;
    const position = shown.indexOf(selected);
    if (position >= 0) ui.slider.value = String(position);
    const total = shown.length.toLocaleString("en-US");
    ui.position.textContent = shown.length ? (position >= 0 ? (position + 1).toLocaleString("en-US") : "–") + " / " + total : "0 / 0";
  }

  ui.rows.addEventListener("scroll", () => draw());
  window.addEventListener("resize", () => { drawn.count = -1; draw(); drawCharts(); });
  ui.rows.addEventListener("click", (click) => {
    const row = click.target.closest(".row");
    if (!row || row.dataset.position === undefined) return;
    selectPosition(Number(row.dataset.position), true);
    ui.rows.focus();
  });
  ui.slider.addEventListener("input", () => selectPosition(Number(ui.slider.value), true));
  document.addEventListener("keydown", (key) => {
    const target = key.target;
    if (target && (target.tagName === "INPUT" && target.type !== "range" && target.type !== "checkbox" || target.tagName === "SELECT")) return;
    if (target === ui.slider) return;  // the slider moves itself, and tells us by "input"
    const position = shown.indexOf(selected);
    const page = Math.max(1, Math.floor(ui.rows.clientHeight / ROW) - 1);
    let next;
    switch (key.key) {
      case "ArrowDown": case "ArrowRight": next = position < 0 ? 0 : position + 1; break;
      case "ArrowUp": case "ArrowLeft": next = position < 0 ? 0 : position - 1; break;
      case "PageDown": next = position + page; break;
      case "PageUp": next = position - page; break;
      case "Home": next = 0; break;
      case "End": next = shown.length - 1; break;
      default: return;
    }
    key.preventDefault();
    selectPosition(next, true);
  });
  for (const control of [ui.store, ui.action, ui.outcome]) control.addEventListener("change", () => applyFilters());
  let searchTimer = 0;
  ui.search.addEventListener("input", () => {
    clearTimeout(searchTimer);
    searchTimer = setTimeout(() => applyFilters(), 120);
  });
  ui.follow.addEventListener("change", () => { if (ui.follow.checked) selectPosition(shown.length - 1, false); });

  // The detail of the selected event: each of its lines, with its action, state and changes.

  function showDetail() {
    if (selected < 0 || !model.events[selected]) {
      ui.empty.hidden = false;
      ui.detail.hidden = true;
      return;
    }
    ui.empty.hidden = true;
    ui.detail.hidden = false;
    const entries = model.events[selected].entries.map((index) => model.entries[index]);
    const first = entries[0];
    ui.facts.replaceChildren();
    ui.actionTree.replaceChildren();
    ui.stateTree.replaceChildren();
    ui.diff.replaceChildren();
    if (first.error !== undefined) {
      ui.title.textContent = "Bad line " + first.line;
      fact("Error", first.error);
      const text = document.createElement("div");
      text.className = "error-text";
      text.textContent = first.raw;
      ui.actionTree.appendChild(text);
      ui.stateTree.appendChild(span("none", "—"));
      ui.diff.appendChild(span("none", "—"));
      return;
    }
    ui.title.textContent = first.label;
    if (entries.length > 1) fact("Dispatch", "one global dispatch to " + entries.length + " stores (" + first.dispatch + ")");
    else if (first.dispatch) fact("Dispatch", first.dispatch);
    for (const entry of entries) {
      const prefix = entries.length > 1 ? entry.store + ": " : "";
      if (entries.length === 1) fact("Store", entry.store);
      fact(prefix + "Outcome", entry.outcome + (entry.cancelledBy ? " by " + entry.cancelledBy : ""));
      if (entry.duration !== null) fact(prefix + "Commit", formatNanoseconds(entry.duration));
      for (const hold of entry.holds) fact(prefix + "Held by", String(hold.middleware) + " for " + formatNanoseconds(Number(hold.nanoseconds)));
    }
    fact("Time", first.time);
    fact(entries.length > 1 ? "Lines" : "Line", entries.map((entry) => entry.line).join(", ") + (first.sequence !== null ? "  (sequence " + entries.map((entry) => entry.sequence).join(", ") + ")" : ""));
    ui.actionTree.appendChild(tree(first.action, "", new Set()));
    for (const entry of entries) {
      const stateBox = entries.length > 1 ? section(ui.stateTree, entry.store) : ui.stateTree;
      const diffBox = entries.length > 1 ? section(ui.diff, entry.store) : ui.diff;
      if (!entry.hasState) {
        stateBox.appendChild(span("none", "This line has no state: the log was written without snapshots."));
        diffBox.appendChild(span("none", "—"));
        continue;
      }
      const before = entry.before >= 0 ? model.entries[entry.before].state : undefined;
      const changes = [];
      if (entry.before >= 0) diff(before, entry.state, "", changes);
      const changed = new Set(changes.map((change) => change.path));
      stateBox.appendChild(tree(entry.state, "", changed));
      showChanges(diffBox, entry, changes);
    }
  }

  function section(parent, title) {
    const box = document.createElement("div");
    const heading = document.createElement("div");
    heading.className = "store-tag";
    heading.textContent = title;
    box.appendChild(heading);
    parent.appendChild(box);
    return box;
  }

  function fact(name, value) {
    const term = document.createElement("dt");
    term.textContent = name;
    const detail = document.createElement("dd");
    detail.textContent = value;
    ui.facts.append(term, detail);
  }

  function showChanges(box, entry, changes) {
    if (entry.before < 0) {
      box.appendChild(span("none", "The first state of " + entry.store + " in this log: nothing to compare with."));
      return;
    }
    if (changes.length === 0) {
      box.appendChild(span("none", "No change."));
      return;
    }
    for (const change of changes.slice(0, DIFF_LIMIT)) {
      const line = document.createElement("div");
      line.className = "change";
      line.appendChild(span("path", change.path || "(the whole state)"));
      line.appendChild(document.createTextNode(" "));
      if (change.kind !== "added") line.appendChild(span("before", short(change.before, 80)));
      if (change.kind === "changed") line.appendChild(document.createTextNode(" → "));
      if (change.kind !== "removed") line.appendChild(span("after", short(change.after, 80)));
      if (change.kind !== "changed") line.appendChild(span("meta", " (" + change.kind + ")"));
      box.appendChild(line);
    }
    if (changes.length > DIFF_LIMIT) box.appendChild(span("none", "… and " + (changes.length - DIFF_LIMIT) + " more"));
  }

  function isObject(value) {
    return value !== null && typeof value === "object";
  }

  function join(path, key) {
    return path === "" ? String(key) : path + "." + key;
  }

  // The paths where `after` differs from `before`, each as deep as the difference goes.
  function diff(before, after, path, out) {
    if (out.length > DIFF_LIMIT) return;
    if (isObject(before) && isObject(after) && Array.isArray(before) === Array.isArray(after)) {
      const keys = Array.isArray(after)
        ? Array.from({ length: Math.max(before.length, after.length) }, (_, i) => i)
        : Array.from(new Set(Object.keys(before).concat(Object.keys(after))));
      for (const key of keys) {
        const inBefore = Object.prototype.hasOwnProperty.call(before, key);
        const inAfter = Object.prototype.hasOwnProperty.call(after, key);
        if (!inBefore) out.push({ path: join(path, key), kind: "added", after: after[key] });
        else if (!inAfter) out.push({ path: join(path, key), kind: "removed", before: before[key] });
        else diff(before[key], after[key], join(path, key), out);
      }
      return;
    }
    if (isObject(before) || isObject(after) ? JSON.stringify(before) !== JSON.stringify(after) : before !== after) {
      out.push({ path, kind: "changed", before, after });
    }
  }

  // A JSON value as a tree that opens and closes; the paths in `changed`, and what holds them,
  // highlighted.
  function tree(value, path, changed) {
    const root = document.createElement("div");
    node(root, null, value, path, changed, 0);
    return root;
  }

  function isChangedInside(path, changed) {
    if (changed.size === 0) return false;
    const prefix = path === "" ? "" : path + ".";
    for (const item of changed) if (item.startsWith(prefix) && item !== path) return true;
    return false;
  }

  function node(parent, key, value, path, changed, depth) {
    const isChanged = changed.has(path) && key !== null;
    if (isObject(value)) {
      const keys = Object.keys(value);
      const details = document.createElement("details");
      const inside = isChangedInside(path, changed);
      details.open = depth < 2 || inside;
      if (inside) details.classList.add("changed-inside");
      const summary = document.createElement("summary");
      if (key !== null) summary.appendChild(span("key", key + ": "));
      summary.appendChild(span("meta", Array.isArray(value) ? "[" + keys.length + "]" : "{" + keys.length + "}"));
      if (isChanged) summary.classList.add("changed");
      details.appendChild(summary);
      details.dataset.path = path;
      let filled = false;
      const fill = () => {
        if (filled) return;
        filled = true;
        for (const child of keys) node(details, child, value[child], join(path, child), changed, depth + 1);
      };
      if (details.open) fill(); else details.addEventListener("toggle", fill);
      parent.appendChild(details);
      return;
    }
    const leaf = document.createElement("div");
    leaf.className = "leaf" + (isChanged ? " changed" : "");
    leaf.dataset.path = path;
    if (key !== null) leaf.appendChild(span("key", key + ": "));
    const kind = typeof value === "string" ? "string" : typeof value === "number" ? "number" : "literal";
    leaf.appendChild(span(kind, JSON.stringify(value)));
    parent.appendChild(leaf);
  }

  // Charts, in SVG: commit durations over time, and actions per store.

  const SVG = "http://www.w3.org/2000/svg";
  function svg(name, attributes, text) {
    const element = document.createElementNS(SVG, name);
    for (const key in attributes) element.setAttribute(key, attributes[key]);
    if (text !== undefined) element.textContent = text;
    return element;
  }

  // The commits along the x axis in the order of the log, which is the order of time: a burst
  // of actions within one millisecond spreads out instead of piling up at one instant.
  let timeline = null;
  function drawCharts() {
    drawDurations();
    drawStores();
    drawCursor();
  }

  function drawDurations() {
    const chart = ui.durations;
    const width = Math.max(200, chart.clientWidth || 640);
    const height = Math.max(80, chart.clientHeight || 130);
    chart.setAttribute("viewBox", "0 0 " + width + " " + height);
    chart.replaceChildren();
    const left = 52, right = 8, top = 8, bottom = 18;
    const points = model.entries.filter((entry) => entry.duration !== null && entry.duration !== undefined);
    chart.appendChild(svg("line", { class: "axis", x1: left, y1: height - bottom, x2: width - right, y2: height - bottom }));
    chart.appendChild(svg("line", { class: "axis", x1: left, y1: top, x2: left, y2: height - bottom }));
    if (points.length === 0) {
      timeline = null;
      chart.appendChild(svg("text", { class: "label", x: left + 8, y: height / 2 }, "No committed actions yet"));
      return;
    }
    const span = width - left - right - 1;
    const x = (i) => left + (points.length === 1 ? span / 2 : (i / (points.length - 1)) * span);
    timeline = { points, x, top, bottom, height };
    // One column of pixels per bin: the longest commit in it, so that a spike is never lost.
    const bins = Math.max(1, Math.floor(span) + 1);
    const longest = new Array(bins).fill(-1);
    points.forEach((entry, i) => {
      const bin = Math.min(bins - 1, Math.round(x(i) - left));
      if (entry.duration > longest[bin]) longest[bin] = entry.duration;
    });
    const max = Math.max(1, Math.max.apply(null, longest));
    const y = (value) => height - bottom - (value / max) * (height - top - bottom);
    let path = "";
    longest.forEach((value, bin) => {
      if (value < 0) return;
      path += (path ? " L" : "M") + (left + bin + 0.5).toFixed(1) + " " + y(value).toFixed(1);
    });
    chart.appendChild(svg("path", { class: "line", d: path }));
    if (points.length <= 400) {
      points.forEach((entry, i) => {
        const dot = svg("circle", { class: "dot", cx: x(i).toFixed(1), cy: y(entry.duration).toFixed(1), r: 2.5 });
        dot.appendChild(svg("title", {}, entry.label + " in " + entry.store + ": " + formatNanoseconds(entry.duration)));
        chart.appendChild(dot);
      });
    }
    chart.appendChild(svg("text", { class: "label", x: 4, y: top + 8 }, formatNanoseconds(max)));
    chart.appendChild(svg("text", { class: "label", x: 4, y: height - bottom }, "0"));
    const clock = (entry) => (entry.time && entry.time.length >= 23 ? entry.time.slice(11, 23) : "");
    chart.appendChild(svg("text", { class: "label", x: left, y: height - 4 }, clock(points[0])));
    chart.appendChild(svg("text", { class: "label", x: width - right, y: height - 4, "text-anchor": "end" }, clock(points[points.length - 1])));
  }

  function drawCursor() {
    const old = ui.durations.querySelector(".cursor");
    if (old) old.remove();
    if (!timeline || selected < 0 || !model.events[selected]) return;
    // The selected action's place among the commits: the first commit at or after its line.
    const index = model.events[selected].entries[0];
    const points = timeline.points;
    let low = 0, high = points.length - 1;
    while (low < high) {
      const middle = (low + high) >> 1;
      if (points[middle].index < index) low = middle + 1; else high = middle;
    }
    const x = timeline.x(low);
    ui.durations.appendChild(svg("line", { class: "cursor", x1: x, y1: timeline.top, x2: x, y2: timeline.height - timeline.bottom }));
  }

  function drawStores() {
    const chart = ui.stores;
    const width = Math.max(160, chart.clientWidth || 360);
    const height = Math.max(80, chart.clientHeight || 130);
    chart.setAttribute("viewBox", "0 0 " + width + " " + height);
    chart.replaceChildren();
    const stores = Array.from(model.stores.entries()).sort((a, b) => b[1] - a[1]);
    if (stores.length === 0) {
      chart.appendChild(svg("text", { class: "label", x: 8, y: height / 2 }, "No actions yet"));
      return;
    }
    const shownStores = stores.slice(0, Math.max(1, Math.floor(height / 18)));
    const max = shownStores[0][1];
    const labelWidth = 96, countWidth = 48;
    const barHeight = Math.min(16, (height - 4) / shownStores.length - 3);
    shownStores.forEach(([name, count], i) => {
      const y = 2 + i * (barHeight + 3);
      const label = name.length > 14 ? name.slice(0, 13) + "…" : name;
      chart.appendChild(svg("text", { class: "label", x: 0, y: y + barHeight - 3 }, label));
      const length = Math.max(1, (count / max) * (width - labelWidth - countWidth));
      const bar = svg("rect", { class: "bar", x: labelWidth, y, width: length.toFixed(1), height: barHeight, rx: 2 });
      bar.appendChild(svg("title", {}, name + ": " + count + " actions"));
      chart.appendChild(bar);
      chart.appendChild(svg("text", { class: "label", x: labelWidth + length + 4, y: y + barHeight - 3 }, String(count)));
    });
  }

  // Loading, and live updates.

  function refresh(grew) {
    fillSelect(ui.store, model.stores);
    fillSelect(ui.action, model.actions);
    applyFilters();
    drawCharts();
    if (grew && ui.follow.checked && shown.length) {
      selectPosition(shown.length - 1, false);
      ui.rows.scrollTop = ui.rows.scrollHeight;
    } else {
      showDetail();
    }
  }

  function problem(message) {
    ui.banner.hidden = false;
    ui.banner.textContent = message;
  }

  function loaded(document, started) {
    const received = performance.now();
    model = emptyModel();
    selected = -1;
    ingest(document);
    ui.source.textContent = model.path;
    refresh(false);
    if (shown.length) selectPosition(ui.follow.checked ? shown.length - 1 : 0, false);
    if (ui.follow.checked) ui.rows.scrollTop = ui.rows.scrollHeight;
    window.fluxInspector.loadMilliseconds = performance.now() - started;
    window.fluxInspector.showMilliseconds = performance.now() - received;
    window.fluxInspector.ready = true;
    window.document.body.dataset.ready = "true";
  }

  let events = null;
  function follow() {
    if (events) events.close();
    // The file the page read goes with the offset: a server started again after the log
    // changed says `reset`, not lines from another file.
    events = new EventSource("events?from=" + model.end + "&line=" + (model.lines + 1) +
      "&file=" + encodeURIComponent(model.file));
    events.addEventListener("open", () => {
      ui.status.textContent = "live";
      ui.status.classList.add("live");
    });
    events.addEventListener("lines", (message) => {
      const document = JSON.parse(message.data);
      if (document.entries.length === 0 && !model.partial) return;
      const before = model.events.length;
      ingest(document);
      refresh(model.events.length !== before);
    });
    events.addEventListener("reset", () => {
      events.close();
      ui.status.textContent = "reloading: the log was cut short or replaced";
      setTimeout(load, 300);
    });
    events.addEventListener("error", () => {
      // Reconnect by hand, from what is read by now: the browser would ask again from the
      // offset of the first request.
      events.close();
      ui.status.textContent = "not connected: retrying";
      ui.status.classList.remove("live");
      setTimeout(follow, 1000);
    });
  }

  function load() {
    const started = performance.now();
    fetch("log", { cache: "no-store" })
      .then((response) => response.ok ? response.json() : response.text().then((text) => { throw new Error(text); }))
      .then((document) => {
        ui.banner.hidden = true;
        loaded(document, started);
        follow();
      })
      .catch((error) => {
        problem("Cannot load the log: " + error.message);
        setTimeout(load, 2000);
      });
  }

  // For tests and the curious: whether the log is shown, how long it took from asking for it,
  // and how long of that the page took to read and show it.
  window.fluxInspector = { ready: false, loadMilliseconds: null, showMilliseconds: null };
  const embedded = document.getElementById("flux-log");
  if (embedded) {
    const started = performance.now();
    ui.status.textContent = "saved page: no live updates";
    ui.follow.checked = false;
    ui.follow.disabled = true;
    try {
      loaded(JSON.parse(embedded.textContent), started);
    } catch (error) {
      problem("This page's log cannot be read: " + error.message);
    }
  } else {
    model = emptyModel();
    ui.status.textContent = "loading…";
    load();
  }
})();
