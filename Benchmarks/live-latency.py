#!/usr/bin/env python3
"""The latency from a commit in a running app to its row in the Flux Inspector's page.

Starts `flux-inspector` (no log: it waits for apps), the `todo` example connected live to it
(FLUX_INSPECTOR), and Debian's headless Chromium on the page, driven by Selenium. Then, one at a
time, types `add latency-N` into todo and times, for each, from the write to todo's standard input
(todo reads it at once and commits on its main queue) to the moment the page draws the row of that
action (a MutationObserver in the page, with the page's clock; both clocks are the machine's wall
clock). Prints the median, the 90th and 99th percentiles, the mean and the longest, with the load
average. Build both in release first:

    swift build -c release --product todo
    swift build -c release --package-path Inspector --product flux-inspector
    python3 Benchmarks/live-latency.py --inspector Inspector/.build/release/flux-inspector \\
        --todo .build/release/todo --commits 300
"""

import argparse
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time

from selenium import webdriver
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.support.ui import WebDriverWait

# Records, for each row of a `latency-N` action the page draws, when it first drew it: on every
# change to the rows, with the page's high-resolution clock on the wall clock's origin.
OBSERVER = """
window.seenAt = {};
const look = () => {
  const now = performance.timeOrigin + performance.now();
  for (const row of document.querySelectorAll('#rows .row')) {
    const found = /"latency-(\\d+)"/.exec(row.textContent);
    if (found && !(found[1] in window.seenAt)) window.seenAt[found[1]] = now;
  }
};
new MutationObserver(look).observe(document.getElementById('rows'),
  {childList: true, subtree: true, characterData: true});
look();
"""


def percentile(values, fraction):
    ordered = sorted(values)
    index = min(len(ordered) - 1, max(0, round(fraction * (len(ordered) - 1))))
    return ordered[index]


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--inspector", required=True, help="a release flux-inspector")
    parser.add_argument("--todo", required=True, help="a release todo")
    parser.add_argument("--commits", type=int, default=300, help="how many commits to time (at least 200)")
    parser.add_argument("--chromium", default="/usr/bin/chromium")
    parser.add_argument("--chromedriver", default="/usr/bin/chromedriver")
    args = parser.parse_args()
    if args.commits < 1:
        parser.error("--commits must be at least 1")
    work = tempfile.mkdtemp(prefix="flux-live-latency-")
    inspector = subprocess.Popen([os.path.abspath(args.inspector)], stdout=subprocess.PIPE,
                                 stderr=subprocess.DEVNULL, text=True)
    todo = None
    driver = None
    try:
        url_line = inspector.stdout.readline()
        apps_line = inspector.stdout.readline()
        if not url_line.startswith("Flux Inspector: http://") or "FLUX_INSPECTOR=" not in apps_line:
            sys.exit(f"flux-inspector did not start: {url_line!r} {apps_line!r}")
        url = url_line.split()[2]
        apps = apps_line.strip().split("=", 1)[1]
        environment = {key: value for key, value in os.environ.items() if not key.startswith("FLUX_INSPECTOR")}
        environment.update(FLUX_INSPECTOR=apps, SWIFT_BACKTRACE="enable=no")
        todo = subprocess.Popen([os.path.abspath(args.todo)], cwd=work, env=environment, stdin=subprocess.PIPE,
                                stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True, bufsize=1)
        threading.Thread(target=lambda: [None for _ in todo.stdout], daemon=True).start()

        options = webdriver.ChromeOptions()
        options.binary_location = args.chromium
        for flag in ("--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--disable-gpu",
                     "--no-proxy-server", "--window-size=1440,900"):
            options.add_argument(flag)
        driver = webdriver.Chrome(service=Service(args.chromedriver), options=options)
        driver.set_page_load_timeout(60)

        def add(title):
            todo.stdin.write(f"add {title}\n")
            todo.stdin.flush()

        # The page, on a session that has begun: one action first, shown.
        add("latency-warmup")
        driver.get(url)
        WebDriverWait(driver, 60).until(lambda d: d.execute_script("return document.body.dataset.ready === 'true'"))
        WebDriverWait(driver, 60, poll_frequency=0.05).until(
            lambda d: d.execute_script("return document.querySelectorAll('#rows .row').length > 0"))
        driver.execute_script(OBSERVER)

        latencies = []
        for n in range(args.commits):
            started = time.time() * 1000
            add(f"latency-{n}")
            deadline = time.monotonic() + 30
            seen = None
            while seen is None and time.monotonic() < deadline:
                time.sleep(0.005)
                seen = driver.execute_script(f"return window.seenAt['{n}'] ?? null")
            if seen is None:
                sys.exit(f"the row of commit {n} did not show within 30 s")
            latencies.append(seen - started)

        load = os.getloadavg()
        print(f"{time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())} · {platform.machine()}, "
              f"{os.cpu_count()} cores, {platform.system()} · load average {load[0]:.2f}, {load[1]:.2f}, {load[2]:.2f}")
        print(f"commit → row, {len(latencies)} commits, one at a time: {args.todo} connected live to "
              f"{args.inspector}, the page in headless Chromium")
        print(f"  median {statistics.median(latencies):.1f} ms · p90 {percentile(latencies, 0.9):.1f} ms · "
              f"p99 {percentile(latencies, 0.99):.1f} ms · mean {statistics.fmean(latencies):.1f} ms · "
              f"longest {max(latencies):.1f} ms · shortest {min(latencies):.1f} ms")
    finally:
        if driver is not None:
            driver.quit()
        if todo is not None and todo.poll() is None:
            try:
                todo.stdin.close()
                todo.wait(timeout=10)
            except (OSError, subprocess.TimeoutExpired):
                todo.kill()
                todo.wait()
        inspector.terminate()
        try:
            inspector.wait(timeout=10)
        except subprocess.TimeoutExpired:
            inspector.kill()
            inspector.wait()
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
