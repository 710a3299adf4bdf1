// The Flux Inspector's diff: what changed from one state to the next, in time near-linear in the
// size of the states, however long their arrays and strings.
//
// Arrays are matched element to element by `id` where every element has a unique one: the
// longest run of ids kept in order is a longest increasing subsequence, O(n log n). Else by value:
// the common start and end are cut off, and the middle is compared by Myers' algorithm, which
// costs O((n + m) d) for d edits; past a bound of edits and steps, it is anchored on the elements
// that are unique on both sides (patience), and each gap between two anchors is compared again
// within what is left of the bound, or its elements pair up by position. A long string is compared
// in the same way, word by word, between its common start and end.
//
// Every state is hostile (DESIGN.md rule 21): no code here recurses as deep as its input, no
// array is spread into arguments, and nothing here is ever HTML: it builds text nodes only.
(function (root) {
  "use strict";

  const MAX_EDITS = 1000;         // the most edits Myers' algorithm looks for in one comparison
  const MAX_STEPS = 4000000;      // the steps all comparisons of one state, or of one string, may take
  const LARGE = 100;              // a container with more children than this shows only those that changed
  const TEXT_CONTEXT = 30;        // characters shown on each side of a change in a long string
  const TEXT_PIECE = 200;         // characters shown at most of what one change removed or added
  const TEXT_CHANGES = 20;        // changes shown at most in one long string
  const LONG_TEXT = 80;           // a string longer than this is compared word by word

  function isObject(value) {
    return value !== null && typeof value === "object";
  }

  function join(path, key) {
    return path === "" ? String(key) : path + "." + key;
  }

  // A value as text that two equal values share, and no two different values: the key an element
  // of an array is matched by. Walked with a stack.
  function canonical(value) {
    if (!isObject(value)) return scalarKey(value);
    const parts = [];
    const stack = [value];
    while (stack.length) {
      const next = stack.pop();
      if (next instanceof Mark) {
        parts.push(next.text);
      } else if (!isObject(next)) {
        parts.push(scalarKey(next));
      } else if (Array.isArray(next)) {
        parts.push("[");
        stack.push(CLOSE_ARRAY);
        for (let i = next.length - 1; i >= 0; i -= 1) {
          stack.push(next[i]);
          if (i > 0) stack.push(COMMA);
        }
      } else {
        parts.push("{");
        stack.push(CLOSE_OBJECT);
        const keys = Object.keys(next);
        for (let i = keys.length - 1; i >= 0; i -= 1) {
          stack.push(next[keys[i]], new Mark(JSON.stringify(keys[i]) + ":"));
          if (i > 0) stack.push(COMMA);
        }
      }
    }
    return parts.join("");
  }

  function scalarKey(value) {
    return typeof value === "string" ? JSON.stringify(value) : String(value) + "#" + typeof value;
  }

  // Text that `canonical` writes between values: never a value of a state, which JSON makes.
  function Mark(text) {
    this.text = text;
  }
  const COMMA = new Mark(","), CLOSE_ARRAY = new Mark("]"), CLOSE_OBJECT = new Mark("}");

  function sameValue(a, b) {
    const keys = new Keys();
    return keys.of(a) === keys.of(b);
  }

  // Keys that two equal values share, and no two different values, within one comparison: the
  // key an element of an array is matched by. A scalar's is its text; a container's, the text of
  // its children when they are scalars, CACHED values at most (a string counting one per 64
  // characters); else a number given to the text of its children once, where a container child
  // is written by its key, and kept for the container. So arrays nested deep cost the size of
  // the states to match, not that size times their depth (a string of 1 MB in arrays nested 500
  // deep is read once, not 500 times), and a long array of small objects costs no more than
  // their text. Walked with a stack.
  const CACHED = 256;

  function Keys() {
    this.numbers = new Map();     // the text of a container that is numbered: its number
    this.containers = new Map();  // a container that is numbered: its number
  }

  // The text of a container of scalars only, of CACHED values at most; else null.
  function flatText(container) {
    const keys = Array.isArray(container) ? null : Object.keys(container);
    const length = keys ? keys.length : container.length;
    if (length > CACHED) return null;
    let text = keys ? "{" : "[", weight = 1;
    for (let i = 0; i < length; i += 1) {
      const child = keys ? container[keys[i]] : container[i];
      if (isObject(child)) return null;
      if (i > 0) text += ",";
      if (keys) text += JSON.stringify(keys[i]) + ":";
      text += scalarKey(child);
      weight += typeof child === "string" ? 1 + (child.length >> 6) : 1;
      if (weight > CACHED) return null;
    }
    return text + (keys ? "}" : "]");
  }

  function Frame(container) {
    this.container = container;
    this.keys = Array.isArray(container) ? null : Object.keys(container);
    this.length = this.keys ? this.keys.length : container.length;
    this.next = 0;
    this.text = this.keys ? "{" : "[";
  }

  Keys.prototype.of = function (value) {
    if (!isObject(value)) return scalarKey(value);
    const known = this.containers.get(value);
    if (known !== undefined) return known;
    const flat = flatText(value);
    if (flat !== null) return flat;
    const stack = [new Frame(value)];
    let done;  // the key of the container last finished, for its parent's text
    while (true) {
      const top = stack[stack.length - 1];
      if (done !== undefined) {
        // A number is written "@N", which no scalar's text is, nor a container's.
        top.text += typeof done === "number" ? "@" + done : done;
        done = undefined;
      }
      if (top.next === top.length) {
        const text = top.text + (top.keys ? "}" : "]");
        let number = this.numbers.get(text);
        if (number === undefined) {
          number = this.numbers.size;
          this.numbers.set(text, number);
        }
        this.containers.set(top.container, number);
        stack.pop();
        if (stack.length === 0) return number;
        done = number;
        continue;
      }
      const i = top.next;
      top.next += 1;
      if (i > 0) top.text += ",";
      if (top.keys) top.text += JSON.stringify(top.keys[i]) + ":";
      const child = top.keys ? top.container[top.keys[i]] : top.container[i];
      if (!isObject(child)) {
        top.text += scalarKey(child);
        continue;
      }
      done = this.containers.get(child);
      if (done === undefined) done = flatText(child);
      if (done === null) {
        done = undefined;
        stack.push(new Frame(child));
      }
    }
  };

  // What changed from `before` to `after`: each path as deep as the difference goes, at most
  // `limit` of them (and one more, to say that there are more). Walked with a stack.
  function diff(before, after, limit) {
    const out = [];
    const budget = { steps: MAX_STEPS, keys: new Keys() };
    const stack = [{ before, after, path: "" }];
    while (stack.length && out.length <= limit) {
      const next = stack.pop();
      if (next.change) {
        out.push(next.change);
        continue;
      }
      const { before, after, path } = next;
      if (isObject(before) && isObject(after) && Array.isArray(before) === Array.isArray(after)) {
        const children = [];
        if (Array.isArray(after)) {
          for (const step of arraySteps(before, after, budget)) {
            if (step.kind === "same") children.push({ before: before[step.from], after: after[step.to], path: join(path, step.to) });
            else if (step.kind === "removed") children.push({ change: { path: join(path, step.from), kind: "removed", before: before[step.from] } });
            else if (step.kind === "added") children.push({ change: { path: join(path, step.to), kind: "added", after: after[step.to] } });
            else children.push({ change: { path: join(path, step.to), kind: "moved", from: step.from, before: before[step.from], after: after[step.to] } }, { before: before[step.from], after: after[step.to], path: join(path, step.to) });
          }
        } else {
          const keys = Object.keys(before);
          for (const key of Object.keys(after)) if (!Object.prototype.hasOwnProperty.call(before, key)) keys.push(key);
          for (const key of keys) {
            const inBefore = Object.prototype.hasOwnProperty.call(before, key);
            const inAfter = Object.prototype.hasOwnProperty.call(after, key);
            if (!inBefore) children.push({ change: { path: join(path, key), kind: "added", after: after[key] } });
            else if (!inAfter) children.push({ change: { path: join(path, key), kind: "removed", before: before[key] } });
            else children.push({ before: before[key], after: after[key], path: join(path, key) });
          }
        }
        // In order: the first child is popped first.
        for (let i = children.length - 1; i >= 0; i -= 1) stack.push(children[i]);
        continue;
      }
      if (isObject(before) || isObject(after) ? budget.keys.of(before) !== budget.keys.of(after) : before !== after) {
        out.push({ path, kind: "changed", before, after });
      }
    }
    return out;
  }

  // How the elements of two arrays match: a list of steps, in the order of `after` (removals
  // where they were): "same" (matched, compared further), "removed", "added", "moved". By value,
  // the comparison takes at most the steps left in `budget`, which the arrays of one state share.
  function arraySteps(before, after, budget) {
    const ids = idsOf(before), afterIds = ids && idsOf(after);
    if (ids && afterIds) {
      // By id: an element with the same id is the same element; one that the longest run of ids
      // kept in order leaves out has moved.
      const was = new Map();
      ids.forEach((id, i) => was.set(id, i));
      const kept = new Set();
      for (const id of afterIds) if (was.has(id)) kept.add(id);
      // The positions in `before` of the ids kept, in the order of `after`: those in a longest
      // increasing run stayed in order.
      const order = [];
      for (const id of afterIds) if (kept.has(id)) order.push(was.get(id));
      const inOrder = new Set(increasingRun(order));
      const steps = [];
      let from = 0;
      const removedUpTo = (limit) => {
        for (; from < limit; from += 1) if (!kept.has(ids[from])) steps.push({ kind: "removed", from });
      };
      afterIds.forEach((id, to) => {
        if (!was.has(id)) {
          steps.push({ kind: "added", to });
          return;
        }
        const index = was.get(id);
        if (inOrder.has(index)) {
          removedUpTo(index);
          steps.push({ kind: "same", from: index, to });
        } else {
          steps.push({ kind: "moved", from: index, to });
        }
      });
      removedUpTo(ids.length);
      return steps;
    }
    // By value: a common subsequence of equal elements; between two of them, the elements
    // removed and added pair up as changes, and the rest are removed or added.
    const keys = (budget && budget.keys) || new Keys();
    const pairs = commonPairs(before.map((each) => keys.of(each)), after.map((each) => keys.of(each)), budget);
    const steps = [];
    let i = 0, j = 0;
    const gap = (untilI, untilJ) => {
      while (i < untilI && j < untilJ) steps.push({ kind: "same", from: i++, to: j++ });
      while (i < untilI) steps.push({ kind: "removed", from: i++ });
      while (j < untilJ) steps.push({ kind: "added", to: j++ });
    };
    for (const [a, b] of pairs) {
      gap(a, b);
      steps.push({ kind: "same", from: i++, to: j++ });
    }
    gap(before.length, after.length);
    return steps;
  }

  // The ids of an array's elements, when every one is an object with a unique `id` that is a
  // string or a number; otherwise null.
  function idsOf(array) {
    if (array.length === 0) return null;
    const ids = [];
    const seen = new Set();
    for (const element of array) {
      if (!isObject(element) || Array.isArray(element)) return null;
      const id = element.id;
      if (typeof id !== "string" && typeof id !== "number") return null;
      const key = typeof id + ":" + id;
      if (seen.has(key)) return null;
      seen.add(key);
      ids.push(key);
    }
    return ids;
  }

  // The values of a longest strictly increasing subsequence of `values` (numbers), in order:
  // patience sorting, O(n log n).
  function increasingRun(values) {
    const tails = [];                       // tails[k]: the index of the least end of a run of k + 1
    const previous = new Int32Array(values.length);
    for (let i = 0; i < values.length; i += 1) {
      let low = 0, high = tails.length;
      while (low < high) {
        const middle = (low + high) >> 1;
        if (values[tails[middle]] < values[i]) low = middle + 1; else high = middle;
      }
      previous[i] = low > 0 ? tails[low - 1] : -1;
      tails[low] = i;
    }
    const run = new Array(tails.length);
    for (let k = tails.length - 1, i = tails.length ? tails[k] : -1; k >= 0; k -= 1, i = previous[i]) run[k] = values[i];
    return run;
  }

  // The index pairs of a common subsequence of two lists of keys (strings or numbers), in order:
  // a longest one when the lists differ by at most MAX_EDITS edits in their middle (or in each
  // gap between two elements unique on both sides), else one that pairs what it found and leaves
  // the rest.
  // Myers' algorithm takes at most the steps left in `budget` (MAX_STEPS when none is given).
  function commonPairs(a, b, budget) {
    const pairs = [];
    if (budget === undefined) budget = { steps: MAX_STEPS };
    compareRange(a, 0, a.length, b, 0, b.length, pairs, budget, true);
    return pairs;
  }

  // Adds to `pairs` those of a[aLo..aHi) and b[bLo..bHi): the common start and end, and between
  // them Myers' shortest edit script, or (once, when `anchor`) the anchors of the elements
  // unique on both sides and each gap between them compared in turn.
  function compareRange(a, aLo, aHi, b, bLo, bHi, pairs, budget, anchor) {
    while (aLo < aHi && bLo < bHi && a[aLo] === b[bLo]) pairs.push([aLo++, bLo++]);
    const tail = [];
    while (aHi > aLo && bHi > bLo && a[aHi - 1] === b[bHi - 1]) tail.push([--aHi, --bHi]);
    if (aLo < aHi && bLo < bHi && !myers(a, aLo, aHi, b, bLo, bHi, pairs, budget) && anchor) {
      const anchors = uniqueAnchors(a, aLo, aHi, b, bLo, bHi);
      let i = aLo, j = bLo;
      for (const [x, y] of anchors) {
        compareRange(a, i, x, b, j, y, pairs, budget, false);
        pairs.push([x, y]);
        i = x + 1;
        j = y + 1;
      }
      compareRange(a, i, aHi, b, j, bHi, pairs, budget, false);
    }
    for (let k = tail.length - 1; k >= 0; k -= 1) pairs.push(tail[k]);
  }

  // The pairs of the elements that occur once in a[aLo..aHi) and once in b[bLo..bHi), as many
  // of them as stay in order.
  function uniqueAnchors(a, aLo, aHi, b, bLo, bHi) {
    const counts = new Map();  // element: [occurrences in a, in b, position in a, position in b]
    for (let i = aLo; i < aHi; i += 1) {
      const seen = counts.get(a[i]);
      if (seen) seen[0] += 1; else counts.set(a[i], [1, 0, i, -1]);
    }
    for (let j = bLo; j < bHi; j += 1) {
      const seen = counts.get(b[j]);
      if (!seen) continue;
      seen[1] += 1;
      seen[3] = j;
    }
    const positionInB = new Map();
    const order = [];  // the positions in a of the unique elements, in the order of b
    for (let j = bLo; j < bHi; j += 1) {
      const seen = counts.get(b[j]);
      if (!seen || seen[0] !== 1 || seen[1] !== 1) continue;
      order.push(seen[2]);
      positionInB.set(seen[2], j);
    }
    return increasingRun(order).map((i) => [i, positionInB.get(i)]);
  }

  // Myers' greedy shortest edit script of a[aLo..aHi) and b[bLo..bHi), whose first and last
  // elements differ: adds the pairs it keeps and returns true, or returns false (adding nothing)
  // past MAX_EDITS edits or the steps left in `budget`. Memory: one copy of the frontier per edit,
  // O(d²).
  function myers(a, aLo, aHi, b, bLo, bHi, pairs, budget) {
    const n = aHi - aLo, m = bHi - bLo;
    const max = Math.min(n + m, MAX_EDITS);
    const offset = max + 1;
    const v = new Int32Array(2 * max + 3);
    const trace = [];
    for (let d = 0; d <= max; d += 1) {
      trace.push(v.slice(offset - d - 1, offset + d + 2));
      for (let k = -d; k <= d; k += 2) {
        let x = k === -d || (k !== d && v[offset + k - 1] < v[offset + k + 1]) ? v[offset + k + 1] : v[offset + k - 1] + 1;
        let y = x - k;
        const start = x;
        while (x < n && y < m && a[aLo + x] === b[bLo + y]) {
          x += 1;
          y += 1;
        }
        budget.steps -= x - start + 1;
        v[offset + k] = x;
        if (x >= n && y >= m) {
          backtrack(trace, d, k, x, aLo, bLo, pairs);
          return true;
        }
      }
      if (budget.steps < 0) return false;
    }
    return false;
  }

  // The pairs of the diagonals of the path that `myers` found, from its end at (x, x - k) after
  // `d` edits back to the start, added to `pairs` in order.
  function backtrack(trace, d, k, x, aLo, bLo, pairs) {
    const found = [];
    for (; d > 0; d -= 1) {
      const frontier = trace[d];  // the frontier after d - 1 edits, from diagonal -d - 1
      const at = (diagonal) => frontier[diagonal + d + 1];
      const down = k === -d || (k !== d && at(k - 1) < at(k + 1));
      const previousK = down ? k + 1 : k - 1;
      const previousX = at(previousK);
      const start = down ? previousX : previousX + 1;
      for (let i = x - 1; i >= start; i -= 1) found.push([aLo + i, bLo + i - k]);
      x = previousX;
      k = previousK;
    }
    for (let i = x - 1; i >= 0; i -= 1) found.push([aLo + i, bLo + i]);
    for (let i = found.length - 1; i >= 0; i -= 1) pairs.push(found[i]);
  }

  // What changed in a long string: each stretch removed or added, with the text around it in
  // `after`. Words, runs of space and single signs are compared, between the common start and
  // end. Returns { changes: [{ at, lead, removed, added, trail }], count }: `at` is the place
  // in `after`, and at most TEXT_CHANGES changes are listed of `count`.
  function textChanges(before, after) {
    let start = 0;
    const shorter = Math.min(before.length, after.length);
    while (start < shorter && before.charCodeAt(start) === after.charCodeAt(start)) start += 1;
    let end = 0;
    while (end < shorter - start && before.charCodeAt(before.length - 1 - end) === after.charCodeAt(after.length - 1 - end)) end += 1;
    // Whole words: back to the start of the word the difference begins in, and on to its end
    // (at most 64 characters each way, as a word is at most that long).
    for (let back = 0; back < 64 && start > 0 && isWord(after.charCodeAt(start - 1)) &&
         (isWord(after.charCodeAt(start)) || isWord(before.charCodeAt(start))); back += 1) start -= 1;
    for (let on = 0; on < 64 && end > 0 && isWord(after.charCodeAt(after.length - end)) &&
         (isWord(after.charCodeAt(after.length - end - 1)) || isWord(before.charCodeAt(before.length - end - 1))); on += 1) end -= 1;
    const left = tokens(before.slice(start, before.length - end));
    const right = tokens(after.slice(start, after.length - end));
    const pairs = commonPairs(left, right);
    const changes = [];
    let count = 0;
    let i = 0, j = 0;
    let atBefore = start, atAfter = start;
    const take = (untilI, untilJ) => {
      if (i === untilI && j === untilJ) return;
      const removed = left.slice(i, untilI).join("");
      const added = right.slice(j, untilJ).join("");
      count += 1;
      if (changes.length < TEXT_CHANGES) {
        const place = atAfter;
        changes.push({
          at: place, removed, added,
          lead: after.slice(Math.max(0, place - TEXT_CONTEXT), place),
          trail: after.slice(place + added.length, place + added.length + TEXT_CONTEXT),
          leadCut: place > TEXT_CONTEXT, trailCut: place + added.length + TEXT_CONTEXT < after.length,
        });
      }
      atBefore += removed.length;
      atAfter += added.length;
      i = untilI;
      j = untilJ;
    };
    for (const [x, y] of pairs) {
      take(x, y);
      atBefore += left[x].length;
      atAfter += right[y].length;
      i = x + 1;
      j = y + 1;
    }
    take(left.length, right.length);
    return { changes, count };
  }

  function isWord(code) {
    return code >= 48 && code <= 57 || code >= 65 && code <= 90 || code >= 97 && code <= 122 || code === 95 || code > 127;
  }

  // Words (at most 64 characters each), runs of space, and single signs.
  function tokens(text) {
    return text.match(/[0-9A-Za-z_\u0080-\uffff]{1,64}|\s{1,64}|[^0-9A-Za-z_\u0080-\uffff\s]/g) || [];
  }

  function isLongText(before, after) {
    return typeof before === "string" && typeof after === "string" && (before.length > LONG_TEXT || after.length > LONG_TEXT);
  }

  // A piece of text as one line: line breaks, tabs and other controls as escapes, and cut to
  // `limit` characters.
  function visible(text, limit) {
    const cut = text.length > limit ? text.slice(0, limit) : text;
    return cut.replace(/[\\\u0000-\u001f\u007f]/g, (c) => {
      switch (c) {
        case "\\": return "\\\\";
        case "\n": return "\\n";
        case "\r": return "\\r";
        case "\t": return "\\t";
        default: return "\\u{" + c.charCodeAt(0).toString(16) + "}";
      }
    }) + (text.length > limit ? "…" : "");
  }

  function span(className, text) {
    const element = document.createElement("span");
    element.className = className;
    element.textContent = text;
    return element;
  }

  // The changes of a long string, one under the other: "at N: …lead[removed][added]trail…".
  function textView(before, after) {
    const { changes, count } = textChanges(before, after);
    const box = document.createElement("div");
    box.className = "text-changes";
    for (const change of changes) {
      const line = document.createElement("div");
      line.className = "text-change";
      line.appendChild(span("meta", "at " + change.at.toLocaleString("en-US") + ": "));
      line.appendChild(span("context", (change.leadCut ? "…" : "") + visible(change.lead, TEXT_CONTEXT)));
      if (change.removed) line.appendChild(span("before", visible(change.removed, TEXT_PIECE)));
      if (change.added) line.appendChild(span("after", visible(change.added, TEXT_PIECE)));
      line.appendChild(span("context", visible(change.trail, TEXT_CONTEXT) + (change.trailCut ? "…" : "")));
      box.appendChild(line);
    }
    const summary = count === 1 ? "1 change" : count.toLocaleString("en-US") + " changes";
    const more = count > changes.length ? ", the first " + changes.length + " listed" : "";
    box.appendChild(span("meta", "(" + summary + more + "; " + before.length.toLocaleString("en-US") + " → " +
      after.length.toLocaleString("en-US") + " characters)"));
    return box;
  }

  // How a container with `size` children shows them: when it has more than LARGE, only those
  // for which `isShown(i)` holds, and each run of the others between them as one range, closed.
  // Returns a list of { child: i } and { from, to } (to excluded), in order.
  function childrenShown(size, isShown) {
    if (size <= LARGE) {
      const all = new Array(size);
      for (let i = 0; i < size; i += 1) all[i] = { child: i };
      return all;
    }
    const out = [];
    let from = 0;
    for (let i = 0; i < size; i += 1) {
      if (!isShown(i)) continue;
      if (from < i) out.push({ from, to: i });
      out.push({ child: i });
      from = i + 1;
    }
    if (from < size) out.push({ from, to: size });
    return out;
  }

  // What a range [from, to) opens to: its children when they are LARGE or fewer, else at most
  // LARGE ranges of equal length (a range of 10,000 opens to 100 of 100).
  function rangeShown(from, to) {
    const out = [];
    if (to - from <= LARGE) {
      for (let i = from; i < to; i += 1) out.push({ child: i });
      return out;
    }
    let step = LARGE;
    while (step * LARGE < to - from) step *= LARGE;
    for (let i = from; i < to; i += step) out.push({ from: i, to: Math.min(to, i + step) });
    return out;
  }

  root.FluxDiff = Object.freeze({
    LARGE, diff, canonical, sameValue, arraySteps, commonPairs, increasingRun,
    textChanges, isLongText, textView, childrenShown, rangeShown,
  });
})(globalThis);
