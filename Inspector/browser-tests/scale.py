#!/usr/bin/env python3
"""The Flux Inspector at scale: writes a todo-like log of N actions with their states, serves it
with flux-inspector, opens it in headless Chromium, and prints the time to the first rows, the
server's memory, the page's heap, the time to reach the last row with End, and the time of a
search that finds one action near the end.

    swift build -c release --package-path Inspector --scratch-path Inspector/.build-release
    python3 Inspector/browser-tests/scale.py \\
      --inspector Inspector/.build-release/release/flux-inspector --actions 1000000
"""

import argparse
import os
import subprocess
import sys
import tempfile
import time

from selenium import webdriver
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.common.by import By
from selenium.webdriver.common.keys import Keys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import logs  # noqa: E402


def memory(pid, field):
    """A figure of /proc/PID/status, in MB."""
    with open(f"/proc/{pid}/status", encoding="ascii") as status:
        for line in status:
            if line.startswith(field + ":"):
                return int(line.split()[1]) / 1024
    return 0.0


def wait(condition, timeout, poll=0.01):
    started = time.monotonic()
    while time.monotonic() - started < timeout:
        value = condition()
        if value:
            return value
        time.sleep(poll)
    raise SystemExit("timed out")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--inspector", required=True)
    parser.add_argument("--actions", type=int, default=1_000_000)
    parser.add_argument("--chromium", default="/usr/bin/chromium")
    parser.add_argument("--chromedriver", default="/usr/bin/chromedriver")
    args = parser.parse_args()
    work = tempfile.mkdtemp(prefix="flux-inspector-scale-")
    log = os.path.join(work, "session.jsonl")
    needle = args.actions - 10
    with open(log, "w", encoding="utf-8") as file:
        step = 100_000
        for start in range(0, args.actions, step):
            file.write(logs.todo_session(min(step, args.actions - start), needle, first=start))
    size = os.path.getsize(log)
    print(f"log: {args.actions:,} actions, {size / 1e6:.0f} MB")

    options = webdriver.ChromeOptions()
    options.binary_location = args.chromium
    for flag in ("--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--disable-gpu",
                 "--no-proxy-server", "--window-size=1440,900", "--enable-precise-memory-info"):
        options.add_argument(flag)
    driver = webdriver.Chrome(service=Service(args.chromedriver), options=options)
    server = subprocess.Popen([args.inspector, log], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        url = server.stdout.readline().split()[2]
        driver.get("about:blank")
        started = time.monotonic()
        driver.get(url)
        wait(lambda: driver.execute_script("return document.body.dataset.ready === 'true'"), 600)
        first_paint = time.monotonic() - started
        rows = driver.execute_script("return document.querySelectorAll('#rows .row:not(.loading)').length")
        count = driver.find_element(By.ID, "count").text
        print(f"time to first paint: {first_paint:.2f} s ({rows} rows drawn; {count})")

        started = time.monotonic()
        driver.find_element(By.ID, "rows").send_keys(Keys.END)
        last = str(args.actions)
        wait(lambda: driver.execute_script(
            "const row = document.querySelector('#rows .row.selected:not(.loading)');"
            "return row && row.dataset.line === arguments[0];", last), 120)
        print(f"time to End: {time.monotonic() - started:.2f} s")

        started = time.monotonic()
        search = driver.find_element(By.ID, "search")
        search.send_keys(f"needle {needle}")
        wait(lambda: driver.find_element(By.ID, "count").text.startswith("1 of"), 300)
        wait(lambda: driver.execute_script(
            "const row = document.querySelector('#rows .row.selected:not(.loading)');"
            "return row && row.dataset.line === arguments[0];", str(needle + 1)), 60)
        print(f"search time: {time.monotonic() - started:.2f} s (found line {needle + 1})")

        # Live follow: 10,000 actions a second appended for 5 seconds, the newest selected.
        search.clear()
        search.send_keys(" ")
        wait(lambda: driver.find_element(By.ID, "count").text.startswith(f"{args.actions:,} of"), 300)
        follow = driver.find_element(By.ID, "follow")
        if not follow.is_selected():
            follow.click()
        driver.execute_script("""
            window.longest = 0;
            new PerformanceObserver((list) => {
              for (const entry of list.getEntries()) window.longest = Math.max(window.longest, entry.duration);
            }).observe({ type: 'longtask', buffered: false });""")
        total = args.actions
        started = time.monotonic()
        with open(log, "a", encoding="utf-8") as file:
            for tick in range(50):
                file.write(logs.todo_session(1000, first=total))
                file.flush()
                total += 1000
                time.sleep(max(0.0, started + (tick + 1) / 10 - time.monotonic()))
        written = time.monotonic() - started
        wait(lambda: driver.execute_script(
            "const row = document.querySelector('#rows .row.selected:not(.loading)');"
            "return row && row.dataset.line === arguments[0];", str(total)), 60)
        longest = driver.execute_script("return window.longest")
        print(f"live follow: 50,000 actions written in {written:.1f} s, the newest selected "
              f"{time.monotonic() - started - written:.2f} s after; the page's longest busy stretch {longest:.0f} ms")

        heap = driver.execute_cdp_cmd("Runtime.getHeapUsage", {})
        print(f"page heap: {heap['usedSize'] / 1e6:.0f} MB used of {heap['totalSize'] / 1e6:.0f} MB")
        print(f"server: {memory(server.pid, 'VmRSS'):.0f} MB resident now, {memory(server.pid, 'VmHWM'):.0f} MB at most")
    finally:
        server.terminate()
        server.wait()
        driver.quit()
        os.remove(log)
        os.rmdir(work)


if __name__ == "__main__":
    main()
