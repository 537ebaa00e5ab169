#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""dashboard_test.py -- the dashboard in a real headless Chromium, as a person uses it.

    dashboard_test.py URL SHOTS RESULTS --job-file F --queued-file F --boards N
                      --chart-board B --failed-job ID --console-board C
                      --tokens reader=T,admin=T,developer=T

Drives Debian's chromium through chromium-driver with Selenium.  Each check
is written to RESULTS as one JSON line {"name", "ok", "why"} for the shell
test (t4400-dashboard.sh) to report; screenshots of the main pages go to SHOTS.
"""
import argparse
import json
import os
import tempfile
import time
import traceback
import urllib.error
import urllib.request

from selenium import webdriver
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.common.by import By
from selenium.webdriver.common.keys import Keys

CHROME_FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic",
                "--no-first-run", "--disable-background-networking",
                "--disable-component-update", "--disable-sync", "--disable-dev-shm-usage",
                "--window-size=1400,1000"]


class Failed(Exception):
    pass


def api(base, path, token=None, method="GET", body=None, ctype="application/json"):
    req = urllib.request.Request(base + "/api/v1" + path, method=method, data=body)
    if token:
        req.add_header("Authorization", "Bearer " + token)
    if body is not None:
        req.add_header("Content-Type", ctype)
    try:
        with urllib.request.urlopen(req, timeout=10) as r:
            return r.status, json.loads(r.read() or b"null")
    except urllib.error.HTTPError as e:
        return e.code, json.loads(e.read() or b"null")


def wait(what, cond, timeout=30.0, every=0.1):
    end = time.time() + timeout
    last = None
    while time.time() < end:
        try:
            v = cond()
            if v:
                return v
        except Exception as e:  # the page is changing under us: try again
            last = e
        time.sleep(every)
    raise Failed("timed out waiting for %s%s" % (what, ": %s" % last if last else ""))


class Session:
    def __init__(self, args):
        self.a = args
        self.base = args.url
        self.tokens = dict(kv.split("=", 1) for kv in args.tokens.split(","))
        opts = webdriver.ChromeOptions()
        opts.binary_location = "/usr/bin/chromium"
        for f in CHROME_FLAGS:
            opts.add_argument(f)
        self.profile = tempfile.mkdtemp(prefix="labd-chromium-")
        opts.add_argument("--user-data-dir=" + self.profile)
        self.d = webdriver.Chrome(service=Service("/usr/bin/chromedriver"), options=opts)
        self.d.set_page_load_timeout(30)
        self.results = open(args.results, "w")

    def close(self):
        self.d.quit()
        self.results.close()

    def check(self, name, fn):
        only = os.environ.get("DASHBOARD_ONLY")
        if only and only not in name:
            return
        try:
            fn()
            self.results.write(json.dumps({"name": name, "ok": True}) + "\n")
        except Exception as e:
            why = str(e) if isinstance(e, Failed) else traceback.format_exc()
            self.results.write(json.dumps({"name": name, "ok": False, "why": why}) + "\n")
            self.shot("failed-" + name.split()[0])
            import subprocess
            port = self.base.rsplit(":", 1)[1]
            pending = subprocess.run("curl -s -m 3 %s/api/v1/health; ss -tn | grep ':%s' | "
                                     "awk '{print $1}' | sort | uniq -c" % (self.base, port),
                                     shell=True, capture_output=True, text=True).stdout
            self.results.write(json.dumps({"name": name + " (pending requests)", "ok": False,
                                           "why": pending}) + "\n")
        self.results.flush()

    def shot(self, name):
        self.d.save_screenshot(os.path.join(self.a.shots, name + ".png"))

    def js(self, script, *args):
        return self.d.execute_script(script, *args)

    def text(self, elem_id):
        """The text of element @elem_id now (pages redraw: no stale references)."""
        return self.js("const e = document.getElementById(arguments[0]);"
                       "return e ? e.textContent : null;", elem_id)

    def open(self, path):
        t = time.time()
        self.d.get(self.base + path)
        if os.environ.get("DASHBOARD_TRACE"):
            print("%.3f open %s: %.2f s" % (t, path, time.time() - t), flush=True)

    def login(self, role):
        """Log in through the page's form, as a person would; None: log out."""
        self.open("/")
        self.js("sessionStorage.removeItem('labd-token')")
        self.open("/")
        if role:
            field = wait("the token field", lambda: self.d.find_element(By.ID, "token"))
            field.send_keys(self.tokens[role])
            self.d.find_element(By.ID, "login-btn").click()
            wait("logged in as a " + role,
                 lambda: "(%s)" % role in self.d.find_element(By.ID, "who").text)

    # ---- the checks ----

    def board_grid(self):
        self.open("/")
        wait("the board grid", lambda: self.d.find_element(By.CSS_SELECTOR,
                                                          "#boards[data-loaded]"))
        # A board may change state between the API's answer and the page's live
        # update (a job's board powering off): the page must catch up, within 10 s.
        try:
            wait("the cards to show the API's boards and states", self.grid_matches, 10, 0.5)
        except Failed as e:
            raise Failed(getattr(self, "grid_mismatch", None) or str(e))
        wait("the queue table", lambda: self.d.find_element(By.CSS_SELECTOR, "#queue tr[data-type]"))
        self.shot("boards")

    def grid_matches(self):
        """Whether every card shows its board's state as the API has it now."""
        _, boards = api(self.base, "/devices", self.tokens["admin"])
        cards = self.d.find_elements(By.CSS_SELECTOR, "#boards .board")
        self.grid_mismatch = None
        if len(cards) != len(boards) or len(boards) != self.a.boards:
            self.grid_mismatch = "%d cards for %d boards" % (len(cards), len(boards))
            return False
        for b in boards:
            # read in one go: a live update may redraw the card at any moment
            shown = self.js("const c = document.querySelector('.board[data-name=\"' + arguments[0]"
                            " + '\"] .state'); return c ? c.textContent : null;", b["name"])
            if shown != b["state"]:
                self.grid_mismatch = "%s shows '%s', the API says '%s'" % (b["name"], shown,
                                                                         b["state"])
                return False
        return True

    def rows_of(self, table):
        """The cells' texts of each data row of table @table (read in one go)."""
        return self.js("""const t = document.getElementById(arguments[0]);
            if (!t || !t.dataset.loaded) return null;
            return [...t.querySelectorAll('tr[data-id]')].map((tr) =>
                [...tr.children].map((td) => td.textContent));""", table)

    def job_list(self):
        """The job list, filtered, and a board's recent jobs show rows, as the API has them."""
        for query, table in (("", "jobs"), ("?device_type=sim-uboot", "jobs"),
                             ("?state=finished&health=complete", "jobs")):
            _, jobs = api(self.base, "/jobs" + (query + "&" if query else "?") + "limit=50",
                          self.tokens["admin"])
            self.open("/jobs" + query)
            rows = wait("the rows of /jobs%s" % query, lambda: self.rows_of(table))
            if "[object" in self.d.find_element(By.TAG_NAME, "body").text:
                raise Failed("/jobs%s shows '[object ...]' text" % query)
            if [r[0] for r in rows] != [str(j["id"]) for j in jobs]:
                raise Failed("/jobs%s shows rows %s, the API has %s" %
                             (query, [r[0] for r in rows], [j["id"] for j in jobs]))
            for r, j in zip(rows, jobs):
                if r[1] != j["name"] or r[2] != j["device_type"]:
                    raise Failed("row of job %s shows %s" % (j["id"], r))
            if not jobs:
                raise Failed("/jobs%s: no job to show" % query)
            if not query:
                self.shot("jobs")
        board = self.a.chart_board
        _, jobs = api(self.base, "/jobs?device=%s&limit=20" % board, self.tokens["admin"])
        self.open("/boards/" + board)
        rows = wait("the board's recent jobs", lambda: self.rows_of("board-jobs"))
        if [r[0] for r in rows] != [str(j["id"]) for j in jobs] or not rows:
            raise Failed("board %s lists jobs %s, the API %s" % (board, [r[0] for r in rows],
                                                                 [j["id"] for j in jobs]))

    def queue_waiting(self):
        """The queue counts the waiting reservation and lists it with what waits."""
        _, res = api(self.base, "/reservations", self.tokens["admin"])
        waiting = [r for r in res if r["state"] == "waiting"]
        if not waiting:
            raise Failed("no waiting reservation to show: %s" % res)
        self.open("/")
        wait("the queue", lambda: self.d.find_element(By.CSS_SELECTOR, "#queue tr[data-type]"))
        cell = lambda: self.js("const c = document.querySelector('#queue tr[data-type=\"sim-uboot\"]"
                               " td.reservations'); return c ? c.textContent : null;")
        wait("the queue to count the reservation", lambda: cell() == str(len(waiting)), 15)
        _, boards = api(self.base, "/devices", self.tokens["admin"])
        types = set(b["type"] for b in boards)
        shown = set(self.js("return [...document.querySelectorAll('#queue tr[data-type]')]"
                            ".map((tr) => tr.dataset.type);"))
        if not shown <= types:
            raise Failed("the queue lists device types without boards: %s" % (shown - types))
        row = wait("the reservation among what waits", lambda: self.js(
            "const r = document.querySelector('#waiting tr[data-reservation=\"' + arguments[0]"
            " + '\"]'); return r ? r.textContent : null;", waiting[0]["id"]), 15)
        if waiting[0]["holder"] not in row or "board sim-04" not in row:
            raise Failed("the waiting reservation's row says '%s'" % row)
        self.js("document.getElementById('queue').scrollIntoView()")
        self.shot("queue")
        self.open("/reservations")
        wait("the reservations page", lambda: self.js(
            "const r = document.querySelector('#reservations tr[data-state=\"waiting\"] td.position');"
            " return r && r.textContent === '1';"), 15)
        self.shot("reservations")

    def running_card(self):
        """A running job's card: its name, submitter, action and a growing elapsed time."""
        with open(self.a.queued_file, "rb") as f:
            status, job = api(self.base, "/jobs", self.tokens["admin"], "POST", f.read(),
                              "application/yaml")
        if status != 201:
            raise Failed("submit: %s %s" % (status, job))
        self.long_id = job["id"]
        self.open("/")
        card = lambda: self.js("""for (const c of document.querySelectorAll('#boards .board')) {
                const a = c.querySelector('.what a');
                if (a && a.textContent === 'job ' + arguments[0]) return {
                    name: (c.querySelector('.job-name') || {}).textContent,
                    by: (c.querySelector('.submitter') || {}).textContent,
                    action: (c.querySelector('.action') || {}).textContent,
                    elapsed: (c.querySelector('.elapsed') || {}).textContent };
            } return null;""", self.long_id)
        first = wait("the card to show the test action",
                     lambda: (lambda c: c if c and c["action"] and
                              c["action"].startswith("test-interactive") else None)(card()), 90)
        if first["name"] != "runs until canceled" or first["by"] != " by boss":
            raise Failed("the card says %s" % first)
        secs = lambda c: int(c["elapsed"].split()[0]) if c and c["elapsed"].endswith(" s") else -1
        t0 = secs(first)
        wait("the elapsed time to grow", lambda: secs(card()) >= t0 + 2, 10)
        self.shot("boards-running")

    def failed_counts(self):
        """A complete job with failed tests: not green, its counts and labd's lines on top."""
        jid = self.a.failed_job
        _, job = api(self.base, "/jobs/%s" % jid, self.tokens["admin"])
        self.open("/jobs/%s" % jid)
        wait("the job's health", lambda: self.text("job-health") == "complete, 3 failed", 20)
        cls = self.js("return document.getElementById('job-health').className")
        if "failed" not in cls or "complete" in cls:
            raise Failed("the health's class is '%s'" % cls)
        if self.text("job-results") != "1 passed, 3 failed, 0 skipped":
            raise Failed("the counts say '%s'" % self.text("job-results"))
        wait("the log with labd's lines", lambda: self.d.find_element(By.CSS_SELECTOR,
                                                                       "#log[data-complete]"), 20)
        labd = self.js("return [...document.querySelectorAll('#log .line.labd')]"
                       ".map((e) => e.textContent);")
        if not any("action 1 of" in t for t in labd) or not any("job complete" in t for t in labd):
            raise Failed("labd's lines on the page: %s" % labd[:10])
        legend = self.js("return [...document.querySelectorAll('#timeline-legend .phase')]"
                         ".map((e) => [e.textContent, e.scrollWidth <= e.clientWidth + 1,"
                         " e.getBoundingClientRect().right <= window.innerWidth]);")
        names = [p["phase"] for p in job["phases"]]
        if len(legend) != len(names) or not names:
            raise Failed("the legend has %s for phases %s" % (legend, names))
        for (text, whole, inside), name in zip(legend, names):
            if not text.startswith(name) or not whole or not inside:
                raise Failed("phase '%s' shown as '%s' (whole %s, on the page %s)" %
                             (name, text, whole, inside))
        self.shot("job-failed")

    def running_log(self):
        with open(self.a.job_file, "rb") as f:
            status, job = api(self.base, "/jobs", self.tokens["admin"], "POST", f.read(),
                              "application/yaml")
        if status != 201 and status != 200:
            raise Failed("submit: %s %s" % (status, job))
        jid = job["id"]
        self.open("/jobs/%d" % jid)
        wait("the job page", lambda: self.d.find_element(By.CSS_SELECTOR, "#log[data-loaded]"))
        count = lambda: len(self.d.find_elements(By.CSS_SELECTOR, "#log .line"))
        wait("the job to run", lambda: self.text("job-state") == "running", 60)
        seen = [count()]
        grew_while_running = False
        end = time.time() + 120
        while time.time() < end:
            n = count()
            state = self.text("job-state")
            if n > seen[-1] and state == "running":
                grew_while_running = True
            seen.append(n)
            if state == "finished":
                break
            time.sleep(0.3)
        if not grew_while_running:
            raise Failed("the log did not grow while the job ran: %s" % seen[-10:])
        wait("the job's health", lambda: self.text("job-health") == "complete", 30)
        wait("the results table", lambda: len(self.d.find_elements(By.CSS_SELECTOR, "#results tr")) > 1, 30)
        text = self.d.find_element(By.ID, "log").text
        if "WEB-STEP-6" not in text:
            raise Failed("the last step's output is not on the page")
        passed = self.d.find_elements(By.CSS_SELECTOR, "#results td.result.pass")
        if not passed:
            raise Failed("no passed result in the results table")
        if not self.d.find_elements(By.CSS_SELECTOR, "#timeline div"):
            raise Failed("no boot-phase timeline")
        self.shot("job")
        # a line anchor of a finished job opens at that line
        self.open("/jobs/%d#L5" % jid)
        wait("line 5 marked", lambda: self.d.find_element(By.CSS_SELECTOR, "#L5.target"))

    def board_chart(self):
        self.open("/boards/" + self.a.chart_board)
        canvas = wait("the chart", lambda: self.d.find_element(By.CSS_SELECTOR,
                                                              "#phase-chart[data-drawn]"), 30)
        jobs = int(canvas.get_attribute("data-jobs"))
        if jobs < 1:
            raise Failed("the chart has no job")
        inked = self.js("""const c = arguments[0], g = c.getContext('2d');
            const d = g.getImageData(0, 0, c.width, c.height).data;
            let n = 0; for (let i = 3; i < d.length; i += 4) if (d[i]) n++;
            return n;""", canvas)
        if inked < 1000:
            raise Failed("the chart's canvas is blank (%d pixels drawn)" % inked)
        labels = self.js("return window.labdChart.data.labels")
        marked = [l for l in labels if l.startswith("#%s " % self.a.failed_job)]
        if not marked or "✗" not in marked[0]:
            raise Failed("the failed job %s is not marked on the chart: %s" %
                         (self.a.failed_job, labels))
        self.shot("board")

    def roles_cancel(self):
        jid = getattr(self, "long_id", None)
        if not jid:
            with open(self.a.queued_file, "rb") as f:
                _, job = api(self.base, "/jobs", self.tokens["admin"], "POST", f.read(),
                             "application/yaml")
            jid = job["id"]
        self.login("reader")
        self.open("/jobs/%d" % jid)
        wait("the job page", lambda: self.d.find_element(By.ID, "job-state"))
        if self.d.find_elements(By.ID, "cancel"):
            raise Failed("a reader is offered 'Cancel'")
        # and the API refuses the reader's own token when the page is bypassed
        stored = self.js("return sessionStorage.getItem('labd-token')")
        status, _ = api(self.base, "/jobs/%d/cancel" % jid, stored, "POST", b"{}")
        if status != 403:
            raise Failed("a reader's cancel answered %s, not 403" % status)
        self.login("admin")
        self.open("/jobs/%d" % jid)
        button = wait("the Cancel button", lambda: self.d.find_element(By.ID, "cancel"))
        t = time.time()
        button.click()
        if os.environ.get("DASHBOARD_TRACE"):
            print("click: %.2f s, state %s" % (time.time() - t, self.text("job-state")), flush=True)
        wait("the job canceled", lambda: api(self.base, "/jobs/%d" % jid,
                                             self.tokens["admin"])[1]["health"] == "canceled", 30)
        wait("the page to show it", lambda: self.text("job-health") == "canceled", 30)

    def console(self):
        self.login("developer")
        self.open("/boards/%s/console" % self.a.console_board)
        wait("the console to open", lambda: self.d.find_element(By.CSS_SELECTOR,
                                                               "#terminal[data-open='1']"), 20)
        screen = lambda: self.js("""const b = window.labdTerm.buffer.active; let s = '';
            for (let i = 0; i < b.length; i++) s += b.getLine(i).translateToString(true) + '\\n';
            return s;""")
        area = self.d.find_element(By.CSS_SELECTOR, "#terminal .xterm-helper-textarea")
        area.send_keys(Keys.ENTER)
        wait("a prompt", lambda: "root@sim:~#" in screen(), 20)
        area.send_keys("echo WEB-$((6*7))")
        area.send_keys(Keys.ENTER)
        wait("the answer", lambda: "WEB-42" in screen(), 20)
        self.shot("console")


def main():
    p = argparse.ArgumentParser()
    p.add_argument("url")
    p.add_argument("shots")
    p.add_argument("results")
    p.add_argument("--job-file", required=True)
    p.add_argument("--queued-file", required=True)
    p.add_argument("--boards", type=int, required=True)
    p.add_argument("--chart-board", required=True)
    p.add_argument("--console-board", required=True)
    p.add_argument("--failed-job", required=True)
    p.add_argument("--tokens", required=True)
    a = p.parse_args()
    os.makedirs(a.shots, exist_ok=True)
    s = Session(a)
    try:
        s.check("board grid", s.board_grid)
        s.check("job list", s.job_list)
        s.check("queue waiting", s.queue_waiting)
        s.check("failed counts", s.failed_counts)
        s.check("board chart", s.board_chart)
        s.check("running card", s.running_card)
        s.check("running log", s.running_log)
        s.check("roles cancel", s.roles_cancel)
        s.check("console", s.console)
    finally:
        s.close()


if __name__ == "__main__":
    main()
