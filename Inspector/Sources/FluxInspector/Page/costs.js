// The Flux Inspector's costs: which actions are slow. The slowest commits of the log, listed
// slowest first, each a link that selects its row.
//
// Every line of the log is hostile (DESIGN.md rule 21): its durations are numbers the page
// checked, and its names are shown as text nodes only, never as HTML.
(function (root) {
  "use strict";

  const SLOWEST = 20;  // the commits listed

  // The `limit` slowest of `entries` that have a duration, slowest first (of two as slow, the
  // earlier first), given to `done`. In one pass, keeping the `limit` slowest so far in order:
  // O(n log limit).
  //
  // The page holds every entry of the log today, so they are picked from what it received. This
  // is the one place that picks them: when the server serves the rows in pages, it asks the
  // server here instead, and the answer comes later, which is why it is given to `done`.
  function slowest(entries, limit, done) {
    const list = [];
    for (const entry of entries) {
      const duration = entry.duration;
      if (typeof duration !== "number" || !Number.isFinite(duration)) continue;
      if (list.length === limit && duration <= list[limit - 1].duration) continue;
      let low = 0, high = list.length;
      while (low < high) {
        const middle = (low + high) >> 1;
        if (list[middle].duration >= duration) low = middle + 1; else high = middle;
      }
      list.splice(low, 0, entry);
      if (list.length > limit) list.pop();
    }
    done(list);
  }

  // Shows `list` (as `slowest` gives it) in `panel`, an `<ol>`: one item per commit, a link
  // that reads its duration, action and store, and calls `choose(entry)` when followed.
  function show(panel, list, choose, describe) {
    panel.replaceChildren();
    if (list.length === 0) {
      const none = document.createElement("li");
      none.className = "none";
      none.textContent = "No committed actions yet";
      panel.appendChild(none);
      return;
    }
    for (const entry of list) {
      const item = document.createElement("li");
      const link = document.createElement("a");
      link.href = "#line-" + entry.line;
      link.dataset.line = String(entry.line);
      const duration = document.createElement("span");
      duration.className = "num";
      duration.textContent = describe.duration(entry.duration);
      const action = document.createElement("span");
      action.className = "action";
      action.textContent = entry.label;
      const store = document.createElement("span");
      store.className = "store-tag";
      store.textContent = entry.store;
      link.append(duration, action, store);
      link.title = entry.label + " in " + entry.store + ", line " + entry.line + ": " + describe.duration(entry.duration);
      link.addEventListener("click", (click) => {
        click.preventDefault();
        choose(entry);
      });
      item.appendChild(link);
      panel.appendChild(item);
    }
  }

  root.FluxCosts = Object.freeze({ SLOWEST, slowest, show });
})(globalThis);
