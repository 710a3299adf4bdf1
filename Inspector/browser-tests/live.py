"""The live Inspector in the browser: apps connect over real sockets (a fake app here, speaking the
protocol as FluxDevtools does), show as sessions, and are steered from the page."""

import http.server
import json
import os
import signal
import socket
import socketserver
import threading
import time

from selenium.webdriver.common.by import By
from selenium.webdriver.support.ui import Select

from fakeapp import FakeApp, wait_until


class Failure(Exception):
    pass


def check(condition, message):
    if not condition:
        raise Failure(message)


# The longest the page may be busy at once while an app floods it with 10,000 lines a second,
# in milliseconds: a page that redraws everything for every line freezes for seconds.
FLOOD_LONGEST_TASK_BUDGET_MS = 1500.0


class LiveTests:
    # What the live tests share.

    def open_live(self, server, lines=None, timeout=10):
        self.open(server.url)
        if lines is not None:
            self.wait(lambda: len(self.rows()) == lines, f"the page shows {len(self.rows())} rows, not {lines}", timeout)

    def row_texts(self):
        return [row[2] for row in self.rows()]

    def click_text(self, text):
        """Clicks the row that holds `text` (the last such row)."""
        rows = [row for row in self.rows() if text in row[2]]
        check(rows, f"no row reads {text!r}: {self.row_texts()}")
        self.click_row(rows[-1][0])

    def steer_result(self):
        return self.text("steer-result")

    def groceries(self, server, **options):
        app = self.connect(server, **options)
        for title in ("Milk", "Bread", "Eggs"):
            app.commit({"add": {"title": title}})
        app.commit_settings("Kitchen")
        return app

    # Tests.

    def test_live_an_app_that_connects_is_a_session_shown_as_it_commits(self):
        server = self.serve(None)
        self.open(server.url)
        check("No app is connected yet" in self.text("banner"), self.text("banner"))
        app = self.groceries(server)
        self.wait(lambda: len(self.rows()) == 4, f"the app's actions do not show: {self.row_texts()}")
        check("todo · pid 4242 · live" in self.text("session"), self.text("session"))
        check(self.text("status") == "app connected", self.text("status"))
        started = time.monotonic()
        app.commit({"add": {"title": "Tea"}})
        self.wait(lambda: len(self.rows()) == 5, "a new commit does not appear")
        self.figures["live: from an app's commit to its row on the page"] = f"{time.monotonic() - started:.2f} s"
        check('add(title: "Tea")' in self.rows()[-1][2], self.rows()[-1][2])
        # The filters, the state and the diff work as for a log.
        Select(self.driver.find_element(By.ID, "filter-store")).select_by_value("settings")
        self.wait(lambda: len(self.rows()) == 1, "the store filter does not narrow a live session")
        Select(self.driver.find_element(By.ID, "filter-store")).select_by_value("")
        self.click_text('"Tea"')
        self.wait(lambda: 'title: "Tea"' in self.text("detail-diff"), f"the diff reads {self.text('detail-diff')!r}")
        app.close()
        self.wait(lambda: self.text("status").startswith("app disconnected"), f"the status reads {self.text('status')!r}")
        self.wait(lambda: "disconnected" in self.text("session"), self.text("session"))

    def test_live_a_jump_from_the_page_changes_the_app_and_shows_as_jumped(self):
        server = self.serve(None)
        app = self.groceries(server)
        self.open_live(server, lines=4)
        self.click_text('"Bread"')
        self.wait(lambda: self.driver.find_elements(By.CSS_SELECTOR, ".steer-jump"), "no Jump button for lists")
        self.driver.find_element(By.CSS_SELECTOR, ".steer-jump").click()
        check(wait_until(lambda: app.titles() == ["Milk", "Bread"]), f"after the jump the app holds {app.titles()}")
        self.wait(lambda: "jumped lists to after #1" in self.steer_result(), f"the answer reads {self.steer_result()!r}")
        self.wait(lambda: any("jumped from the Inspector" in text for text in self.row_texts()),
                  f"the jump's commit is not shown as jumped: {self.row_texts()}")
        self.wait(lambda: any("Inspector: jump lists" in text and "done" in text for text in self.row_texts()),
                  f"the command is not in the timeline: {self.row_texts()}")
        # Back to the present: nothing the app did meanwhile is lost.
        app.commit({"add": {"title": "Tea"}})
        self.driver.find_element(By.ID, "present").click()
        check(wait_until(lambda: app.titles() == ["Milk", "Bread", "Eggs", "Tea"]), f"the present is {app.titles()}")
        self.wait(lambda: any("back to the present from the Inspector" in text for text in self.row_texts()),
                  f"the present's commit is not shown as such: {self.row_texts()}")
        self.screenshot("inspector-live-jump.png")

    def test_live_a_dispatch_typed_in_the_page_adds_an_item_and_a_wrong_one_says_why_in_place(self):
        server = self.serve(None)
        app = self.groceries(server)
        self.open_live(server, lines=4)
        field = self.driver.find_element(By.ID, "dispatch-text")
        field.send_keys('{"add":{"title":5}}')
        self.driver.find_element(By.ID, "dispatch").click()
        self.wait(lambda: "expected a string" in self.text("dispatch-error"),
                  f"the decoding error is not shown in place: {self.text('dispatch-error')!r}")
        check(app.titles() == ["Milk", "Bread", "Eggs"], f"a wrong action changed the app: {app.titles()}")
        self.wait(lambda: any("failed" in text and "expected a string" in text for text in self.row_texts()),
                  f"the failed dispatch is not in the timeline: {self.row_texts()}")
        field.clear()
        field.send_keys('{"add": {"title": "Tea"')
        self.driver.find_element(By.ID, "dispatch").click()
        self.wait(lambda: "This is not JSON" in self.text("dispatch-error"), self.text("dispatch-error"))
        field.clear()
        field.send_keys('{"add":{"title":"Tea"}}')
        self.driver.find_element(By.ID, "dispatch").click()
        check(wait_until(lambda: app.titles() == ["Milk", "Bread", "Eggs", "Tea"]), f"the app holds {app.titles()}")
        self.wait(lambda: self.driver.find_element(By.ID, "dispatch-error").get_attribute("hidden") is not None,
                  "the error stays after a dispatch that worked")
        self.wait(lambda: any("dispatched from the Inspector" in text and "Tea" in text for text in self.row_texts()),
                  f"the dispatched action is not shown as such: {self.row_texts()}")

    def test_live_a_skip_removes_an_items_effect_and_unskip_restores_it(self):
        server = self.serve(None)
        app = self.groceries(server)
        self.open_live(server, lines=4)
        self.click_text('"Bread"')
        self.wait(lambda: self.driver.find_elements(By.CSS_SELECTOR, ".steer-skip"), "no Skip button")
        self.driver.find_element(By.CSS_SELECTOR, ".steer-skip").click()
        check(wait_until(lambda: app.titles() == ["Milk", "Eggs"]), f"after the skip the app holds {app.titles()}")
        self.wait(lambda: any("skipped" in text and '"Bread"' in text for text in self.row_texts()),
                  f"the skipped action is not marked: {self.row_texts()}")
        self.click_text('add(title: "Bread")')
        self.wait(lambda: self.driver.find_elements(By.CSS_SELECTOR, ".steer-unskip"), "no Unskip button")
        self.driver.find_element(By.CSS_SELECTOR, ".steer-unskip").click()
        check(wait_until(lambda: app.titles() == ["Milk", "Bread", "Eggs"]), f"after the unskip: {app.titles()}")
        self.wait(lambda: any("unskipped from the Inspector" in text for text in self.row_texts()), self.row_texts())

    def test_live_pause_and_resume_leave_a_gap_that_says_so(self):
        server = self.serve(None)
        app = self.groceries(server)
        self.open_live(server, lines=4)
        self.driver.find_element(By.ID, "pause").click()
        self.wait(lambda: self.text("pause") == "Resume", "the button does not offer to resume")
        check("paused" in self.text("steer-app"), self.text("steer-app"))
        for title in ("Tea", "Jam"):
            app.commit({"add": {"title": title}})
        self.driver.find_element(By.ID, "pause").click()
        self.wait(lambda: any("2 actions not recorded (paused)" in text for text in self.row_texts()),
                  f"no gap for the paused actions: {self.row_texts()}")
        app.commit({"add": {"title": "Rice"}})
        self.wait(lambda: any('"Rice"' in text for text in self.row_texts()), "after resume, new actions do not show")

    def test_live_a_session_file_imported_into_the_running_app(self):
        server = self.serve(None)
        app = self.groceries(server)
        self.open_live(server, lines=4)
        session = self.path("imported.jsonl")
        with open(session, "w", encoding="utf-8") as file:
            for title_list in (["Flour"], ["Flour", "Sugar"]):
                items = [{"id": i + 1, "isDone": False, "title": t} for i, t in enumerate(title_list)]
                file.write(json.dumps({"action": {"add": {"title": title_list[-1]}}, "outcome": "committed",
                                       "state": {"items": items}, "store": "lists",
                                       "time": "2026-11-23T03:07:49.123Z"}) + "\r\n")
        self.driver.find_element(By.ID, "import").send_keys(session)
        check(wait_until(lambda: app.titles() == ["Flour", "Sugar"]), f"after the import the app holds {app.titles()}")
        self.wait(lambda: sum("imported" in text for text in self.row_texts()) >= 3,
                  f"the imported lines are not shown: {self.row_texts()}")
        # A file with a line that does not read is not sent, and says which line.
        bad = self.path("bad-import.jsonl")
        with open(bad, "w", encoding="utf-8") as file:
            file.write('{"store":"lists"}\n{"store":"a","store":"b"}\n')
        self.driver.find_element(By.ID, "import").send_keys(bad)
        self.wait(lambda: "line 2" in self.steer_result() and "twice" in self.steer_result(), self.steer_result())
        check(len(app.commands) == 1, f"the app got {len(app.commands)} commands")

    def test_live_read_only_stores_show_no_controls(self):
        server = self.serve(None)
        self.groceries(server)
        self.open_live(server, lines=4)
        self.click_text("Kitchen")
        self.wait(lambda: "read-only" in self.text("detail-steer"), self.text("detail-steer"))
        check(not self.driver.find_elements(By.CSS_SELECTOR, ".steer-jump, .steer-skip"), "a read-only store has controls")
        check("Read-only: settings" in self.text("read-only"), self.text("read-only"))
        # An app that lets no store be steered: no controls at all.
        other = self.connect(server, steerable=False)
        other.commit({"add": {"title": "Milk"}})
        self.wait(lambda: len(self.driver.find_elements(By.CSS_SELECTOR, "#session option")) == 2, "no second session")
        Select(self.driver.find_element(By.ID, "session")).select_by_index(1)
        self.wait(lambda: len(self.rows()) == 1, "the second session is not shown")
        check(not self.driver.find_element(By.ID, "steer-controls").is_displayed(), "the controls show")
        self.click_row(0)
        self.wait(lambda: "read-only" in self.text("detail-steer"), self.text("detail-steer"))

    def test_live_two_apps_are_two_sessions_and_a_reconnect_continues_its_own(self):
        server = self.serve(None)
        first = self.groceries(server)
        self.open_live(server, lines=4)
        second = self.connect(server, app="notes")
        second.commit({"add": {"title": "Other"}})
        self.wait(lambda: len(self.driver.find_elements(By.CSS_SELECTOR, "#session option")) == 2, "no second session")
        first.close()
        self.wait(lambda: "todo · pid 4242 · disconnected" in self.text("session"), self.text("session"))
        again = FakeApp(server.apps, session=first.session)
        again.n, again.items, again.next_id, again.own, again.states = first.n, first.items, first.next_id, first.own, first.states
        self.apps.append(again)
        welcome = again.connect()
        check(welcome["have"] == 4, f"the inspector says it has {welcome['have']} lines, not 4")
        again.commit({"add": {"title": "After"}})
        self.wait(lambda: len(self.rows()) == 5 and "After" in self.rows()[-1][2],
                  f"the reconnected app's session does not go on: {self.row_texts()}")
        options = lambda: self.driver.execute_script(  # noqa: E731
            "return Array.from(document.querySelectorAll('#session option')).map(o => o.textContent)")
        self.wait(lambda: len(options()) == 2 and "todo · pid 4242 · live" in options()[0], f"the sessions are {options()}")

    def test_live_nothing_an_app_sends_runs_as_script(self):
        server = self.serve(None)
        app = self.connect(server, app='<img src=x onerror="window.pwned=1">')
        hostile = '<img src=x onerror="window.pwned=2"><script>window.pwned=3</script>'
        app.commit({"add": {"title": hostile}})
        with app.lock:
            app.line(hostile, {"x": hostile}, {hostile: hostile})
        self.open_live(server, lines=2)
        self.click_row(0)
        self.click_row(1)
        time.sleep(0.5)
        check(self.driver.execute_script("return window.pwned") is None, "a message from the app ran as script")
        check(hostile in self.text("detail-state"), "the text is not shown as it is")
        check(self.driver.find_elements(By.CSS_SELECTOR, "#rows img, #detail img, header img") == [], "an element was made")

    def test_live_a_command_from_another_origin_is_refused(self):
        server = self.serve(None)
        app = self.groceries(server)
        inspector_port = server.url.rsplit(":", 1)[1].strip("/")
        # A page of another site, which knows the inspector's address and even the app's session.
        page = ("<script>fetch('http://127.0.0.1:" + inspector_port + "/command', {method: 'POST', mode: 'no-cors',"
                " body: JSON.stringify({session: 1, store: 'lists', command: 'present', token: 'guess'})})"
                ".then(() => document.title = 'sent', () => document.title = 'failed');</script>")
        handler = type("Handler", (http.server.BaseHTTPRequestHandler,), {
            "do_GET": lambda self: (self.send_response(200), self.send_header("Content-Type", "text/html"),
                                    self.end_headers(), self.wfile.write(page.encode())),
            "log_message": lambda self, *args: None,
        })
        other = socketserver.TCPServer(("127.0.0.1", 0), handler)
        threading.Thread(target=other.serve_forever, daemon=True).start()
        try:
            self.driver.get(f"http://127.0.0.1:{other.server_address[1]}/")
            self.wait(lambda: self.driver.title in ("sent", "failed"), "the other page sent nothing")
            time.sleep(0.5)
            check(app.commands == [], f"the app got {app.commands}")
        finally:
            other.shutdown()
            other.server_close()
        server.process.terminate()
        said = server.process.stderr.read()
        server.process.wait()
        self.servers.remove(server)
        check("refused a command" in said and "Origin" in said, f"the server said {said!r}")

    def test_live_another_site_cannot_frame_the_page_to_have_its_controls_clicked(self):
        server = self.serve(None)
        app = self.groceries(server)
        # A page of another site that shows the inspector's page in a frame, under a button of its
        # own, so that a click meant for its button lands on the inspector's Pause.
        page = ('<p id="bait">Click to win</p><iframe id="inspector" src="' + server.url
                + '" style="width:1200px;height:600px;opacity:0.01"></iframe>')
        handler = type("Handler", (http.server.BaseHTTPRequestHandler,), {
            "do_GET": lambda self: (self.send_response(200), self.send_header("Content-Type", "text/html"),
                                    self.end_headers(), self.wfile.write(page.encode())),
            "log_message": lambda self, *args: None,
        })
        other = socketserver.TCPServer(("127.0.0.1", 0), handler)
        threading.Thread(target=other.serve_forever, daemon=True).start()
        try:
            self.driver.get(f"http://127.0.0.1:{other.server_address[1]}/")
            self.wait(lambda: self.driver.find_elements(By.ID, "bait"), "the other page does not show")
            time.sleep(1.5)
            self.driver.switch_to.frame(self.driver.find_element(By.ID, "inspector"))
            try:
                shown = wait_until(lambda: self.driver.execute_script(
                    "return document.body !== null && document.body.dataset.ready === 'true'"), timeout=3)
                if shown:
                    self.driver.execute_script("document.getElementById('pause').click()")
                    time.sleep(1)
            finally:
                self.driver.switch_to.default_content()
            check(app.commands == [], f"a click in another site's frame reached the app: {app.commands}")
            check(not shown, "the inspector's page shows in another site's frame")
        finally:
            other.shutdown()
            other.server_close()

    def test_live_a_flood_of_10000_lines_a_second_keeps_the_page_responsive(self):
        server = self.serve(None)
        app = self.connect(server)
        self.open(server.url)
        self.wait(lambda: self.text("status") == "app connected", self.text("status"))
        self.driver.execute_script("""
            window.longest = 0;
            new PerformanceObserver((list) => {
              for (const entry of list.getEntries()) window.longest = Math.max(window.longest, entry.duration);
            }).observe({ type: 'longtask', buffered: false });""")
        started = time.monotonic()
        with app.lock:
            for burst in range(200):
                for index in range(100):
                    n = app.n
                    app.send({"type": "line", "n": n, "line": {
                        "action": {"add": {"title": f"Item {n}"}}, "durationNanoseconds": 1500 + index,
                        "outcome": "committed", "sequence": n + 1, "store": "lists",
                        "time": "2026-11-23T03:07:49.123Z"}})
                    app.n += 1
                time.sleep(0.01)
        sent = time.monotonic() - started
        self.wait(lambda: "20,000 of 20,000 events" in self.text("count"), f"the page reads {self.text('count')!r}",
                  timeout=60)
        shown = time.monotonic() - started
        longest = self.driver.execute_script("return window.longest")
        self.figures["live flood: 20,000 lines sent in"] = f"{sent:.2f} s"
        self.figures["live flood: all shown after"] = f"{shown:.2f} s"
        self.figures["live flood: the page's longest busy stretch"] = f"{longest:.0f} ms"
        check(longest < FLOOD_LONGEST_TASK_BUDGET_MS, f"the page was busy for {longest:.0f} ms at once")

    def test_live_a_10_mb_line_is_shown_and_selected(self):
        server = self.serve(None)
        app = self.connect(server)
        app.commit({"add": {"title": "Milk"}})
        with app.lock:
            app.line("lists", {"add": {"title": "Big"}}, {"items": [], "note": "x" * 10_000_000})
        # A debug build of the server reads the line in seconds, more on a busy machine.
        self.open_live(server, lines=2, timeout=40)
        self.click_row(1)
        self.wait(lambda: 'add(title: "Big")' == self.text("detail-title"), self.text("detail-title"))
        check(self.driver.execute_script("return 1 + 1") == 2, "the page does not answer")

    def test_live_a_log_file_is_shown_beside_the_apps(self):
        server = self.serve(self.todo_log)
        expected = len(self.lines_of(self.todo_log))
        self.open(server.url)
        self.wait(lambda: len(self.rows()) == expected, "the log's rows do not show")
        self.groceries(server)
        self.wait(lambda: len(self.driver.find_elements(By.CSS_SELECTOR, "#session option")) == 2, "no app session")
        choose = Select(self.driver.find_element(By.ID, "session"))
        check(choose.options[0].text.endswith("(file)"), choose.options[0].text)
        check(self.driver.find_element(By.ID, "steer").get_attribute("hidden") is not None, "a log file has controls")
        choose.select_by_index(1)
        self.wait(lambda: len(self.rows()) == 4 and self.text("status") == "app connected", self.row_texts())
        check(self.driver.find_element(By.ID, "steer").is_displayed(), "the app has no controls")
        Select(self.driver.find_element(By.ID, "session")).select_by_index(0)
        self.wait(lambda: len(self.rows()) == expected, "back to the log, its rows do not show")
        self.wait(lambda: self.driver.find_element(By.ID, "steer").get_attribute("hidden") is not None, "controls stay")

    def test_live_an_inspector_killed_and_started_again_shows_the_app_that_reconnects(self):
        ports = []
        for _ in range(2):
            with socket.socket() as probe:
                probe.bind(("127.0.0.1", 0))
                ports.append(probe.getsockname()[1])
        server = self.serve(None, port=ports[0], apps_port=ports[1])
        app = self.groceries(server)
        self.open_live(server, lines=4)
        os.kill(server.process.pid, signal.SIGKILL)
        server.process.wait()
        self.servers.remove(server)
        self.wait(lambda: "server gone" in self.text("status"), f"the status reads {self.text('status')!r}")
        app.close()
        server = self.serve(None, port=ports[0], apps_port=ports[1])
        again = FakeApp(server.apps, session=app.session)
        again.n, again.items, again.next_id, again.own, again.states = app.n, app.items, app.next_id, app.own, app.states
        self.apps.append(again)
        check(again.connect()["have"] == 0, "a new inspector says it holds lines")
        again.commit({"add": {"title": "After"}})
        self.wait(lambda: self.text("status") == "app connected" and any("After" in text for text in self.row_texts()),
                  f"after the restart the page shows {self.row_texts()} ({self.text('status')!r})", timeout=20)
        # The page, loaded before the restart, steers the app through the inspector started again.
        self.click_text('"After"')
        self.wait(lambda: self.driver.find_elements(By.CSS_SELECTOR, ".steer-skip"), "no Skip button")
        self.driver.find_element(By.CSS_SELECTOR, ".steer-skip").click()
        check(wait_until(lambda: again.titles() == ["Milk", "Bread", "Eggs"]),
              f"after the skip the app holds {again.titles()} (the page: {self.steer_result()!r})")

    def test_live_a_page_older_than_the_inspector_steers_no_other_app_than_its_own(self):
        ports = []
        for _ in range(2):
            with socket.socket() as probe:
                probe.bind(("127.0.0.1", 0))
                ports.append(probe.getsockname()[1])
        server = self.serve(None, port=ports[0], apps_port=ports[1])
        app = self.groceries(server)
        self.open_live(server, lines=4)
        os.kill(server.process.pid, signal.SIGKILL)
        server.process.wait()
        self.servers.remove(server)
        self.wait(lambda: "server gone" in self.text("status"), f"the status reads {self.text('status')!r}")
        app.close()
        # Started again, the inspector numbers its sessions anew: another app is session 1 now,
        # while the app the page shows has not reconnected.
        server = self.serve(None, port=ports[0], apps_port=ports[1])
        other = self.connect(server, app="notes")
        self.wait(lambda: "waiting for the app" in self.text("status"), f"the status reads {self.text('status')!r}")
        self.driver.find_element(By.ID, "pause").click()
        self.wait(lambda: self.steer_result().startswith("✗"), f"the pause reads {self.steer_result()!r}")
        time.sleep(0.5)
        check(other.commands == [], f"the other app got {other.commands}")
        check("another app" in self.steer_result(), f"the page says {self.steer_result()!r}")

    def test_live_the_controls_hold_at_800_1024_and_1400_px(self):
        server = self.serve(None)
        self.groceries(server)
        self.open_live(server, lines=4)
        self.click_text('"Bread"')
        try:
            for width in (800, 1024, 1400):
                self.viewport(width, 900)
                self.wait(lambda: self.driver.execute_script("return window.innerWidth") == width, "no resize")
                boxes = self.driver.execute_script("""
                    return ['pause', 'present', 'dispatch', 'dispatch-text', 'steer-store'].map(id => {
                      const box = document.getElementById(id).getBoundingClientRect();
                      return [id, box.left, box.right, box.width];
                    }).concat([['page', 0, document.documentElement.scrollWidth, 0]]);""")
                for name, left, right, box_width in boxes:
                    check(right <= width + 0.5, f"at {width} px, {name} ends at {right:.0f} px")
                    check(name == "page" or box_width >= 40, f"at {width} px, {name} is {box_width:.0f} px wide")
                self.screenshot(f"inspector-live-{width}.png")
        finally:
            self.default_viewport()
