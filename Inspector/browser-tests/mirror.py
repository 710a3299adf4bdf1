"""States written through `Mirror` (`"stateMirror"`, of `snapshots: .mirror`) in the browser: shown
read-only, with a note that says why, and no jump to them."""

import json

from selenium.webdriver.common.by import By

from fakeapp import now


class Failure(Exception):
    pass


def check(condition, message):
    if not condition:
        raise Failure(message)


def player_state(level, title):
    """A Mirror snapshot as FluxDevtools writes it: a struct, an enum with values, an object in a
    cycle, a collection cut at its bound, a function."""
    return {
        "kind": "class", "type": "PlayerState", "id": 1, "fields": {
            "volume": {"kind": "struct", "type": "Volume", "fields": {"level": level}},
            "mode": {"kind": "enum", "type": "Mode", "case": "shuffle",
                     "payload": {"kind": "tuple", "type": "(seed: Int)", "elements": [7], "labels": ["seed"]}},
            "current": {"kind": "class", "type": "Track", "id": 2,
                        "fields": {"title": title, "next": {"kind": "ref", "type": "Track", "id": 2}}},
            # Cut after 10 elements here (the log cuts after 100), so that the page shows them all
            # at once, where it closes a longer array into ranges.
            "queue": {"kind": "collection", "type": "Array<Int>", "count": 1000,
                      "elements": list(range(10)) + [{"kind": "…", "reason": "count", "omitted": 990}]},
            "onEnd": {"kind": "value", "type": "() -> ()", "description": "(Function)"},
            "__proto__": {"kind": "struct", "type": "Odd", "fields": {"polluted": True}},
        }}


def mirror_line(sequence, level, title="Intro", store="player"):
    return json.dumps({
        "action": {"volume": {"_0": level}}, "durationNanoseconds": 2000, "outcome": "committed",
        "sequence": sequence, "stateForm": "mirror", "stateMirror": player_state(level, title),
        "stateType": "App.PlayerState", "store": store, "time": "2026-11-27T16:00:0%d.000Z" % sequence,
    }, sort_keys=True, ensure_ascii=False)


class MirrorTests:
    def test_a_mirror_snapshot_is_shown_read_only_with_its_changes(self):
        counter = json.dumps({"action": {"add": {"_0": 1}}, "durationNanoseconds": 1000, "outcome": "committed",
                              "sequence": 3, "state": {"count": 1}, "store": "counter",
                              "time": "2026-11-27T16:00:03.000Z"}, sort_keys=True)
        log = self.write_log("mirror.jsonl", "\n".join([mirror_line(1, 3), mirror_line(2, 4), counter]) + "\n")
        server = self.serve(log)
        self.open(server.url)
        self.wait(lambda: len(self.rows()) == 3, f"{len(self.rows())} rows for 3 lines")
        self.click_row(1)
        self.wait(lambda: "Read-only" in self.text("detail-state"), "a Mirror snapshot has no read-only note")
        state = self.text("detail-state")
        check("PlayerState as Mirror shows it" in state and "no jump to it" in state, f"the note reads {state!r}")
        for shown in ("level: 4", '"… 990 more"', '"→ Track #2 (shown above)"', ".shuffle", '"(Function)"',
                      "__proto__", 'title: "Intro"'):
            check(shown in state, f"the state does not show {shown}: {state!r}")
        check("stateMirror" not in state and "kind" not in state, f"the state shows the snapshot's form: {state!r}")
        diff = self.text("detail-diff")
        check("volume.level 3 → 4" in diff, f"the changes read {diff!r}")
        self.screenshot("inspector-mirror-snapshot.png")
        # A line with a state is shown as before, without the note.
        self.click_row(2)
        self.wait(lambda: "count: 1" in self.text("detail-state"), "the counter's state is not shown")
        check("Read-only" not in self.text("detail-state"), self.text("detail-state"))
        errors = self.page_errors()
        check(errors == [], f"the page logged errors: {errors}")

    def test_live_a_mirror_snapshot_of_a_steerable_store_offers_no_jump(self):
        server = self.serve(None)
        app = self.connect(server)
        app.commit({"add": {"title": "Milk"}})
        with app.lock:
            fields = json.loads(mirror_line(app.n + 1, 5, store="lists"))
            fields["time"] = now()
            app.send({"type": "line", "n": app.n, "line": fields})
            app.n += 1
        self.open_live(server, lines=2)
        self.click_text("volume(5)")
        self.wait(lambda: "Mirror snapshot" in self.text("detail-steer"), f"the steering reads {self.text('detail-steer')!r}")
        check(not self.driver.find_elements(By.CSS_SELECTOR, ".steer-jump, .steer-skip"),
              "a Mirror snapshot has a jump or a skip")
        check("Read-only" in self.text("detail-state"), self.text("detail-state"))
        # The line before it, with a state, can still be jumped to.
        self.click_text('"Milk"')
        self.wait(lambda: self.driver.find_elements(By.CSS_SELECTOR, ".steer-jump"), "no Jump button for lists")
