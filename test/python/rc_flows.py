"""ReplicationControllers through the official Python client (python3-kubernetes), against plinth:
create (defaults), read, scale (read, replace and patch the Scale), list, delete.

Usage: rc_flows.py KUBECONFIG. Exits non-zero (with the failing assertion) on any difference.
"""
import sys

from kubernetes import client, config

config.load_kube_config(sys.argv[1])
core = client.CoreV1Api()

body = client.V1ReplicationController(
    metadata=client.V1ObjectMeta(name="pyrc"),
    spec=client.V1ReplicationControllerSpec(
        template=client.V1PodTemplateSpec(
            metadata=client.V1ObjectMeta(labels={"app": "pyrc"}),
            spec=client.V1PodSpec(containers=[client.V1Container(name="web", image="nginx:1.25")]))))
rc = core.create_namespaced_replication_controller("default", body)
assert rc.spec.replicas == 1 and rc.spec.selector == {"app": "pyrc"}, rc.spec
assert rc.metadata.generation == 1, rc.metadata.generation

read = core.read_namespaced_replication_controller("pyrc", "default")
assert read.metadata.uid == rc.metadata.uid

scale = core.read_namespaced_replication_controller_scale("pyrc", "default")
assert scale.spec.replicas == 1 and scale.status.selector == "app=pyrc", scale
scale.spec.replicas = 3
replaced = core.replace_namespaced_replication_controller_scale("pyrc", "default", scale)
assert replaced.spec.replicas == 3, replaced
patched = core.patch_namespaced_replication_controller_scale("pyrc", "default", {"spec": {"replicas": 4}})
assert patched.spec.replicas == 4, patched
try:
    core.replace_namespaced_replication_controller_scale("pyrc", "default", scale)  # stale resourceVersion
    raise AssertionError("a stale scale must fail")
except client.exceptions.ApiException as e:
    assert e.status == 409, e.status

after = core.read_namespaced_replication_controller("pyrc", "default")
assert after.spec.replicas == 4 and after.metadata.generation == 3, (after.spec.replicas, after.metadata.generation)
names = [i.metadata.name for i in core.list_namespaced_replication_controller("default").items]
assert "pyrc" in names, names

core.delete_namespaced_replication_controller("pyrc", "default", propagation_policy="Background")
try:
    core.read_namespaced_replication_controller("pyrc", "default")
    raise AssertionError("deleted")
except client.exceptions.ApiException as e:
    assert e.status == 404, e.status
print("ok")
