"""Kubernetes outputs of ``agent_large_b``: manifests listed by ``kubectl_get -o yaml``
(deployments, cronjobs, configmaps, cert-manager certificates) and pods described by
``kubectl_describe``. With ``spec.plant`` one record holds the fact and the others are
records of the same kind about other subjects."""

from __future__ import annotations

import random
import string
from datetime import datetime, timedelta

from agent_large_b_world import (
    ENVS,
    TASKS,
    Output,
    Plant,
    Spec,
    World,
    cron,
    fill,
    fresh,
    group_of,
    hexid,
    iso,
    plant,
    planted,
    unambiguous,
    version,
)

_REPLICAS = (1, 2, 2, 3, 3, 3, 4, 4, 5, 6, 6, 8, 9, 10, 12, 14, 16, 18, 20, 24, 32, 40, 48)
_SUFFIXES = ("", "", "", "-worker", "-consumer", "-grpc", "-admin", "-migrations", "-canary")
_ENV_VARS = (
    "LOG_LEVEL", "OTEL_EXPORTER_OTLP_ENDPOINT", "DB_POOL_SIZE", "REDIS_URL", "HTTP_TIMEOUT_MS",
    "KAFKA_BROKERS", "GOMAXPROCS", "JAVA_TOOL_OPTIONS", "FEATURE_FLAGS_URL", "SENTRY_ENV",
)  # fmt: skip
_CM_KEYS = ("retention_days", "max_connections", "rate_limit_rps", "batch_size")
_DOMAINS = ("example.net", "acme-pay.com", "internal.acme.io", "shopfront.app")


def _pick(rng: random.Random, *options: str) -> str:
    return rng.choice(options)


def _uid(rng: random.Random) -> str:
    return "-".join(hexid(rng, n) for n in (8, 4, 4, 4, 12))


def _resources(rng: random.Random, pad: str) -> list[str]:
    """Limits and requests, the requests no larger than the limits."""
    cpus, memories = (
        ("100m", "250m", "500m", "1", "2", "4"),
        ("256Mi", "512Mi", "1Gi", "2Gi", "4Gi"),
    )
    cpu, memory = rng.randrange(1, len(cpus)), rng.randrange(1, len(memories))
    return [
        f"{pad}limits:",
        f"{pad}  cpu: {cpus[cpu]}",
        f"{pad}  memory: {memories[memory]}",
        f"{pad}requests:",
        f"{pad}  cpu: {cpus[rng.randint(0, cpu)]}",
        f"{pad}  memory: {memories[rng.randint(0, memory)]}",
    ]


def _suffix5(rng: random.Random) -> str:
    return "".join(rng.choices(string.ascii_lowercase + string.digits, k=5))


# --- kubectl_get -o yaml -------------------------------------------------------------------


def _env_block(rng: random.Random, w: World, name: str, pad: str) -> list[str]:
    values = {
        "LOG_LEVEL": _pick(rng, "info", "debug", "warn"),
        "OTEL_EXPORTER_OTLP_ENDPOINT": "http://otel-collector.observability:4317",
        "DB_POOL_SIZE": f'"{rng.randint(4, 64)}"',
        "REDIS_URL": f"redis://{group_of(name)}-redis.{w.region()}.cache.internal:6379",
        "HTTP_TIMEOUT_MS": f'"{rng.randint(5, 120) * 100}"',
        "KAFKA_BROKERS": "kafka-0.kafka:9092,kafka-1.kafka:9092,kafka-2.kafka:9092",
        "GOMAXPROCS": f'"{rng.randint(1, 8)}"',
        "JAVA_TOOL_OPTIONS": f"-XX:MaxRAMPercentage={rng.choice((50, 60, 75))}.0",
        "FEATURE_FLAGS_URL": "http://feature-flags.platform-prod:8080",
        "SENTRY_ENV": _pick(rng, "production", "staging"),
    }
    lines: list[str] = []
    for key in rng.sample(_ENV_VARS, rng.randint(2, 6)):
        lines += [f"{pad}- name: {key}", f"{pad}  value: {values[key]}"]
    return lines


def _deployment(
    rng: random.Random, w: World, name: str, ns: str, *, replicas: int, tag: str
) -> str:
    ready = replicas if rng.random() < 0.8 else max(0, replicas - rng.randint(1, 2))
    rs = hexid(rng, 10)
    port = rng.choice((8080, 8080, 8443, 9090, 3000, 5000))
    return "\n".join(
        [
            "- apiVersion: apps/v1",
            "  kind: Deployment",
            "  metadata:",
            "    annotations:",
            f'      deployment.kubernetes.io/revision: "{rng.randint(1, 400)}"',
            f"      meta.helm.sh/release-name: {name}",
            f"      meta.helm.sh/release-namespace: {ns}",
            f'    creationTimestamp: "{iso(w.ago(4e7))}"',
            f"    generation: {rng.randint(1, 900)}",
            "    labels:",
            f"      app.kubernetes.io/name: {name}",
            f"      app.kubernetes.io/part-of: {group_of(name)}",
            f"      team: {w.team()}",
            f"    name: {name}",
            f"    namespace: {ns}",
            f'    resourceVersion: "{rng.randint(10**7, 10**9)}"',
            f"    uid: {_uid(rng)}",
            "  spec:",
            "    progressDeadlineSeconds: 600",
            f"    replicas: {replicas}",
            "    revisionHistoryLimit: 10",
            "    selector:",
            "      matchLabels:",
            f"        app.kubernetes.io/name: {name}",
            "    strategy:",
            "      rollingUpdate:",
            f"        maxSurge: {rng.choice(('25%', '1', '50%'))}",
            "        maxUnavailable: 0",
            "      type: RollingUpdate",
            "    template:",
            "      metadata:",
            "        annotations:",
            f'          prometheus.io/port: "{rng.choice((9090, 9464, 8081))}"',
            '          prometheus.io/scrape: "true"',
            "        labels:",
            f"          app.kubernetes.io/name: {name}",
            "      spec:",
            "        containers:",
            f"        - name: {name}",
            f"          image: registry.internal/{group_of(name)}/{name}:{tag}",
            "          env:",
            *_env_block(rng, w, name, "          "),
            "          ports:",
            f"          - containerPort: {port}",
            "            name: http",
            "            protocol: TCP",
            "          readinessProbe:",
            "            httpGet:",
            f"              path: {rng.choice(('/ready', '/healthz', '/health/ready'))}",
            f"              port: {port}",
            f"            periodSeconds: {rng.choice((5, 10))}",
            "          resources:",
            *_resources(rng, "            "),
            f"        serviceAccountName: {name}",
            "        terminationGracePeriodSeconds: 30",
            "  status:",
            f"    availableReplicas: {ready}",
            "    conditions:",
            f'    - lastTransitionTime: "{iso(w.ago(9e5))}"',
            "      message: Deployment has minimum availability.",
            "      reason: MinimumReplicasAvailable",
            '      status: "True"',
            "      type: Available",
            f'    - lastTransitionTime: "{iso(w.ago(4e6))}"',
            f'      message: ReplicaSet "{name}-{rs}" has successfully progressed.',
            "      reason: NewReplicaSetAvailable",
            '      status: "True"',
            "      type: Progressing",
            f"    observedGeneration: {rng.randint(1, 900)}",
            f"    readyReplicas: {ready}",
            f"    updatedReplicas: {ready}",
        ]
    )


def _cronjob(rng: random.Random, w: World, name: str, ns: str, schedule: str) -> str:
    return "\n".join(
        [
            "- apiVersion: batch/v1",
            "  kind: CronJob",
            "  metadata:",
            f'    creationTimestamp: "{iso(w.ago(4e7))}"',
            "    labels:",
            f"      app.kubernetes.io/part-of: {name.split('-', maxsplit=1)[0]}",
            f"      team: {w.team()}",
            f"    name: {name}",
            f"    namespace: {ns}",
            f'    resourceVersion: "{rng.randint(10**7, 10**9)}"',
            "  spec:",
            f"    concurrencyPolicy: {_pick(rng, 'Forbid', 'Replace', 'Allow')}",
            "    failedJobsHistoryLimit: 3",
            "    jobTemplate:",
            "      spec:",
            f"        backoffLimit: {rng.randint(0, 6)}",
            f"        activeDeadlineSeconds: {rng.choice((600, 1800, 3600, 7200))}",
            "        template:",
            "          spec:",
            "            containers:",
            f"            - name: {name}",
            f"              image: registry.internal/jobs/{name}:{version(rng)}",
            "              args:",
            f'              - "--batch-size={rng.choice((100, 250, 500, 1000, 5000))}"',
            f'              - "--dry-run={_pick(rng, "false", "false", "true")}"',
            "            restartPolicy: OnFailure",
            f'    schedule: "{schedule}"',
            f"    startingDeadlineSeconds: {rng.choice((60, 120, 300))}",
            "    successfulJobsHistoryLimit: 3",
            f"    suspend: {_pick(rng, 'false', 'false', 'false', 'true')}",
            "    timeZone: Etc/UTC",
            "  status:",
            f'    lastScheduleTime: "{iso(w.ago(9e4))}"',
            f'    lastSuccessfulTime: "{iso(w.ago(2e5))}"',
        ]
    )


def _cm_value(rng: random.Random, key: str) -> str:
    if key == "retention_days":
        return str(rng.choice((3, 7, 14, 21, 30, 45, 60, 90, 120, 180, 365, 400)))
    if key == "max_connections":
        return str(rng.randint(2, 60) * 5)
    if key == "rate_limit_rps":
        return str(rng.randint(4, 300) * 25)
    return str(rng.choice((50, 100, 200, 250, 500, 1000, 2000, 5000)))


def _configmap(rng: random.Random, w: World, name: str, ns: str, pinned: dict[str, str]) -> str:
    data = {key: _cm_value(rng, key) for key in _CM_KEYS} | pinned
    data["log_format"] = _pick(rng, "json", "logfmt")
    data["region"] = w.region()
    data["upstream_timeout_ms"] = str(rng.randint(5, 300) * 100)
    lines = [f'    {key}: "{value}"' for key, value in sorted(data.items())]
    return "\n".join(
        [
            "- apiVersion: v1",
            "  data:",
            *lines,
            "  kind: ConfigMap",
            "  metadata:",
            f'    creationTimestamp: "{iso(w.ago(4e7))}"',
            f"    name: {name}",
            f"    namespace: {ns}",
            f'    resourceVersion: "{rng.randint(10**7, 10**9)}"',
        ]
    )


def _certificate(
    rng: random.Random, w: World, name: str, ns: str, *, dns: str, not_after: str
) -> str:
    return "\n".join(
        [
            "- apiVersion: cert-manager.io/v1",
            "  kind: Certificate",
            "  metadata:",
            f"    name: {name}",
            f"    namespace: {ns}",
            f'    resourceVersion: "{rng.randint(10**7, 10**9)}"',
            "  spec:",
            "    dnsNames:",
            f"    - {dns}",
            f"    duration: {rng.choice(('2160h0m0s', '720h0m0s', '8760h0m0s'))}",
            "    issuerRef:",
            "      kind: ClusterIssuer",
            f"      name: {_pick(rng, 'letsencrypt-prod', 'internal-ca', 'digicert-ev')}",
            f"    renewBefore: {rng.choice(('360h0m0s', '720h0m0s', '168h0m0s'))}",
            f"    secretName: {name}",
            "  status:",
            "    conditions:",
            f'    - lastTransitionTime: "{iso(w.ago(3e6))}"',
            "      message: Certificate is up to date and has not expired",
            "      reason: Ready",
            '      status: "True"',
            "      type: Ready",
            f'    notAfter: "{not_after}"',
            f'    notBefore: "{iso(w.ago(8e6))}"',
        ]
    )


def _expiry(w: World) -> str:
    return iso(w.now + timedelta(seconds=w.rng.uniform(-2e6, 3e7)))


def _yaml_subject(rng: random.Random, w: World, resource: str) -> tuple[str, str]:
    """A manifest's name and namespace (for a certificate, its DNS name and namespace)."""
    service = w.service()
    group = group_of(service)
    if resource == "cronjobs":
        return f"{group}-{rng.choice(TASKS)}", w.namespace(service)
    if resource == "configmaps":
        return f"{service}-{_pick(rng, 'config', 'settings', 'env')}", w.namespace(service)
    if resource == "certificates":
        sub = _pick(rng, group, "api", f"{group}-admin")
        dns = f"{sub}.{rng.choice(w.regions)}.{rng.choice(_DOMAINS)}"
        return dns, f"edge-{rng.choice(ENVS)}"
    return service + rng.choice(_SUFFIXES), w.namespace(service)


def _manifest(
    rng: random.Random, w: World, resource: str, subject: tuple[str, str], pinned: str = ""
) -> str:
    """One manifest of ``resource``; ``pinned`` is the fact's ``key=value``, if any."""
    name, ns = subject
    key, _, value = pinned.partition("=")
    if resource == "cronjobs":
        return _cronjob(rng, w, name, ns, value or cron(rng))
    if resource == "configmaps":
        return _configmap(rng, w, name, ns, {key: value} if value else {})
    if resource == "certificates":
        cert = name.replace(".", "-").rsplit("-", 1)[0] + "-tls"
        return _certificate(rng, w, cert, ns, dns=name, not_after=value or _expiry(w))
    replicas = int(value) if key == "replicas" else rng.choice(_REPLICAS)
    tag = value if key == "image" else version(rng)
    return _deployment(rng, w, name, ns, replicas=replicas, tag=tag)


def _yaml_fact(
    rng: random.Random, w: World, resource: str, subject: tuple[str, str]
) -> tuple[str, Plant]:
    name, ns = subject
    keys = (f"    name: {name}\n", f"    namespace: {ns}\n")
    if resource == "deployments" and rng.random() < 0.6:
        replicas = rng.choice(unambiguous(_REPLICAS))
        pinned, needle = f"replicas={replicas}", f"replicas: {replicas}"
        question = _pick(
            rng,
            f"How many replicas is the {name} deployment in {ns} set to?",
            f"What replica count does {name} have in the {ns} namespace?",
        )
    elif resource == "deployments":
        tag = version(rng)
        pinned, needle = f"image={tag}", f"{name}:{tag}"
        question = f"Which image version of {name} is deployed in the {ns} namespace?"
    elif resource == "cronjobs":
        schedule = cron(rng)
        pinned, needle = f"schedule={schedule}", f'schedule: "{schedule}"'
        question = _pick(
            rng,
            f"What is the schedule of the {name} cronjob in {ns}?",
            f"When does the {name} job run in the {ns} namespace?",
        )
    elif resource == "configmaps":
        key = rng.choice(_CM_KEYS)
        value = _cm_value(rng, key)
        pinned, needle = f"{key}={value}", f'{key}: "{value}"'
        what = key.replace("_", " ").replace(" rps", " (rps)")
        question = f"What {what} does the {name} configmap in {ns} set?"
    else:
        expiry = _expiry(w)
        pinned, needle = f"notAfter={expiry}", f'notAfter: "{expiry}"'
        keys = (f"    - {name}\n", f"    namespace: {ns}\n")
        question = _pick(
            rng,
            f"When does the TLS certificate for {name} expire?",
            f"What is the expiry date of the {name} certificate in {ns}?",
        )
    record = _manifest(rng, w, resource, subject, pinned)
    return record, plant(record + "\n", needle, question, keys)


def kubectl_yaml(rng: random.Random, w: World, spec: Spec, kind: str = "yaml") -> Output:
    resource = rng.choice(("deployments", "cronjobs", "configmaps", "certificates"))
    seen: set[tuple[str, str]] = set()

    def subject() -> tuple[str, str]:
        return fresh(lambda: _yaml_subject(rng, w, resource), seen)

    header = "apiVersion: v1\nitems:\n"
    footer = '\nkind: List\nmetadata:\n  resourceVersion: ""\n'
    fact_record = fact = None
    if spec.plant:
        fact_record, fact = _yaml_fact(rng, w, resource, subject())
        spec = planted(spec, fact)
    body = fill(
        rng,
        spec,
        lambda: _manifest(rng, w, resource, subject()),
        fixed=len(header) + len(footer),
        fact=fact_record,
    )
    context = f"prod-{w.region()}"
    args = {"resource": resource, "all_namespaces": True, "output": "yaml", "context": context}
    return Output("kubectl_get", args, header + body + footer, kind, fact)


# --- kubectl_describe pods -----------------------------------------------------------------


def _rfc(moment: datetime) -> str:
    return moment.strftime("%a, %d %b %Y %H:%M:%S +0000")


def _pod(
    rng: random.Random, w: World, subject: tuple[str, str, str], *, restarts: int, tag: str
) -> str:
    app, pod, host = subject
    ip = host.removeprefix("ip-").replace("-", ".")
    port = rng.choice((8080, 8443, 9090, 3000))
    ns, region = w.namespace(app), w.region()
    running = w.ago(6e5)  # the current container's start; the pod's is earlier
    created = running - timedelta(seconds=rng.uniform(0, 3e6))
    lines = [
        f"Name:             {pod}",
        f"Namespace:        {ns}",
        "Priority:         0",
        f"Service Account:  {app}",
        f"Node:             {host}.{region}.compute.internal/{ip}",
        f"Start Time:       {_rfc(created)}",
        f"Labels:           app.kubernetes.io/name={app}",
        f"                  pod-template-hash={pod.split('-')[-2]}",
        f"Annotations:      prometheus.io/port: {rng.choice((9090, 9464))}",
        f"Status:           {_pick(rng, 'Running', 'Running', 'Running', 'Pending')}",
        f"IP:               10.{rng.randint(64, 127)}.{rng.randint(0, 255)}.{rng.randint(1, 254)}",
        f"Controlled By:    ReplicaSet/{pod.rsplit('-', 1)[0]}",
        "Containers:",
        f"  {app}:",
        f"    Container ID:   containerd://{hexid(rng, 64)}",
        f"    Image:          registry.internal/{group_of(app)}/{app}:{tag}",
        f"    Port:           {port}/TCP",
        "    Host Port:      0/TCP",
        "    State:          Running",
        f"      Started:      {_rfc(running)}",
    ]
    if restarts:
        reason, code = rng.choice((("OOMKilled", 137), ("Error", 1), ("Error", 143)))
        lines += [
            "    Last State:     Terminated",
            f"      Reason:       {reason}",
            f"      Exit Code:    {code}",
            f"      Started:      {_rfc(running - timedelta(seconds=rng.uniform(60, 9e4)))}",
            f"      Finished:     {_rfc(running - timedelta(seconds=rng.uniform(1, 30)))}",
        ]
    lines += [
        "    Ready:          True",
        f"    Restart Count:  {restarts}",
        "    Limits:",
        f"      cpu:     {rng.choice(('500m', '1', '2', '4'))}",
        f"      memory:  {rng.choice(('512Mi', '1Gi', '2Gi', '4Gi'))}",
        "    Requests:",
        f"      cpu:     {rng.choice(('100m', '250m', '500m'))}",
        f"      memory:  {rng.choice(('256Mi', '512Mi', '1Gi'))}",
        f"    Liveness:   http-get http://:{port}/healthz delay=15s timeout=3s period=10s "
        "#success=1 #failure=3",
        f"    Readiness:  http-get http://:{port}/ready delay=5s timeout=1s period=5s "
        "#success=1 #failure=3",
        "    Environment:",
        f"      REGION:     {region}",
        f"      LOG_LEVEL:  {_pick(rng, 'info', 'debug')}",
        "    Mounts:",
        "      /var/run/secrets/kubernetes.io/serviceaccount from kube-api-access-"
        f"{_suffix5(rng)} (ro)",
        "Conditions:",
        "  Type              Status",
        "  Initialized       True",
        "  Ready             True",
        "  ContainersReady   True",
        "  PodScheduled      True",
        f"QoS Class:        {_pick(rng, 'Burstable', 'Guaranteed')}",
        "Node-Selectors:   <none>",
        "Tolerations:      node.kubernetes.io/not-ready:NoExecute op=Exists for 300s",
        "                  node.kubernetes.io/unreachable:NoExecute op=Exists for 300s",
    ]
    events = [
        ("Warning", "BackOff", "Back-off restarting failed container"),
        ("Normal", "Pulled", "Container image already present on machine"),
        (
            "Warning",
            "Unhealthy",
            f"Readiness probe failed: HTTP probe failed with statuscode: {rng.choice((500, 503))}",
        ),
        ("Normal", "Started", f"Started container {app}"),
    ]
    chosen = rng.sample(events, rng.randint(0, 3))
    if chosen:
        lines += [
            "Events:",
            "  Type     Reason     Age   From     Message",
            "  ----     ------     ----  ----     -------",
        ]
        lines += [f"  {t:<8} {r:<10} {rng.randint(1, 59)}m   kubelet  {m}" for t, r, m in chosen]
    else:
        lines.append("Events:           <none>")
    return "\n".join(lines)


def _restarts(rng: random.Random) -> int:
    return 0 if rng.random() < 0.5 else int(rng.expovariate(1 / 9))


def kubectl_describe(rng: random.Random, w: World, spec: Spec, kind: str = "describe") -> Output:
    seen: set[tuple[str, str, str]] = set()

    def subject() -> tuple[str, str, str]:
        def draw() -> tuple[str, str, str]:
            app = w.service() + rng.choice(_SUFFIXES[:6])
            return app, f"{app}-{hexid(rng, 9)}-{_suffix5(rng)}", w.host()

        return fresh(draw, seen)

    def record() -> str:
        return _pod(rng, w, subject(), restarts=_restarts(rng), tag=version(rng))

    fact_record = fact = None
    if spec.plant:
        app, pod, host = pinned = subject()
        by_pod: tuple[str, ...] = (f"Name:             {pod}\n",)
        if rng.random() < 0.65:
            restarts = rng.randint(10, 99)
            fact_record = _pod(rng, w, pinned, restarts=restarts, tag=version(rng))
            needle = f"Restart Count:  {restarts}"
            if rng.random() < 0.5:
                question, keys = f"How many restarts does pod {pod} show?", by_pod
            else:
                question = f"How many times has the {app} container restarted on node {host}?"
                keys = (f"Name:             {app}-", f"Node:             {host}.")
        else:
            tag = version(rng)
            fact_record = _pod(rng, w, pinned, restarts=_restarts(rng), tag=tag)
            needle, keys = f"{app}:{tag}", by_pod
            question = f"Which image version is pod {pod} running?"
        fact = plant(fact_record + "\n", needle, question, keys)
        spec = planted(spec, fact)
    text = fill(rng, spec, record, fixed=1, fact=fact_record, sep="\n\n\n") + "\n"
    args = {
        "resource": "pods",
        "all_namespaces": True,
        "selector": rng.choice(("tier in (backend,worker)", "tier=backend", "restartable=true")),
        "context": f"prod-{w.region()}",
    }
    return Output("kubectl_describe", args, text, kind, fact)
