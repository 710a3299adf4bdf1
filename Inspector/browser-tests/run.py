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
    """flux-inspector serving one log, until stopped."""

    def __init__(self, binary, log):
        self.process = subprocess.Popen(
            [binary, log], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        line = self.process.stdout.readline()
        if not line.startswith("Flux Inspector: http://"):
            self.process.kill()
            raise Failure("flux-inspector did not start: " + line + self.process.stderr.read())
        self.url = line.split()[2]

    def stop(self):
        self.process.terminate()
        try:
            self.process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()


class Suite:
    def __init__(self, args):
        self.args = args
        self.work = tempfile.mkdtemp(prefix="flux-inspector-browser-")
        self.servers = []
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

    def serve(self, log):
        server = Inspector(self.args.inspector, log)
        self.servers.append(server)
        return server

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
        self.wait(lambda: "one global dispatch to 2 stores" in self.text("detail-facts"), "the dispatch is not one event")
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
        self.wait(lambda: "live" == self.text("status"), "the page is not live")
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
                for server in suite.servers:
                    server.stop()
                suite.servers = []
        for figure, value in suite.figures.items():
            print(f"  {figure}: {value}")
    finally:
        suite.close()
    print(f"{passed} passed, {failed} failed")
    return 1 if failed else 0


# Tests of the page with the server: the server's side of what the page is told.

def free_port():
    import socket
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


class InspectorOnPort(Inspector):
    """flux-inspector serving one log on a given port."""

    def __init__(self, binary, log, port):
        self.process = subprocess.Popen(
            [binary, log, "--port", str(port)], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        line = self.process.stdout.readline()
        if not line.startswith("Flux Inspector: http://"):
            self.process.kill()
            raise Failure("flux-inspector did not start: " + line + self.process.stderr.read())
        self.url = line.split()[2]


def test_a_page_that_reconnects_after_a_restart_reloads_a_log_that_changed(self):
    # The page follows a log; the server stops; another session is copied over the log (the same
    # file, longer); a server starts on the same port. The page must show the new log from its
    # start, not go on from its old offset in the other file.
    log = self.copy_of_todo_log("restarted.jsonl")
    port = free_port()
    first = InspectorOnPort(self.args.inspector, log, port)
    self.servers.append(first)
    self.open(first.url)
    self.wait(lambda: "live" in self.text("status"), "the page is not live")
    before = os.path.getsize(log)
    lines = []
    while sum(len(line) for line in lines) <= before:
        index = len(lines)
        lines.append(logs._line({"store": "copied", "outcome": "committed", "time": logs._time(logs.START, index),
                                 "durationNanoseconds": 1000, "action": {"add": {"_0": "x" * 300}}}))
    first.stop()
    self.servers.remove(first)
    with open(log, "r+", encoding="utf-8") as file:
        file.truncate(0)
        file.write("".join(lines))
    second = InspectorOnPort(self.args.inspector, log, port)
    self.servers.append(second)
    expected = list(range(1, len(lines) + 1))
    self.wait(lambda: [row[1] for row in self.rows()] == expected,
              f"the page shows lines {[row[1] for row in self.rows()]}, not {expected}", timeout=30)
    check(not any("error" in row[3] for row in self.rows()), f"the page shows a bad line: {self.rows()}")
    check(all("copied" in row[2] for row in self.rows()), f"the page shows lines of the old log: {self.rows()}")


Suite.test_a_page_that_reconnects_after_a_restart_reloads_a_log_that_changed = (
    test_a_page_that_reconnects_after_a_restart_reloads_a_log_that_changed)


if __name__ == "__main__":
    sys.exit(main())
