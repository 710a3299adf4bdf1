#!/usr/bin/env python3
"""The inspector's page in a real browser: Debian's headless Chromium, driven by Selenium through
Debian's chromedriver.

    python3 run.py --inspector PATH/flux-inspector --todo PATH/todo --out DIR

Records a session of the todo example, serves it with flux-inspector, and checks what the page
shows; prints one line per test, then "N passed, N failed", and exits with 1 if any failed.
Screenshots go to DIR.
"""

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
import traceback

from selenium import webdriver
from selenium.common.exceptions import TimeoutException
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.common.by import By
from selenium.webdriver.common.keys import Keys
from selenium.webdriver.support.ui import Select, WebDriverWait

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import logs  # noqa: E402
from fakeapp import FakeApp  # noqa: E402
from live import LiveTests  # noqa: E402
from mirror import MirrorTests  # noqa: E402
from todolive import TodoLiveTests  # noqa: E402

# The commands of the recorded todo session, as typed at its prompt.
TODO_COMMANDS = """new Groceries
add Milk
add Bread
add Eggs
done 1
edit 2 Rye bread
remove 3
use Inbox
add Call the plumber
done 1
undo 1
"""

# The most the 100,000-action log may take to open, in seconds, with a debug build of the
# inspector (as `swift run` builds it): it took 5 to 6.5 s on a two-core machine, and 18 to 28 s on
# that machine busy with other builds (4.4 s with a release build), so that a slower page or
# server, not a busy machine, fails it.
BIG_LOG_BUDGET_SECONDS = 35.0
# The most one scroll step of that log may take to draw, in milliseconds: a list that is not
# virtualized takes seconds (it took 17 to 72 ms on that machine).
SCROLL_STEP_BUDGET_MS = 250.0


class Failure(Exception):
    pass


def check(condition, message):
    if not condition:
        raise Failure(message)


class Inspector:
    """flux-inspector serving one log, or none (the apps that connect), until stopped."""

    def __init__(self, binary, log, port=None, apps_port=None, extra=()):
        arguments = [binary] + ([log] if log else []) + (["--port", str(port)] if port else [])
        arguments += (["--apps-port", str(apps_port)] if apps_port else []) + list(extra)
        self.process = subprocess.Popen(arguments, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        line = self.process.stdout.readline()
        if not line.startswith("Flux Inspector: http://"):
            self.process.kill()
            raise Failure("flux-inspector did not start: " + line + self.process.stderr.read())
        self.url = line.split()[2]
        apps = self.process.stdout.readline()
        if not apps.startswith("Apps connect with FLUX_INSPECTOR="):
            self.process.kill()
            raise Failure("flux-inspector did not say where apps connect: " + apps)
        self.apps = apps.strip().split("=", 1)[1]
        self.pairing = None
        if "--listen" in extra:
            self.pairing = self.process.stdout.readline().strip().split("=", 1)[1]

    def stop(self):
        self.process.terminate()
        try:
            self.process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()


class Suite(LiveTests, TodoLiveTests, MirrorTests):
    def __init__(self, args):
        self.args = args
        self.work = tempfile.mkdtemp(prefix="flux-inspector-browser-")
        self.servers = []
        self.apps = []
        self.todos = []
        self.figures = {}
        options = webdriver.ChromeOptions()
        options.binary_location = args.chromium
        for flag in ("--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--disable-gpu",
                     "--no-proxy-server", "--window-size=1440,900", "--allow-file-access-from-files"):
            options.add_argument(flag)
        options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
        self.driver = webdriver.Chrome(service=Service(args.chromedriver), options=options)
        self.driver.set_page_load_timeout(60)
        self.todo_log = self.record_todo_session()

    def close(self):
        for server in self.servers:
            server.stop()
        self.driver.quit()
        shutil.rmtree(self.work, ignore_errors=True)

    # What the tests share.

    def path(self, name):
        return os.path.join(self.work, name)

    def record_todo_session(self):
        folder = self.path("todo")
        os.makedirs(folder)
        log = os.path.join(folder, "session.jsonl")
        subprocess.run([self.args.todo, "--record", log], input=TODO_COMMANDS, text=True, cwd=folder,
                       check=True, stdout=subprocess.DEVNULL, timeout=120)
        return log

    def copy_of_todo_log(self, name):
        target = self.path(name)
        shutil.copyfile(self.todo_log, target)
        return target

    def serve(self, log, port=None, apps_port=None, extra=()):
        server = Inspector(self.args.inspector, log, port, apps_port, extra)
        self.servers.append(server)
        return server

    def connect(self, server, **options):
        app = FakeApp(server.apps, **options)
        app.connect()
        self.apps.append(app)
        return app

    def open(self, url, timeout=30):
        self.driver.get(url)
        self.wait_ready(timeout)

    def wait_ready(self, timeout=30):
        WebDriverWait(self.driver, timeout).until(
            lambda driver: driver.execute_script("return document.body.dataset.ready === 'true'"))

    def wait(self, condition, message, timeout=10):
        try:
            return WebDriverWait(self.driver, timeout, poll_frequency=0.05).until(lambda driver: condition())
        except TimeoutException:
            raise Failure(message)

    def rows(self):
        """The rows drawn, in their order on the page, as (position, line, text, classes)."""
        return self.driver.execute_script("""
            return Array.from(document.querySelectorAll('#rows .row'))
              .map(row => [Number(row.dataset.position), Number(row.dataset.line), row.innerText, row.className])
              .sort((a, b) => a[0] - b[0]);""")

    def selected_position(self):
        return self.driver.execute_script(
            "const row = document.querySelector('#rows .row.selected');"
            "return row ? Number(row.dataset.position) : -1;")

    def click_row(self, position):
        self.driver.execute_script(
            "const rows = document.getElementById('rows'); rows.scrollTop = Math.max(0, arguments[0] * 26 - 100);",
            position)
        row = self.wait(lambda: self.driver.find_elements(By.CSS_SELECTOR, f'#rows .row[data-position="{position}"]'),
                        f"no row at position {position}")[0]
        row.click()

    def text(self, element_id):
        return self.driver.find_element(By.ID, element_id).text

    def screenshot(self, name):
        os.makedirs(self.args.out, exist_ok=True)
        self.driver.save_screenshot(os.path.join(self.args.out, name))

    def write_log(self, name, text):
        log = self.path(name)
        with open(log, "w", encoding="utf-8") as file:
            file.write(text)
        return log

    def viewport(self, width, height):
        """Makes the page's viewport exactly `width` by `height` CSS pixels."""
        self.driver.execute_cdp_cmd("Emulation.setDeviceMetricsOverride",
                                    {"width": width, "height": height, "deviceScaleFactor": 1, "mobile": False})
        self.driver.execute_script("window.dispatchEvent(new Event('resize'))")

    def default_viewport(self):
        self.driver.execute_cdp_cmd("Emulation.clearDeviceMetricsOverride", {})

    def log_requests(self):
        """How many times this page asked for /log."""
        return self.driver.execute_script(
            "return performance.getEntriesByType('resource').filter(entry => /\\/log$/.test(entry.name)).length;")

    def page_errors(self):
        return [entry for entry in self.driver.get_log("browser") if entry["level"] == "SEVERE"]

    def is_following(self):
        """Whether the status says that the page follows the log (growing or not)."""
        status = self.text("status")
        return status.startswith("live") or status.startswith("idle")

    @staticmethod
    def lines_of(log):
        with open(log, encoding="utf-8") as file:
            return [(number, json.loads(text)) for number, text in enumerate(file, 1) if text.strip()]

    # Tests.

    def test_rows_show_every_action_in_the_order_of_the_log(self):
        server = self.serve(self.todo_log)
        self.open(server.url)
        expected = self.lines_of(self.todo_log)
        check(len(expected) >= 10, f"the todo session logged {len(expected)} actions")
        rows = self.rows()
        check([row[1] for row in rows] == [number for number, _ in expected],
              f"rows of lines {[row[1] for row in rows]}, expected {[number for number, _ in expected]}")
        for (_, line, text, _), (_, fields) in zip(rows, expected):
            case = next(iter(fields["action"])) if isinstance(fields["action"], dict) else str(fields["action"])
            check(case in text and fields["store"] in text and fields["outcome"] in text,
                  f"row of line {line} reads {text!r}, not {case} of {fields['store']}, {fields['outcome']}")
        check(f"{len(expected)} of {len(expected)} events" in self.text("count"), self.text("count"))
        self.select_row_and_screenshot(expected)

    def select_row_and_screenshot(self, expected):
        # The screenshot of the documentation: a todo session with an action selected.
        edit = next(number for number, fields in expected if "Rye bread" in json.dumps(fields["action"]))
        position = [number for number, _ in expected].index(edit)
        self.click_row(position)
        self.wait(lambda: "Rye bread" in self.text("detail-action"), "the edit's payload is not shown")
        self.screenshot("inspector-todo.png")

    def test_selecting_an_action_shows_its_state_and_its_changes(self):
        log = self.path("every-field.jsonl")
        with open(log, "w", encoding="utf-8") as file:
            file.write(logs.with_every_field())
        server = self.serve(log)
        self.open(server.url)
        self.click_row(1)  # counter: add(3), from a count of 2 to 5
        self.wait(lambda: self.selected_position() == 1, "the clicked row is not selected")
        check(self.text("detail-title") == "add(3)", f"the title is {self.text('detail-title')!r}")
        state = self.text("detail-state")
        check('count: 5' in state, f"the state shown is {state!r}")
        changed = self.driver.execute_script(
            "return Array.from(document.querySelectorAll('#detail-state .changed')).map(node => node.dataset.path"
            " || node.parentElement.dataset.path).sort();")
        check(changed == ["count", "history.0"], f"the changed paths highlighted are {changed}")
        diff = self.text("detail-diff")
        check("count 2 → 5" in diff and "history.0 2 → 5" in diff, f"the changes read {diff!r}")
        # The first state of a store has nothing to compare with.
        self.click_row(2)
        self.wait(lambda: "nothing to compare with" in self.text("detail-diff"), "the first settings state has a diff")
        # A cancelled action, held first: its outcome, who cancelled it, and for how long it was held.
        rows = self.rows()
        check("cancelled" in rows[3][2] and "held 2.50 ms" in rows[3][2], f"the cancelled row reads {rows[3][2]!r}")
        self.click_row(3)
        self.wait(lambda: "cancelled by RateLimiter" in self.text("detail-facts"), "who cancelled it is not shown")
        check("RateLimiter for 2.50 ms" in self.text("detail-facts"), self.text("detail-facts"))
        # One global dispatch to two stores: one event, with both stores and the changes of each.
        check("×2" in rows[4][2] and "counter" in rows[4][2] and "settings" in rows[4][2],
              f"the global dispatch reads {rows[4][2]!r}")
        check(len(rows) == 6, f"{len(rows)} rows for 7 lines, one dispatch of two")
        self.click_row(4)
        self.wait(lambda: "to 2 stores: counter, settings" in self.text("detail-facts"), "the dispatch is not one event")
        diff = self.text("detail-diff")
        check("count 5 → 0" in diff and "dark false → true" in diff, f"the dispatch's changes read {diff!r}")
        self.click_row(1)
        self.screenshot("inspector-state-and-diff.png")

    def test_the_slider_and_the_arrow_keys_move_the_selection(self):
        server = self.serve(self.todo_log)
        self.open(server.url)
        slider = self.driver.find_element(By.ID, "slider")
        slider.click()
        slider.send_keys(Keys.HOME)
        self.wait(lambda: self.selected_position() == 0, "Home on the slider does not select the first action")
        for _ in range(3):
            slider.send_keys(Keys.ARROW_RIGHT)
        self.wait(lambda: self.selected_position() == 3, "the slider does not move the selection")
        row = self.rows()[3]
        title = self.text("detail-title")
        check(title and title in row[2], f"the detail shows {title!r}, the row {row[2]!r}")
        check(self.text("position").startswith("4 /"), self.text("position"))
        self.driver.find_element(By.ID, "rows").send_keys(Keys.ARROW_DOWN)
        self.wait(lambda: self.selected_position() == 4, "the down arrow does not move the selection")
        check(slider.get_attribute("value") == "4", f"the slider is at {slider.get_attribute('value')}")
        self.driver.find_element(By.ID, "rows").send_keys(Keys.ARROW_UP)
        self.driver.find_element(By.ID, "rows").send_keys(Keys.ARROW_UP)
        self.wait(lambda: self.selected_position() == 2, "the up arrow does not move the selection")

    def test_filters_and_search_narrow_the_list(self):
        server = self.serve(self.todo_log)
        self.open(server.url)
        expected = self.lines_of(self.todo_log)
        groceries = [number for number, fields in expected if fields["store"].endswith("Groceries")]
        check(0 < len(groceries) < len(expected), f"{len(groceries)} Groceries actions of {len(expected)}")
        store = next(fields["store"] for _, fields in expected if fields["store"].endswith("Groceries"))
        Select(self.driver.find_element(By.ID, "filter-store")).select_by_value(store)
        self.wait(lambda: [row[1] for row in self.rows()] == groceries, "the store filter does not narrow the list")
        adds = [number for number, fields in expected
                if fields["store"] == store and isinstance(fields["action"], dict) and "add" in fields["action"]]
        Select(self.driver.find_element(By.ID, "filter-action")).select_by_value("add")
        self.wait(lambda: [row[1] for row in self.rows()] == adds, "the action filter does not narrow the list")
        Select(self.driver.find_element(By.ID, "filter-action")).select_by_value("")
        Select(self.driver.find_element(By.ID, "filter-store")).select_by_value("")
        Select(self.driver.find_element(By.ID, "filter-outcome")).select_by_value("cancelled")
        self.wait(lambda: self.rows() == [], "the outcome filter keeps committed actions")
        Select(self.driver.find_element(By.ID, "filter-outcome")).select_by_value("")
        search = self.driver.find_element(By.ID, "search")
        search.send_keys("rye")
        # The search reads the whole line: the action, and the state after it where the log has it.
        rye = [number for number, fields in expected if "rye" in json.dumps(fields).lower()]
        check(0 < len(rye) < len(expected), f"{len(rye)} of {len(expected)} lines hold 'rye'")
        self.wait(lambda: [row[1] for row in self.rows()] == rye, "the search does not narrow the list")
        check(f"{len(rye)} of {len(expected)} events" in self.text("count"), self.text("count"))
        search.send_keys(Keys.CONTROL, "a")
        search.send_keys(Keys.BACKSPACE)
        self.wait(lambda: len(self.rows()) == len(expected), "clearing the search does not show every row again")

    def test_a_line_appended_while_the_page_is_open_appears(self):
        log = self.copy_of_todo_log("live.jsonl")
        server = self.serve(log)
        self.open(server.url)
        self.wait(self.is_following, "the page does not follow the log")
        before = len(self.rows())
        last = self.lines_of(log)[-1][1]
        last["action"] = {"add": {"_0": "Appended while open"}}
        started = time.monotonic()
        with open(log, "a", encoding="utf-8") as file:
            file.write(json.dumps(last, sort_keys=True, separators=(",", ":")) + "\n")
        self.wait(lambda: len(self.rows()) == before + 1, "the appended line does not appear", timeout=10)
        self.figures["live update, from the write to the row on the page"] = f"{time.monotonic() - started:.2f} s"
        check("Appended while open" in self.rows()[-1][2], self.rows()[-1][2])
        check(self.selected_position() == before, "following, the new action is not selected")
        # Not following: a new line appears, the selection stays.
        self.driver.find_element(By.ID, "follow").click()
        self.click_row(0)
        with open(log, "a", encoding="utf-8") as file:
            file.write(json.dumps(last, sort_keys=True, separators=(",", ":")) + "\n")
        self.wait(lambda: len(self.rows()) == before + 2, "the second appended line does not appear")
        check(self.selected_position() == 0, "not following, the selection moved")

    def test_a_line_finished_after_the_page_read_it_keeps_its_global_dispatch_even_with_an_empty_id(self):
        # The last line without its line break is shown, then taken back and read again once its
        # line break comes: its dispatch id, the empty one too, must be taken back with it.
        def line(store, sequence):
            return json.dumps({"action": {"reset": {}}, "dispatch": "", "durationNanoseconds": 1000,
                               "outcome": "committed", "sequence": sequence, "store": store,
                               "time": "2026-11-23T03:07:49.123Z"}, sort_keys=True, separators=(",", ":"))
        log = self.write_log("unfinished.jsonl", line("a", 1))
        self.driver.get_log("browser")
        server = self.serve(log)
        self.open(server.url)
        self.wait(self.is_following, "the page does not follow the log")
        check(len(self.rows()) == 1, f"the rows are {self.rows()}")
        with open(log, "a", encoding="utf-8") as file:
            file.write("\n" + line("b", 2) + "\n")
        self.wait(lambda: len(self.rows()) == 1 and "×2" in self.rows()[0][2],
                  f"the dispatch to a and b is not one event: {self.rows()}, banner {self.text('banner')!r}")
        check(self.text("banner") == "", f"the page shows an error: {self.text('banner')}")
        check(self.page_errors() == [], f"the page logged errors: {self.page_errors()}")

    def test_a_bad_line_shows_in_place_as_an_error_with_its_number(self):
        # In the middle of the log when the page opens.
        lines = open(self.todo_log, encoding="utf-8").read().splitlines(keepends=True)
        log = self.path("bad.jsonl")
        with open(log, "w", encoding="utf-8") as file:
            file.writelines(lines[:3] + ['{"store":"list:Inbox","time":"soon"}\n'] + lines[3:])
        server = self.serve(log)
        self.open(server.url)
        rows = self.rows()
        check(rows[3][1] == 4 and "error" in rows[3][3], f"the fourth row is {rows[3]}")
        check("line 4" in rows[3][2] and "bad line" in rows[3][2], rows[3][2])
        check('"outcome" is missing' in rows[3][2], f"the message is not Recording's: {rows[3][2]!r}")
        check(len(rows) == len(lines) + 1, "a row is missing")
        self.click_row(3)
        self.wait(lambda: self.text("detail-title") == "Bad line 4", "selecting the bad line does not show it")
        check('"time":"soon"' in self.text("detail-action"), self.text("detail-action"))
        # Appended while the page is open.
        with open(log, "a", encoding="utf-8") as file:
            file.write("{this is not json\n")
        self.wait(lambda: len(self.rows()) == len(lines) + 2, "the appended bad line does not appear")
        last = self.rows()[-1]
        check(last[1] == len(lines) + 2 and "error" in last[3] and "not an action of the log" in last[2],
              f"the appended bad line reads {last}")
        check("2 bad lines" in self.text("count"), self.text("count"))

    def test_the_self_contained_file_works_from_disk(self):
        report = self.path("report.html")
        result = subprocess.run([self.args.inspector, self.todo_log, "--html", report],
                                capture_output=True, text=True, timeout=60)
        check(result.returncode == 0, result.stderr)
        for server in self.servers:
            server.stop()
        self.servers = []
        self.driver.get_log("browser")  # what earlier pages logged
        self.open("file://" + report)
        expected = self.lines_of(self.todo_log)
        check([row[1] for row in self.rows()] == [number for number, _ in expected], "the saved page lacks rows")
        check("saved page" in self.text("status"), self.text("status"))
        self.click_row(2)
        self.wait(lambda: self.text("detail-title") != "", "selecting a row in the saved page shows nothing")
        errors = [entry for entry in self.driver.get_log("browser") if entry["level"] == "SEVERE"]
        check(errors == [], f"the saved page logged errors: {errors}")

    def test_a_log_of_100000_actions_opens_and_scrolls(self):
        log = self.path("big.jsonl")
        with open(log, "w", encoding="utf-8") as file:
            file.write(logs.many(100_000))
        server = self.serve(log)
        started = time.monotonic()
        self.driver.get(server.url)
        self.wait_ready(timeout=BIG_LOG_BUDGET_SECONDS * 3)
        seconds = time.monotonic() - started
        in_page = self.driver.execute_script("return window.fluxInspector.showMilliseconds") / 1000
        self.figures["100,000 actions: from opening the page to the list shown"] = f"{seconds:.2f} s"
        self.figures["100,000 actions: of which reading the log's JSON and showing it in the page"] = f"{in_page:.2f} s"
        check(seconds < BIG_LOG_BUDGET_SECONDS, f"the log took {seconds:.1f} s to open")
        check("100,000 of 100,000 events" in self.text("count"), self.text("count"))
        drawn = len(self.rows())
        check(drawn < 150, f"{drawn} rows are in the document: the list is not virtualized")
        # Scroll through it in 200 steps; each step draws its rows at once.
        per_step = self.driver.execute_script("""
            const rows = document.getElementById('rows');
            const started = performance.now();
            for (let step = 0; step < 200; step += 1) {
              rows.scrollTop = step * (rows.scrollHeight / 200);
              rows.dispatchEvent(new Event('scroll'));
            }
            return (performance.now() - started) / 200;""")
        self.figures["100,000 actions: drawing the rows of one scroll step"] = f"{per_step:.2f} ms"
        check(per_step < SCROLL_STEP_BUDGET_MS, f"one scroll step takes {per_step:.1f} ms")
        self.driver.find_element(By.ID, "rows").send_keys(Keys.END)
        self.wait(lambda: self.rows() and self.rows()[-1][1] == 100_000, "End does not reach the last action")
        self.wait(lambda: self.selected_position() == 99_999, "End does not select the last action")
        self.screenshot("inspector-100000.png")

    def test_a_log_of_200000_actions_is_paged_and_every_row_is_reachable(self):
        total = 200_000
        needle = total - 10
        log = self.write_log("paged.jsonl", logs.todo_session(total, needle))
        self.driver.get_log("browser")
        server = self.serve(log)
        started = time.monotonic()
        self.open(server.url, timeout=BIG_LOG_BUDGET_SECONDS * 3)
        self.figures["200,000 actions with states, paged: from opening the page to the first rows"] = \
            f"{time.monotonic() - started:.2f} s"
        check(self.driver.execute_script("return window.fluxInspector.paged === true"), "the log is not paged")
        self.wait(lambda: "200,000 of 200,000 events" in self.text("count"), f"the count reads {self.text('count')}")
        check("200,000 actions" in self.text("count"), self.text("count"))
        # The list is no taller than the browser lays out, whatever the count.
        height = self.driver.execute_script("return document.getElementById('spacer').offsetHeight")
        check(height <= 1_000_000, f"the list is {height} px tall")
        # Followed, the last row is selected; Home reaches the first, End the last again.
        last = lambda: [row for row in self.rows() if "selected" in row[3] and "loading" not in row[3]]
        self.wait(lambda: last() and last()[0][1] == total, "the last action is not selected")
        self.driver.find_element(By.ID, "rows").send_keys(Keys.HOME)
        self.wait(lambda: last() and last()[0][1] == 1 and self.rows()[0][1] == 1, "Home does not reach the first action")
        self.driver.find_element(By.ID, "rows").send_keys(Keys.END)
        self.wait(lambda: last() and last()[0][1] == total, "End does not reach the last action")
        check(self.text("position") == "200,000 / 200,000", self.text("position"))
        # The number column is as wide as its largest number.
        cut = self.driver.execute_script("""
            return [...document.querySelectorAll('#rows .row .seq')]
                .filter((seq) => seq.scrollWidth > seq.clientWidth).map((seq) => seq.textContent);""")
        check(cut == [], f"row numbers cut short: {cut[:5]}")
        self.wait(lambda: self.text("detail-title") != "", "the last action's detail is not shown")
        # The slider reaches a row in the middle, the scroll bar the last one.
        self.driver.execute_script("""
            const slider = document.getElementById('slider');
            slider.value = '123456';
            slider.dispatchEvent(new Event('input'));""")
        self.wait(lambda: last() and last()[0][1] == 123_457, "the slider does not reach row 123,457")
        self.driver.execute_script("""
            const rows = document.getElementById('rows');
            rows.scrollTop = rows.scrollHeight;
            rows.dispatchEvent(new Event('scroll'));""")
        self.wait(lambda: self.rows() and self.rows()[-1][1] == total and "loading" not in self.rows()[-1][3],
                  "scrolling to the bottom does not show the last row")
        # The detail of a row shows its changes from the state before it, which the server sends.
        self.driver.find_element(By.ID, "rows").send_keys(Keys.HOME)
        self.wait(lambda: last() and last()[0][1] == 1, "Home does not reach the first action")
        self.driver.find_element(By.ID, "rows").send_keys(Keys.ARROW_DOWN)
        self.driver.find_element(By.ID, "rows").send_keys(Keys.ARROW_DOWN)
        self.wait(lambda: "items" in self.text("detail-diff"), f"no changes shown: {self.text('detail-diff')}")
        # The slowest commits are those of the whole log, and a link reaches its row.
        links = self.wait(lambda: self.driver.find_elements(By.CSS_SELECTOR, "#slowest a"), "no slowest commits listed")
        check(len(links) == 20, f"{len(links)} slowest commits listed")
        slowest = max(range(total), key=lambda index: (1500 + (index * 7919) % 40000 if index % 97 != 96 else 0, -index))
        check(links[0].get_attribute("data-line") == str(slowest + 1),
              f"the slowest is line {links[0].get_attribute('data-line')}, not {slowest + 1}")
        links[0].click()
        self.wait(lambda: last() and last()[0][1] == slowest + 1, "the slowest commit's link does not select its row")
        # A search near the end finds its one action, and its row is reached.
        started = time.monotonic()
        self.driver.find_element(By.ID, "search").send_keys(f"needle {needle}")
        self.wait(lambda: self.text("count").startswith("1 of 200,000 events"), f"the count reads {self.text('count')}",
                  timeout=60)
        self.wait(lambda: last() and last()[0][1] == needle + 1, "the search's hit is not selected")
        self.figures["200,000 actions, paged: a search that finds one near the end"] = f"{time.monotonic() - started:.2f} s"
        self.driver.find_element(By.ID, "search").clear()
        self.driver.find_element(By.ID, "search").send_keys(" ")
        self.wait(lambda: "200,000 of 200,000" in self.text("count"), f"the count reads {self.text('count')}")
        # The search's hit stays selected when the search is cleared.
        self.wait(lambda: last() and last()[0][1] == needle + 1, "the selection did not stay on the search's hit")
        # Lines appended while the page follows are counted, and the newest is selected.
        follow = self.driver.find_element(By.ID, "follow")
        if not follow.is_selected():
            follow.click()
        with open(log, "a", encoding="utf-8") as file:
            file.write(logs.todo_session(1000, first=total))
        self.wait(lambda: "201,000 of 201,000 events" in self.text("count"), f"the count reads {self.text('count')}")
        self.wait(lambda: last() and last()[0][1] == total + 1000, "the newest action is not selected")
        self.screenshot("inspector-200000-paged.png")
        check(self.text("banner") == "", f"the page shows an error: {self.text('banner')}")
        check(self.page_errors() == [], f"the page logged errors: {self.page_errors()}")

    def test_the_slowest_commits_of_a_long_log_are_listed_when_their_lines_are_too_long_to_send(self):
        # Past 1 MiB of their lines, the slowest commits come with what the list shows only.
        total = 100_000
        log = self.write_log("slow-and-long.jsonl", logs.slow_and_long(total))
        self.driver.get_log("browser")
        server = self.serve(log)
        self.open(server.url, timeout=BIG_LOG_BUDGET_SECONDS * 3)
        check(self.driver.execute_script("return window.fluxInspector.paged === true"), "the log is not paged")
        links = self.wait(lambda: self.driver.find_elements(By.CSS_SELECTOR, "#slowest a"), "no slowest commits listed")
        check(len(links) == 20, f"{len(links)} slowest commits listed")
        lines = [link.get_attribute("data-line") for link in links]
        check(lines == [str(total + 20 - index) for index in range(20)], f"the slowest are lines {lines}")
        texts = [link.text for link in links]
        check(all("big<b>" in text and "load" in text for text in texts), f"the slowest read {texts}")
        check("200.0 ms" in texts[0] and "10.0 ms" in texts[-1], f"the slowest read {texts[0]} … {texts[-1]}")
        links[-1].click()
        last = lambda: [row for row in self.rows() if "selected" in row[3] and "loading" not in row[3]]
        self.wait(lambda: last() and last()[0][1] == total + 1, "the link of a commit sent alone does not select its row")
        self.wait(lambda: "load" in self.text("detail-title"), f"its detail reads {self.text('detail-title')}")
        check(self.text("banner") == "", f"the page shows an error: {self.text('banner')}")
        check(self.page_errors() == [], f"the page logged errors: {self.page_errors()}")

    def test_a_long_log_written_over_in_place_with_its_first_line_kept_is_shown_anew(self):
        total = 100_010
        text = logs.many(total)
        log = self.write_log("written-over.jsonl", text)
        self.driver.get_log("browser")
        server = self.serve(log)
        self.open(server.url, timeout=BIG_LOG_BUDGET_SECONDS * 3)
        check(self.driver.execute_script("return window.fluxInspector.paged === true"), "the log is not paged")
        self.wait(lambda: f"{total:,} of {total:,} events" in self.text("count"), f"at first the count reads {self.text('count')}")
        # The same file: its first line kept, every other line another store's, and ten more.
        first = text[:text.index("\n") + 1]
        fresh = (first + logs.many(total + 10)[len(first):].replace('"store":"todos"', '"store":"moved"')).encode()
        descriptor = os.open(log, os.O_WRONLY)
        try:
            # Longer than the old log: written over from its start, never cut short on the way.
            check(os.pwrite(descriptor, fresh, 0) == len(fresh), "the log was not written whole")
        finally:
            os.close(descriptor)
        self.wait(lambda: f"{total + 10:,} of {total + 10:,} events" in self.text("count"),
                  f"the count reads {self.text('count')}")
        self.driver.find_element(By.ID, "rows").send_keys(Keys.HOME)
        self.wait(lambda: any("moved" in row[2] for row in self.rows()), f"the rows read {self.rows()[:3]}")
        check(not any("todos" in row[2] for row in self.rows()), f"rows of the old log are shown: {self.rows()[:3]}")
        # The rows of the old log were refused (409): the one error the browser logs.
        errors = [entry for entry in self.page_errors() if "409" not in entry["message"]]
        check(errors == [], f"the page logged errors: {errors}")

    # A hostile log (DESIGN.md rule 21): the page reads a line as the server does, never blanks,
    # and recurses no deeper than a constant.

    def test_a_line_with_a_duplicated_key_is_a_bad_line_and_the_page_loads_once(self):
        good = self.lines_of(self.todo_log)[0][1]
        line = json.dumps(good, sort_keys=True, separators=(",", ":"))
        # The server kept the first value and the page the last: a page that read `holds` as
        # [null] stopped on it, and asked for /log again every 2 s.
        twice = line[:-1] + ',"holds":[{"middleware":"M","nanoseconds":5}],"holds":[null]}'
        log = self.write_log("twice.jsonl", line + "\n" + twice + "\n" + line + "\n")
        self.driver.get_log("browser")
        server = self.serve(log)
        self.open(server.url)
        rows = self.rows()
        check([row[1] for row in rows] == [1, 2, 3], f"rows of lines {[row[1] for row in rows]}")
        # A bad line, whose message names the key, whether the server or the page found it.
        check("error" in rows[1][3] and "line 2" in rows[1][2] and "holds" in rows[1][2],
              f"the line with a key twice reads {rows[1]}")
        check("error" not in rows[0][3] and "error" not in rows[2][3], f"the good lines read {rows}")
        time.sleep(4.5)  # two periods of the page's retry: it must not ask again
        check(self.log_requests() == 1, f"the page asked for /log {self.log_requests()} times")
        check(self.page_errors() == [], f"the page logged errors: {self.page_errors()}")

    def test_one_dispatch_id_on_150000_lines_opens_without_overflowing_the_stack(self):
        log = self.write_log("one-dispatch.jsonl", logs.one_dispatch_on(150_000))
        self.driver.get_log("browser")
        server = self.serve(log)
        started = time.monotonic()
        self.open(server.url, timeout=BIG_LOG_BUDGET_SECONDS * 3)
        in_page = self.driver.execute_script("return window.fluxInspector.showMilliseconds") / 1000
        self.figures["150,000 lines of one global dispatch: from opening the page to the list shown"] = \
            f"{time.monotonic() - started:.2f} s (in the page {in_page:.2f} s)"
        rows = self.rows()
        check(len(rows) == 1 and "×150000" in rows[0][2].replace(",", ""), f"the rows are {rows[:3]}")
        self.click_row(0)
        self.wait(lambda: "150,000 stores" in self.text("detail-facts"), "the dispatch's detail is not shown")
        drawn = self.driver.execute_script("return document.querySelectorAll('#detail-state .tree').length")
        check(drawn <= 50, f"{drawn} states drawn for one event")
        check(self.text("banner") == "", f"the page shows an error: {self.text('banner')}")
        check(self.page_errors() == [], f"the page logged errors: {self.page_errors()}")

    def test_a_state_nested_512_deep_shows_its_deepest_change(self):
        log = self.write_log("deep.jsonl", logs.nested(512))
        self.driver.get_log("browser")
        server = self.serve(log)
        self.open(server.url)
        self.click_row(1)
        self.wait(lambda: "after" in self.text("detail-diff"), "the deepest change is not shown")
        check('"before" → "after"' in self.text("detail-diff"), self.text("detail-diff"))
        check(self.page_errors() == [], f"the page logged errors: {self.page_errors()}")

    def test_a_long_string_in_arrays_nested_500_deep_shows_its_change_at_once(self):
        # Matching the elements of each array by value once read the whole string at every depth.
        log = self.write_log("deep-arrays.jsonl", logs.nested_arrays(500, 12 << 20))
        self.driver.get_log("browser")
        server = self.serve(log)
        self.open(server.url)
        started = time.monotonic()
        self.click_row(1)
        self.wait(lambda: "after" in self.text("detail-diff"), "the change at the bottom is not shown")
        self.figures["a change under arrays nested 500 deep around 12 MB: shown in"] = \
            f"{time.monotonic() - started:.2f} s"
        check("n.0.0.0" in self.text("detail-diff"), self.text("detail-diff")[:300])
        check(self.page_errors() == [], f"the page logged errors: {self.page_errors()}")
        # Counted, not timed: the bottom of such states is read a few times, not once per depth.
        reads = self.driver.execute_script("""
            let reads = 0;
            const state = (leaf) => {
              let value = { get leaf() { reads += 1; return leaf; } };
              for (let i = 0; i < 500; i += 1) value = [value];
              return value;
            };
            const changes = window.FluxDiff.diff(state('before'), state('after'), 10);
            return [reads, changes.length];""")
        check(reads[1] == 1, f"one change read as {reads[1]}")
        check(reads[0] <= 10, f"the bottom of two states nested 500 deep was read {reads[0]} times")

    # Sessions and search.

    def test_a_dispatch_id_of_a_later_session_is_an_event_of_its_own(self):
        log = self.write_log("two-sessions.jsonl", logs.two_sessions())
        server = self.serve(log)
        self.open(server.url)
        rows = self.rows()
        check(len(rows) == 4, f"{len(rows)} rows for a dispatch to 4 stores, an add, a load and an add: {rows}")
        check("×4" in rows[0][2] and "reset" in rows[0][2], f"the first dispatch reads {rows[0][2]!r}")
        check("load" in rows[2][2] and "×" not in rows[2][2], f"the later session's load reads {rows[2][2]!r}")

    def test_search_reads_the_decoded_text_of_actions(self):
        good = self.lines_of(self.todo_log)[0][1]
        said = dict(good, action={"say": {"_0": 'Say "hi"'}})
        lines = [good, said, good]
        log = self.write_log("said.jsonl", "".join(json.dumps(line, sort_keys=True) + "\n" for line in lines))
        server = self.serve(log)
        self.open(server.url)
        self.driver.find_element(By.ID, "search").send_keys('Say "hi"')
        self.wait(lambda: [row[1] for row in self.rows()] == [2], f"the search finds lines {[r[1] for r in self.rows()]}")

    def test_a_search_match_in_a_state_says_where(self):
        server = self.serve(self.todo_log)
        self.open(server.url)
        expected = self.lines_of(self.todo_log)
        self.driver.find_element(By.ID, "search").send_keys("eggs")
        in_action = [number for number, fields in expected if "eggs" in json.dumps(fields["action"]).lower()]
        in_state_only = [number for number, fields in expected
                         if "eggs" in json.dumps(fields.get("state")).lower() and number not in in_action]
        check(in_action and in_state_only, f"lines with eggs in the action {in_action}, in the state only {in_state_only}")
        self.wait(lambda: sorted(row[1] for row in self.rows()) == sorted(in_action + in_state_only),
                  "the search does not find every line with eggs")
        for _, line, text, _ in self.rows():
            if line in in_state_only:
                check("in state at" in text and ".title" in text, f"line {line} found in its state reads {text!r}")
            else:
                check("in state at" not in text, f"line {line} found in its action reads {text!r}")
        position = next(row[0] for row in self.rows() if row[1] in in_state_only)
        self.click_row(position)
        self.wait(lambda: "in state at" in self.text("detail-facts"), "the detail does not say where the match is")
        found = self.driver.execute_script(
            "return Array.from(document.querySelectorAll('#detail-state .found')).map(n => n.textContent);")
        check(found and all("Eggs" in text for text in found), f"the match is not marked in the state: {found}")

    # Replaced logs: the page reloads, never mixes two files.

    def test_a_log_replaced_while_followed_is_shown_anew(self):
        log = self.copy_of_todo_log("replaced.jsonl")
        server = self.serve(log)
        self.open(server.url)
        self.wait(self.is_following, "the page does not follow the log")
        fresh = self.path("fresh.jsonl")
        with open(fresh, "w", encoding="utf-8") as file:
            file.write(logs.with_every_field())
        os.replace(fresh, log)
        expected = [number for number, _ in self.lines_of(log)]
        self.wait(lambda: len(self.rows()) == 6 and "add(5)" in self.rows()[-1][2],
                  f"the page does not show the new log: {self.rows()[-2:]}")
        check(len(expected) == 7, "the new log has 7 lines")
        check("replaced" in self.text("banner") and "again" in self.text("banner"),
              f"the page does not say that it shows the log anew: {self.text('banner')!r}")
        self.wait(self.is_following, "the page does not follow the new log")

    def test_a_server_restarted_after_the_log_changed_shows_the_new_log(self):
        log = self.write_log("restart.jsonl", logs.with_every_field())
        server = self.serve(log)
        self.open(server.url)
        self.wait(self.is_following, "the page does not follow the log")
        port = int(server.url.rstrip("/").rsplit(":", 1)[1])
        server.stop()
        self.servers.remove(server)
        self.wait(lambda: "server gone" in self.text("status"), f"the status reads {self.text('status')!r}")
        # The same file, rewritten longer in place: the old byte offset is in the middle of a line.
        todo = open(self.todo_log, encoding="utf-8").read()
        with open(log, "r+", encoding="utf-8") as file:
            file.write(todo)
            file.truncate()
        expected = [number for number, _ in self.lines_of(log)]
        self.serve(log, port=port)
        self.wait(lambda: [row[1] for row in self.rows()] == expected and self.is_following(),
                  f"after the restart the rows are of lines {[row[1] for row in self.rows()]}, not {expected}",
                  timeout=15)
        check(not any("error" in row[3] for row in self.rows()), "a row of the new log reads as a bad line")

    # The page as a new user sees it.

    def test_the_table_holds_at_800_1024_and_1400_px(self):
        server = self.serve(self.todo_log)
        self.open(server.url)
        try:
            for width in (800, 1024, 1400):
                self.viewport(width, 900)
                self.wait(lambda: self.driver.execute_script("return window.innerWidth") == width, "no resize")
                columns = self.driver.execute_script("""
                    const rows = document.getElementById('rows').getBoundingClientRect();
                    const row = document.querySelector('#rows .row[data-position="5"]');
                    return Array.from(row.children).map(cell => {
                      const box = cell.getBoundingClientRect();
                      return [cell.className, box.left, box.right, getComputedStyle(cell).display, rows.right];
                    });""")
                names = [name for name, *_ in columns]
                action = columns[names.index("action")]
                commit = columns[names.index("num")]
                check(action[2] - action[1] >= 150, f"at {width} px the action column is {action[2] - action[1]:.0f} px")
                check(commit[3] != "none" and commit[2] - commit[1] >= 50 and commit[2] <= commit[4],
                      f"at {width} px the commit column is {commit}")
                for name, left, right, display, _ in columns:
                    check(display == "none" or right - left >= 30, f"at {width} px the {name} column is {right - left:.0f} px")
                self.click_row(5)
                self.screenshot(f"inspector-{width}.png")
        finally:
            self.default_viewport()

    def test_removing_an_item_reads_as_one_removal(self):
        items = [{"id": 1, "title": "Milk"}, {"id": 2, "title": "Call mom"}, {"id": 3, "title": "Eggs"}]
        for name, before, after, removed in (
                ("ids", items, [items[0], items[2]], '1 {id: 2, title: "Call mom"} (removed)'),
                ("plain", ["Milk", "Call mom", "Eggs"], ["Milk", "Eggs"], '1 "Call mom" (removed)')):
            log = self.write_log(f"removal-{name}.jsonl", logs.todo_items(before, after))
            server = self.serve(log)
            self.open(server.url)
            self.click_row(1)
            self.wait(lambda: "removed" in self.text("detail-diff"), f"no removal shown ({name}): {self.text('detail-diff')!r}")
            changes = self.text("detail-diff").splitlines()
            check(changes == [removed], f"removing Call mom ({name}) reads {changes}")
            server.stop()
            self.servers.remove(server)
        # An item whose title changes, found by its id after an item before it went.
        renamed = [items[0], dict(items[2], title="Brown eggs")]
        log = self.write_log("removal-rename.jsonl", logs.todo_items(items, renamed))
        server = self.serve(log)
        self.open(server.url)
        self.click_row(1)
        self.wait(lambda: "removed" in self.text("detail-diff"), "no removal shown")
        changes = self.text("detail-diff").splitlines()
        check(changes == ['1 {id: 2, title: "Call mom"} (removed)', '1.title "Eggs" → "Brown eggs"'], f"{changes}")

    def test_a_filter_that_hides_the_selected_action_selects_one_it_shows(self):
        server = self.serve(self.todo_log)
        self.open(server.url)
        expected = self.lines_of(self.todo_log)
        board = next(fields["store"] for _, fields in expected if fields["store"] == "board")
        self.click_row(1)  # an action of the list Groceries
        Select(self.driver.find_element(By.ID, "filter-store")).select_by_value(board)
        self.wait(lambda: all("board" in row[2] for row in self.rows()), "the store filter does not narrow the list")
        shown = len(self.rows())
        self.wait(lambda: self.selected_position() >= 0, "no shown action is selected")
        position = self.selected_position()
        row = self.rows()[position]
        check(self.text("detail-title") in row[2], f"the detail shows {self.text('detail-title')!r}, the row {row[2]!r}")
        check(self.text("position") == f"{position + 1} / {shown}", f"the slider reads {self.text('position')!r}")
        search = self.driver.find_element(By.ID, "search")
        search.send_keys("no action holds this")
        self.wait(lambda: self.rows() == [], "the search finds something")
        self.wait(lambda: self.text("position") == "0 / 0", f"the slider reads {self.text('position')!r}")
        check(not self.driver.find_element(By.ID, "detail-empty").get_attribute("hidden"), "the detail still shows an action")

    def test_row_numbers_and_counts_agree_with_a_global_dispatch(self):
        log = self.write_log("numbers.jsonl", logs.with_every_field())
        server = self.serve(log)
        self.open(server.url)
        numbers = [int(text.split()[0]) for _, _, text, _ in self.rows()]
        check(numbers == [1, 2, 3, 4, 5, 6], f"the rows are numbered {numbers}")
        self.driver.find_element(By.ID, "rows").send_keys(Keys.END)
        self.wait(lambda: self.selected_position() == 5, "End does not select the last row")
        check(self.text("position") == "6 / 6", f"beside row 6 the slider reads {self.text('position')!r}")
        check(self.text("count").startswith("6 of 6 events"), self.text("count"))

    def test_a_global_dispatch_is_labelled_in_words(self):
        log = self.write_log("labelled.jsonl", logs.with_every_field())
        server = self.serve(log)
        self.open(server.url)
        self.click_row(4)
        self.wait(lambda: "counter" in self.text("detail-facts"), "the dispatch is not shown")
        facts = self.driver.execute_script(
            "return Array.from(document.querySelectorAll('#detail-facts dt')).map(dt => [dt.textContent, dt.nextElementSibling.textContent]);")
        facts = dict(facts)
        check(facts.get("Global dispatch") == "to 2 stores: counter, settings", f"the facts are {facts}")
        check(facts.get("Dispatch id") == "d-1", f"the facts are {facts}")

    def test_a_change_inside_is_marked_without_a_wavy_underline(self):
        log = self.write_log("marked.jsonl", logs.todo_items(
            {"items": [{"id": 1, "title": "Milk"}]}, {"items": [{"id": 1, "title": "Oat milk"}]}))
        server = self.serve(log)
        self.open(server.url)
        self.click_row(1)
        self.wait(lambda: "Oat milk" in self.text("detail-state"), "the state is not shown")
        marks = self.driver.execute_script("""
            return Array.from(document.querySelectorAll('#detail-state .changed-inside > summary')).map(summary => [
              summary.parentElement.dataset.path,
              getComputedStyle(summary.querySelector('.key') || summary).textDecorationStyle,
              getComputedStyle(summary.querySelector('.key') || summary).textDecorationLine,
              getComputedStyle(summary, '::after').content]);""")
        check([mark[0] for mark in marks] == ["items", "items.0"], f"the paths marked are {marks}")
        for path, style, line, after in marks:
            check(style != "wavy" and "underline" not in line, f"{path} is marked by a {style} {line}")
            check("changed inside" in after, f"{path} is marked by {after!r}")

    def test_one_slow_commit_does_not_flatten_the_duration_chart(self):
        log = self.write_log("slow.jsonl", logs.one_slow_commit())
        server = self.serve(log)
        self.open(server.url)
        dots = self.driver.execute_script("""
            const chart = document.getElementById('chart-durations');
            const axis = chart.querySelector('.axis').getAttribute('y1');
            return [Number(axis), Array.from(chart.querySelectorAll('circle')).map(dot => [Number(dot.getAttribute('cy')), dot.textContent])];""")
        bottom, dots = dots
        check(len(dots) == 41, f"{len(dots)} dots")
        quick = [cy for cy, _ in dots[1:]]
        height = bottom - min(cy for cy, _ in dots)
        check(max(quick) - min(quick) >= 0.1 * height,
              f"the quick commits spread over {max(quick) - min(quick):.1f} of {height:.1f} px")
        check("50.0 ms" in dots[0][1], f"the slow commit's dot says {dots[0][1]!r}")
        self.screenshot("inspector-slow-commit.png")

    def detail_after_click(self, position):
        """Clicks the row at `position` and returns how long the page took to show its detail, in
        milliseconds: the click's handler draws the detail before it returns."""
        self.click_row(0 if position else 1)
        return self.driver.execute_script("""
            const row = document.querySelector('#rows .row[data-position="' + arguments[0] + '"]');
            const started = performance.now();
            row.click();
            return performance.now() - started;""", position)

    def test_a_10000_item_state_with_one_changed_item_opens_that_change_and_collapses_the_rest(self):
        items = [{"id": index, "title": f"item {index}", "done": False} for index in range(10000)]
        changed = list(items)
        changed[5000] = dict(items[5000], title="changed")
        log = self.write_log("large-state.jsonl", logs.todo_items({"items": items}, {"items": changed}))
        server = self.serve(log)
        self.open(server.url)
        milliseconds = self.detail_after_click(1)
        self.figures["detail of a 10,000-item state with one change, ms"] = round(milliseconds, 1)
        changes = self.text("detail-diff").splitlines()
        check(changes == ['items.5000.title "item 5000" → "changed"'], f"the changes read {changes}")
        shown = self.driver.execute_script("""
            const state = document.getElementById('detail-state');
            const leaf = state.querySelector('.leaf.changed[data-path="items.5000.title"]');
            return [state.querySelectorAll('details, .leaf').length, leaf ? leaf.offsetParent !== null : false,
                    Array.from(state.querySelectorAll('details.range > summary')).map(summary => summary.textContent)];""")
        nodes, visible, ranges = shown
        self.figures["state tree of 10,000 items with one change, elements"] = nodes
        check(visible, "the changed title is not shown opened")
        check(nodes < 40, f"the state tree holds {nodes} nodes: the unchanged items are not collapsed")
        check(ranges == ["[0 … 4999] 5,000 items", "[5001 … 9999] 4,999 items"], f"the ranges read {ranges}")
        # A range opens to ranges of 100, and one of those to its items.
        self.driver.execute_script("document.querySelectorAll('#detail-state details.range > summary')[1].click();")
        inner = self.driver.execute_script("""
            const outer = document.querySelectorAll('#detail-state details.range')[1];
            return Array.from(outer.querySelectorAll(':scope > details.range > summary')).map(summary => summary.textContent);""")
        check(len(inner) == 50 and inner[0] == "[5001 … 5100] 100 items" and inner[-1] == "[9901 … 9999] 99 items",
              f"the range opens to {len(inner)} ranges: {inner[:2]} … {inner[-1:]}")
        self.driver.execute_script(
            "document.querySelectorAll('#detail-state details.range')[1].querySelector(':scope > details.range > summary').click();")
        self.wait(lambda: "5001: {3}" in self.text("detail-state") and "5100: {3}" in self.text("detail-state"),
                  "the inner range does not open to its items")
        check("5101: {3}" not in self.text("detail-state"), "the inner range opens to more than its items")
        # What the search finds in a closed range is opened to.
        self.driver.find_element(By.ID, "search").send_keys("item 7777")
        self.wait(lambda: self.driver.execute_script(
            "const leaf = document.querySelector('#detail-state .leaf.found[data-path=\"items.7777.title\"]');"
            "return leaf !== null && leaf.offsetParent !== null;"), "the search's find in a closed range is not shown")
        self.screenshot("inspector-large-state.png")

    def test_an_insert_in_the_middle_of_10000_items_reads_as_one_insertion(self):
        items = [{"id": index, "title": f"item {index}"} for index in range(10000)]
        titles = [item["title"] for item in items]
        inserted = items[:5000] + [{"id": 20000, "title": "new"}] + items[5000:]
        moved = inserted[1:] + inserted[:1]
        plain = ["first"] + titles[1:5000] + ["new"] + titles[5000:-1] + ["last"]
        for name, before, after, expected in (
                ("ids", items, inserted, ['5000 {id: 20000, title: "new"} (added)']),
                ("ids, the first moved to the end", items, moved,
                 ['4999 {id: 20000, title: "new"} (added)', '10000 {id: 0, title: "item 0"} (moved from 0)']),
                ("plain, the first and last changed", titles, plain,
                 ['0 "item 0" → "first"', '5000 "new" (added)', '10000 "item 9999" → "last"'])):
            log = self.write_log("insert.jsonl", logs.todo_items(before, after))
            server = self.serve(log)
            self.open(server.url)
            self.click_row(1)
            self.wait(lambda: "added" in self.text("detail-diff"), f"no insertion shown ({name})")
            changes = self.text("detail-diff").splitlines()
            check(changes == expected, f"{name}: the changes read {changes[:6]}{' …' if len(changes) > 6 else ''}")
            server.stop()
            self.servers.remove(server)

    def test_a_change_in_a_string_of_100_kb_shows_where_it_is(self):
        words = " ".join(f"w{(index * 7919) % 1000}" for index in range(25000))[:100000]
        middle = words.index(" ", 50000) + 1
        after = words[:middle] + "CHANGED" + words[words.index(" ", middle):]
        log = self.write_log("long-string.jsonl", logs.todo_items({"text": words}, {"text": after}))
        server = self.serve(log)
        self.open(server.url)
        self.click_row(1)
        self.wait(lambda: "CHANGED" in self.text("detail-diff"), f"the change is not shown: {self.text('detail-diff')[:300]!r}")
        lines = self.text("detail-diff").splitlines()
        removed = words[middle:words.index(" ", middle)]
        check(lines[0] == "text", f"the path reads {lines[0]!r}")
        check(lines[1] == f"at {middle:,}: …{words[middle - 30:middle]}{removed}CHANGED{after[middle + 7:middle + 37]}…",
              f"the change reads {lines[1]!r}")
        check(lines[-1] == f"(1 change; {len(words):,} → {len(after):,} characters)", f"the summary reads {lines[-1]!r}")

    def test_diffs_of_10000_elements_and_100_kb_strings_are_right_and_near_linear(self):
        # The costs, measured in the page; the results checked against what was changed.
        server = self.serve(self.todo_log)
        self.open(server.url)
        figures = self.driver.execute_script("""
            const D = window.FluxDiff;
            const time = (f) => { f(); const started = performance.now(); const result = f(); return [performance.now() - started, result]; };
            const titles = Array.from({length: 10000}, (_, i) => 'item ' + i);
            const scattered = titles.slice();
            for (let i = 0; i < 200; i += 1) scattered[(i * 7919) % 10000] = 'x' + i;
            const shuffled = titles.slice().sort((a, b) => ((a.length * 31 + a.charCodeAt(a.length - 1)) % 17) - ((b.length * 31 + b.charCodeAt(b.length - 1)) % 17));
            const items = titles.map((title, id) => ({ id, title }));
            const reversed = items.slice().reverse();
            const words = Array.from({length: 25000}, (_, i) => 'w' + (i * 7919) % 1000).join(' ').slice(0, 100000);
            let edited = words;
            for (let i = 0; i < 100; i += 1) { const at = 500 + i * 990; edited = edited.slice(0, at) + '#' + edited.slice(at + 1); }
            const other = Array.from({length: 25000}, (_, i) => 'z' + (i * 104729) % 1000).join(' ').slice(0, 100000);
            return {
              scattered: time(() => D.diff(titles, scattered, 400).length),
              shuffled: time(() => D.commonPairs(titles, shuffled).length),
              reversedIds: time(() => D.diff(items, reversed, 20000).length),
              edited: time(() => D.textChanges(words, edited).count),
              other: time(() => D.textChanges(words, other).count),
            };""")
        for name, (milliseconds, _) in figures.items():
            self.figures[f"diff, {name}, ms"] = round(milliseconds, 1)
        check(figures["scattered"][1] == 200, f"200 changed elements read as {figures['scattered'][1]} changes")
        check(figures["reversedIds"][1] == 9999, f"10,000 reversed items read as {figures['reversedIds'][1]} moves")
        check(figures["edited"][1] == 100, f"100 edits of a string read as {figures['edited'][1]} changes")
        check(figures["other"][1] >= 1, "two different strings read as the same")

    def test_the_slowest_commits_are_listed_slowest_first_and_a_link_selects_its_row(self):
        log = self.write_log("slowest.jsonl", logs.one_slow_commit())
        server = self.serve(log)
        self.open(server.url)
        listed = self.driver.execute_script("""
            return Array.from(document.querySelectorAll('#slowest a')).map(link =>
              [Number(link.dataset.line), link.querySelector('.num').textContent, link.textContent]);""")
        check(len(listed) == 20, f"{len(listed)} commits listed")
        check(listed[0][0] == 1 and listed[0][1] == "50.0 ms" and listed[0][2] == "50.0 msloads", f"the first listed is {listed[0]}")
        expected = sorted(((1000 + (index * 997) % 4000, index + 2) for index in range(40)), key=lambda pair: (-pair[0], pair[1]))
        check([line for line, _, _ in listed[1:]] == [line for _, line in expected[:19]],
              f"the quick ones are listed as lines {[line for line, _, _ in listed[1:]]}")
        # Following: the list starts at its end; the link selects the slow first row.
        self.wait(lambda: self.selected_position() == 40, "the last row is not selected")
        self.driver.find_element(By.CSS_SELECTOR, "#slowest a").click()
        self.wait(lambda: self.selected_position() == 0, "the link does not select the slow row")
        check(self.text("detail-title") == "load", f"the detail shows {self.text('detail-title')!r}")
        check(self.rows()[0][1] == 1, "the row shown first is not line 1")
        # A link whose row a filter hides clears the filters and selects it.
        Select(self.driver.find_element(By.ID, "filter-action")).select_by_value("add")
        self.wait(lambda: all("load" not in row[2] for row in self.rows()), "the action filter does not hide load")
        self.driver.find_element(By.CSS_SELECTOR, "#slowest a").click()
        self.wait(lambda: self.selected_position() == 0 and self.text("detail-title") == "load",
                  "the link does not select a row that the filter hid")
        check(Select(self.driver.find_element(By.ID, "filter-action")).first_selected_option.get_attribute("value") == "",
              "the action filter is still on")
        second = self.driver.find_elements(By.CSS_SELECTOR, "#slowest a")[1]
        line = int(second.get_attribute("data-line"))
        second.click()
        self.wait(lambda: [row[1] for row in self.rows() if row[0] == self.selected_position()] == [line],
                  f"the second link does not select line {line}")
        self.screenshot("inspector-slowest.png")

    def test_names_and_strings_from_the_log_in_the_slowest_list_and_the_text_changes_are_text(self):
        markup = '<img src=x onerror="window.fluxRan=1"><script>window.fluxRan=2</script>'
        before = "a " * 100 + "plain" + " z" * 100
        after = before.replace("plain", markup)
        log = self.write_log("markup.jsonl", "".join(
            logs._line({"store": markup, "outcome": "committed", "time": logs._time(logs.START, index),
                        "durationNanoseconds": 1000 * (index + 1), "action": {"set": {"_0": markup}},
                        "sequence": index + 1, "state": {"text": text}})
            for index, text in enumerate((before, after))))
        server = self.serve(log)
        self.open(server.url)
        self.click_row(1)
        self.wait(lambda: "onerror" in self.text("detail-diff"), "the text change is not shown")
        check(markup in self.text("detail-diff"), f"the text change reads {self.text('detail-diff')!r}")
        listed = self.driver.execute_script(
            "return Array.from(document.querySelectorAll('#slowest a')).map(link => link.textContent);")
        check(len(listed) == 2 and all(markup in text for text in listed), f"the slowest list reads {listed}")
        check(self.driver.execute_script(
            "return window.fluxRan === undefined && !document.querySelector('#slowest img, #slowest script, #detail-diff img, #detail-diff script');"),
            "markup from the log became elements or ran")

    def test_the_status_says_when_the_log_stopped_growing_and_when_the_server_is_gone(self):
        log = self.write_log("quiet.jsonl", logs.with_every_field())  # its last line is days old
        server = self.serve(log)
        self.open(server.url)
        self.wait(lambda: self.text("status").startswith("idle"), f"the status reads {self.text('status')!r}")
        check("last line" in self.text("status") and "ago" in self.text("status"), self.text("status"))
        with open(log, "a", encoding="utf-8") as file:
            file.write(logs.with_every_field().splitlines(keepends=True)[0])
        self.wait(lambda: self.text("status") == "live", f"after a new line the status reads {self.text('status')!r}")
        server.stop()
        self.servers.remove(server)
        self.wait(lambda: "server gone" in self.text("status"), f"the status reads {self.text('status')!r}")
        dot = self.driver.execute_script(
            "return getComputedStyle(document.getElementById('status'), '::before').color")
        check(dot != "rgb(61, 220, 132)", "the dot is still green")

    def test_an_action_reads_as_swift_in_its_row_and_its_detail(self):
        log = self.write_log("swift.jsonl", logs.with_every_field())
        server = self.serve(log)
        self.open(server.url)
        self.click_row(3)  # add(100), cancelled
        self.wait(lambda: self.text("detail-title") == "add(100)", f"the title reads {self.text('detail-title')!r}")
        action = self.text("detail-action")
        check(action == "add(100)", f"the action reads {action!r}")
        self.click_row(2)
        self.wait(lambda: self.text("detail-action") == 'rename(title: "Kitchen")', self.text("detail-action"))

    def test_at_1400x900_the_changes_are_in_view_without_scrolling(self):
        # A list of twelve items, the fifth renamed: the state after it is longer than the pane.
        items = [{"id": index, "isDone": False, "title": f"Item {index}"} for index in range(1, 13)]
        renamed = [dict(item, title="Rye bread") if item["id"] == 5 else item for item in items]
        log = self.write_log("long-state.jsonl", logs.todo_items(items, renamed))
        server = self.serve(log)
        self.open(server.url)
        try:
            self.viewport(1400, 900)
            self.click_row(1)
            self.wait(lambda: "Rye bread" in self.text("detail-diff"), "the changes are not shown")
            box = self.driver.execute_script("""
                const changes = document.getElementById('detail-diff').getBoundingClientRect();
                const pane = document.querySelector('.detail').getBoundingClientRect();
                return [changes.top, changes.bottom, pane.bottom, window.innerHeight];""")
            top, bottom, pane, height = box
            check(bottom <= min(pane, height), f"the changes end at {bottom:.0f} px, the pane at {pane:.0f} px")
            self.screenshot("inspector-1400x900.png")
        finally:
            self.default_viewport()

    def test_export_as_test_downloads_what_swift_test_writes_or_says_why_not(self):
        # The todo session records what a test needs (`fields: [.all, .swift]`, snapshots).
        written = self.path("SessionTests.swift")
        result = subprocess.run([self.args.inspector, self.todo_log, "--swift-test", written],
                                capture_output=True, text=True, timeout=60)
        check(result.returncode == 0, result.stderr)
        server = self.serve(self.todo_log)
        self.open(server.url)
        button = self.driver.find_element(By.ID, "export-test")
        check(button.is_displayed() and button.text == "Export as test", "no Export as test button")
        # The file reaches the download as an object URL: read it there.
        self.driver.execute_script("""
            window.exported = null;
            const make = URL.createObjectURL;
            URL.createObjectURL = (file) => { file.text().then((text) => { window.exported = text; }); return make(file); };""")
        button.click()
        self.wait(lambda: "Exported SessionTests.swift" in self.text("banner"), "the page did not say it exported")
        exported = self.wait(lambda: self.driver.execute_script("return window.exported"), "nothing was downloaded")
        with open(written, encoding="utf-8") as file:
            check(exported == file.read(), "the download differs from what --swift-test writes")
        # A log recorded without those fields: the page says what to record with, and downloads nothing.
        bare = self.write_log("bare.jsonl", '{"action":{"add":{"_0":2}},"durationNanoseconds":2125,'
                              '"outcome":"committed","store":"counter","time":"2026-11-23T03:07:49.123Z"}\n')
        self.open(self.serve(bare).url)
        self.driver.find_element(By.ID, "export-test").click()
        self.wait(lambda: "fields: [.all, .swift]" in self.text("banner"), "the page did not say what to record")
        check(self.text("banner").startswith("Cannot export this session as a test: "), self.text("banner"))
        # A saved page has no server to ask: no button.
        report = self.path("export-report.html")
        subprocess.run([self.args.inspector, bare, "--html", report], check=True, capture_output=True, timeout=60)
        self.driver.get_log("browser")  # the 422 above, which the browser logs as an error
        self.open("file://" + report)
        check(not self.driver.find_element(By.ID, "export-test").is_displayed(), "a saved page shows the button")
        errors = self.page_errors()
        check(errors == [], f"the saved page logged errors: {errors}")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--inspector", required=True)
    parser.add_argument("--todo", required=True)
    parser.add_argument("--out", required=True)
    parser.add_argument("--chromium", default="/usr/bin/chromium")
    parser.add_argument("--chromedriver", default="/usr/bin/chromedriver")
    parser.add_argument("-k", dest="only", default="", help="run only the tests whose name holds this")
    args = parser.parse_args()
    for name in ("inspector", "todo", "out"):
        setattr(args, name, os.path.abspath(getattr(args, name)))
    suite = Suite(args)
    passed = failed = 0
    try:
        for name in [name for name in dir(Suite) if name.startswith("test_") and args.only in name]:
            suite.driver.get("about:blank")
            # What the page of the test before logged as its servers stopped is not this test's.
            suite.driver.get_log("browser")
            started = time.monotonic()
            try:
                getattr(suite, name)()
                passed += 1
                print(f"PASS {name} ({time.monotonic() - started:.1f} s)", flush=True)
            except Exception as error:  # noqa: BLE001: any error fails the test, not the suite
                failed += 1
                print(f"FAIL {name}: {error}", flush=True)
                if not isinstance(error, Failure):
                    traceback.print_exc()
                suite.screenshot(f"failed-{name}.png")
            finally:
                # The page leaves before its servers stop, so it asks nothing of a stopped server.
                try:
                    suite.driver.get("about:blank")
                except Exception:  # noqa: BLE001: a browser that cannot leave the page is seen by the next test
                    pass
                for app in suite.apps:
                    app.close()
                suite.apps = []
                for todo in suite.todos:
                    todo.close()
                suite.todos = []
                for server in suite.servers:
                    server.stop()
                suite.servers = []
        for figure, value in suite.figures.items():
            print(f"  {figure}: {value}")
    finally:
        suite.close()
    print(f"{passed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
