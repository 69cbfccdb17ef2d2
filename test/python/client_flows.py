"""The core flows through the official Python client (python3-kubernetes), against plinth.

Usage: client_flows.py KUBECONFIG. Exits non-zero (with the failing assertion) on any difference.
"""
import sys
import threading
import time

from kubernetes import client, config, watch

config.load_kube_config(sys.argv[1])
core = client.CoreV1Api()
rbac = client.RbacAuthorizationV1Api()

names = [n.metadata.name for n in core.list_namespace().items]
assert {"default", "kube-system", "kube-public", "kube-node-lease"} <= set(names), names

core.create_namespace(client.V1Namespace(metadata=client.V1ObjectMeta(name="py")))
sa = core.create_namespaced_service_account(
    "py", client.V1ServiceAccount(metadata=client.V1ObjectMeta(name="pysa", labels={"a": "b"})))
assert sa.metadata.uid and sa.metadata.creation_timestamp is not None

sa.metadata.labels["c"] = "d"
replaced = core.replace_namespaced_service_account("pysa", "py", sa)
assert replaced.metadata.labels == {"a": "b", "c": "d"}, replaced.metadata.labels
try:
    core.replace_namespaced_service_account("pysa", "py", sa)  # stale resourceVersion
    raise AssertionError("a stale replace must fail")
except client.exceptions.ApiException as e:
    assert e.status == 409, e.status

patched = core.patch_namespaced_service_account("pysa", "py", {"metadata": {"labels": {"e": "f"}}})
assert patched.metadata.labels == {"a": "b", "c": "d", "e": "f"}, patched.metadata.labels

crb = rbac.create_cluster_role_binding(client.V1ClusterRoleBinding(
    metadata=client.V1ObjectMeta(name="pycrb"),
    role_ref=client.V1RoleRef(api_group="rbac.authorization.k8s.io", kind="ClusterRole", name="view"),
    subjects=[client.V1Subject(kind="User", name="alice", api_group="rbac.authorization.k8s.io")]))
assert crb.subjects[0].name == "alice"

rv = core.list_namespaced_service_account("py").metadata.resource_version
threading.Timer(0.5, lambda: core.delete_namespaced_service_account("pysa", "py")).start()
seen = []
for ev in watch.Watch().stream(core.list_namespaced_service_account, "py", resource_version=rv, timeout_seconds=5):
    seen.append((ev["type"], ev["object"].metadata.name))
    if ev["type"] == "DELETED":
        break
assert ("DELETED", "pysa") in seen, seen

try:
    core.read_namespaced_service_account("pysa", "py")
    raise AssertionError("a deleted object must be gone")
except client.exceptions.ApiException as e:
    assert e.status == 404, e.status

# Names that are path segments of their own ('..', '.') must never retarget the request: this once
# deleted the Namespace "py" (issue 8). urllib3 resolves the dot segment before sending, so the
# server sees DELETE /api/v1/namespaces/py/ (or .../secrets/): a path with an empty segment, which
# no route matches (404) -- never the Namespace, never every secret. Nothing changes.
core.create_namespaced_secret("py", client.V1Secret(metadata=client.V1ObjectMeta(name="keep"), string_data={"k": "v"}))
for bad in ("..", "."):
    try:
        core.delete_namespaced_secret(bad, "py")
        raise AssertionError("deleting a secret named %r must fail" % bad)
    except client.exceptions.ApiException as e:
        assert e.status in (400, 404), (bad, e.status, e.body)
assert core.read_namespace("py").status.phase == "Active"
assert [s.metadata.name for s in core.list_namespaced_secret("py").items] == ["keep"]

rbac.delete_cluster_role_binding("pycrb")
# kube answers a namespace delete with the Namespace (Terminating); the client types it as a Status.
core.delete_namespace("py")
deadline = time.time() + 20
while time.time() < deadline:
    try:
        core.read_namespace("py")
        time.sleep(0.2)
    except client.exceptions.ApiException as e:
        assert e.status == 404
        break
else:
    raise AssertionError("namespace py did not go")
print("ok")
