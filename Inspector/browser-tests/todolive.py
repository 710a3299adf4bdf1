"""The live Inspector with the real todo example: `todo` runs with FLUX_INSPECTOR set, reads its
commands from a pipe, and is steered from the page; what it prints for `lists` says what its
lists hold."""

import os
import re
import signal
import socket
import subprocess
import threading
import time

from selenium.webdriver.common.by import By

from live import Failure, check


def free_ports(count):
    ports = []
    for _ in range(count):
        with socket.socket() as probe:
            probe.bind(("127.0.0.1", 0))
            ports.append(probe.getsockname()[1])
    return ports


class Todo:
    """The todo example, connected to an inspector, fed one command at a time."""

    def __init__(self, binary, folder, apps, pairing=None):
        os.makedirs(folder, exist_ok=True)
        environment = {key: value for key, value in os.environ.items() if not key.startswith("FLUX_INSPECTOR")}
        environment.update(FLUX_INSPECTOR=apps, SWIFT_BACKTRACE="enable=no")
        if pairing:
            environment["FLUX_INSPECTOR_PAIRING"] = pairing
        self.process = subprocess.Popen([binary], cwd=folder, env=environment, stdin=subprocess.PIPE,
                                        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, bufsize=1)
        self.lock = threading.Lock()
        self.out = []
        self.err = []
        for stream, lines in ((self.process.stdout, self.out), (self.process.stderr, self.err)):
            threading.Thread(target=self.read, args=(stream, lines), daemon=True).start()

    def read(self, stream, lines):
        for line in stream:
            with self.lock:
                lines.append(line.rstrip("\n"))

    def printed(self, start=0):
        with self.lock:
            return list(self.out[start:])

    def said(self):
        with self.lock:
            return "\n".join(self.err)

    def run(self, command, expect, timeout=10):
        """Types `command`; returns the first line it printed that matches `expect`."""
        start = len(self.printed())
        self.process.stdin.write(command + "\n")
        self.process.stdin.flush()
        return self.await_line(expect, start, f"todo printed nothing like {expect!r} for {command!r}", timeout)

    def await_line(self, expect, start, message, timeout=10):
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            for line in self.printed(start):
                if re.search(expect, line):
                    return line
            if self.process.poll() is not None:
                break
            time.sleep(0.02)
        raise Failure(f"{message}: {self.printed(start)} (stderr: {self.said()!r})")

    def add(self, title):
        return self.run(f"add {title}", re.escape(title) + "$")

    def lists(self):
        """What todo prints for `lists`: `* Inbox  N of M done`."""
        return self.run("lists", r"^\* Inbox ").strip()

    def close(self):
        if self.process.poll() is None:
            try:
                self.process.stdin.close()
                self.process.wait(timeout=10)
            except (OSError, subprocess.TimeoutExpired):
                self.process.kill()
                self.process.wait()


class TodoLiveTests:
    # The tests with the real todo example.

    def start_todo(self, server, pairing=None, name="todo-live"):
        todo = Todo(self.args.todo, self.path(f"{name}-{len(self.todos)}"), server.apps, pairing)
        self.todos.append(todo)
        return todo

    def todo_with_groceries(self, server):
        todo = self.start_todo(server)
        for title in ("Milk", "Bread", "Eggs"):
            todo.add(title)
        check(todo.lists() == "* Inbox  0 of 3 done", todo.printed())
        self.open(server.url)
        self.wait(lambda: any('add(title: "Eggs")' in text for text in self.row_texts()),
                  f"todo's actions do not show: {self.row_texts()}", timeout=20)
        self.wait(lambda: self.text("status") == "app connected", self.text("status"))
        check("todo · pid" in self.text("session"), self.text("session"))
        return todo

    def wait_for_todo(self, todo, start, expect):
        return todo.await_line(
            expect, start, f"todo printed nothing like {expect!r} for the command (the page: {self.steer_result()!r})",
            timeout=15)

    def test_todo_live_a_jump_in_the_page_changes_what_todo_prints_for_lists(self):
        server = self.serve(None)
        todo = self.todo_with_groceries(server)
        start = len(todo.printed())
        self.click_text('add(title: "Bread")')
        self.wait(lambda: self.driver.find_elements(By.CSS_SELECTOR, ".steer-jump"), "no Jump button for the list")
        self.driver.find_element(By.CSS_SELECTOR, ".steer-jump").click()
        self.wait_for_todo(todo, start, r"^Inspector: jumped")
        check(todo.lists() == "* Inbox  0 of 2 done", f"after the jump todo prints {todo.printed(start)}")
        self.wait(lambda: "jumped" in self.steer_result(), f"the answer reads {self.steer_result()!r}")
        self.wait(lambda: any("jumped from the Inspector" in text for text in self.row_texts()),
                  f"the jump's commit is not shown as jumped: {self.row_texts()}")
        # The jump's own commit may be jumped to, not skipped: only the app's own actions are.
        self.click_text("jumped from the Inspector")
        self.wait(lambda: "not skipped" in self.text("detail-steer"), self.text("detail-steer"))
        check(self.driver.find_elements(By.CSS_SELECTOR, ".steer-jump")
              and not self.driver.find_elements(By.CSS_SELECTOR, ".steer-skip"), self.text("detail-steer"))
        # The app goes on while jumped; back to the present keeps what it did meanwhile.
        todo.add("Tea")
        check(todo.lists() == "* Inbox  0 of 3 done", todo.printed(start))
        start = len(todo.printed())
        self.driver.find_element(By.ID, "present").click()
        self.wait_for_todo(todo, start, r"^Inspector: ")
        check(todo.lists() == "* Inbox  0 of 4 done", f"the present is {todo.printed(start)}")
        self.wait(lambda: any("back to the present from the Inspector" in text for text in self.row_texts()),
                  f"the present's commit is not shown as such: {self.row_texts()}")
        self.screenshot("inspector-todo-live-jump.png")

    def test_todo_live_export_as_test_downloads_the_test_of_the_session_shown(self):
        server = self.serve(None)
        todo = self.todo_with_groceries(server)
        start = len(todo.printed())
        self.click_text('add(title: "Bread")')
        self.wait(lambda: self.driver.find_elements(By.CSS_SELECTOR, ".steer-jump"), "no Jump button for the list")
        self.driver.find_element(By.CSS_SELECTOR, ".steer-jump").click()
        self.wait_for_todo(todo, start, r"^Inspector: jumped")
        self.wait(lambda: any("jumped from the Inspector" in text for text in self.row_texts()), self.row_texts())
        # The file reaches the download as an object URL: read it there.
        self.driver.execute_script("""
            window.exported = null;
            const make = URL.createObjectURL;
            URL.createObjectURL = (file) => { file.text().then((text) => { window.exported = text; }); return make(file); };""")
        self.driver.find_element(By.ID, "export-test").click()
        self.wait(lambda: "Exported SessionTests.swift" in self.text("banner"), f"the banner reads {self.text('banner')!r}")
        exported = self.wait(lambda: self.driver.execute_script("return window.exported"), "nothing was downloaded")
        check("the live session of todo, process" in exported, exported[:600])
        check('.add(title: "Eggs")' in exported, "the app's actions are not in the test")
        check("Steered from the Inspector (jump)." in exported, "the jump is not in the test as what it was")

    def test_todo_live_a_dispatch_typed_in_the_page_adds_an_item(self):
        server = self.serve(None)
        todo = self.todo_with_groceries(server)
        field = self.driver.find_element(By.ID, "dispatch-text")
        field.send_keys('{"add":{"title":5}}')
        self.driver.find_element(By.ID, "dispatch").click()
        self.wait(lambda: self.text("dispatch-error"), "the decoding error is not shown in place")
        check("title" in self.text("dispatch-error"), self.text("dispatch-error"))
        check(todo.lists() == "* Inbox  0 of 3 done", f"a wrong action changed todo: {todo.printed()}")
        start = len(todo.printed())
        field.clear()
        field.send_keys('{"add":{"title":"Tea"}}')
        self.driver.find_element(By.ID, "dispatch").click()
        self.wait_for_todo(todo, start, r"^Inspector: ")
        check(todo.lists() == "* Inbox  0 of 4 done", f"after the dispatch todo prints {todo.printed(start)}")
        check(todo.run("show", r"4\. \[ \] Tea$"), todo.printed(start))
        self.wait(lambda: any("dispatched from the Inspector" in text and "Tea" in text for text in self.row_texts()),
                  f"the dispatched action is not shown as such: {self.row_texts()}")

    def test_todo_live_a_skip_removes_an_items_effect_and_unskip_restores_it(self):
        server = self.serve(None)
        todo = self.todo_with_groceries(server)
        start = len(todo.printed())
        self.click_text('add(title: "Bread")')
        self.wait(lambda: self.driver.find_elements(By.CSS_SELECTOR, ".steer-skip"), "no Skip button")
        self.driver.find_element(By.CSS_SELECTOR, ".steer-skip").click()
        self.wait_for_todo(todo, start, r"^Inspector: skipped")
        check(todo.lists() == "* Inbox  0 of 2 done", f"after the skip todo prints {todo.printed(start)}")
        check(todo.run("show", r"2\. \[ \] Eggs$"), todo.printed(start))
        self.wait(lambda: any("skipped" in text and '"Bread"' in text for text in self.row_texts()),
                  f"the skipped action is not marked: {self.row_texts()}")
        start = len(todo.printed())
        self.click_text('add(title: "Bread")')
        self.wait(lambda: self.driver.find_elements(By.CSS_SELECTOR, ".steer-unskip"), "no Unskip button")
        self.driver.find_element(By.CSS_SELECTOR, ".steer-unskip").click()
        self.wait_for_todo(todo, start, r"^Inspector: unskipped")
        check(todo.lists() == "* Inbox  0 of 3 done", f"after the unskip todo prints {todo.printed(start)}")
        self.wait(lambda: any("unskipped from the Inspector" in text for text in self.row_texts()), self.row_texts())

    def test_todo_live_an_inspector_killed_leaves_todo_working_and_todo_reconnects(self):
        page_port, apps_port = free_ports(2)
        server = self.serve(None, port=page_port, apps_port=apps_port)
        todo = self.todo_with_groceries(server)
        os.kill(server.process.pid, signal.SIGKILL)
        server.process.wait()
        self.servers.remove(server)
        self.wait(lambda: "server gone" in self.text("status"), f"the status reads {self.text('status')!r}")
        # todo goes on as if nothing happened: each command answers at once.
        started = time.monotonic()
        for title in ("Tea", "Jam", "Rice"):
            todo.add(title)
        check(todo.lists() == "* Inbox  0 of 6 done", todo.printed())
        self.figures["todo live: 4 commands with its inspector killed"] = f"{time.monotonic() - started:.2f} s"
        check(todo.process.poll() is None, "todo stopped")
        server = self.serve(None, port=page_port, apps_port=apps_port)
        self.wait(lambda: self.text("status") == "app connected"
                  and any('add(title: "Rice")' in text for text in self.row_texts()),
                  f"after the restart the page shows {self.row_texts()} ({self.text('status')!r})", timeout=30)
        # And it is steerable again.
        start = len(todo.printed())
        self.click_text('add(title: "Rice")')
        self.wait(lambda: self.driver.find_elements(By.CSS_SELECTOR, ".steer-skip"), "no Skip button")
        self.driver.find_element(By.CSS_SELECTOR, ".steer-skip").click()
        self.wait_for_todo(todo, start, r"^Inspector: skipped")
        check(todo.lists() == "* Inbox  0 of 5 done", todo.printed(start))

    def test_todo_live_an_app_without_the_pairing_code_is_refused_on_listen(self):
        server = self.serve(None, extra=("--listen", "127.0.0.1"))
        check(server.pairing and re.fullmatch(r"[A-Z2-9]{4}-[A-Z2-9]{4}", server.pairing), server.pairing)
        self.open(server.url)
        unpaired = self.start_todo(server)
        deadline = time.monotonic() + 15
        while "refused" not in unpaired.said() and time.monotonic() < deadline:
            time.sleep(0.05)
        check("pairing code" in unpaired.said(), f"todo said {unpaired.said()!r}")
        # Refused, todo still works, and the page shows no session of it.
        unpaired.add("Milk")
        check(unpaired.lists() == "* Inbox  0 of 1 done", unpaired.printed())
        check("No app is connected yet" in self.text("banner"), self.text("banner"))
        wrong = Todo(self.args.todo, self.path("todo-wrong"), server.apps, pairing="ABCD-EFGH")
        self.todos.append(wrong)
        paired = self.start_todo(server, pairing=server.pairing)
        paired.add("Bread")
        self.wait(lambda: any('add(title: "Bread")' in text for text in self.row_texts()),
                  f"the paired todo does not show: {self.row_texts()}", timeout=20)
        deadline = time.monotonic() + 15
        while "refused" not in wrong.said() and time.monotonic() < deadline:
            time.sleep(0.05)
        check("wrong" in wrong.said(), f"the todo with a wrong code said {wrong.said()!r}")
        options = self.driver.find_elements(By.CSS_SELECTOR, "#session option")
        check(len(options) <= 1 and not any("Milk" in text for text in self.row_texts()),
              f"an unpaired app shows: {[option.text for option in options]}")
