"""An informer-style cache of a namespace's ConfigMaps with the official Python client
(python3-kubernetes), for the fault tests (test/cluster-faults.test.ts).

Usage: cluster_reflector.py KUBECONFIG NAMESPACE. List, then watch from the list's
resourceVersion (with bookmarks); when the watch stream ends or breaks (a replica killed or
restarted behind the load balancer), watch again from the last resourceVersion seen; on 410 Gone
(an HTTP 410 or an ERROR event with code 410), list again. The watch is the client's own
`list_namespaced_config_map(watch=True, _preload_content=False)`, the call `watch.Watch().stream`
makes, read line by line so the driver knows when the stream is open.

Commands on stdin, one JSON answer line each on stdout:
  ready  -> {} once the first watch is open
  stats  -> {"lists", "resumes", "relists", "anomalies": [...], "errors": {kind: n}}
  cache  -> {name: [resourceVersion, data.v]}
End of stdin ends the process.
"""
import json
import sys
import threading
import time

from kubernetes import client, config
from kubernetes.watch.watch import iter_resp_lines

config.load_kube_config(sys.argv[1])
NS = sys.argv[2]
core = client.CoreV1Api()

lock = threading.Lock()
cache = {}
stats = {"lists": 0, "resumes": 0, "relists": 0, "anomalies": [], "errors": {}}
ready = threading.Event()


def bump(kind):
    stats["errors"][kind] = stats["errors"].get(kind, 0) + 1


def kind_of(e):
    if isinstance(e, client.exceptions.ApiException):
        return "http %s %s" % (e.status, e.reason)
    return type(e).__name__


def do_list():
    lst = core.list_namespaced_config_map(NS)
    with lock:
        stats["lists"] += 1
        cache.clear()
        for cm in lst.items:
            if cm.metadata.name != "kube-root-ca.crt":
                cache[cm.metadata.name] = [cm.metadata.resource_version, (cm.data or {}).get("v")]
    return lst.metadata.resource_version


def apply(typ, obj):
    name = obj["metadata"]["name"]
    if name == "kube-root-ca.crt":
        return
    rv = obj["metadata"]["resourceVersion"]
    have = cache.get(name)
    if typ == "ADDED" and have:
        stats["anomalies"].append("ADDED %s@%s while cached @%s" % (name, rv, have[0]))
    if typ in ("MODIFIED", "DELETED") and not have:
        stats["anomalies"].append("%s %s@%s not cached" % (typ, name, rv))
    if have and int(rv) <= int(have[0]):
        stats["anomalies"].append("%s %s@%s not newer than cached @%s" % (typ, name, rv, have[0]))
    if typ == "DELETED":
        cache.pop(name, None)
    else:
        cache[name] = [rv, (obj.get("data") or {}).get("v")]


def run():
    rv = None
    while True:
        if rv is None:
            try:
                rv = do_list()
            except Exception as e:  # noqa: BLE001 -- any failure: count it, list again
                with lock:
                    bump("list: " + kind_of(e))
                time.sleep(0.5)
                continue
        gone = False
        try:
            resp = core.list_namespaced_config_map(
                NS, watch=True, resource_version=rv, allow_watch_bookmarks=True,
                timeout_seconds=60, _preload_content=False, _request_timeout=(5, 90))
            ready.set()
            try:
                for line in iter_resp_lines(resp):
                    ev = json.loads(line)
                    typ, obj = ev["type"], ev["object"]
                    if typ == "ERROR":
                        if obj.get("code") == 410:
                            gone = True
                        else:
                            with lock:
                                bump("watch ERROR %s %s" % (obj.get("code"), obj.get("reason")))
                        break
                    with lock:
                        if typ != "BOOKMARK":
                            apply(typ, obj)
                        rv = obj["metadata"]["resourceVersion"]
                else:
                    with lock:
                        bump("watch: ended")
            finally:
                resp.close()
                resp.release_conn()
        except client.exceptions.ApiException as e:
            if e.status == 410:
                gone = True
            else:
                with lock:
                    bump("watch: " + kind_of(e))
                time.sleep(0.2)
        except Exception as e:  # noqa: BLE001 -- a broken connection: resume
            with lock:
                bump("watch: " + kind_of(e))
            time.sleep(0.1)
        with lock:
            if gone:
                stats["relists"] += 1
                rv = None
            else:
                stats["resumes"] += 1


threading.Thread(target=run, daemon=True).start()

for line in sys.stdin:
    cmd = line.strip()
    if cmd == "ready":
        ready.wait()
        out = {}
    elif cmd == "stats":
        with lock:
            out = json.loads(json.dumps(stats))
    elif cmd == "cache":
        with lock:
            out = dict(cache)
    else:
        out = {"error": "unknown command %s" % cmd}
    sys.stdout.write(json.dumps(out) + "\n")
    sys.stdout.flush()
