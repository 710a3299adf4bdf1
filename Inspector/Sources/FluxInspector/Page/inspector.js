// The Flux Inspector's page: reads the log (from the server's /log, or from the data inside a
// self-contained file), shows it, and follows the server's /events while the log grows.
//
// Every line of the log is hostile (DESIGN.md rule 21): it is read as the server reads it (a key
// twice in one object, or nesting deeper than 512, makes it a bad line), no code here recurses
// as deep as its input (trees, diffs and text are walked with a stack of their own, and no array
// is spread into arguments), and nothing of it is ever HTML: the page builds text nodes only.
(function () {
  "use strict";

  const ROW = 26;              // the height of a row, in pixels, as in the style sheet's --row
  const OVERSCAN = 8;          // rows drawn above and below the visible ones
  const DIFF_LIMIT = 400;      // changes listed at most for one action
  const TEXT_VIEWS = 20;       // long strings of one action shown by what changed in them
  const DEPTH_LIMIT = 512;     // the deepest nesting of a line, as the server's reader allows
  const SHOWN_STORES = 12;     // the stores of one global dispatch shown in the detail
  const ROW_STORES = 4;        // and in its row
  const SELECT_LIMIT = 500;    // the names listed at most in a filter
  const IDLE_SECONDS = 20;     // after this long without a new line, the log is idle
  const RETRY_MS = 2000;       // how long the page waits before asking a server that is gone
  const TALLEST = 1000000;     // the list's height at most, in pixels: Chromium lays out no element
                               // taller than about 33.5 million, and 1.29 million rows are that tall

  const $ = (id) => document.getElementById(id);
  const ui = {
    source: $("source"), status: $("status"), follow: $("follow"), banner: $("banner"),
    store: $("filter-store"), action: $("filter-action"), outcome: $("filter-outcome"),
    search: $("search"), count: $("count"), rows: $("rows"), spacer: $("spacer"),
    slider: $("slider"), position: $("position"), empty: $("detail-empty"), detail: $("detail"),
    title: $("detail-title"), facts: $("detail-facts"), actionTree: $("detail-action"),
    stateTree: $("detail-state"), diff: $("detail-diff"),
    durations: $("chart-durations"), stores: $("chart-stores"),
    session: $("session"), steer: $("steer"), steerApp: $("steer-app"), steerControls: $("steer-controls"),
    pause: $("pause"), importFile: $("import"), steerStore: $("steer-store"), present: $("present"),
    dispatchText: $("dispatch-text"), dispatch: $("dispatch"), readOnly: $("read-only"),
    dispatchError: $("dispatch-error"), steerResult: $("steer-result"), detailSteer: $("detail-steer"),
  };

  // The model: every line of the log, the events they make (a global dispatch is one event),
  // and the events that pass the filters.
  let model;
  function emptyModel() {
    return {
      entries: [], events: [], byDispatch: new Map(), lastState: new Map(),
      stores: new Map(), actions: new Map(), errors: 0, notes: 0, skipped: new Map(),
      session: 0, lastSequence: null,
      end: 0, lines: 0, partial: false, path: "", identity: null,
    };
  }
  let shown = [];           // indices into model.events, in order
  let selected = -1;        // index into model.events
  let drawn = { first: -1, last: -1, count: -1 };

  // Reading a line: JSON, strictly, as the server reads it.

  function LineError(message) {
    this.message = message;
  }

  const NUMBER = /-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?/y;
  const ESCAPES = { 34: "\"", 92: "\\", 47: "/", 98: "\b", 102: "\f", 110: "\n", 114: "\r", 116: "\t" };

  // The value of one line of JSON text. Unlike `JSON.parse`, which keeps the last of two values
  // of one key where the server's reader keeps the first, a key twice in one object is an error,
  // as is nesting deeper than the server reads. Keys are told apart as Swift tells strings apart
  // (canonically equivalent ones are the same key). One loop, with a stack of open arrays and
  // objects: no recursion.
  function readJSON(text) {
    let at = 0;
    const frames = [];
    const space = () => {
      for (;;) {
        const c = text.charCodeAt(at);
        if (c === 32 || c === 9 || c === 10 || c === 13) at += 1; else return;
      }
    };
    const fail = (what) => {
      throw new LineError("not JSON: " + what + " at character " + (at + 1));
    };
    // Where the innermost object is, for a message: the keys and indices that lead to it.
    const where = () => {
      const path = frames.slice(0, -1).map((frame) => frame.isArray ? String(frame.value.length) : frame.key);
      return path.length ? " (in " + path.join(".") + ")" : "";
    };
    const string = () => {
      at += 1;  // the opening quote
      let start = at;
      let out = "";
      for (;;) {
        const c = text.charCodeAt(at);
        if (c === 34) {
          out += text.slice(start, at);
          at += 1;
          return out;
        }
        if (c !== c) fail("a string that does not end");  // NaN: past the end
        if (c < 32) fail("a control character in a string");
        if (c === 92) {
          out += text.slice(start, at);
          const e = text.charCodeAt(at + 1);
          if (e === 117) {
            const hex = text.slice(at + 2, at + 6);
            if (!/^[0-9a-fA-F]{4}$/.test(hex)) fail("a bad \\u escape");
            out += String.fromCharCode(parseInt(hex, 16));
            at += 6;
          } else if (ESCAPES[e] !== undefined) {
            out += ESCAPES[e];
            at += 2;
          } else {
            fail("a bad escape");
          }
          start = at;
          continue;
        }
        at += 1;
      }
    };
    const key = (frame) => {
      space();
      if (text.charCodeAt(at) !== 34) fail("a key that is not a string");
      const name = string();
      space();
      if (text.charCodeAt(at) !== 58) fail("no colon after a key");
      at += 1;
      // The object itself tells the keys it has; a key with other than ASCII in it is also
      // compared in its canonical form.
      let twice = Object.prototype.hasOwnProperty.call(frame.value, name);
      if (!twice && /[^\x00-\x7f]/.test(name)) {
        const canonical = name.normalize("NFC");
        if (frame.canonical === undefined) {
          frame.canonical = new Set(Object.keys(frame.value).map((each) => each.normalize("NFC")));
        }
        twice = frame.canonical.has(canonical);
        frame.canonical.add(canonical);
      } else if (frame.canonical !== undefined) {
        frame.canonical.add(name);
      }
      if (twice) {
        throw new LineError("the key " + quote(name) + " appears twice in one object" + where());
      }
      frame.key = name;
    };
    for (;;) {
      space();
      let value;
      const c = text.charCodeAt(at);
      if (c === 123 || c === 91) {
        if (frames.length >= DEPTH_LIMIT) {
          throw new LineError("the line nests arrays and objects more than " + DEPTH_LIMIT + " deep");
        }
        at += 1;
        const isArray = c === 91;
        const frame = { isArray, value: isArray ? [] : {}, key: null };
        frames.push(frame);
        space();
        if (text.charCodeAt(at) === (isArray ? 93 : 125)) {
          at += 1;
          frames.pop();
          value = frame.value;
        } else {
          if (!isArray) key(frame);
          continue;
        }
      } else if (c === 34) {
        value = string();
      } else if (c === 116 && text.startsWith("true", at)) {
        at += 4;
        value = true;
      } else if (c === 102 && text.startsWith("false", at)) {
        at += 5;
        value = false;
      } else if (c === 110 && text.startsWith("null", at)) {
        at += 4;
        value = null;
      } else {
        NUMBER.lastIndex = at;
        const number = NUMBER.exec(text);
        if (number === null) fail(at >= text.length ? "the line ends early" : "an unexpected character");
        at += number[0].length;
        value = Number(number[0]);
      }
      // The value goes into the array or object that holds it; each that ends here ends too.
      for (;;) {
        const frame = frames[frames.length - 1];
        if (frame === undefined) {
          space();
          if (at < text.length) fail("text after the end");
          return value;
        }
        if (frame.isArray) frame.value.push(value);
        else if (frame.key === "__proto__") Object.defineProperty(frame.value, "__proto__", { value, enumerable: true, writable: true, configurable: true });
        else frame.value[frame.key] = value;
        space();
        const d = text.charCodeAt(at);
        if (d === 44) {
          at += 1;
          if (!frame.isArray) key(frame);
          break;
        }
        if (d !== (frame.isArray ? 93 : 125)) fail(frame.isArray ? "no comma or ] after a value" : "no comma or } after a value");
        at += 1;
        frames.pop();
        value = frame.value;
      }
    }
  }

  // `readJSON`, faster for most lines: the browser's own reader, and then a check that it kept
  // every key (a key twice in one object makes fewer keys than the text has) and nested no
  // deeper than the limit. A line with other than ASCII or a \u escape in it, or one that does
  // not pass, is read again by `readJSON`, which says why.
  function readLine(text) {
    if (/[^\x00-\x7f]|\\u/.test(text)) return readJSON(text);
    let value;
    try {
      value = JSON.parse(text);
    } catch (error) {
      return readJSON(text);
    }
    let keys = 0;
    let deepest = 0;
    const stack = [value, 0];
    while (stack.length) {
      const depth = stack.pop();
      const next = stack.pop();
      if (!isObject(next)) continue;
      if (depth + 1 > deepest) deepest = depth + 1;
      if (Array.isArray(next)) {
        for (const element of next) stack.push(element, depth + 1);
      } else {
        for (const key in next) {
          keys += 1;
          stack.push(next[key], depth + 1);
        }
      }
    }
    if (deepest > DEPTH_LIMIT) return readJSON(text);
    return keysWritten(text) === keys ? value : readJSON(text);
  }

  // How many strings followed by a colon `text` holds, in one loop over it: at least the number
  // of keys in it (a string value may hold such text too, never less). A regular expression
  // takes the stack's depth on a string of megabytes, and throws.
  function keysWritten(text) {
    let written = 0;
    let inString = false;
    let ended = false;  // a string ended, and only white space followed it
    for (let at = 0; at < text.length; at += 1) {
      const c = text.charCodeAt(at);
      if (inString) {
        if (c === 92) at += 1;
        else if (c === 34) {
          inString = false;
          ended = true;
        }
        continue;
      }
      if (c === 34) {
        inString = true;
      } else if (c === 58 && ended) {
        written += 1;
        ended = false;
      } else if (c !== 32 && c !== 9 && c !== 10 && c !== 13) {
        ended = false;
      }
    }
    return written;
  }

  // Text as Swift writes it.

  function isObject(value) {
    return value !== null && typeof value === "object";
  }

  // An object whose keys are all `_0`, `_1`…: the unlabeled values of an enum case.
  function isPositional(keys) {
    return keys.length > 0 && keys.every((key) => /^_[0-9]+$/.test(key));
  }

  function quote(text) {
    return "\"" + text.replace(/[\\"\u0000-\u001f\u007f]/g, (c) => {
      switch (c) {
        case "\\": return "\\\\";
        case "\"": return "\\\"";
        case "\n": return "\\n";
        case "\r": return "\\r";
        case "\t": return "\\t";
        default: return "\\u{" + c.charCodeAt(0).toString(16) + "}";
      }
    }) + "\"";
  }

  function scalar(value) {
    if (typeof value === "string") return quote(value);
    if (value === null) return "nil";
    return String(value);
  }

  function keyText(key) {
    return /^[A-Za-z_][A-Za-z0-9_]*$/.test(key) ? key : quote(key);
  }

  // `value` as one line of text, at most `limit` characters: `[1, 2]`, `{id: 2, title: "Milk"}`,
  // `(2, "Milk")` for unlabeled values. Walked with a stack, and it stops at the limit.
  function inline(value, limit) {
    const parts = [];
    let length = 0;
    const emit = (text) => {
      parts.push(text);
      length += text.length;
    };
    const frames = [];
    let next = value;
    let pending = true;
    while (length <= limit) {
      if (pending) {
        pending = false;
        if (!isObject(next)) {
          emit(scalar(next));
          continue;
        }
        const isArray = Array.isArray(next);
        const keys = isArray ? null : Object.keys(next);
        const kind = isArray ? "array" : isPositional(keys) ? "tuple" : "object";
        emit(kind === "array" ? "[" : kind === "tuple" ? "(" : "{");
        frames.push({ value: next, keys, kind, index: 0, count: isArray ? next.length : keys.length });
        continue;
      }
      const frame = frames[frames.length - 1];
      if (frame === undefined) break;
      if (frame.index >= frame.count) {
        emit(frame.kind === "array" ? "]" : frame.kind === "tuple" ? ")" : "}");
        frames.pop();
        continue;
      }
      if (frame.index > 0) emit(", ");
      if (frame.kind === "array") {
        next = frame.value[frame.index];
      } else {
        const key = frame.keys[frame.index];
        if (frame.kind === "object") emit(keyText(key) + ": ");
        next = frame.value[key];
      }
      pending = true;
      frame.index += 1;
    }
    const text = parts.join("");
    return text.length > limit ? text.slice(0, limit - 1) + "…" : text;
  }

  function caseOf(action) {
    if (isObject(action) && !Array.isArray(action)) {
      const keys = Object.keys(action);
      if (keys.length === 1) return keys[0];
    }
    if (typeof action === "string") return action;
    return Array.isArray(action) ? "[…]" : typeof action;
  }

  // The arguments of an enum case, as [label or null, value] pairs; null when the action is not
  // one case with its values.
  function argumentsOf(action) {
    if (!isObject(action) || Array.isArray(action)) return null;
    const keys = Object.keys(action);
    if (keys.length !== 1) return null;
    const payload = action[keys[0]];
    if (!isObject(payload)) return [[null, payload]];
    if (Array.isArray(payload)) return [[null, payload]];
    const labels = Object.keys(payload);
    const positional = isPositional(labels);
    return labels.map((label) => [positional ? null : label, payload[label]]);
  }

  // `add(2)`, `edit(2, "Milk")`, `rename(title: "Milk")`, `clear`: an action as Swift writes it.
  function describeAction(action, limit) {
    const parts = argumentsOf(action);
    if (parts === null) return inline(action, limit);
    const name = caseOf(action);
    if (parts.length === 0) return name;
    let text = name + "(";
    for (let i = 0; i < parts.length && text.length <= limit; i += 1) {
      if (i > 0) text += ", ";
      if (parts[i][0] !== null) text += keyText(parts[i][0]) + ": ";
      text += inline(parts[i][1], Math.max(8, limit - text.length));
    }
    text += ")";
    return text.length > limit ? text.slice(0, limit - 1) + "…" : text;
  }

  // Lines into entries, and entries into events.

  function text(value) {
    return typeof value === "string" ? value : null;
  }

  function count(value) {
    return typeof value === "number" && Number.isFinite(value) && value >= 0 ? value : null;
  }

  function badEntry(entry, message) {
    entry.error = message;
    entry.outcome = "error";
    entry.store = "";
    return entry;
  }

  function entryFrom(item) {
    const entry = { line: Number(item.line) || 0, raw: String(item.raw), index: model.entries.length };
    if (item.error !== undefined) return badEntry(entry, String(item.error));
    let fields;
    try {
      fields = readLine(entry.raw);
    } catch (problem) {
      return badEntry(entry, problem instanceof LineError ? problem.message : "this line cannot be read: " + problem);
    }
    if (!isObject(fields) || Array.isArray(fields)) return badEntry(entry, "not an action of the log: not a JSON object");
    for (const name of ["store", "time", "outcome"]) {
      if (text(fields[name]) === null) return badEntry(entry, "not an action of the log: \"" + name + "\" is missing or not text");
    }
    if (!Object.prototype.hasOwnProperty.call(fields, "action")) return badEntry(entry, "\"action\" is missing");
    entry.store = fields.store;
    entry.time = fields.time;
    entry.outcome = fields.outcome;
    entry.duration = count(fields.durationNanoseconds);
    entry.action = fields.action;
    entry.actionCase = caseOf(fields.action);
    entry.label = describeAction(fields.action, 160);
    entry.sequence = count(fields.sequence);
    entry.hasState = Object.prototype.hasOwnProperty.call(fields, "state");
    if (entry.hasState) entry.state = fields.state;
    if (!entry.hasState && Object.prototype.hasOwnProperty.call(fields, "stateMirror")) showMirror(entry, fields.stateMirror);
    entry.holds = [];
    entry.held = 0;
    if (Array.isArray(fields.holds)) {
      for (const hold of fields.holds) {
        if (!isObject(hold) || text(hold.middleware) === null || count(hold.nanoseconds) === null) continue;
        entry.holds.push({ middleware: hold.middleware, nanoseconds: hold.nanoseconds });
        entry.held += hold.nanoseconds;
      }
    }
    entry.cancelledBy = text(fields.cancelledBy);
    entry.dispatch = text(fields.dispatch);
    entry.steered = text(fields.steered);
    return entry;
  }

  // A state written through `Mirror` (`"stateMirror"`, of `snapshots: .mirror`): shown as the
  // state, read-only (a note says why, and no jump is offered), as plain values: a struct or an
  // object as its fields (an object that is met again with `"#": id`), an enum case as `.name`
  // or `{name: values}`, a tuple as its values, a collection as an array, a dictionary with text
  // keys as an object, an object met again as "→ Type #id", and each cut as "…". A node that is
  // not of a form the log writes is shown as it is. Iterative: the nesting comes from the log.
  function showMirror(entry, root) {
    entry.hasState = true;
    entry.mirror = true;
    entry.mirrorType = isObject(root) && text(root.type) !== null ? root.type : "the state";
    const referenced = new Set();
    const scan = [root];
    while (scan.length) {
      const node = scan.pop();
      if (!isObject(node)) continue;
      if (node.kind === "ref" && count(node.id) !== null) referenced.add(node.id);
      for (const key of Object.keys(node)) scan.push(node[key]);
    }
    const out = {};
    const work = [{ node: root, into: out, key: "state" }];
    while (work.length) {
      const { node, into, key } = work.pop();
      put(into, key, mirrorNode(node, referenced, work));
    }
    entry.state = out.state;
  }

  // Sets a key of an object made here, whatever the key (`__proto__` included), in order.
  function put(object, key, value) {
    Object.defineProperty(object, key, { value, enumerable: true, writable: true, configurable: true });
  }

  function mirrorNode(node, referenced, work) {
    if (!isObject(node) || Array.isArray(node) || typeof node.kind !== "string") return node;
    const type = text(node.type) !== null ? node.type : "";
    // A value of the node, shown once the work reaches it, at a key made now so the order stays.
    const later = (value, into, key) => {
      put(into, key, null);
      work.push({ node: value, into, key });
    };
    const list = (value) => (Array.isArray(value) ? value : []);
    switch (node.kind) {
      case "struct":
      case "class": {
        const out = {};
        if (node.kind === "class" && count(node.id) !== null && referenced.has(node.id)) put(out, "#", node.id);
        const fields = isObject(node.fields) && !Array.isArray(node.fields) ? node.fields : {};
        for (const name of Object.keys(fields)) later(fields[name], out, name);
        return out;
      }
      case "enum": {
        const name = "." + (text(node.case) !== null ? node.case : "?");
        if (!Object.prototype.hasOwnProperty.call(node, "payload")) return name;
        const out = {};
        later(node.payload, out, name);
        return out;
      }
      case "tuple": {
        const labels = list(node.labels);
        const out = {};
        list(node.elements).forEach((element, i) => later(element, out, typeof labels[i] === "string" && labels[i] !== "" ? labels[i] : "_" + i));
        return out;
      }
      case "collection":
      case "set": {
        const out = [];
        list(node.elements).forEach((element, i) => later(element, out, i));
        return out;
      }
      case "dictionary": {
        const entries = list(node.entries);
        const textKeys = entries.every((each) => isObject(each) && (typeof each.key === "string" || each.kind === "…"));
        const out = textKeys ? {} : [];
        entries.forEach((each, i) => {
          if (isObject(each) && each.kind === "…") later(each, out, textKeys ? "…" : i);
          else if (textKeys) later(each.value, out, each.key);
          else later(isObject(each) ? { kind: "tuple", elements: [each.key, each.value], labels: ["key", "value"] } : each, out, i);
        });
        return out;
      }
      case "ref":
        return "→ " + type + " #" + (count(node.id) !== null ? node.id : "?") + " (shown above)";
      case "value":
        return text(node.description) !== null ? node.description : type;
      case "…":
        if (node.reason === "count") return "… " + (count(node.omitted) !== null ? node.omitted.toLocaleString("en-US") + " more" : "more");
        if (node.reason === "depth") return "… " + type + ": nested deeper than the snapshot goes";
        if (node.reason === "size") return "… " + type + ": past the values one snapshot holds";
        return "…";
      default:
        return node;
    }
  }

  // A log may hold several sessions one after the other (`cat a.jsonl b.jsonl`): each numbers
  // its lines (`sequence`) and its global dispatches from 1. A line whose sequence is not past
  // the one before starts a session; a dispatch id groups lines of one session only, and a
  // store that a dispatch already reached starts another event, as one dispatch reaches each
  // store once.
  function add(item) {
    let entry;
    try {
      entry = entryFrom(item);
    } catch (problem) {
      entry = badEntry({ line: Number(item && item.line) || 0, raw: String(item && item.raw), index: model.entries.length },
        "this line cannot be shown: " + problem);
    }
    model.entries.push(entry);
    entry.previous = { session: model.session, lastSequence: model.lastSequence };
    if (entry.error !== undefined) {
      model.errors += 1;
    } else {
      if (entry.sequence !== null) {
        if (model.lastSequence !== null && entry.sequence <= model.lastSequence) model.session += 1;
        model.lastSequence = entry.sequence;
      }
      entry.session = model.session;
      model.stores.set(entry.store, (model.stores.get(entry.store) || 0) + 1);
      model.actions.set(entry.actionCase, (model.actions.get(entry.actionCase) || 0) + 1);
      if (entry.hasState) {
        const key = model.session + "\u0000" + entry.store;
        entry.before = model.lastState.has(key) ? model.lastState.get(key) : -1;
        model.lastState.set(key, entry.index);
      }
    }
    const key = entry.dispatch !== null && entry.dispatch !== undefined ? model.session + "\u0000" + entry.dispatch : null;
    const group = key !== null ? model.byDispatch.get(key) : undefined;
    if (group !== undefined && !model.events[group].stores.has(entry.store)) {
      const event = model.events[group];
      event.entries.push(entry.index);
      event.stores.add(entry.store);
      entry.event = group;
    } else {
      entry.event = model.events.length;
      model.events.push({ entries: [entry.index], index: model.events.length, stores: new Set([entry.store]) });
      if (key !== null) {
        entry.replacedGroup = group;
        model.byDispatch.set(key, entry.event);
      }
    }
  }

  // Takes back the last entry: a line read before its line break came, read again now.
  function removeLast() {
    const entry = model.entries.pop();
    if (!entry) return;
    const event = model.events[entry.event];
    event.entries.pop();
    event.stores.delete(entry.store);
    const session = model.session;
    model.session = entry.previous.session;
    model.lastSequence = entry.previous.lastSequence;
    if (event.entries.length === 0) {
      model.events.pop();
      // Every id groups, the empty one too: as `add` keyed it, so it is taken back.
      if (entry.dispatch !== null && entry.dispatch !== undefined) {
        const key = session + "\u0000" + entry.dispatch;
        if (entry.replacedGroup !== undefined) model.byDispatch.set(key, entry.replacedGroup);
        else model.byDispatch.delete(key);
      }
    }
    if (entry.error !== undefined) {
      model.errors -= 1;
      return;
    }
    decrement(model.stores, entry.store);
    decrement(model.actions, entry.actionCase);
    if (entry.hasState) {
      const key = session + "\u0000" + entry.store;
      if (entry.before >= 0) model.lastState.set(key, entry.before);
      else model.lastState.delete(key);
    }
  }

  function decrement(map, key) {
    const left = (map.get(key) || 0) - 1;
    if (left > 0) map.set(key, left); else map.delete(key);
  }

  function ingest(document) {
    if (!isObject(document) || !Array.isArray(document.entries)) throw new Error("the server sent no entries");
    if (model.partial) removeLast();
    for (const item of document.entries) add(isObject(item) ? item : { line: 0, error: "not an entry", raw: "" });
    if (count(document.end) !== null) model.end = document.end;
    if (count(document.lines) !== null) model.lines = document.lines;
    model.partial = document.partial === true;
    if (typeof document.path === "string" && document.path) model.path = document.path;
    if (typeof document.identity === "string") model.identity = document.identity;
  }

  // Filters, and search on the text as it reads: strings decoded, keys and values.

  // The choices of a filter: each name with its count, in the order of the names. A hostile
  // log may name 150,000 stores; a list that long costs the browser seconds to lay out and
  // helps nobody, so only the names with the most lines are listed, and the search finds the
  // others.
  function fillSelect(select, counts) {
    const current = select.value;
    let names = Array.from(counts.keys());
    const left = Math.max(0, names.length - SELECT_LIMIT);
    if (left > 0) names = names.sort((a, b) => counts.get(b) - counts.get(a)).slice(0, SELECT_LIMIT);
    if (current && counts.has(current) && !names.includes(current)) names.push(current);
    names.sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
    const have = [];
    for (let i = 1; i < select.options.length; i += 1) have.push(select.options[i].value);
    const wanted = left > 0 ? names.concat([""]) : names;
    if (wanted.length === have.length && wanted.every((name, i) => name === have[i])) {
      for (let i = 0; i < names.length; i += 1) select.options[i + 1].textContent = names[i] + " (" + counts.get(names[i]) + ")";
      if (left > 0) select.options[names.length + 1].textContent = "… " + left.toLocaleString("en-US") + " more: search by name";
      return;
    }
    while (select.options.length > 1) select.remove(1);
    const fragment = document.createDocumentFragment();
    for (const name of names) {
      const option = document.createElement("option");
      option.value = name;
      option.textContent = name + " (" + counts.get(name) + ")";
      fragment.appendChild(option);
    }
    if (left > 0) {
      const option = document.createElement("option");
      option.value = "";
      option.disabled = true;
      option.textContent = "… " + left.toLocaleString("en-US") + " more: search by name";
      fragment.appendChild(option);
    }
    select.appendChild(fragment);
    select.value = counts.has(current) ? current : "";
  }

  // Each key and each scalar of `value`, as text, in order: what a search looks through.
  function words(value, out) {
    const stack = [value];
    while (stack.length) {
      const next = stack.pop();
      if (!isObject(next)) {
        out.push(next === null ? "nil" : String(next));
        continue;
      }
      if (Array.isArray(next)) {
        for (let i = next.length - 1; i >= 0; i -= 1) stack.push(next[i]);
        continue;
      }
      const keys = Object.keys(next);
      for (let i = keys.length - 1; i >= 0; i -= 1) {
        stack.push(next[keys[i]]);
        if (!/^_[0-9]+$/.test(keys[i])) stack.push(keys[i]);
      }
    }
    return out;
  }

  function searchText(entry) {
    if (entry.search === undefined) {
      if (entry.error !== undefined) {
        entry.search = { head: (entry.raw + "\n" + entry.error).toLowerCase(), state: "" };
      } else {
        const head = [entry.store, entry.outcome, entry.label, entry.cancelledBy || ""];
        for (const hold of entry.holds) head.push(hold.middleware);
        words(entry.action, head);
        entry.search = {
          head: head.join("\n").toLowerCase(),
          state: entry.hasState ? words(entry.state, []).join("\n").toLowerCase() : "",
        };
      }
    }
    return entry.search;
  }

  // Where in the state of `entry` the search text is: the path of the first key or value that
  // holds it, or null.
  function foundAt(entry, query) {
    if (!query || !entry.hasState) return null;
    if (entry.foundQuery === query) return entry.foundPath;
    let path = null;
    // In the order of the text: a key before its value, an element before the next.
    const stack = [{ value: entry.state, path: "", isKey: false }];
    while (stack.length) {
      const next = stack.pop();
      if (next.isKey) {
        path = next.path;
        break;
      }
      if (!isObject(next.value)) {
        if ((next.value === null ? "nil" : String(next.value)).toLowerCase().includes(query)) {
          path = next.path;
          break;
        }
        continue;
      }
      const keys = Array.isArray(next.value) ? null : Object.keys(next.value);
      const size = keys === null ? next.value.length : keys.length;
      for (let i = size - 1; i >= 0; i -= 1) {
        const key = keys === null ? i : keys[i];
        const child = join(next.path, key);
        stack.push({ value: next.value[key], path: child, isKey: false });
        if (keys !== null && key.toLowerCase().includes(query)) stack.push({ path: child, isKey: true });
      }
    }
    entry.foundQuery = query;
    entry.foundPath = path;
    return path;
  }

  // How `entry` matches the search: 0 not at all, 1 in its action or fields, 2 in its state only.
  function searchMatch(entry, query) {
    const search = searchText(entry);
    if (search.head.includes(query)) return 1;
    return search.state.includes(query) ? 2 : 0;
  }

  function matches(entry, filter) {
    if (filter.store && entry.store !== filter.store) return false;
    if (filter.action && entry.actionCase !== filter.action) return false;
    if (filter.outcome === "held" ? !(entry.holds && entry.holds.length) : filter.outcome && entry.outcome !== filter.outcome) return false;
    if (filter.text && searchMatch(entry, filter.text) === 0) return false;
    return true;
  }

  function currentFilter() {
    return {
      store: ui.store.value, action: ui.action.value, outcome: ui.outcome.value,
      text: ui.search.value.trim().toLowerCase(),
    };
  }

  function applyFilters() {
    if (paged) return applyPagedFilters();
    const filter = currentFilter();
    const plain = !filter.store && !filter.action && !filter.outcome && !filter.text;
    shown = [];
    for (const event of model.events) {
      if (plain || event.entries.some((index) => matches(model.entries[index], filter))) shown.push(event.index);
    }
    drawn = { first: -1, last: -1, count: -1 };
    ui.spacer.style.height = Math.min(TALLEST, shown.length * ROW) + "px";
    updateCount();
    // A selection that the filters hide moves to the nearest event they show: the first after
    // it, or the last before it.
    if (selected >= 0 && positionOf(selected) < 0) {
      const after = firstShownFrom(selected);
      select(after < shown.length ? shown[after] : shown.length ? shown[shown.length - 1] : -1, { scroll: true });
    } else {
      updateSlider();
      draw();
      showDetail();
    }
  }

  // The position in `shown` of an event, or -1: `shown` is in the order of the log.
  function positionOf(eventIndex) {
    if (paged) return pagedPositionOf(eventIndex);
    const position = firstShownFrom(eventIndex);
    return position < shown.length && shown[position] === eventIndex ? position : -1;
  }

  function firstShownFrom(eventIndex) {
    let low = 0, high = shown.length;
    while (low < high) {
      const middle = (low + high) >> 1;
      if (shown[middle] < eventIndex) low = middle + 1; else high = middle;
    }
    return low;
  }

  function updateCount() {
    const number = (value) => value.toLocaleString("en-US");
    const actions = (paged ? paged.entries : model.entries.length) - model.errors - model.notes;
    const parts = [number(shown.length) + " of " + number(paged ? paged.events : model.events.length) + " events"];
    parts.push(number(actions) + " actions", number(model.stores.size) + (model.stores.size === 1 ? " store" : " stores"));
    if (model.errors) parts.push(number(model.errors) + (model.errors === 1 ? " bad line" : " bad lines"));
    ui.count.textContent = parts.join(" · ");
    ui.count.title = "An event is one row: an action, or one global dispatch to several stores.";
  }

  // The timeline: only the rows in view are in the document. A list taller than TALLEST pixels
  // is scrolled in proportion: the top of the scroll bar is the first row, its bottom the last,
  // and the rows in view are placed where the view is; so every row is reached, by the keys, the
  // slider, the scroll bar or a search, however long the log.

  // The position (with its fraction) of the row at the top of the view.
  function topPosition() {
    const total = shown.length * ROW;
    const view = ui.rows.clientHeight || 600;
    if (total <= TALLEST) return ui.rows.scrollTop / ROW;
    const room = TALLEST - view;
    return room > 0 ? (Math.min(ui.rows.scrollTop, room) / room) * (total - view) / ROW : 0;
  }

  // Scrolls so that position `top` (with its fraction) is at the top of the view.
  function scrollToPosition(top) {
    const total = shown.length * ROW;
    const view = ui.rows.clientHeight || 600;
    if (total <= TALLEST) {
      ui.rows.scrollTop = top * ROW;
      return;
    }
    ui.rows.scrollTop = Math.round((Math.max(0, top * ROW) / (total - view)) * (TALLEST - view));
  }

  function draw() {
    const height = ui.rows.clientHeight || 600;
    const top = topPosition();
    const first = Math.max(0, Math.floor(top) - OVERSCAN);
    const last = Math.min(shown.length, Math.ceil(top + height / ROW) + OVERSCAN);
    // Rows in proportion move with every pixel scrolled: they are placed again.
    const at = shown.length * ROW > TALLEST ? ui.rows.scrollTop : 0;
    if (first === drawn.first && last === drawn.last && shown.length === drawn.count && at === drawn.at) return;
    drawn = { first, last, count: shown.length, at };
    // The number column is as wide as the largest number it can show: 1,500,000 is cut at the
    // width of five digits.
    const largest = shown.length ? Math.max(shown.length, shown[shown.length - 1] + 1) : 0;
    ui.rows.parentElement.style.setProperty("--seq-digits", String(Math.max(5, String(largest).length)));
    if (paged) askRows(first, last);
    const fragment = document.createDocumentFragment();
    const query = currentFilter().text;
    const offset = ui.rows.scrollTop - top * ROW;
    for (let position = first; position < last; position += 1) {
      const row = rowFor(position, query);
      row.style.top = Math.round(position * ROW + offset) + "px";
      fragment.appendChild(row);
    }
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

  function clock(time) {
    return time && time.length >= 23 ? time.slice(11, 23) : time || "";
  }

  function rowFor(position, query) {
    const event = model.events[shown[position]];
    if (paged && (event === undefined || model.entries[event.entries[0]] === undefined)) return loadingRow(position);
    const first = model.entries[event.entries[0]];
    const row = document.createElement("div");
    row.className = "row" + (first.error !== undefined ? " error" : "") + (event.index === selected ? " selected" : "");
    row.style.top = position * ROW + "px";
    row.dataset.position = String(position);
    row.dataset.line = String(first.line);
    row.setAttribute("role", "option");
    row.setAttribute("aria-selected", event.index === selected ? "true" : "false");
    row.appendChild(span("seq", String(event.index + 1)));
    if (first.note !== undefined) return noteRow(row, first);
    if (first.imported) row.classList.add("imported");
    if (isSkipped(first)) row.classList.add("skipped");
    if (first.error !== undefined) {
      row.appendChild(span("time", ""));
      row.appendChild(span("stores", "line " + first.line));
      const message = span("action", first.error);
      message.title = first.error;
      row.appendChild(message);
      const outcome = span("outcome");
      outcome.appendChild(badge("error", "bad line"));
      row.appendChild(outcome);
      row.appendChild(span("num", ""));
      return row;
    }
    row.appendChild(span("time", clock(first.time)));
    const stores = span("stores");
    const size = event.size || event.entries.length;
    for (let i = 0; i < Math.min(size, ROW_STORES); i += 1) stores.appendChild(span("store-tag", model.entries[event.entries[i]].store));
    if (size > ROW_STORES) stores.appendChild(span("more", "+" + (size - ROW_STORES).toLocaleString("en-US")));
    row.appendChild(stores);
    const action = span("action", first.label);
    action.title = first.label;
    if (first.steered !== null && first.steered !== undefined) {
      action.insertBefore(badge("steered", steeredWords(first.steered)), action.firstChild);
    } else if (first.imported) {
      action.insertBefore(badge("steered", "imported"), action.firstChild);
    }
    if (isSkipped(first)) action.insertBefore(badge("skipped", "skipped"), action.firstChild);
    if (query) {
      // Where the search found this event, when it is not in what the row shows.
      for (const index of event.entries) {
        const entry = model.entries[index];
        if (searchMatch(entry, query) === 1) break;
        const path = foundAt(entry, query);
        if (path !== null) {
          action.insertBefore(span("found-hint", "in state at " + (path || "the top")), action.firstChild);
          break;
        }
      }
    }
    row.appendChild(action);
    const outcome = span("outcome");
    let committed = 0, cancelled = 0, held = 0, holds = false, longest = null;
    for (const index of event.entries) {
      const entry = model.entries[index];
      if (entry.outcome === "committed") committed += 1;
      if (entry.outcome === "cancelled") cancelled += 1;
      held += entry.held;
      if (entry.holds.length) holds = true;
      if (entry.duration !== null && (longest === null || entry.duration > longest)) longest = entry.duration;
    }
    if (size > 1) outcome.appendChild(badge("dispatch", "×" + size.toLocaleString("en-US")));
    if (committed) outcome.appendChild(badge("committed", size > 1 ? committed.toLocaleString("en-US") + " committed" : "committed"));
    if (cancelled) outcome.appendChild(badge("cancelled", size > 1 ? cancelled.toLocaleString("en-US") + " cancelled" : "cancelled"));
    if (holds) outcome.appendChild(badge("held", "held " + formatNanoseconds(held)));
    outcome.title = outcome.textContent;
    row.appendChild(outcome);
    row.appendChild(span("num", longest !== null ? formatNanoseconds(longest) : ""));
    return row;
  }

  // Selection, the slider and the keys.

  function select(eventIndex, options) {
    selected = eventIndex;
    const position = options && options.position !== undefined ? options.position : positionOf(eventIndex);
    if (position >= 0 && options && options.scroll) {
      const top = topPosition();
      const rows = (ui.rows.clientHeight || 600) / ROW;
      if (position < top) scrollToPosition(position);
      else if (position + 1 > top + rows) scrollToPosition(position + 1 - rows);
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
    if (paged) paged.selected = clamped;
    select(shown[clamped], { scroll: true, position: clamped });
  }

  function updateSlider() {
    ui.slider.max = String(Math.max(0, shown.length - 1));
    ui.slider.disabled = shown.length === 0;
    const position = positionOf(selected);
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
    const position = positionOf(selected);
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

  // The detail of the selected event: each of its lines, with its action, changes and state.

  function showDetail() {
    if (paged && selected >= 0 && !pagedDetailReady(selected)) return;
    if (selected < 0 || !model.events[selected]) {
      ui.empty.hidden = false;
      ui.detail.hidden = true;
      return;
    }
    ui.empty.hidden = true;
    ui.detail.hidden = false;
    const event = model.events[selected];
    const first = model.entries[event.entries[0]];
    ui.facts.replaceChildren();
    ui.actionTree.replaceChildren();
    ui.stateTree.replaceChildren();
    ui.diff.replaceChildren();
    showSteering(event);
    if (first.note !== undefined) {
      showNote(first);
      return;
    }
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
    const size = event.size || event.entries.length;
    // A dispatch to very many stores shows the first of them; a store filter shows its own.
    const filter = currentFilter();
    let indices = event.entries.slice(0, SHOWN_STORES);
    if (filter.store && size > SHOWN_STORES) {
      const own = event.entries.filter((index) => model.entries[index].store === filter.store);
      indices = own.concat(indices.filter((index) => !own.includes(index))).slice(0, SHOWN_STORES);
    }
    const entries = indices.map((index) => model.entries[index]);
    ui.title.textContent = first.label;
    if (first.dispatch !== null) {
      if (size > 1) {
        const names = entries.map((entry) => entry.store).join(", ");
        fact("Global dispatch", "to " + size.toLocaleString("en-US") + " stores: " + names + (size > entries.length ? ", …" : ""));
      } else {
        fact("Global dispatch", "to 1 store");
      }
      fact("Dispatch id", first.dispatch);
    }
    if (first.steered !== null && first.steered !== undefined) fact("Steered", steeredWords(first.steered));
    if (first.imported) fact("Imported", "line " + first.line + " of a session file, taken by the app");
    if (isSkipped(first)) fact("Skipped", "from the Inspector: the state is worked out without it");
    for (const entry of entries) {
      const prefix = size > 1 ? entry.store + ": " : "";
      if (size === 1) fact("Store", entry.store);
      fact(prefix + "Outcome", entry.outcome + (entry.cancelledBy ? " by " + entry.cancelledBy : ""));
      if (entry.duration !== null) fact(prefix + "Commit", formatNanoseconds(entry.duration));
      for (const hold of entry.holds) fact(prefix + "Held by", hold.middleware + " for " + formatNanoseconds(hold.nanoseconds));
    }
    if (size > entries.length) fact("Not shown", (size - entries.length).toLocaleString("en-US") + " more stores: choose one with the Store filter or the search");
    fact("Time", first.time);
    const lines = entries.map((entry) => entry.line).join(", ") + (size > entries.length ? ", …" : "");
    const sequences = first.sequence !== null ? "  (sequence " + entries.map((entry) => entry.sequence).join(", ") + (size > entries.length ? ", …" : "") + ")" : "";
    fact(size > 1 ? "Lines" : "Line", lines + sequences);
    const query = filter.text;
    const found = new Map();
    if (query) {
      for (const entry of entries) {
        if (searchMatch(entry, query) !== 2) continue;
        const path = foundAt(entry, query);
        if (path === null) continue;
        found.set(entry, path);
        fact((size > 1 ? entry.store + ": " : "") + "Search", quote(query) + " found in state at " + (path || "the top"));
      }
    }
    ui.actionTree.appendChild(actionView(first.action));
    for (const entry of entries) {
      const stateBox = size > 1 ? section(ui.stateTree, entry.store) : ui.stateTree;
      const diffBox = size > 1 ? section(ui.diff, entry.store) : ui.diff;
      if (!entry.hasState) {
        stateBox.appendChild(span("none", "This line has no state: the log was written without snapshots."));
        diffBox.appendChild(span("none", "—"));
        continue;
      }
      const changes = entry.before >= 0 ? diff(model.entries[entry.before].state, entry.state) : [];
      if (entry.mirror) stateBox.appendChild(span("none mirror-note", "Read-only: " + entry.mirrorType + " as Mirror shows it (the log was written with snapshots: .mirror, for a state that is not Encodable). It is there to be seen: there is no jump to it, and no time travel or test from it."));
      stateBox.appendChild(tree(entry.state, marksOf(changes, found.has(entry) ? found.get(entry) : null)));
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
      box.appendChild(span("none", "The first state of " + entry.store + " in this session: nothing to compare with."));
      return;
    }
    if (changes.length === 0) {
      box.appendChild(span("none", "No change."));
      return;
    }
    let texts = 0;
    for (const change of changes.slice(0, DIFF_LIMIT)) {
      const line = document.createElement("div");
      line.className = "change";
      line.appendChild(span("path", change.path || "(the whole state)"));
      line.appendChild(document.createTextNode(" "));
      if (change.kind === "changed" && FluxDiff.isLongText(change.before, change.after) && (texts += 1) <= TEXT_VIEWS) {
        // A long string: what changed in it, word by word, with the text around (in the first
        // TEXT_VIEWS long strings: each costs a comparison of its own).
        line.appendChild(FluxDiff.textView(change.before, change.after));
        box.appendChild(line);
        continue;
      }
      if (change.kind !== "added" && change.kind !== "moved") line.appendChild(span("before", inline(change.before, 80)));
      if (change.kind === "changed") line.appendChild(document.createTextNode(" → "));
      if (change.kind !== "removed") line.appendChild(span("after", inline(change.after, 80)));
      if (change.kind === "moved") line.appendChild(span("meta", " (moved from " + change.from + ")"));
      else if (change.kind !== "changed") line.appendChild(span("meta", " (" + change.kind + ")"));
      box.appendChild(line);
    }
    if (changes.length > DIFF_LIMIT) box.appendChild(span("none", "… and more: only the first " + DIFF_LIMIT + " changes are listed"));
  }

  function join(path, key) {
    return path === "" ? String(key) : path + "." + key;
  }

  // What changed from `before` to `after`, at most DIFF_LIMIT paths: diff.js (FluxDiff) works it
  // out, in time near-linear in the size of the states.
  function diff(before, after) {
    return FluxDiff.diff(before, after, DIFF_LIMIT);
  }

  // What the state tree marks: the paths that changed or came (`changed`), every path above a
  // change (`inside`, opened), and where a search found its text (`found`, opened to).
  function marksOf(changes, found) {
    const changed = new Set();
    const inside = new Set();
    const above = (path) => {
      let cut = path.lastIndexOf(".");
      while (cut > 0) {
        const parent = path.slice(0, cut);
        if (inside.has(parent)) return;
        inside.add(parent);
        cut = parent.lastIndexOf(".");
      }
    };
    for (const change of changes) {
      if (change.kind !== "removed") changed.add(change.path);
      above(change.path);
      if (change.path !== "") inside.add("");
    }
    const open = new Set();
    if (found !== null) {
      let cut = found.lastIndexOf(".");
      open.add("");
      while (cut > 0) {
        open.add(found.slice(0, cut));
        cut = found.lastIndexOf(".", cut - 1);
      }
    }
    return { changed, inside, found, open };
  }

  // The action as Swift writes it: `add(100)`, `rename(id: 2, title: "Rye bread")`, one line
  // when its values are plain; a tree of its values, labeled as Swift labels them, when not.
  function actionView(action) {
    const box = document.createElement("div");
    const parts = argumentsOf(action);
    const plain = parts !== null && parts.every(([, value]) => !isObject(value));
    if (parts === null && isObject(action)) return tree(action, marksOf([], null));
    if (parts === null || plain) {
      const line = document.createElement("div");
      line.className = "call";
      line.textContent = describeAction(action, 4000);
      box.appendChild(line);
      return box;
    }
    const details = document.createElement("details");
    details.open = true;
    const summary = document.createElement("summary");
    summary.appendChild(span("call", caseOf(action) + "(…)"));
    details.appendChild(summary);
    const work = [];
    for (let i = parts.length - 1; i >= 0; i -= 1) {
      work.push({ parent: details, key: parts[i][0], value: parts[i][1], path: parts[i][0] === null ? "_" + i : parts[i][0], depth: 1 });
    }
    build(work, marksOf([], null));
    box.appendChild(details);
    return box;
  }

  // A JSON value as a tree that opens and closes, built with a stack: each node is a leaf, or a
  // `<details>` whose children are built when it opens.
  function tree(value, marks) {
    const root = document.createElement("div");
    build([{ parent: root, key: null, value, path: "", depth: 0 }], marks);
    return root;
  }

  function build(work, marks) {
    while (work.length) {
      const next = work.pop();
      if (next.range) {
        buildRange(work, next, marks);
        continue;
      }
      const { parent, key, value, path, depth } = next;
      const isChanged = marks.changed.has(path) && key !== null;
      const isFound = marks.found === path;
      if (isObject(value)) {
        const isArray = Array.isArray(value);
        const keys = isArray ? null : Object.keys(value);
        const size = isArray ? value.length : keys.length;
        const positional = !isArray && isPositional(keys);
        const details = document.createElement("details");
        const inside = marks.inside.has(path);
        details.open = depth < 2 || inside || marks.open.has(path);
        if (inside && key !== null) details.classList.add("changed-inside");
        const summary = document.createElement("summary");
        if (key !== null) summary.appendChild(span("key", key + ": "));
        summary.appendChild(span("meta", isArray ? "[" + size + "]" : positional ? "(" + size + ")" : "{" + size + "}"));
        if (isChanged) summary.classList.add("changed");
        if (isFound) summary.classList.add("found");
        details.appendChild(summary);
        details.dataset.path = path;
        const childAt = (i, parent) => {
          const child = isArray ? i : keys[i];
          return { parent, key: positional ? null : String(child), value: value[child], path: join(path, child), depth: depth + 1 };
        };
        // A large container shows the children that changed, or hold a change or what the search
        // found, and each run of the others as one closed range (FluxDiff.childrenShown).
        const isMarked = (i) => {
          const at = join(path, isArray ? i : keys[i]);
          return marks.changed.has(at) || marks.inside.has(at) || marks.open.has(at) || marks.found === at;
        };
        const shownIn = (parent, list) => {
          const more = [];
          for (let n = list.length - 1; n >= 0; n -= 1) {
            const item = list[n];
            more.push(item.child !== undefined ? childAt(item.child, parent) : { parent, range: item, of: { isArray, keys, childAt } });
          }
          return more;
        };
        const children = () => shownIn(details, FluxDiff.childrenShown(size, isMarked));
        if (details.open) {
          for (const child of children()) work.push(child);
        } else {
          details.addEventListener("toggle", () => build(children(), marks), { once: true });
        }
        parent.appendChild(details);
        continue;
      }
      const leaf = document.createElement("div");
      leaf.className = "leaf" + (isChanged ? " changed" : "") + (isFound ? " found" : "");
      leaf.dataset.path = path;
      if (key !== null) leaf.appendChild(span("key", key + ": "));
      const kind = typeof value === "string" ? "string" : typeof value === "number" ? "number" : "literal";
      leaf.appendChild(span(kind, scalar(value)));
      parent.appendChild(leaf);
    }
  }

  // A closed range of the children of a large container: `[5001 … 9999]`, or the first and last
  // key of an object, with how many it holds; opened, its children, or ranges of them.
  function buildRange(work, next, marks) {
    const { parent, range, of } = next;
    const name = (i) => of.isArray ? String(i) : of.keys[i];
    const details = document.createElement("details");
    details.className = "range";
    const summary = document.createElement("summary");
    summary.appendChild(span("key", of.isArray ? "[" + range.from + " … " + (range.to - 1) + "]" : name(range.from) + " … " + name(range.to - 1)));
    const size = range.to - range.from;
    summary.appendChild(span("meta", " " + size.toLocaleString("en-US") + (of.isArray ? (size === 1 ? " item" : " items") : (size === 1 ? " key" : " keys"))));
    details.appendChild(summary);
    details.addEventListener("toggle", () => {
      const list = FluxDiff.rangeShown(range.from, range.to);
      const more = [];
      for (let n = list.length - 1; n >= 0; n -= 1) {
        const item = list[n];
        more.push(item.child !== undefined ? of.childAt(item.child, details) : { parent: details, range: item, of });
      }
      build(more, marks);
    }, { once: true });
    parent.appendChild(details);
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
    drawSlowest();
  }

  // The slowest commits, listed by costs.js (FluxCosts) from what the page holds; a link selects
  // the commit's row, clearing the filters when they hide it.
  function drawSlowest() {
    const panel = $("slowest");
    if (!panel) return;
    const asked = model;
    // A long log: the server keeps its slowest commits.
    FluxCosts.slowest(paged ? paged.slowest : model.entries, FluxCosts.SLOWEST, (list) => {
      if (model !== asked) return;  // an answer for a log no longer shown
      FluxCosts.show(panel, list, chooseEntry, { duration: formatNanoseconds });
    });
  }

  function chooseEntry(entry) {
    if (paged) {
      // Each second's counts bring the list anew: the entry is known by its index.
      if (!paged.slowest.some((each) => each.index === entry.index)) return;
      const filter = currentFilter();
      if (filter.store || filter.action || filter.outcome || filter.text) {
        // The filters are cleared; the server says where the event is among all.
        for (const control of [ui.store, ui.action, ui.outcome, ui.search]) control.value = "";
        ui.follow.checked = false;
        selected = entry.event;
        applyFilters();
      } else {
        selectPosition(entry.event, true);
      }
      ui.rows.focus();
      return;
    }
    if (model.entries[entry.index] !== entry) return;  // no longer in the log shown
    if (positionOf(entry.event) < 0) {
      for (const control of [ui.store, ui.action, ui.outcome, ui.search]) control.value = "";
      applyFilters();
    }
    selectPosition(positionOf(entry.event), true);
    ui.rows.focus();
  }

  function decade(power) {
    const value = Math.pow(10, power);
    if (value < 1e3) return value + " ns";
    if (value < 1e6) return value / 1e3 + " µs";
    if (value < 1e9) return value / 1e6 + " ms";
    return value / 1e9 + " s";
  }

  // The y axis is logarithmic, one band per power of ten: one slow commit does not flatten the
  // others, and the slowest is marked with its duration.
  function drawDurations() {
    const chart = ui.durations;
    const width = Math.max(200, chart.clientWidth || 640);
    const height = Math.max(80, chart.clientHeight || 130);
    chart.setAttribute("viewBox", "0 0 " + width + " " + height);
    chart.replaceChildren();
    const left = 52, right = 8, top = 8, bottom = 18;
    const points = paged ? [] : model.entries.filter((entry) => entry.duration !== null && entry.duration !== undefined);
    chart.appendChild(svg("line", { class: "axis", x1: left, y1: height - bottom, x2: width - right, y2: height - bottom }));
    chart.appendChild(svg("line", { class: "axis", x1: left, y1: top, x2: left, y2: height - bottom }));
    if (points.length === 0) {
      timeline = null;
      const words = paged ? "A long log: each row shows its commit's duration" : "No committed actions yet";
      chart.appendChild(svg("text", { class: "label", x: left + 8, y: height / 2 }, words));
      return;
    }
    const span = width - left - right - 1;
    const x = (i) => left + (points.length === 1 ? span / 2 : (i / (points.length - 1)) * span);
    timeline = { points, x, top, bottom, height };
    // One column of pixels per bin: the longest commit in it, so that a spike is never lost.
    const bins = Math.max(1, Math.floor(span) + 1);
    const longest = new Array(bins).fill(-1);
    let low = Infinity, high = 0, slowest = 0;
    points.forEach((entry, i) => {
      const bin = Math.min(bins - 1, Math.round(x(i) - left));
      if (entry.duration > longest[bin]) longest[bin] = entry.duration;
      low = Math.min(low, Math.max(1, entry.duration));
      if (entry.duration > high) {
        high = entry.duration;
        slowest = i;
      }
    });
    const from = Math.floor(Math.log10(low));
    const to = Math.max(from + 1, Math.log10(Math.max(1, high)));
    const y = (value) => height - bottom - ((Math.log10(Math.max(1, value)) - from) / (to - from)) * (height - top - bottom);
    const every = Math.max(1, Math.ceil((to - from) / 4));
    for (let power = from; power <= Math.floor(to); power += every) {
      const at = y(Math.pow(10, power));
      if (power > from) chart.appendChild(svg("line", { class: "grid", x1: left, y1: at, x2: width - right, y2: at }));
      chart.appendChild(svg("text", { class: "label", x: 4, y: at + 3 }, decade(power)));
    }
    let path = "";
    longest.forEach((value, bin) => {
      if (value < 0) return;
      path += (path ? " L" : "M") + (left + bin + 0.5).toFixed(1) + " " + y(value).toFixed(1);
    });
    chart.appendChild(svg("path", { class: "line", d: path }));
    if (points.length <= 400) {
      points.forEach((entry, i) => {
        const dot = svg("circle", { class: i === slowest ? "dot slowest" : "dot", cx: x(i).toFixed(1), cy: y(entry.duration).toFixed(1), r: 2.5 });
        dot.appendChild(svg("title", {}, entry.label + " in " + entry.store + ": " + formatNanoseconds(entry.duration)));
        chart.appendChild(dot);
      });
    }
    const mark = x(slowest) > width / 2 ? { x: x(slowest) - 6, anchor: "end" } : { x: x(slowest) + 6, anchor: "start" };
    // Beside its dot: under it near the top, above it elsewhere.
    const markY = y(high) < top + 14 ? y(high) + 12 : y(high) - 6;
    chart.appendChild(svg("text", { class: "label slowest", x: mark.x, y: markY, "text-anchor": mark.anchor },
      "slowest " + formatNanoseconds(high)));
    chart.appendChild(svg("text", { class: "label", x: left, y: height - 4 }, clock(points[0].time)));
    chart.appendChild(svg("text", { class: "label", x: width - right, y: height - 4, "text-anchor": "end" }, clock(points[points.length - 1].time)));
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
    }
  }

  function problem(message) {
    ui.banner.hidden = false;
    ui.banner.className = "banner";
    ui.banner.textContent = message;
  }

  function notice(message) {
    ui.banner.hidden = false;
    ui.banner.className = "banner notice";
    ui.banner.textContent = message;
  }

  // An error of this page's own code is shown, and never makes it ask for the log again.
  window.addEventListener("error", (error) => problem("This page met an error: " + error.message));

  // Shows `document`, a log as the server sends it. When it is the log shown before, read again
  // (the server restarted, or the file was replaced), the selection stays on the same line if
  // that line reads the same.
  function loaded(document, started) {
    leavePaged();
    window.fluxInspector.paged = false;
    if (count(document.pagedFrom) !== null) pagedFrom = document.pagedFrom;
    if (document.paged === true) return loadedPaged(document, started);
    const received = performance.now();
    const before = selected >= 0 && model.events[selected] ? model.entries[model.events[selected].entries[0]] : null;
    model = emptyModel();
    selected = -1;
    ingest(document);
    ui.source.textContent = model.path;
    refresh(false);
    const again = before && !ui.follow.checked
      ? model.entries.find((entry) => entry.line === before.line && entry.raw === before.raw) : undefined;
    if (again) select(again.event, { scroll: true });
    else if (shown.length) selectPosition(ui.follow.checked ? shown.length - 1 : 0, false);
    if (ui.follow.checked) ui.rows.scrollTop = ui.rows.scrollHeight;
    grewAt = lastTime(model.entries);
    window.fluxInspector.loadMilliseconds = performance.now() - started;
    window.fluxInspector.showMilliseconds = performance.now() - received;
    window.fluxInspector.ready = true;
    window.document.body.dataset.ready = "true";
  }

  // When the log last grew: the time of its last action, if it is a time in the past, else now.
  function lastTime(entries) {
    for (let i = entries.length - 1; i >= 0; i -= 1) {
      if (entries[i].time === undefined) continue;
      const time = Date.parse(entries[i].time);
      return Number.isFinite(time) && time <= Date.now() ? time : Date.now();
    }
    return Date.now();
  }

  // The status: live (the log grew lately), idle (followed, but nothing new for a while: the
  // app may have stopped), or server gone (the page retries).
  let connection = "loading";  // "loading", "open", "gone", "saved"
  let grewAt = Date.now();
  let goneAt = 0;
  function ago(milliseconds) {
    const seconds = Math.max(0, Math.round(milliseconds / 1000));
    if (seconds < 90) return seconds + " s ago";
    const minutes = Math.round(seconds / 60);
    if (minutes < 90) return minutes + " min ago";
    const hours = Math.round(minutes / 60);
    return hours < 48 ? hours + " h ago" : Math.round(hours / 24) + " days ago";
  }

  function showStatus() {
    const now = Date.now();
    ui.status.classList.remove("live", "idle", "gone");
    if (connection === "open" && viewing.kind === "app" && current !== null) {
      const since = Date.parse(current.since);
      const when = Number.isFinite(since) ? " " + ago(now - since) : "";
      ui.status.textContent = current.live ? "app connected" : "app disconnected" + when;
      ui.status.classList.add(current.live ? "live" : "gone");
      ui.status.title = current.live ? "The app sends its actions as it commits them." : "The app is not connected: it shows again here when it reconnects.";
    } else if (connection === "open") {
      const quiet = now - grewAt;
      if (quiet < IDLE_SECONDS * 1000) {
        ui.status.textContent = "live";
        ui.status.classList.add("live");
        ui.status.title = "Following the log: new lines appear as they are written.";
      } else {
        ui.status.textContent = "idle · last line " + ago(quiet);
        ui.status.classList.add("idle");
        ui.status.title = "Following the log, which has not grown since " + new Date(grewAt).toLocaleString() + ": the app may have stopped.";
      }
    } else if (connection === "gone") {
      ui.status.textContent = "server gone " + ago(now - goneAt) + " · retrying";
      ui.status.classList.add("gone");
      ui.status.title = "The inspector's server does not answer: this page asks again every " + RETRY_MS / 1000 + " s.";
    }
  }
  setInterval(showStatus, 1000);

  let events = null;
  let retry = 0;
  function follow() {
    if (paged) return followPaged();
    if (events) events.close();
    let address = "events?from=" + model.end + "&line=" + (model.lines + 1);
    if (model.identity !== null) address += "&identity=" + encodeURIComponent(model.identity);
    events = new EventSource(address);
    events.addEventListener("open", () => {
      connection = "open";
      showStatus();
    });
    events.addEventListener("lines", (message) => {
      let document;
      try {
        document = JSON.parse(message.data);
      } catch (error) {
        problem("The server sent lines this page cannot read: " + error.message);
        return;
      }
      if (typeof document.identity === "string" && model.identity !== null && document.identity !== model.identity) {
        reload("The log is another file now: it is shown again from its start.");
        return;
      }
      if (!Array.isArray(document.entries) || (document.entries.length === 0 && !model.partial)) return;
      const before = model.events.length;
      ingest(document);
      if (model.entries.length > pagedFrom) {
        reload("The log is long now: it is shown a page at a time.");
        return;
      }
      if (document.entries.length) grewAt = Date.now();
      scheduleRefresh(model.events.length !== before);
      showStatus();
    });
    events.addEventListener("reset", (message) => {
      let reason = "";
      try {
        reason = String(JSON.parse(message.data));
      } catch (error) {
        reason = "";
      }
      reload("The log was replaced or cut short" + (reason ? " (" + reason + ")" : "") + ": it is shown again from its start.");
    });
    events.addEventListener("error", () => {
      // The server is gone, or restarted: the log it serves now may not be the one shown, so
      // the page loads it again whole once the server answers, never goes on from an offset.
      events.close();
      events = null;
      if (connection !== "gone") goneAt = Date.now();
      connection = "gone";
      showStatus();
      clearTimeout(retry);
      const asked = generation;
      retry = setTimeout(() => { if (asked === generation) load(null); }, RETRY_MS);
    });
  }

  function reload(message) {
    if (events) events.close();
    events = null;
    connection = "loading";
    ui.status.classList.remove("live", "idle", "gone");
    ui.status.textContent = "reloading…";
    load(message);
  }

  // Asks for the log. A failed request (no server, an error from it) is asked again later; an
  // error of this page in showing what came is shown, and not asked again.
  function load(message) {
    const started = performance.now();
    const asked = generation;
    fetch("log", { cache: "no-store" })
      .then((response) => response.ok ? response.json() : response.text().then((text) => { throw new Error(text); }))
      .then((document) => {
        if (asked !== generation) return;
        if (message) notice(message); else ui.banner.hidden = true;
        try {
          loaded(document, started);
        } catch (error) {
          problem("This page cannot show the log: " + error.message);
          return;
        }
        follow();
      }, (error) => {
        if (asked !== generation) return;
        if (connection === "open" || connection === "loading") {
          problem("Cannot load the log: " + error.message);
        }
        clearTimeout(retry);
        retry = setTimeout(() => load(message), RETRY_MS);
      });
  }

  // A long log, a page at a time: past `pagedFrom` entries the server sends the log's counts,
  // not its lines (`"paged": true`), keeps its index, and serves the rows the list shows
  // (rows?from=P&count=N, with the filters and the search done on the server) and the entries a
  // detail needs (entry?index=I). The page keeps the pages of rows near the view, and asks for
  // the counts again each second while it follows the log: any number of lines written in that
  // second is one redraw.
  const PAGE_ROWS = 100;        // rows asked for at once
  const KEPT_PAGES = 30;        // pages of rows kept at most
  const PAGED_POLL_MS = 1000;   // how often a long log that is followed is asked for its counts
  let pagedFrom = Infinity;     // entries past which the server pages the log
  let paged = null;             // the state of a long log, or null
  // `shown` of a long log: its length is the count of rows the filters pass, and its elements the
  // events of the rows that came (-1 for the others).
  const pagedShown = new Proxy({}, {
    get(target, key) {
      if (key === "length") return paged ? paged.shown : 0;
      if (typeof key !== "string" || !/^[0-9]+$/.test(key) || !paged) return undefined;
      const event = paged.eventAt.get(Number(key));
      return event === undefined ? -1 : event;
    },
  });

  function leavePaged() {
    if (!paged) return;
    clearTimeout(paged.timer);
    paged = null;
    shown = [];
  }

  function pagedCounts(document) {
    paged.shown = count(document.shown) || 0;
    paged.events = count(document.events) || 0;
    paged.entries = count(document.entries) || 0;
    model.errors = count(document.errors) || 0;
    if (count(document.end) !== null) model.end = document.end;
    if (count(document.lines) !== null) model.lines = document.lines;
    if (Array.isArray(document.slowest)) {
      paged.slowest = [];
      for (const item of document.slowest) {
        if (!isObject(item) || count(item.index) === null || count(item.event) === null) continue;
        const entry = pagedEntry(item);
        entry.event = item.event;
        if (item.deferred === true) {
          // A long line, not sent: what the list shows of it comes with it.
          entry.store = typeof item.store === "string" ? item.store : "";
          entry.label = typeof item.label === "string" ? item.label : "";
          entry.duration = count(item.duration);
        }
        paged.slowest.push(entry);
      }
    }
    for (const [list, map] of [[document.stores, model.stores], [document.actions, model.actions]]) {
      if (!Array.isArray(list)) continue;
      map.clear();
      for (const pair of list) {
        if (Array.isArray(pair) && typeof pair[0] === "string" && count(pair[1]) !== null) map.set(pair[0], pair[1]);
      }
    }
  }

  function loadedPaged(document, started) {
    model = emptyModel();
    model.path = typeof document.path === "string" ? document.path : "";
    model.identity = typeof document.identity === "string" ? document.identity : null;
    paged = {
      shown: 0, events: 0, entries: 0, version: 0, selected: -1, timer: 0, started, painted: false, slowest: [],
      pages: new Map(), asking: new Set(), eventAt: new Map(), positionOf: new Map(), befores: new Set(),
    };
    pagedCounts(document);
    selected = -1;
    shown = pagedShown;
    ui.source.textContent = model.path;
    fillSelect(ui.store, model.stores);
    fillSelect(ui.action, model.actions);
    applyPagedFilters();
    grewAt = Date.now();
  }

  function rowsAddress(from, rows, counts) {
    const filter = currentFilter();
    let address = "rows?from=" + from + "&count=" + rows + "&identity=" + encodeURIComponent(model.identity || "");
    if (filter.store) address += "&store=" + encodeURIComponent(filter.store);
    if (filter.action) address += "&action=" + encodeURIComponent(filter.action);
    if (filter.outcome) address += "&outcome=" + encodeURIComponent(filter.outcome);
    if (filter.text) address += "&q=" + encodeURIComponent(filter.text);
    if (counts) address += "&counts=1";
    return address;
  }

  // Asks the server; a 409 (the log is another file now) loads the log again.
  function askServer(address) {
    return fetch(address, { cache: "no-store" }).then((response) => {
      if (response.status === 409) {
        reload("The log changed: it is shown again from its start.");
        return null;
      }
      return response.ok ? response.json() : response.text().then((text) => { throw new Error(text); });
    });
  }

  // The filters changed, or the log was loaded: the rows are asked for again, from the first.
  function applyPagedFilters() {
    paged.version += 1;
    paged.pages.clear();
    paged.asking.clear();
    paged.eventAt.clear();
    paged.positionOf.clear();
    model.events = [];
    model.entries = [];
    const version = paged.version;
    ui.count.textContent = "searching…";
    // A selection that the filters hide moves to the nearest event they show: the first after
    // it, or the last before it; the server says where that is.
    const at = selected >= 0 ? "&at=" + selected : "";
    selected = -1;
    askServer(rowsAddress(0, PAGE_ROWS, false) + at).then((document) => {
      if (!document || !paged || version !== paged.version) return;
      pagedCounts(document);
      takeRows(document, 0);
      ui.spacer.style.height = Math.min(TALLEST, paged.shown * ROW) + "px";
      updateCount();
      drawn = { first: -1, last: -1, count: -1 };
      const target = ui.follow.checked ? paged.shown - 1 : count(document.at) !== null ? document.at : 0;
      if (paged.shown) selectPosition(target, false);
      else {
        selected = -1;
        updateSlider();
        draw();
        showDetail();
      }
      drawCharts();
      painted();
    }, (error) => problem("Cannot load the rows of the log: " + error.message));
  }

  function pagedPositionOf(eventIndex) {
    if (eventIndex < 0) return eventIndex === selected && paged.selected >= 0 ? paged.selected : -1;
    const position = paged.positionOf.get(eventIndex);
    return position === undefined ? (eventIndex === selected ? paged.selected : -1) : position;
  }

  // Asks for the pages of the rows from `first` to before `last` that the page does not have.
  function askRows(first, last) {
    if (last <= first) return;
    for (let page = Math.floor(first / PAGE_ROWS); page <= Math.floor((last - 1) / PAGE_ROWS); page += 1) {
      if (paged.pages.has(page) || paged.asking.has(page)) continue;
      paged.asking.add(page);
      const version = paged.version;
      askServer(rowsAddress(page * PAGE_ROWS, PAGE_ROWS, false)).then((document) => {
        if (!document || !paged || version !== paged.version) return;
        paged.asking.delete(page);
        takeRows(document, page);
        const selectedHere = paged.selected >= page * PAGE_ROWS && paged.selected < (page + 1) * PAGE_ROWS;
        if (selectedHere) selected = shown[paged.selected];
        drawn = { first: -1, last: -1, count: -1 };
        draw();
        if (selectedHere) {
          updateSlider();
          showDetail();
          drawCursor();
        }
      }, (error) => {
        if (paged && version === paged.version) paged.asking.delete(page);
        problem("Cannot load the rows of the log: " + error.message);
      });
    }
  }

  // Takes the rows of a page that came; the pages furthest from the view are let go.
  function takeRows(document, page) {
    if (!Array.isArray(document.rows)) throw new Error("the server sent no rows");
    const kept = [];
    for (const row of document.rows) {
      if (!isObject(row) || count(row.position) === null || count(row.event) === null || !Array.isArray(row.entries)) continue;
      const event = { entries: [], index: row.event, stores: new Set(), size: count(row.size) || row.entries.length };
      for (const item of row.entries) {
        if (!isObject(item) || count(item.index) === null) continue;
        const entry = pagedEntry(item);
        model.entries[entry.index] = entry;
        event.entries.push(entry.index);
        event.stores.add(entry.store);
        entry.event = row.event;
      }
      if (event.entries.length === 0) continue;
      model.events[row.event] = event;
      paged.eventAt.set(row.position, row.event);
      paged.positionOf.set(row.event, row.position);
      kept.push(row);
    }
    paged.pages.set(page, kept);
    const view = Math.floor(topPosition() / PAGE_ROWS);
    while (paged.pages.size > KEPT_PAGES) {
      let furthest = -1;
      for (const number of paged.pages.keys()) {
        if (furthest < 0 || Math.abs(number - view) > Math.abs(furthest - view)) furthest = number;
      }
      for (const row of paged.pages.get(furthest)) {
        if (row.event === selected) continue;
        const event = model.events[row.event];
        if (event) for (const index of event.entries) delete model.entries[index];
        delete model.events[row.event];
        paged.eventAt.delete(row.position);
        paged.positionOf.delete(row.event);
      }
      paged.pages.delete(furthest);
    }
    painted();
  }

  // The first rows of a long log came: it is shown.
  function painted() {
    if (paged.painted) return;
    paged.painted = true;
    window.fluxInspector.loadMilliseconds = performance.now() - paged.started;
    window.fluxInspector.showMilliseconds = 0;
    window.fluxInspector.paged = true;
    window.fluxInspector.ready = true;
    window.document.body.dataset.ready = "true";
  }

  function pagedEntry(item) {
    let entry;
    try {
      entry = entryFrom(item);
    } catch (problem) {
      entry = badEntry({ line: Number(item.line) || 0, raw: String(item.raw) }, "this line cannot be shown: " + problem);
    }
    entry.index = item.index;
    entry.before = entry.hasState && count(item.before) !== null ? item.before : -1;
    // A long line the server did not send with its page: asked for alone when its row is selected.
    if (item.deferred === true) entry.deferred = true;
    return entry;
  }

  // Whether the entries of the states before those of `eventIndex` are here; when not, they are
  // asked for, and the detail is shown once they come.
  function pagedDetailReady(eventIndex) {
    const event = model.events[eventIndex];
    if (!event) return true;
    const missing = [];
    for (const index of event.entries.slice(0, SHOWN_STORES)) {
      const entry = model.entries[index];
      if (entry && entry.deferred && !paged.befores.has(index)) missing.push(index);
      if (entry && entry.before >= 0 && !model.entries[entry.before] && !paged.befores.has(entry.before)) missing.push(entry.before);
    }
    if (missing.length === 0) return true;
    const version = paged.version;
    for (const index of missing) paged.befores.add(index);
    Promise.all(missing.map((index) => askServer("entry?index=" + index + "&identity=" + encodeURIComponent(model.identity || ""))))
      .then((items) => {
        for (const index of missing) paged.befores.delete(index);
        if (!paged || version !== paged.version) return;
        for (const item of items) {
          if (!isObject(item) || count(item.index) === null) continue;
          const entry = pagedEntry(item);
          const old = model.entries[item.index];
          if (old) entry.event = old.event;
          model.entries[item.index] = entry;
        }
        if (selected === eventIndex) {
          drawn = { first: -1, last: -1, count: -1 };
          draw();
          showDetail();
        }
      }, (error) => {
        if (paged) for (const index of missing) paged.befores.delete(index);
        problem("Cannot load the state before this action: " + error.message);
      });
    return false;
  }

  function loadingRow(position) {
    const row = document.createElement("div");
    row.className = "row loading" + (paged && position === paged.selected ? " selected" : "");
    row.dataset.position = String(position);
    row.setAttribute("role", "option");
    row.appendChild(span("seq", String(position + 1)));
    row.appendChild(span("action", "…"));
    return row;
  }

  // Follows a long log: its counts each second; rows past the end are asked for as they show.
  function followPaged() {
    connection = "open";
    showStatus();
    const version = paged.version;
    clearTimeout(paged.timer);
    paged.timer = setTimeout(() => {
      if (!paged || version !== paged.version) return followPaged();
      askServer(rowsAddress(0, 0, true)).then((document) => {
        if (!document || !paged) return;
        if (document.identity !== model.identity) {
          reload("The log is another file now: it is shown again from its start.");
          return;
        }
        const before = paged.shown;
        const grew = (count(document.events) || 0) !== paged.events;
        if (version === paged.version) pagedCounts(document);
        if (grew) {
          grewAt = Date.now();
          fillSelect(ui.store, model.stores);
          fillSelect(ui.action, model.actions);
          // The last page may have had fewer rows than it has now.
          paged.pages.delete(Math.floor(Math.max(0, before - 1) / PAGE_ROWS));
          ui.spacer.style.height = Math.min(TALLEST, paged.shown * ROW) + "px";
          updateCount();
          drawn = { first: -1, last: -1, count: -1 };
          if (ui.follow.checked && paged.shown) selectPosition(paged.shown - 1, false);
          else {
            updateSlider();
            draw();
          }
          drawStores();
          drawSlowest();
        }
        followPaged();
      }, () => {
        if (connection !== "gone") goneAt = Date.now();
        connection = "gone";
        showStatus();
        clearTimeout(retry);
        const asked = generation;
        retry = setTimeout(() => { if (asked === generation) load(null); }, RETRY_MS);
      });
    }, PAGED_POLL_MS);
  }

  // Live sessions: the apps that connect to the inspector, each a session of its own, shown as a
  // log is, and steered from here. The server lists them at live/sessions; a session is loaded
  // whole from live/session, then followed through live/events. A command is a POST to the
  // server with this page's token, which the server wrote into the page (never a field of a log
  // or of an app's message); the app's answer comes back, and shows in the timeline too.

  const LIVE_ENTRY_LIMIT = 150000;  // a session longer than this in the page is loaded anew (the server keeps 100,000)
  const SESSIONS_MS = 1000;          // how often the list of sessions is asked for
  let token = tokenOf(document);
  let viewing = { kind: "file" };    // what is shown: the log file, or { kind: "app", id, key } (key: the app's session id)
  let generation = 0;                // changes with each change of what is shown: late answers are dropped
  let current = null;                // the facts of the app session shown, as the server last sent them
  let sessionList = { file: null, sessions: [] };
  let liveEnd = 0;                   // the index of the next item of the session shown
  let liveVersion = -1;

  const STEERED = {
    jump: "jumped from the Inspector", present: "back to the present from the Inspector",
    skip: "skipped from the Inspector", unskip: "unskipped from the Inspector",
    import: "imported from the Inspector", dispatch: "dispatched from the Inspector",
  };
  function steeredWords(kind) {
    return Object.prototype.hasOwnProperty.call(STEERED, kind) ? STEERED[kind] : "steered from the Inspector (" + kind + ")";
  }

  function isSkipped(entry) {
    if (entry.n === undefined || entry.store === undefined) return false;
    const set = model.skipped.get(entry.store);
    return set !== undefined && set.has(entry.n);
  }

  // Refreshing the timeline costs more as the log grows: under a flood of lines it runs at most
  // once per four times as long as it last took (at least every 100 ms), so the page stays
  // responsive, and the lines that came meanwhile show together.
  let refreshTimer = 0, refreshGrew = false, lastRefreshEnd = 0, lastRefreshCost = 0;
  function scheduleRefresh(grew) {
    refreshGrew = refreshGrew || grew;
    if (refreshTimer) return;
    const wait = Math.max(0, lastRefreshEnd + Math.max(100, 4 * lastRefreshCost) - performance.now());
    refreshTimer = setTimeout(() => {
      refreshTimer = 0;
      const started = performance.now();
      const grewNow = refreshGrew;
      refreshGrew = false;
      refresh(grewNow);
      lastRefreshEnd = performance.now();
      lastRefreshCost = lastRefreshEnd - started;
    }, lastRefreshEnd === 0 ? 0 : wait);
  }

  // A gap, a command with its answer: a row of its own, not an action of a store.
  function addNote(item, note) {
    const entry = {
      line: 0, raw: "", index: model.entries.length, note, store: note.store || "", outcome: "note",
      time: text(item.time) || "", duration: null, action: null, actionCase: "", label: note.text,
      sequence: null, hasState: false, holds: [], held: 0, cancelledBy: null, dispatch: null, steered: null,
    };
    model.entries.push(entry);
    model.notes += 1;
    entry.event = model.events.length;
    model.events.push({ entries: [entry.index], index: model.events.length, stores: new Set([entry.store]) });
  }

  function number(value) {
    return typeof value === "number" && Number.isSafeInteger(value) && value >= 0 ? value : null;
  }

  function gapNote(gap) {
    const count = number(gap.count) || 0;
    const from = number(gap.from) || 0;
    const words = gap.reason === "paused" ? "not recorded (paused)"
      : gap.reason === "missing" ? "not received" : "not sent";
    const actions = count === 1 ? "1 action " : count.toLocaleString("en-US") + " actions ";
    const reason = gap.reason === "buffer" ? ": the app's buffer was full"
      : gap.reason === "disconnected" ? ": the app was not connected" : "";
    return { kind: "gap", text: actions + words + reason, from, count, reason: text(gap.reason) || "" };
  }

  function describeCommand(command) {
    const store = text(command.store) || "";
    const line = (field) => number(command[field]) !== null ? "line " + (command[field] + 1) : "a line";
    switch (command.command) {
      case "jump": return "jump " + store + " to the state after " + line("to");
      case "present": return "bring " + store + " back to the present";
      case "skip": return "skip " + line("at") + " of " + store;
      case "unskip": return "unskip " + line("at") + " of " + store;
      case "dispatch": return "dispatch " + (command.action !== undefined ? describeAction(command.action, 120) : "an action") + " to " + store;
      case "pause": return "pause the app's lines";
      case "resume": return "resume the app's lines";
      case "import": return "import " + (number(command.lines) || 0).toLocaleString("en-US") + " lines into the app";
      default: return String(command.command);
    }
  }

  function commandNote(command, ack) {
    const ok = ack.ok === true;
    const answer = text(ok ? ack.outcome : ack.error) || "";
    if (ok && (command.command === "skip" || command.command === "unskip") && number(command.at) !== null) {
      const store = text(command.store) || "";
      if (!model.skipped.has(store)) model.skipped.set(store, new Set());
      if (command.command === "skip") model.skipped.get(store).add(command.at);
      else model.skipped.get(store).delete(command.at);
    }
    return { kind: "command", text: "Inspector: " + describeCommand(command) + " — " + answer, ok, answer, command, store: text(command.store) || "" };
  }

  // Adds the items of a live session: its lines, imported lines, gaps, and commands.
  function ingestLive(items) {
    for (const item of items) {
      if (!isObject(item)) continue;
      if (isObject(item.gap)) {
        addNote(item, gapNote(item.gap));
      } else if (isObject(item.command) && isObject(item.ack)) {
        addNote(item, commandNote(item.command, item.ack));
      } else if (number(item.imported) !== null) {
        add({ line: item.imported, raw: item.raw });
        model.entries[model.entries.length - 1].imported = true;
      } else {
        add(item);
        const entry = model.entries[model.entries.length - 1];
        if (entry.line > 0) entry.n = entry.line - 1;
      }
    }
  }

  function noteRow(row, entry) {
    const note = entry.note;
    row.classList.add(note.kind === "gap" ? "gap" : "note");
    row.appendChild(span("time", clock(entry.time)));
    const stores = span("stores");
    if (entry.store) stores.appendChild(span("store-tag", entry.store));
    row.appendChild(stores);
    const label = span("action", note.text);
    label.title = note.text;
    row.appendChild(label);
    const outcome = span("outcome");
    if (note.kind === "gap") outcome.appendChild(badge("held", "gap"));
    else outcome.appendChild(badge(note.ok ? "note-ok" : "note-failed", note.ok ? "done" : "failed"));
    row.appendChild(outcome);
    row.appendChild(span("num", ""));
    return row;
  }

  function showNote(entry) {
    const note = entry.note;
    if (note.kind === "gap") {
      ui.title.textContent = note.text;
      fact("Lines", note.count ? (note.from + 1) + " to " + (note.from + note.count) : "none");
      fact("Why", note.reason === "buffer" ? "the app dropped them: its buffer for the inspector was full"
        : note.reason === "paused" ? "the app was paused from the Inspector"
        : note.reason === "disconnected" ? "the app was not connected to the inspector"
        : note.reason === "missing" ? "the app did not send them" : note.reason || "not said");
    } else {
      ui.title.textContent = "Inspector: " + describeCommand(note.command);
      if (note.store) fact("Store", note.store);
      fact(note.ok ? "Done" : "Failed", note.answer);
      if (note.command.command === "dispatch" && note.command.action !== undefined) ui.actionTree.appendChild(actionView(note.command.action));
    }
    fact("Time", entry.time);
    if (!ui.actionTree.firstChild) ui.actionTree.appendChild(span("none", "—"));
    ui.stateTree.appendChild(span("none", "—"));
    ui.diff.appendChild(span("none", "—"));
  }

  // The facts of the session shown, and whether a store of it may be steered now.
  function steerable(store) {
    if (viewing.kind !== "app" || current === null || !current.live || !Array.isArray(current.stores)) return false;
    return current.stores.some((each) => isObject(each) && each.label === store && each.steerable === true);
  }

  function button(label, className, action) {
    const element = document.createElement("button");
    element.type = "button";
    element.className = className;
    element.textContent = label;
    element.addEventListener("click", action);
    return element;
  }

  // Under the facts of the selected action: jump to the state after it, skip or unskip it, for
  // each of its lines whose store the app lets be steered.
  function showSteering(event) {
    ui.detailSteer.replaceChildren();
    ui.detailSteer.hidden = true;
    if (viewing.kind !== "app" || current === null) return;
    const lines = event.entries.map((index) => model.entries[index])
      .filter((entry) => entry.n !== undefined && entry.note === undefined && entry.error === undefined);
    if (lines.length === 0) return;
    ui.detailSteer.hidden = false;
    for (const entry of lines.slice(0, SHOWN_STORES)) {
      if (!steerable(entry.store)) {
        const known = Array.isArray(current.stores) && current.stores.some((each) => isObject(each) && each.label === entry.store);
        ui.detailSteer.appendChild(span("hint", entry.store + ": " + (!current.live ? "the app is not connected" : known ? "read-only: the app does not let this store be steered" : "not a store the app offers now")));
        continue;
      }
      const name = lines.length > 1 ? " " + entry.store : "";
      if (entry.mirror) {
        ui.detailSteer.appendChild(span("hint mirror-note", entry.store + ": read-only: its state is a Mirror snapshot, which the store cannot take back, so there is no jump to it"));
        continue;
      }
      if (entry.outcome === "committed") {
        const jump = button("Jump here" + name, "steer-jump", () => steer({ store: entry.store, command: "jump", to: entry.n }));
        jump.title = "The running store takes the state after this action";
        jump.dataset.store = entry.store;
        jump.dataset.n = String(entry.n);
        ui.detailSteer.appendChild(jump);
        if (typeof entry.steered === "string" && entry.steered !== "" && entry.steered !== "dispatch") {
          ui.detailSteer.appendChild(span("hint", entry.store + ": " + steeredWords(entry.steered) + ", not an action of the app's: it is not skipped"));
          continue;
        }
        const skipped = isSkipped(entry);
        const skip = button((skipped ? "Unskip" : "Skip") + name, skipped ? "steer-unskip" : "steer-skip",
          () => steer({ store: entry.store, command: skipped ? "unskip" : "skip", at: entry.n }));
        skip.title = skipped ? "Work the state out with this action again" : "Work the state out without this action";
        skip.dataset.store = entry.store;
        skip.dataset.n = String(entry.n);
        ui.detailSteer.appendChild(skip);
      } else {
        ui.detailSteer.appendChild(span("hint", entry.store + ": this action was not committed; there is no state after it to jump to"));
      }
    }
  }

  // The bar above the timeline: who the app is, and the controls of the stores it lets be steered.
  function showSteerBar() {
    if (viewing.kind !== "app" || current === null) {
      ui.steer.hidden = true;
      return;
    }
    ui.steer.hidden = false;
    ui.steerApp.replaceChildren();
    ui.steerApp.appendChild(document.createTextNode("Steer " + (text(current.app) || "app") +
      (text(current.platform) ? " (" + current.platform + ")" : "")));
    if (current.paused === true) ui.steerApp.appendChild(span("paused", "paused: its actions are not recorded"));
    const stores = Array.isArray(current.stores) ? current.stores.filter((each) => isObject(each) && typeof each.label === "string") : [];
    const steerableStores = stores.filter((each) => each.steerable === true);
    const readOnly = stores.filter((each) => each.steerable !== true).map((each) => each.label);
    ui.readOnly.textContent = readOnly.length ? "Read-only: " + readOnly.slice(0, 20).join(", ") + (readOnly.length > 20 ? ", …" : "") : "";
    ui.steerControls.hidden = steerableStores.length === 0;
    if (steerableStores.length === 0 && stores.length) ui.readOnly.textContent = "Read-only: the app lets no store be steered";
    const chosen = ui.steerStore.value;
    const labels = steerableStores.map((each) => each.label);
    const have = Array.from(ui.steerStore.options).map((option) => option.value);
    if (labels.length !== have.length || labels.some((label, i) => label !== have[i])) {
      ui.steerStore.replaceChildren();
      for (const label of labels) {
        const option = document.createElement("option");
        option.value = label;
        option.textContent = label;
        ui.steerStore.appendChild(option);
      }
      if (labels.includes(chosen)) ui.steerStore.value = chosen;
    }
    const live = current.live === true;
    for (const control of [ui.pause, ui.present, ui.dispatch, ui.importFile]) control.disabled = !live;
    ui.pause.textContent = current.paused === true ? "Resume" : "Pause";
  }

  function result(ok, message) {
    ui.steerResult.className = "steer-result " + (ok ? "ok" : "failed");
    ui.steerResult.textContent = (ok ? "✓ " : "✗ ") + message;
  }

  function tokenOf(page) {
    const element = page.querySelector('meta[name="flux-inspector-token"]');
    return element ? element.getAttribute("content") || "" : "";
  }

  // The token of the server's run now: a server started again since this page was loaded has
  // another. Read from the page it serves, parsed as an inert document (nothing in it runs).
  function currentToken() {
    return fetch("./", { cache: "no-store" })
      .then((response) => response.ok ? response.text() : "")
      .then((page) => tokenOf(new DOMParser().parseFromString(page, "text/html")), () => "");
  }

  // Sends a command for the session shown; `body` is its JSON text without the token and the
  // session, or an object. Calls `done` with the app's answer. Refused for a token of an earlier
  // run of the server, it is sent once more with the token of this one.
  function steer(fields, rawTail, done) {
    if (viewing.kind !== "app") return;
    const session = viewing.id;
    // The app's own id of the session: a server started again may number another app's session so.
    const key = viewing.key;
    function body() {
      const head = { token, session, key, store: fields.store, command: fields.command };
      if (fields.to !== undefined) head.to = fields.to;
      if (fields.at !== undefined) head.at = fields.at;
      const text = JSON.stringify(head);
      return rawTail ? text.slice(0, -1) + "," + rawTail + "}" : text;
    }
    function send() {
      return fetch("command", { method: "POST", headers: { "Content-Type": "application/json" }, body: body(), cache: "no-store" });
    }
    const asked = generation;
    ui.steerResult.className = "steer-result";
    ui.steerResult.textContent = "Sending " + describeCommand(Object.assign({}, fields, { lines: fields.count })) + "…";
    const sent = token;
    send()
      .then((response) => response.status !== 403 ? response : currentToken().then((fresh) => {
        if (!fresh || fresh === sent) return response;
        token = fresh;
        return send();
      }))
      .then((response) => response.headers.get("Content-Type") === "application/json"
        ? response.json() : response.text().then((words) => ({ ok: false, error: words || "the server answered " + response.status })))
      .then((answer) => {
        if (asked !== generation) return;
        const ok = isObject(answer) && answer.ok === true;
        const words = isObject(answer) ? text(ok ? answer.outcome : answer.error) || "" : "";
        result(ok, words);
        if (done) done(ok, words);
      }, (error) => {
        if (asked !== generation) return;
        result(false, "the inspector did not answer: " + error.message);
        if (done) done(false, error.message);
      });
  }

  ui.pause.addEventListener("click", () => {
    const store = ui.steerStore.value;
    if (store) steer({ store, command: current && current.paused === true ? "resume" : "pause" });
  });
  ui.present.addEventListener("click", () => {
    const store = ui.steerStore.value;
    if (store) steer({ store, command: "present" });
  });

  function dispatchError(message) {
    ui.dispatchError.hidden = !message;
    ui.dispatchError.textContent = message || "";
  }

  function sendDispatch() {
    const store = ui.steerStore.value;
    const typed = ui.dispatchText.value.trim();
    if (!store) return;
    if (!typed) {
      dispatchError("Type an action as JSON, as the log writes actions: {\"add\":{\"title\":\"Milk\"}}");
      return;
    }
    try {
      readLine(typed);
    } catch (error) {
      dispatchError("This is not JSON: " + (error instanceof LineError ? error.message.replace(/^not JSON: /, "") : String(error)));
      return;
    }
    dispatchError("");
    steer({ store, command: "dispatch" }, "\"action\":" + typed, (ok, words) => {
      if (ok) dispatchError("");
      else dispatchError("The app did not dispatch it: " + words);
    });
  }
  ui.dispatch.addEventListener("click", sendDispatch);
  ui.dispatchText.addEventListener("keydown", (key) => {
    if (key.key === "Enter") {
      key.preventDefault();
      sendDispatch();
    }
  });
  ui.dispatchText.addEventListener("input", () => dispatchError(""));

  // Imports a session file: each of its lines read as the server reads a line; the first that
  // does not read stops it, with its number.
  ui.importFile.addEventListener("change", () => {
    const file = ui.importFile.files && ui.importFile.files[0];
    ui.importFile.value = "";
    const store = ui.steerStore.value;
    if (!file || !store) return;
    if (file.size > 16 * 1024 * 1024) {
      result(false, "The file is larger than 16 MiB, the most one command may carry");
      return;
    }
    file.text().then((content) => {
      const raws = [];
      const lines = content.split("\n");
      for (let i = 0; i < lines.length; i += 1) {
        const line = lines[i].replace(/\r$/, "").replace(/^\uFEFF/, "");
        if (!line.trim()) continue;
        let value;
        try {
          value = readLine(line);
        } catch (error) {
          result(false, file.name + ", line " + (i + 1) + ": " + (error instanceof LineError ? error.message : String(error)));
          return;
        }
        if (!isObject(value) || Array.isArray(value)) {
          result(false, file.name + ", line " + (i + 1) + ": not a line of a log (not a JSON object)");
          return;
        }
        raws.push(line);
      }
      if (raws.length === 0) {
        result(false, file.name + " holds no line of a log");
        return;
      }
      steer({ store, command: "import", count: raws.length }, "\"lines\":[" + raws.join(",") + "]");
    }, (error) => result(false, "Cannot read " + file.name + ": " + error.message));
  });

  // The sessions: listed in the header's chooser, asked for every second.
  function sessionLabel(session) {
    const pid = number(session.pid);
    return (text(session.app) || "app") + (pid ? " · pid " + pid : "") + " · " + (session.live ? "live" : "disconnected");
  }

  function showSessions() {
    const options = [];
    if (sessionList.file !== null) options.push(["file", sessionList.file + " (file)"]);
    for (const session of sessionList.sessions) options.push(["app:" + session.id, sessionLabel(session)]);
    ui.session.hidden = options.length === 0 || (options.length === 1 && sessionList.file !== null);
    const have = Array.from(ui.session.options).map((option) => [option.value, option.textContent]);
    if (options.length !== have.length || options.some(([value, label], i) => value !== have[i][0] || label !== have[i][1])) {
      ui.session.replaceChildren();
      for (const [value, label] of options) {
        const option = document.createElement("option");
        option.value = value;
        option.textContent = label;
        ui.session.appendChild(option);
      }
    }
    ui.session.value = viewing.kind === "file" ? "file" : "app:" + viewing.id;
  }

  function appView(session) {
    return { kind: "app", id: session.id, key: text(session.session) || "" };
  }

  function pollSessions(first) {
    fetch("live/sessions", { cache: "no-store" })
      .then((response) => response.ok ? response.json() : null)
      .then((list) => {
        if (!isObject(list)) return;
        sessionList = {
          file: typeof list.file === "string" ? list.file : null,
          sessions: Array.isArray(list.sessions) ? list.sessions.filter((each) => isObject(each) && number(each.id) !== null) : [],
        };
        if (first) {
          if (sessionList.file !== null) show({ kind: "file" });
          else if (sessionList.sessions.length) show(appView(sessionList.sessions[sessionList.sessions.length - 1]));
          else waiting();
        } else if (viewing.kind === "none" && sessionList.sessions.length) {
          show(appView(sessionList.sessions[sessionList.sessions.length - 1]));
        }
        showSessions();
      }, () => {
        if (first) show({ kind: "file" });
      })
      .finally(() => setTimeout(() => pollSessions(false), SESSIONS_MS));
  }

  // No log and no app yet.
  function waiting() {
    leavePaged();
    viewing = { kind: "none" };
    generation += 1;
    model = emptyModel();
    refresh(false);
    connection = "waiting";
    ui.status.textContent = "waiting for apps";
    ui.source.textContent = "";
    notice("No app is connected yet. Run one with FLUX_INSPECTOR set to the address flux-inspector printed; it shows here as it connects.");
    window.fluxInspector.ready = true;
    document.body.dataset.ready = "true";
  }

  // Shows `what`: the log file, or the session of an app.
  function show(what) {
    generation += 1;
    leavePaged();
    if (events) events.close();
    events = null;
    clearTimeout(retry);
    viewing = what;
    current = null;
    selected = -1;
    ui.dispatchText.value = "";
    dispatchError("");
    ui.steerResult.textContent = "";
    ui.banner.hidden = true;
    document.body.dataset.ready = "false";
    window.fluxInspector.ready = false;
    showSteerBar();
    ui.status.textContent = "loading…";
    connection = "loading";
    if (what.kind === "file") load(null); else loadLive(null);
  }

  ui.session.addEventListener("change", () => {
    const value = ui.session.value;
    if (value === "file") show({ kind: "file" });
    else if (value.startsWith("app:")) {
      const id = Number(value.slice(4));
      const session = sessionList.sessions.find((each) => each.id === id);
      if (session) show(appView(session));
    }
  });

  // Loads the session shown. After the server was gone, the session is found again by the app's
  // own session id: a server started anew numbers its sessions anew, as their apps reconnect.
  function loadLive(message, afterGone) {
    const started = performance.now();
    const asked = generation;
    const found = afterGone
      ? fetch("live/sessions", { cache: "no-store" }).then((response) => response.ok ? response.json() : null).then((list) => {
        const session = isObject(list) && Array.isArray(list.sessions)
          ? list.sessions.find((each) => isObject(each) && each.session === viewing.key && number(each.id) !== null) : undefined;
        if (!session) {
          ui.status.textContent = "waiting for the app to reconnect";
          ui.status.classList.remove("live", "idle", "gone");
          throw new Error("the app has not reconnected yet");
        }
        viewing.id = session.id;
      })
      : Promise.resolve();
    found.then(() => fetch("live/session?session=" + viewing.id, { cache: "no-store" }))
      .then((response) => response.ok ? response.json() : response.text().then((words) => { throw new Error(words); }))
      .then((document) => {
        if (asked !== generation) return;
        if (message) notice(message); else ui.banner.hidden = true;
        try {
          loadedLive(document, started);
        } catch (error) {
          problem("This page cannot show the session: " + error.message);
          return;
        }
        followLive();
      }, (error) => {
        if (asked !== generation) return;
        if (connection === "gone" && afterGone && error.message === "the app has not reconnected yet") connection = "waiting";
        if (connection !== "gone" && connection !== "waiting") problem("Cannot load the session: " + error.message);
        clearTimeout(retry);
        retry = setTimeout(() => {
          if (asked === generation) loadLive(message, afterGone || connection === "gone" || connection === "waiting");
        }, RETRY_MS);
      });
  }

  function loadedLive(document, started) {
    const received = performance.now();
    if (!isObject(document) || !Array.isArray(document.items) || !isObject(document.session)) throw new Error("the server sent no session");
    model = emptyModel();
    selected = -1;
    current = document.session;
    ingestLive(document.items);
    liveEnd = number(document.end) || 0;
    liveVersion = number(current.version);
    if (liveVersion === null) liveVersion = -1;
    ui.source.textContent = (text(current.app) || "app") + " · session " + (text(current.session) || "");
    showSteerBar();
    refresh(false);
    if (shown.length) selectPosition(ui.follow.checked ? shown.length - 1 : 0, false);
    if (ui.follow.checked) ui.rows.scrollTop = ui.rows.scrollHeight;
    grewAt = Date.now();
    connection = "open";
    showStatus();
    window.fluxInspector.loadMilliseconds = performance.now() - started;
    window.fluxInspector.showMilliseconds = performance.now() - received;
    window.fluxInspector.ready = true;
    window.document.body.dataset.ready = "true";
  }

  function followLive() {
    if (events) events.close();
    const asked = generation;
    events = new EventSource("live/events?session=" + viewing.id + "&from=" + liveEnd + "&version=" + Math.max(0, liveVersion));
    events.addEventListener("items", (message) => {
      if (asked !== generation) return;
      let update;
      try {
        update = JSON.parse(message.data);
      } catch (error) {
        problem("The server sent items this page cannot read: " + error.message);
        return;
      }
      if (!isObject(update) || !Array.isArray(update.items) || number(update.from) !== liveEnd) {
        reloadLive("The session is shown again from its start.");
        return;
      }
      const before = model.events.length;
      ingestLive(update.items);
      liveEnd = number(update.end) || liveEnd;
      if (isObject(update.session)) {
        current = update.session;
        liveVersion = number(current.version) === null ? liveVersion : current.version;
        showSteerBar();
      }
      if (update.items.length) grewAt = Date.now();
      if (model.entries.length > LIVE_ENTRY_LIMIT) {
        reloadLive(null);
        return;
      }
      scheduleRefresh(model.events.length !== before);
      showStatus();
    });
    events.addEventListener("reset", () => {
      if (asked === generation) reloadLive("The session's first lines are no longer kept: it is shown from the first kept.");
    });
    events.addEventListener("error", () => {
      if (asked !== generation) return;
      events.close();
      events = null;
      if (connection !== "gone") goneAt = Date.now();
      connection = "gone";
      showStatus();
      clearTimeout(retry);
      retry = setTimeout(() => { if (asked === generation) loadLive(null, true); }, RETRY_MS);
    });
  }

  function reloadLive(message) {
    if (events) events.close();
    events = null;
    generation += 1;
    loadLive(message);
  }

  // For tests and the curious: whether the log is shown, how long it took from asking for it,
  // and how long of that the page took to read and show it.
  window.fluxInspector = { ready: false, loadMilliseconds: null, showMilliseconds: null };
  // Where "Export as test" asks for the test of what is shown: the log file's, or an app session's.
  window.fluxInspector.testPath = () => viewing.kind === "app" && Number.isSafeInteger(viewing.id)
    ? "live/session-test.swift?session=" + viewing.id
    : "session-test.swift";
  const embedded = document.getElementById("flux-log");
  if (embedded) {
    const started = performance.now();
    connection = "saved";
    ui.status.textContent = "saved page: no live updates";
    ui.follow.checked = false;
    ui.follow.disabled = true;
    model = emptyModel();
    try {
      loaded(JSON.parse(embedded.textContent), started);
    } catch (error) {
      problem("This page's log cannot be read: " + error.message);
    }
  } else {
    model = emptyModel();
    ui.status.textContent = "loading…";
    pollSessions(true);
  }
})();

// "Export as test": downloads the Swift Testing file that the server writes from the log
// (GET session-test.swift), the same file as `flux-inspector LOG --swift-test FILE`, or from the
// lines of the app session shown (GET live/session-test.swift?session=K). When no
// store of the log can be tested, the banner says why, as the server said it. A saved page has
// no server to ask: it shows no button.
(function exportAsTest() {
  "use strict";
  const button = document.getElementById("export-test");
  const banner = document.getElementById("banner");
  if (!button || !banner) return;
  if (document.getElementById("flux-log")) {
    button.hidden = true;
    return;
  }
  function say(message, isProblem) {
    banner.hidden = false;
    banner.className = isProblem ? "banner" : "banner notice";
    banner.textContent = message;
  }
  button.addEventListener("click", () => {
    button.disabled = true;
    const inspector = window.fluxInspector;
    const path = inspector && typeof inspector.testPath === "function" ? inspector.testPath() : "session-test.swift";
    fetch(path, { cache: "no-store" })
      .then((response) => response.ok
        ? response.blob()
        : response.text().then((text) => { throw new Error(text || ("the server answered " + response.status)); }))
      .then((file) => {
        const link = document.createElement("a");
        link.href = URL.createObjectURL(file);
        link.download = "SessionTests.swift";
        link.hidden = true;
        document.body.appendChild(link);
        link.click();
        link.remove();
        setTimeout(() => URL.revokeObjectURL(link.href), 60000);
        say("Exported SessionTests.swift: one test per store of the session.", false);
      })
      .catch((error) => say("Cannot export this session as a test: " + error.message, true))
      .finally(() => { button.disabled = false; });
  });
})();
