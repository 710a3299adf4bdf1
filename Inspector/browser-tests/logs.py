"""Action logs for the browser tests, written as the log writer writes them (keys sorted, one
JSON object per line): a small one with every optional field, and a large one."""

import json
from datetime import datetime, timedelta, timezone


def _line(fields):
    return json.dumps(fields, sort_keys=True, separators=(",", ":"), ensure_ascii=False) + "\n"


def _time(start, milliseconds):
    moment = start + timedelta(milliseconds=milliseconds)
    return moment.strftime("%Y-%m-%dT%H:%M:%S.") + f"{moment.microsecond // 1000:03d}Z"


START = datetime(2026, 11, 23, 3, 7, 49, tzinfo=timezone.utc)


def with_every_field():
    """A counter store and a settings store: snapshots of the state, a sequence, holds, a
    cancellation with its middleware, and one global dispatch to both stores."""
    lines = []
    count = 0
    sequence = 0

    def add(fields):
        nonlocal sequence
        sequence += 1
        fields["sequence"] = sequence
        fields["time"] = _time(START, sequence * 7)
        lines.append(_line(fields))

    for amount in (2, 3):
        count += amount
        add({"store": "counter", "outcome": "committed", "durationNanoseconds": 1500 + amount * 100,
             "action": {"add": {"_0": amount}}, "state": {"count": count, "history": [count]}})
    add({"store": "settings", "outcome": "committed", "durationNanoseconds": 4200,
         "action": {"rename": {"title": "Kitchen"}}, "state": {"title": "Kitchen", "dark": False}})
    add({"store": "counter", "outcome": "cancelled", "cancelledBy": "RateLimiter",
         "action": {"add": {"_0": 100}}, "holds": [{"middleware": "RateLimiter", "nanoseconds": 2500000}]})
    count = 0
    for store, state in (("counter", {"count": 0, "history": []}), ("settings", {"title": "Kitchen", "dark": True})):
        add({"store": store, "outcome": "committed", "durationNanoseconds": 900, "dispatch": "d-1",
             "action": {"reset": {}}, "state": state})
    add({"store": "counter", "outcome": "committed", "durationNanoseconds": 1800,
         "holds": [{"middleware": "Authorizer", "nanoseconds": 1200000}],
         "action": {"add": {"_0": 5}}, "state": {"count": 5, "history": [5]}})
    return "".join(lines)


def many(count):
    """`count` actions of three stores, without state, as a long session writes them."""
    stores = ("counter", "todos", "settings")
    lines = []
    for index in range(count):
        store = stores[index % 3]
        if index % 50 == 49:
            lines.append(_line({"store": store, "outcome": "cancelled", "time": _time(START, index),
                                "action": {"remove": {"_0": index}}, "sequence": index + 1}))
        else:
            lines.append(_line({"store": store, "outcome": "committed", "time": _time(START, index),
                                "durationNanoseconds": 800 + (index * 7919) % 40000,
                                "action": {"add": {"_0": index}}, "sequence": index + 1}))
    return "".join(lines)


def slow_and_long(count):
    """`count` quick actions, then twenty slow commits of 100 KB each, the last the slowest."""
    lines = many(count)
    for index in range(20):
        lines += _line({"store": "big<b>", "outcome": "committed", "time": _time(START, count + index),
                        "durationNanoseconds": 10_000_000 * (index + 1), "action": {"load": {"_0": index}},
                        "sequence": count + index + 1, "state": {"text": "x" * 100_000}})
    return lines


def one_dispatch_on(count):
    """`count` lines of one global dispatch: the same `dispatch` id, each to a store of its own."""
    lines = []
    for index in range(count):
        lines.append(_line({"store": f"s{index}", "outcome": "committed", "time": _time(START, 1),
                            "durationNanoseconds": 700 + index % 500, "dispatch": "1",
                            "action": {"reset": {}}, "sequence": index + 1}))
    return "".join(lines)


def two_sessions():
    """Two sessions of one app in one file, as `cat first.jsonl second.jsonl` makes it: each
    numbers its lines and its global dispatches from 1, so both have a dispatch "1"."""
    lines = []
    for session, (case, stores) in enumerate((("reset", ("a", "b", "c", "d")), ("load", ("e",)))):
        sequence = 0
        for store in stores:
            sequence += 1
            lines.append(_line({"store": store, "outcome": "committed", "time": _time(START, session * 60000 + sequence),
                                "durationNanoseconds": 1000, "dispatch": "1", "action": {case: {}},
                                "sequence": sequence, "state": {"loaded": case == "load"}}))
        lines.append(_line({"store": "a", "outcome": "committed", "time": _time(START, session * 60000 + 9),
                            "durationNanoseconds": 1000, "action": {"add": {"_0": session}},
                            "sequence": sequence + 1, "state": {"loaded": case == "load"}}))
    return "".join(lines)


def todo_items(before, after):
    """Two commits of a list store: the state `before`, then `after`."""
    return "".join(_line({"store": "list", "outcome": "committed", "time": _time(START, index),
                          "durationNanoseconds": 1000, "action": {"edit": {"_0": index}},
                          "sequence": index + 1, "state": state})
                   for index, state in enumerate((before, after)))


def one_slow_commit():
    """A slow first commit, 50 ms, then forty quick ones from 1 to 5 µs."""
    lines = [_line({"store": "s", "outcome": "committed", "time": _time(START, 0), "durationNanoseconds": 50_000_000,
                    "action": {"load": {}}, "sequence": 1})]
    for index in range(40):
        lines.append(_line({"store": "s", "outcome": "committed", "time": _time(START, index + 1),
                            "durationNanoseconds": 1000 + (index * 997) % 4000, "action": {"add": {"_0": index}},
                            "sequence": index + 2}))
    return "".join(lines)


def nested(depth):
    """Two commits of a state nested `depth` deep, that differ at the bottom."""
    def state(leaf):
        text = '{"leaf":' + json.dumps(leaf) + "}"
        for _ in range(depth - 2):
            text = '{"n":' + text + "}"
        return text
    return "".join(
        '{"action":{"set":{"_0":' + str(index) + '}},"durationNanoseconds":1000,"outcome":"committed",'
        '"sequence":' + str(index + 1) + ',"state":' + state(leaf) + ',"store":"deep","time":"'
        + _time(START, index) + '"}\n'
        for index, leaf in enumerate(("before", "after")))


def nested_arrays(depth, length):
    """Two commits of a string of `length` characters in arrays nested `depth` deep, that differ
    at its end."""
    text = "x" * length
    return "".join(
        '{"action":{"set":{"_0":' + str(index) + '}},"durationNanoseconds":1000,"outcome":"committed",'
        '"sequence":' + str(index + 1) + ',"state":{"n":' + "[" * depth + json.dumps(text + leaf) + "]" * depth
        + '},"store":"deep","time":"' + _time(START, index) + '"}\n'
        for index, leaf in enumerate(("before", "after")))


def todo_session(count, needle_at=None, first=0):
    """`count` actions of a todo-like session with its state, as a long session writes them:
    items added, toggled and removed in one store, a filter changed now and then in another.
    The action at `needle_at` (0-based) adds an item whose title holds `needle`. `first` is the
    index of the first action, for a session written a block at a time."""
    parts = []
    items = 0
    done = 0
    for index in range(first, first + count):
        time = _time(START, index // 4)
        if index % 97 == 96:
            which = ("all", "active", "done")[index % 3]
            parts.append('{"action":{"setFilter":{"_0":"%s"}},"durationNanoseconds":%d,"outcome":"committed",'
                         '"sequence":%d,"state":{"filter":"%s"},"store":"filter","time":"%s"}\n'
                         % (which, 900 + index % 700, index + 1, which, time))
            continue
        kind = index % 5
        if kind == 3 and items:
            done += 1
            action = '{"toggle":{"_0":%d}}' % (index % items)
        elif kind == 4 and items:
            items -= 1
            done = min(done, items)
            action = '{"remove":{"_0":%d}}' % (index % (items + 1))
        else:
            items += 1
            title = "needle" if index == needle_at else "Buy milk"
            action = '{"add":{"title":"%s %d"}}' % (title, index)
        parts.append('{"action":%s,"durationNanoseconds":%d,"outcome":"committed","sequence":%d,'
                     '"state":{"done":%d,"items":%d},"store":"todos","time":"%s"}\n'
                     % (action, 1500 + (index * 7919) % 40000, index + 1, done, items, time))
    return "".join(parts)
