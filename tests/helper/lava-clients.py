#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""lava-clients.py -- LAVA's API clients replayed against labd, call for call.

Written from shared/notes/lava-api.md (KernelCI's kernelci/runtime/lava.py,
kernelci-pipeline's queue-depth check, squad's squad/ci/backend/lava.py in
REST and XML-RPC mode): the same URLs (slash-less ones included), headers,
query strings and bodies, and the same fields read from the answers.  Each
command checks what the client relies on and exits 1 with the reason.

  lava-clients.py kernelci-submit BASE TOKEN JOB.yaml      -> prints the job id
  lava-clients.py kernelci-wait BASE TOKEN ID              -> prints the health
  lava-clients.py kernelci-queue BASE TOKEN DEVICE_TYPE    -> prints the count
  lava-clients.py kernelci-devices BASE TOKEN DEVICE_TYPE  -> online hostnames
  lava-clients.py squad-rest BASE TOKEN JOB.yaml           -> a summary line
  lava-clients.py squad-rpc BASE USER TOKEN JOB.yaml       -> a summary line
  lava-clients.py squad-cancel BASE TOKEN ID               -> cancels by POST
"""
import datetime
import sys
import time
import xmlrpc.client
from urllib.parse import urlsplit

import requests
import yaml

TIMEOUT = 120


def fail(msg):
    print("FAIL: " + msg)
    sys.exit(1)


def check(cond, msg):
    if not cond:
        fail(msg)


# ---- KernelCI (kernelci-core kernelci/runtime/lava.py, class LAVA) ----

def kernelci_session(token):
    s = requests.Session()
    s.params = {"format": "json", "limit": "256"}
    s.headers = {"authorization": "Token " + token, "content-type": "application/json"}
    return s


def kernelci_submit(base, token, path):
    s = kernelci_session(token)
    definition = open(path).read()
    r = s.post(base + "/api/v0.2/jobs/", json={"definition": definition},
               allow_redirects=False, timeout=30)
    check(r.status_code < 400, "submit: %d %s" % (r.status_code, r.text))
    check(r.status_code == 201, "submit: status %d, squad wants 201" % r.status_code)
    body = r.json()
    check(body.get("message") == "job(s) successfully submitted", "submit: %r" % body)
    print(int(body["job_ids"][0]))


def kernelci_wait(base, token, job_id):
    s = kernelci_session(token)
    end = time.time() + TIMEOUT
    while time.time() < end:
        r = s.get(base + "/api/v0.2/jobs/%s" % job_id)    # no slash, as KernelCI
        check(r.status_code == 200, "wait: %d %s" % (r.status_code, r.text))
        job = r.json()
        for key in ("id", "state", "health", "submit_time", "definition", "metadata",
                    "requested_device_type", "actual_device", "start_time", "end_time"):
            check(key in job, "job without '%s'" % key)
        check(job["state"] in ("Submitted", "Scheduling", "Scheduled", "Running",
                               "Canceling", "Finished"), "state %r" % job["state"])
        if job["state"] == "Finished":
            check(job["health"] in ("Complete", "Incomplete", "Canceled"), job["health"])
            print(job["health"])
            return
        time.sleep(0.5)
    fail("job %s did not finish" % job_id)


def kernelci_queue(base, token, device_type):
    """get_devicetype_job_count(): the queue depth read from `count`."""
    s = kernelci_session(token)
    r = s.get(base + "/api/v0.2/jobs/",
              params={"state": "Submitted", "requested_device_type": device_type})
    check(r.status_code == 200, "queue: %d %s" % (r.status_code, r.text))
    body = r.json()
    check(set(body) >= {"count", "next", "previous", "results"}, "queue: %r" % body)
    check(all(j["state"] == "Submitted" and j["requested_device_type"] == device_type
              for j in body["results"]), "queue: a job of another state or type")
    print(body["count"])


def kernelci_devices(base, token, device_type):
    """get_device_names_by_type(dt, online_only=True), following `next`."""
    s = kernelci_session(token)
    url = base + "/api/v0.2/devices/"
    params = {"device_type": device_type}
    names = []
    while url:
        r = s.get(url, params=params)
        check(r.status_code == 200, "devices: %d %s" % (r.status_code, r.text))
        body = r.json()
        for d in body["results"]:
            check(d["device_type"] == device_type, "devices: type %r" % d["device_type"])
            if d["health"] in (None, "Good"):
                names.append(d.get("hostname") or d.get("name"))
        url, params = body["next"], None
    print(" ".join(names))


# ---- squad (squad/ci/backend/lava.py) ----

def squad_rest(base, token, path):
    api = base + "/api/v0.2/"
    headers = {"Authorization": "Token %s" % token}
    r = requests.post(api + "jobs/", data={"definition": open(path).read()}, headers=headers)
    check(r.status_code == 201, "squad submit: %d %s" % (r.status_code, r.text))
    job_id = r.json()["job_ids"][0]
    end = time.time() + TIMEOUT
    while True:
        r = requests.get(api + "jobs/%s" % job_id, headers=headers)
        check(r.status_code == 200, "squad job: %d" % r.status_code)
        job = r.json()
        if job["state"] == "Finished":
            break
        check(time.time() < end, "squad: job %s did not finish" % job_id)
        time.sleep(0.5)
    r = requests.get(api + "jobs/%s/logs/" % job_id, headers=headers)
    check(r.status_code == 200, "squad logs: %d" % r.status_code)
    check(r.headers["Content-Type"].startswith("application/yaml"), r.headers["Content-Type"])
    log = yaml.load(r.text, Loader=yaml.CSafeLoader)
    target = [x["msg"] for x in log if x["lvl"] in ("target", "feedback")]
    check(target, "squad: no target lines in the log")
    suites, url = [], api + "jobs/%s/suites/" % job_id
    while url:
        body = requests.get(url, headers=headers).json()
        suites += body["results"]
        url = body["next"]
    tests = []
    for suite in suites:
        url = api + "jobs/%s/suites/%s/tests" % (job_id, suite["id"])     # no slash
        while url:
            body = requests.get(url, headers=headers).json()
            for t in body["results"]:
                check(t["suite"] == suite["id"], "test of another suite")
                check(t["result"] in ("pass", "fail", "skip", "unknown"), t["result"])
                unit = t.get("unit", t.get("units"))
                if t["measurement"] not in (None, "None"):
                    float(t["measurement"])
                    check(unit is not None, "a measurement without unit")
                meta = t["metadata"]
                meta = yaml.safe_load(meta) if isinstance(meta, str) else meta
                check(isinstance(meta, dict), "metadata %r" % meta)
                tests.append((suite["name"], t["name"], t["result"]))
            url = body["next"]
    names = [s["name"] for s in suites]
    check("lava" in names, "no lava suite: %r" % names)
    check(("lava", "job", "pass" if job["health"] == "Complete" else "fail") in tests,
          "lava.job does not match the health")
    r = requests.get(api + "system/master_config/", headers=headers)
    check("EVENT_SOCKET" in r.json(), "master_config: %r" % r.text)
    print("squad-rest job %s %s: %d log lines, suites %s, %d tests" %
          (job_id, job["health"], len(target), ",".join(names), len(tests)))


def squad_cancel(base, token, job_id):
    r = requests.post(base + "/api/v0.2/jobs/%s/cancel/" % job_id,
                      headers={"Authorization": "Token %s" % token})
    check(r.status_code == 200, "squad cancel: %d %s" % (r.status_code, r.text))
    print(r.json()["message"])


class Transport(xmlrpc.client.Transport):
    """squad's own transport: posts to scheme://host//RPC2 (URL + '/RPC2')."""

    def request(self, host, handler, request_body, verbose=False):
        self.verbose = verbose
        return xmlrpc.client.Transport.request(self, host, "//RPC2", request_body, verbose)


def squad_rpc(base, user, token, path):
    url = urlsplit(base)
    proxy = xmlrpc.client.ServerProxy("%s://%s:%s@%s/RPC2" % (url.scheme, user, token,
                                                                url.netloc),
                                      transport=Transport(use_builtin_types=True),
                                      use_builtin_types=True, allow_none=True)
    job_id = proxy.scheduler.submit_job(open(path).read())
    end = time.time() + TIMEOUT
    while True:
        details = proxy.scheduler.job_details(job_id)
        if details["status"] in ("Complete", "Incomplete", "Canceled", "Finished"):
            break
        check(time.time() < end, "squad-rpc: job %s did not finish" % job_id)
        time.sleep(0.5)
    check(isinstance(details["start_time"], datetime.datetime), "start_time is no datetime")
    check(isinstance(details["end_time"], datetime.datetime), "end_time is no datetime")
    definition = yaml.safe_load(details["definition"])
    check(definition["job_name"] and definition["device_type"], "definition %r" % definition)
    suites = yaml.safe_load(proxy.results.get_testjob_suites_list_yaml(job_id))
    count = 0
    for suite in suites:
        check(set(suite) == {"name", "job", "id"}, "suite %r" % suite)
        offset = 0
        while True:
            part = yaml.safe_load(proxy.results.get_testsuite_results_yaml(
                job_id, suite["name"], 500, offset))
            for t in part:
                check(t["suite"] == suite["name"], "case of another suite")
                check(isinstance(t["metadata"], dict), "metadata %r" % t["metadata"])
                check(t["measurement"] == "None" or float(t["measurement"]) is not None,
                      "measurement %r" % t["measurement"])
            count += len(part)
            if len(part) < 500:
                break
            offset += 500
    print("squad-rpc job %s %s: %d suites, %d tests" %
          (job_id, details["status"], len(suites), count))


def main(argv):
    cmds = {"kernelci-submit": kernelci_submit, "kernelci-wait": kernelci_wait,
            "kernelci-queue": kernelci_queue, "kernelci-devices": kernelci_devices,
            "squad-rest": squad_rest, "squad-rpc": squad_rpc, "squad-cancel": squad_cancel}
    if len(argv) < 2 or argv[1] not in cmds:
        print(__doc__)
        return 2
    cmds[argv[1]](*argv[2:])
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
