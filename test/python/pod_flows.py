"""The Python client creating, reading, binding, writing the status of and deleting a pod (argv[1]: the kubeconfig)."""
import sys

from kubernetes import client, config
from kubernetes.client.rest import ApiException

config.load_kube_config(sys.argv[1])
core = client.CoreV1Api()
pod = client.V1Pod(
    metadata=client.V1ObjectMeta(name="py-pod"),
    spec=client.V1PodSpec(containers=[client.V1Container(name="app", image="nginx", resources=client.V1ResourceRequirements(requests={"cpu": "100m", "memory": "0.5Gi"}))]),
)
created = core.create_namespaced_pod("default", pod)
assert created.status.phase == "Pending", created.status
assert created.status.qos_class == "Burstable", created.status
assert created.spec.containers[0].resources.requests == {"cpu": "100m", "memory": "512Mi"}
read = core.read_namespaced_pod("py-pod", "default")
assert read.spec.termination_grace_period_seconds == 30
assert core.read_namespaced_pod_log("py-pod", "default") == ""
# A kubelet's status for a container still being created: imageID "" (a field without omitempty,
# which Go keeps and the client requires), and a status that leaves `image` out altogether.
core.patch_namespaced_pod_status("py-pod", "default", {"status": {"containerStatuses": [
    {"name": "app", "imageID": "", "ready": False, "restartCount": 0, "state": {"waiting": {"reason": "ContainerCreating"}}}]}})
status = core.read_namespaced_pod_status("py-pod", "default").status.container_statuses[0]
assert status.image_id == "" and status.image == "" and status.state.waiting.reason == "ContainerCreating", status
listed = core.list_namespaced_pod("default", field_selector="status.phase=Pending")
assert "py-pod" in [p.metadata.name for p in listed.items]
deleted = core.delete_namespaced_pod("py-pod", "default")
assert deleted.metadata.name == "py-pod"
try:
    core.read_namespaced_pod("py-pod", "default")
    raise SystemExit("pod still there")
except ApiException as e:
    assert e.status == 404, e
print("ok")
