"""The workload groups through the official Python client (python3-kubernetes), against plinth:
a Deployment (create, read, patch, replace, scale, delete), a DaemonSet, a StatefulSet and a
ReplicaSet (create, status, list), a Job and a CronJob, an HPA through
autoscaling/v1 and v2beta2 (the client has no v2), a PodDisruptionBudget and an Ingress.

Usage: workload_flows.py KUBECONFIG. Exits non-zero (with the failing assertion) on any difference.
"""
import json
import sys

from kubernetes import client, config

config.load_kube_config(sys.argv[1])
NS = "default"
apps = client.AppsV1Api()
batch = client.BatchV1Api()
container = client.V1Container(name="web", image="nginx:1.25")


def template(labels, restart_policy=None):
    return client.V1PodTemplateSpec(
        metadata=client.V1ObjectMeta(labels=labels),
        spec=client.V1PodSpec(containers=[container], restart_policy=restart_policy))


# apps/v1 Deployment
dep = apps.create_namespaced_deployment(NS, client.V1Deployment(
    metadata=client.V1ObjectMeta(name="py-web"),
    spec=client.V1DeploymentSpec(selector=client.V1LabelSelector(match_labels={"app": "py-web"}), template=template({"app": "py-web"}))))
assert dep.spec.replicas == 1 and dep.spec.revision_history_limit == 10, dep.spec
assert dep.spec.strategy.rolling_update.max_unavailable == "25%", dep.spec.strategy
read = apps.read_namespaced_deployment("py-web", NS)
assert read.metadata.uid == dep.metadata.uid
patched = apps.patch_namespaced_deployment("py-web", NS, {"spec": {"replicas": 3}})
assert patched.spec.replicas == 3 and patched.metadata.generation == 2, (patched.spec.replicas, patched.metadata.generation)
patched.spec.template.spec.containers[0].image = "nginx:1.26"
replaced = apps.replace_namespaced_deployment("py-web", NS, patched)
assert replaced.metadata.generation == 3, replaced.metadata.generation
try:
    apps.replace_namespaced_deployment("py-web", NS, patched)  # stale resourceVersion
    raise AssertionError("a stale replace must fail")
except client.exceptions.ApiException as e:
    assert e.status == 409, e.status
scale = apps.read_namespaced_deployment_scale("py-web", NS)
assert scale.spec.replicas == 3 and scale.status.selector == "app=py-web", scale
scaled = apps.patch_namespaced_deployment_scale("py-web", NS, {"spec": {"replicas": 5}})
assert scaled.spec.replicas == 5, scaled
assert apps.read_namespaced_deployment("py-web", NS).spec.replicas == 5
try:
    apps.patch_namespaced_deployment("py-web", NS, {"spec": {"selector": {"matchLabels": {"app": "other"}}}})
    raise AssertionError("the selector is immutable")
except client.exceptions.ApiException as e:
    assert e.status == 422, e.status
apps.delete_namespaced_deployment("py-web", NS)

# apps/v1 DaemonSet, StatefulSet and ReplicaSet: their status structs have fields Go always writes
# (currentNumberScheduled, replicas, ...), which the client requires when it reads one back.
ds = apps.create_namespaced_daemon_set(NS, client.V1DaemonSet(
    metadata=client.V1ObjectMeta(name="py-agent"),
    spec=client.V1DaemonSetSpec(selector=client.V1LabelSelector(match_labels={"app": "py-agent"}), template=template({"app": "py-agent"}))))
assert ds.status.number_ready == 0 and ds.status.desired_number_scheduled == 0, ds.status
sts = apps.create_namespaced_stateful_set(NS, client.V1StatefulSet(
    metadata=client.V1ObjectMeta(name="py-db"),
    spec=client.V1StatefulSetSpec(service_name="py-db", selector=client.V1LabelSelector(match_labels={"app": "py-db"}), template=template({"app": "py-db"}))))
assert sts.status.replicas == 0, sts.status
rs = apps.create_namespaced_replica_set(NS, client.V1ReplicaSet(
    metadata=client.V1ObjectMeta(name="py-rs"),
    spec=client.V1ReplicaSetSpec(selector=client.V1LabelSelector(match_labels={"app": "py-rs"}), template=template({"app": "py-rs"}))))
assert rs.status.replicas == 0, rs.status
# A status written without the always-written fields reads back with them as 0.
status = apps.patch_namespaced_daemon_set_status("py-agent", NS, {"status": {"numberAvailable": 1}})
assert status.status.number_available == 1 and status.status.current_number_scheduled == 0, status.status
assert {d.metadata.name for d in apps.list_namespaced_daemon_set(NS).items} >= {"py-agent"}
assert {s.metadata.name for s in apps.list_namespaced_stateful_set(NS).items} >= {"py-db"}
assert {r.metadata.name for r in apps.list_namespaced_replica_set(NS).items} >= {"py-rs"}
apps.delete_namespaced_daemon_set("py-agent", NS)
apps.delete_namespaced_stateful_set("py-db", NS)
apps.delete_namespaced_replica_set("py-rs", NS)

# batch/v1 Job and CronJob
job = batch.create_namespaced_job(NS, client.V1Job(
    metadata=client.V1ObjectMeta(name="py-job"),
    spec=client.V1JobSpec(template=template(None, "Never"))))
assert job.spec.selector.match_labels == {"controller-uid": job.metadata.uid}, job.spec.selector
assert job.spec.template.metadata.labels["job-name"] == "py-job", job.spec.template.metadata.labels
cj = batch.create_namespaced_cron_job(NS, client.V1CronJob(
    metadata=client.V1ObjectMeta(name="py-cron"),
    spec=client.V1CronJobSpec(schedule="0 * * * *", job_template=client.V1JobTemplateSpec(spec=client.V1JobSpec(template=template(None, "OnFailure"))))))
assert cj.spec.concurrency_policy == "Allow" and cj.spec.suspend is False, cj.spec
suspended = batch.patch_namespaced_cron_job("py-cron", NS, {"spec": {"suspend": True}})
assert suspended.spec.suspend is True
batch.delete_namespaced_cron_job("py-cron", NS)
batch.delete_namespaced_job("py-job", NS, propagation_policy="Background")

# autoscaling/v1 and v2beta2: one object
hpa = client.AutoscalingV1Api().create_namespaced_horizontal_pod_autoscaler(NS, client.V1HorizontalPodAutoscaler(
    metadata=client.V1ObjectMeta(name="py-hpa"),
    spec=client.V1HorizontalPodAutoscalerSpec(
        scale_target_ref=client.V1CrossVersionObjectReference(api_version="apps/v1", kind="Deployment", name="web"),
        max_replicas=5, target_cpu_utilization_percentage=70)))
assert hpa.spec.min_replicas == 1, hpa.spec
patched = client.AutoscalingV1Api().patch_namespaced_horizontal_pod_autoscaler("py-hpa", NS, {"spec": {"maxReplicas": 6}})
assert patched.spec.max_replicas == 6 and patched.spec.target_cpu_utilization_percentage == 70, patched.spec
# v2beta2's status has `conditions` without omitempty: kube writes null for a fresh HPA, which this
# client's model refuses (kubernetes-client/python#1098), so the raw JSON is read.
raw = client.AutoscalingV2beta2Api().read_namespaced_horizontal_pod_autoscaler("py-hpa", NS, _preload_content=False)
v2 = json.loads(raw.data)
metric = v2["spec"]["metrics"][0]
assert metric == {"type": "Resource", "resource": {"name": "cpu", "target": {"type": "Utilization", "averageUtilization": 70}}}, v2["spec"]
assert v2["status"]["conditions"] is None and v2["status"]["currentMetrics"] is None, v2["status"]
client.AutoscalingV1Api().delete_namespaced_horizontal_pod_autoscaler("py-hpa", NS)

# policy/v1 PodDisruptionBudget
policy = client.PolicyV1Api()
pdb = policy.create_namespaced_pod_disruption_budget(NS, client.V1PodDisruptionBudget(
    metadata=client.V1ObjectMeta(name="py-pdb"),
    spec=client.V1PodDisruptionBudgetSpec(min_available="50%", selector=client.V1LabelSelector(match_labels={"app": "py"}))))
assert pdb.spec.min_available == "50%" and pdb.status.disruptions_allowed == 0, pdb
policy.delete_namespaced_pod_disruption_budget("py-pdb", NS)

# networking.k8s.io/v1 Ingress
net = client.NetworkingV1Api()
backend = client.V1IngressBackend(service=client.V1IngressServiceBackend(name="web", port=client.V1ServiceBackendPort(number=80)))
ing = net.create_namespaced_ingress(NS, client.V1Ingress(
    metadata=client.V1ObjectMeta(name="py-ing"),
    spec=client.V1IngressSpec(rules=[client.V1IngressRule(host="py.example.com", http=client.V1HTTPIngressRuleValue(
        paths=[client.V1HTTPIngressPath(path="/", path_type="Prefix", backend=backend)]))])))
assert ing.spec.rules[0].http.paths[0].backend.service.port.number == 80, ing.spec
try:
    net.create_namespaced_ingress(NS, client.V1Ingress(
        metadata=client.V1ObjectMeta(name="py-bad"),
        spec=client.V1IngressSpec(rules=[client.V1IngressRule(host="py.example.com", http=client.V1HTTPIngressRuleValue(
            paths=[client.V1HTTPIngressPath(path="relative", path_type="Prefix", backend=backend)]))])))
    raise AssertionError("a relative path is invalid")
except client.exceptions.ApiException as e:
    assert e.status == 422, e.status
net.delete_namespaced_ingress("py-ing", NS)
print("ok")
