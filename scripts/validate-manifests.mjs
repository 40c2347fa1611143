#!/usr/bin/env node
// Offline validation of rendered Helm output (used by scripts/check-chart.sh).
//
//   node scripts/validate-manifests.mjs <render-dir> [<render-dir> ...]
//
// Each <render-dir> holds one release rendered with `helm template --output-dir` (every *.yaml below it is
// read). For every document: YAML parses (duplicate keys are errors), it has apiVersion, kind and
// metadata.name, and it passes the Kubernetes OpenAPI schema of its kind (kubernetes-models, K8s 1.27).
// Then chart invariants are checked across the documents of each release (see checkRelease below).
// Exits 1 on any failure. Dependencies (root devDependencies): kubernetes-models, yaml.

import { readdirSync, readFileSync, statSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join, relative } from 'node:path';

// CommonJS resolution (honours NODE_PATH, unlike ESM imports).
const require = createRequire(import.meta.url);

function load(name) {
  try {
    return require(name);
  } catch (error) {
    if (error && error.code === 'MODULE_NOT_FOUND' && String(error.message).includes(name.split('/')[0])) {
      console.error(`validate-manifests: cannot load "${name}". Install the dev dependencies (npm ci):`);
      console.error('  kubernetes-models@^4.5.1 yaml@^2.8.0');
      process.exit(2);
    }
    throw error;
  }
}

const YAML = load('yaml');
load('kubernetes-models/v1/Pod'); // fail early and clearly when kubernetes-models is missing

// ---------------------------------------------------------------------------------------------- helpers

const failures = [];
let checks = 0;

function fail(where, message) {
  failures.push(`${where}: ${message}`);
}

function check(condition, where, message) {
  checks += 1;
  if (!condition) fail(where, message);
  return Boolean(condition);
}

function listYamlFiles(dir) {
  const out = [];
  for (const entry of readdirSync(dir).sort()) {
    const path = join(dir, entry);
    if (statSync(path).isDirectory()) out.push(...listYamlFiles(path));
    else if (/\.ya?ml$/.test(entry)) out.push(path);
  }
  return out;
}

const isObject = (value) => value !== null && typeof value === 'object' && !Array.isArray(value);
const DNS_SUBDOMAIN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;
const DNS_LABEL = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;
// Kinds whose names must be DNS-1123 labels (<= 63).
const LABEL_NAMED = new Set(['Service', 'Namespace']);

const modelCache = new Map();
function modelFor(apiVersion, kind) {
  const key = `${apiVersion}/${kind}`;
  if (!modelCache.has(key)) {
    // "v1" -> kubernetes-models/v1/Pod; "apps/v1" -> kubernetes-models/apps/v1/Deployment
    const spec = `kubernetes-models/${apiVersion}/${kind}`;
    let model = null;
    try {
      model = require(spec)[kind] ?? null;
    } catch {
      model = null;
    }
    modelCache.set(key, model);
  }
  return modelCache.get(key);
}

function formatSchemaError(error) {
  const details = Array.isArray(error?.errors)
    ? error.errors.slice(0, 5).map((e) => `${e.instancePath || '/'} ${e.message}${e.params ? ` ${JSON.stringify(e.params)}` : ''}`)
    : [String(error?.message ?? error)];
  return details.join('; ');
}

const matches = (selector, labels) =>
  isObject(selector) && Object.keys(selector).length > 0 &&
  Object.entries(selector).every(([k, v]) => labels?.[k] === v);

const hookOf = (doc) => doc.metadata?.annotations?.['helm.sh/hook'] ?? '';

// ------------------------------------------------------------------------------------------- per document

function readRelease(dir) {
  const docs = [];
  for (const file of listYamlFiles(dir)) {
    const text = readFileSync(file, 'utf8');
    const parsed = YAML.parseAllDocuments(text, { uniqueKeys: true, prettyErrors: true });
    parsed.forEach((document, index) => {
      const where = `${relative(dir, file)}#${index}`;
      for (const problem of [...document.errors, ...document.warnings]) {
        fail(where, `YAML: ${problem.message.split('\n')[0]}`);
      }
      if (document.errors.length) return;
      const value = document.toJS({ maxAliasCount: 100 });
      if (value === null || value === undefined) return; // empty document (e.g. a disabled template)
      checks += 1;
      if (!isObject(value)) {
        fail(where, 'document is not a mapping');
        return;
      }
      docs.push({ where, doc: value });
    });
  }
  return docs;
}

function checkDocument({ where, doc }) {
  const ok =
    check(typeof doc.apiVersion === 'string' && doc.apiVersion, where, 'missing apiVersion') &
    check(typeof doc.kind === 'string' && doc.kind, where, 'missing kind') &
    check(typeof doc.metadata?.name === 'string' && doc.metadata.name, where, 'missing metadata.name');
  if (!ok) return false;
  const name = doc.metadata.name;
  const id = `${where} ${doc.kind}/${name}`;
  if (LABEL_NAMED.has(doc.kind)) {
    check(DNS_LABEL.test(name) && name.length <= 63, id, 'name is not a DNS-1123 label (<= 63 chars)');
  } else {
    check(DNS_SUBDOMAIN.test(name) && name.length <= 253, id, 'name is not a DNS-1123 subdomain');
  }
  // The Prometheus Operator's CRD has no kubernetes-models schema: its shape is checked by hand here,
  // and (in the invariants) that the Service it selects has the port it names.
  if (doc.apiVersion === 'monitoring.coreos.com/v1' && doc.kind === 'ServiceMonitor') {
    const endpoints = doc.spec?.endpoints;
    const ok =
      check(isObject(doc.spec?.selector?.matchLabels) && Object.keys(doc.spec.selector.matchLabels).length > 0, id, 'spec.selector.matchLabels missing') &
      check(Array.isArray(endpoints) && endpoints.length > 0, id, 'spec.endpoints missing') &
      check((endpoints ?? []).every((e) => typeof e.port === 'string' && typeof e.path === 'string'), id, 'every endpoint needs a port name and a path');
    if (ok) checks += 1;
    return ok;
  }
  const Model = modelFor(doc.apiVersion, doc.kind);
  if (!check(Model, id, `no schema for ${doc.apiVersion} ${doc.kind} (unknown or removed API)`)) return false;
  try {
    new Model(doc).validate();
    checks += 1;
  } catch (error) {
    fail(id, `schema: ${formatSchemaError(error)}`);
  }
  return true;
}

// --------------------------------------------------------------------------------------- chart invariants

function podSpecOf(doc) {
  if (doc.kind === 'Deployment' || doc.kind === 'Job') return doc.spec?.template?.spec;
  return undefined;
}

function checkPodSecurity(id, podSpec) {
  const pod = podSpec.securityContext ?? {};
  const containers = [...(podSpec.initContainers ?? []), ...(podSpec.containers ?? [])];
  check(containers.length > 0, id, 'pod has no containers');
  const tmpVolumes = new Set((podSpec.volumes ?? []).filter((v) => isObject(v.emptyDir)).map((v) => v.name));
  for (const c of containers) {
    const cid = `${id} container ${c.name}`;
    const sc = c.securityContext ?? {};
    check(c.image && !/:latest$/.test(c.image), cid, `image "${c.image}" must be set and not :latest`);
    check(c.resources?.requests?.cpu && c.resources?.requests?.memory, cid, 'resources.requests.cpu/memory missing');
    check(c.resources?.limits?.memory, cid, 'resources.limits.memory missing');
    check((sc.runAsNonRoot ?? pod.runAsNonRoot) === true, cid, 'runAsNonRoot is not true');
    check((sc.runAsUser ?? pod.runAsUser) !== 0, cid, 'runs as uid 0');
    check(sc.readOnlyRootFilesystem === true, cid, 'readOnlyRootFilesystem is not true');
    check(sc.allowPrivilegeEscalation === false, cid, 'allowPrivilegeEscalation is not false');
    check(sc.privileged !== true, cid, 'privileged container');
    check((sc.capabilities?.drop ?? []).includes('ALL'), cid, 'capabilities.drop does not include ALL');
    check(sc.capabilities?.add === undefined || sc.capabilities.add.length === 0, cid, 'adds capabilities');
    const seccomp = sc.seccompProfile?.type ?? pod.seccompProfile?.type;
    check(seccomp === 'RuntimeDefault' || seccomp === 'Localhost', cid, 'seccompProfile is not RuntimeDefault');
    const tmp = (c.volumeMounts ?? []).find((m) => m.mountPath === '/tmp');
    check(tmp && tmpVolumes.has(tmp.name), cid, 'no writable emptyDir mounted at /tmp');
  }
}

function checkProbes(id, container) {
  const ports = container.ports ?? [];
  const portNames = new Set(ports.map((p) => p.name));
  const portNumbers = new Set(ports.map((p) => p.containerPort));
  const grpcPort = ports.find((p) => p.name === 'grpc')?.containerPort;
  const isGrpcOnly = grpcPort !== undefined && !portNames.has('http');
  for (const kind of ['livenessProbe', 'readinessProbe']) {
    const probe = container[kind];
    if (!check(isObject(probe), id, `${kind} missing`)) continue;
    if (probe.grpc) {
      check(portNumbers.has(probe.grpc.port), id, `${kind}.grpc.port ${probe.grpc.port} is not a container port`);
    } else if (probe.httpGet) {
      const p = probe.httpGet.port;
      check(portNames.has(p) || portNumbers.has(p), id, `${kind}.httpGet.port ${p} is not a container port`);
    }
    if (isGrpcOnly) check(probe.grpc, id, `${kind} of a gRPC service must be a native grpc probe`);
    else check(probe.grpc || probe.httpGet, id, `${kind} must be an httpGet or grpc probe`);
  }
}

function checkRelease(dir, docs) {
  const byKind = (kind) => docs.filter((d) => d.doc.kind === kind);
  const regular = docs.filter((d) => !hookOf(d.doc));
  const named = (kind, list = docs) => new Map(list.filter((d) => d.doc.kind === kind).map((d) => [d.doc.metadata.name, d.doc]));

  // Unique kind/namespace/name.
  const seen = new Set();
  for (const { where, doc } of docs) {
    const key = `${doc.kind}/${doc.metadata.namespace ?? ''}/${doc.metadata.name}`;
    check(!seen.has(key), where, `duplicate object ${key}`);
    seen.add(key);
    check(doc.metadata.labels?.['app.kubernetes.io/name'] && doc.metadata.labels?.['app.kubernetes.io/instance'],
      `${where} ${doc.kind}/${doc.metadata.name}`, 'missing app.kubernetes.io/name or /instance label');
  }

  const deployments = byKind('Deployment');
  check(deployments.length > 0, dir, 'no Deployment rendered');
  const pdbs = byKind('PodDisruptionBudget').map((d) => d.doc);
  const hpas = byKind('HorizontalPodAutoscaler').map((d) => d.doc);
  const policies = byKind('NetworkPolicy').map((d) => d.doc);
  const configMaps = named('ConfigMap', regular);
  const services = byKind('Service').map((d) => d.doc);

  // A ServiceMonitor selects a Service of its namespace that has every port it scrapes.
  for (const { where, doc } of byKind('ServiceMonitor')) {
    const id = `${where} ServiceMonitor/${doc.metadata.name}`;
    const selected = services.filter((svc) => matches(doc.spec?.selector?.matchLabels, svc.metadata?.labels ?? {}));
    check(selected.length > 0, id, 'selects no Service');
    for (const endpoint of doc.spec?.endpoints ?? []) {
      check(selected.some((svc) => (svc.spec?.ports ?? []).some((p) => p.name === endpoint.port)), id, `no selected Service has a port named ${endpoint.port}`);
    }
  }

  for (const { where, doc } of deployments) {
    const id = `${where} Deployment/${doc.metadata.name}`;
    const podSpec = podSpecOf(doc) ?? {};
    const labels = doc.spec?.template?.metadata?.labels ?? {};
    check(matches(doc.spec?.selector?.matchLabels, labels), id, 'selector does not match the pod template labels');
    checkPodSecurity(id, podSpec);
    for (const c of podSpec.containers ?? []) checkProbes(`${id} container ${c.name}`, c);

    const annotations = doc.spec?.template?.metadata?.annotations ?? {};
    check(annotations['checksum/config'], id, 'pod template lacks the checksum/config annotation');
    check(annotations['checksum/secret'], id, 'pod template lacks the checksum/secret annotation');
    const cmRefs = (podSpec.containers ?? []).flatMap((c) => (c.envFrom ?? []).map((e) => e.configMapRef?.name).filter(Boolean));
    check(cmRefs.includes(doc.metadata.name) && configMaps.has(doc.metadata.name), id, 'does not load its own ConfigMap');

    const pdb = pdbs.find((p) => matches(p.spec?.selector?.matchLabels, labels));
    if (check(pdb, id, 'no PodDisruptionBudget selects its pods')) {
      const hpa = hpas.find((h) => h.spec?.scaleTargetRef?.name === doc.metadata.name);
      const minReplicas = hpa ? hpa.spec.minReplicas ?? 1 : doc.spec?.replicas ?? 1;
      const minAvailable = pdb.spec?.minAvailable;
      if (typeof minAvailable === 'number') {
        check(minAvailable < minReplicas, id, `PDB minAvailable ${minAvailable} >= replicas ${minReplicas}: node drains would block`);
      }
      if (typeof pdb.spec?.maxUnavailable === 'number') check(pdb.spec.maxUnavailable >= 1, id, 'PDB maxUnavailable < 1 blocks drains');
    }
    const policy = policies.find((p) => matches(p.spec?.podSelector?.matchLabels, labels));
    check(policy, id, 'no NetworkPolicy selects its pods');
    // A scrape port the policy does not open is a Prometheus target that is silently down.
    const scraped = (podSpec.containers ?? []).some((c) => (c.ports ?? []).some((p) => p.name === 'metrics'));
    if (policy && scraped) {
      check((policy.spec?.ingress ?? []).some((r) => (r.ports ?? []).some((p) => p.port === 'metrics')), id, 'the metrics port is not allowed by its NetworkPolicy');
    }
  }

  for (const hpa of hpas) {
    const id = `HorizontalPodAutoscaler/${hpa.metadata.name}`;
    const target = deployments.find((d) => d.doc.metadata.name === hpa.spec?.scaleTargetRef?.name);
    if (check(target, id, 'scaleTargetRef is not a rendered Deployment')) {
      check(target.doc.spec.replicas === undefined, id, 'target Deployment sets spec.replicas (Helm and the HPA would fight)');
    }
    check((hpa.spec?.metrics ?? []).length > 0, id, 'no metrics');
    check(hpa.spec.minReplicas <= hpa.spec.maxReplicas, id, 'minReplicas > maxReplicas');
  }

  // Rollouts match the drain: surge without taking a pod down first, a preStop pause on every
  // container, and a grace period above the pause plus the process' own delay and drain.
  for (const { where, doc } of deployments) {
    const id = `${where} Deployment/${doc.metadata.name}`;
    const podSpec = podSpecOf(doc) ?? {};
    const rolling = doc.spec?.strategy?.rollingUpdate;
    check(doc.spec?.strategy?.type === 'RollingUpdate' && rolling?.maxUnavailable === 0, id, 'rollout must be RollingUpdate with maxUnavailable 0');
    const env = configMaps.get(doc.metadata.name)?.data ?? {};
    for (const c of podSpec.containers ?? []) {
      const command = c.lifecycle?.preStop?.exec?.command ?? [];
      const pauseMs = command[0] === 'sleep' ? Number(command[1]) * 1000 : c.lifecycle?.preStop?.sleep ? c.lifecycle.preStop.sleep.seconds * 1000 : NaN;
      if (check(Number.isFinite(pauseMs) && pauseMs > 0, `${id} container ${c.name}`, 'no preStop pause (endpoints and the ingress need a moment to drop the pod)')) {
        const total = pauseMs + Number(env.SHUTDOWN_DELAY_MS ?? 0) + Number(env.SHUTDOWN_GRACE_MS ?? 0);
        check((podSpec.terminationGracePeriodSeconds ?? 30) * 1000 > total, id, `terminationGracePeriodSeconds ${podSpec.terminationGracePeriodSeconds} does not exceed preStop + delay + grace (${total} ms)`);
      }
    }
  }

  // Internal gRPC: every <SERVICE>_ADDR / _ADMIN_ADDR is dns:/// of a headless Service of this release,
  // with a port that Service has and the pods it selects listen on (round_robin over every pod).
  const headless = new Map(services.filter((svc) => svc.spec?.clusterIP === 'None').map((svc) => [svc.metadata.name, svc]));
  for (const [name, cm] of configMaps) {
    for (const [key, value] of Object.entries(cm.data ?? {})) {
      if (!/_ADDR$/.test(key)) continue;
      const id = `ConfigMap/${name} ${key}`;
      const m = /^dns:\/\/\/([a-z0-9-]+)\.([a-z0-9-]+)\.svc\.([a-z0-9.-]+):(\d+)$/.exec(String(value));
      if (!check(m, id, `${value} is not dns:///<headless Service>.<namespace>.svc.<domain>:<port>`)) continue;
      const [, svcName, namespace, , port] = m;
      const svc = headless.get(svcName);
      if (!check(svc, id, `${svcName} is not a rendered headless Service (clusterIP: None)`)) continue;
      check((svc.metadata.namespace ?? namespace) === namespace, id, `${svcName} is in namespace ${svc.metadata.namespace}, not ${namespace}`);
      check(svc.spec.publishNotReadyAddresses !== true, id, `${svcName} publishes pods that are not ready`);
      const servicePort = (svc.spec.ports ?? []).find((p) => String(p.port) === port);
      if (!check(servicePort, id, `${svcName} has no port ${port}`)) continue;
      const pods = deployments.filter((d) => matches(svc.spec.selector, d.doc.spec?.template?.metadata?.labels));
      const listening = pods.some((d) =>
        (d.doc.spec.template.spec.containers ?? []).some((c) =>
          (c.ports ?? []).some((p) => String(p.containerPort) === port && (servicePort.targetPort === undefined || servicePort.targetPort === p.name || servicePort.targetPort === p.containerPort)),
        ),
      );
      check(listening, id, `no pod behind ${svcName} listens on ${port} (a headless Service maps no ports)`);
    }
  }

  // Services select pods and target named ports those pods expose.
  for (const svc of services) {
    const id = `Service/${svc.metadata.name}`;
    const pods = deployments.filter((d) => matches(svc.spec?.selector, d.doc.spec?.template?.metadata?.labels));
    if (!check(pods.length > 0, id, 'selector matches no Deployment')) continue;
    const portNames = new Set(pods.flatMap((d) => (d.doc.spec.template.spec.containers ?? []).flatMap((c) => (c.ports ?? []).map((p) => p.name))));
    for (const port of svc.spec?.ports ?? []) {
      if (typeof port.targetPort === 'string') check(portNames.has(port.targetPort), id, `targetPort ${port.targetPort} is not a pod port`);
    }
  }

  // Ingress: backends exist, use a port the Service has, and never the admin port.
  const servicesByName = new Map(services.map((s) => [s.metadata.name, s]));
  for (const { doc } of byKind('Ingress')) {
    const id = `Ingress/${doc.metadata.name}`;
    for (const rule of doc.spec?.rules ?? []) {
      for (const path of rule.http?.paths ?? []) {
        const backend = path.backend?.service;
        const svc = servicesByName.get(backend?.name);
        if (!check(svc, id, `backend service ${backend?.name} is not rendered`)) continue;
        const port = (svc.spec.ports ?? []).find((p) => p.name === backend.port?.name || p.port === backend.port?.number);
        check(port, id, `backend port ${JSON.stringify(backend.port)} not on Service ${svc.metadata.name}`);
        check(port?.name !== 'admin' && port?.targetPort !== 'admin', id, 'routes to the admin port');
        check(!(svc.spec.ports ?? []).some((p) => p.name === 'admin'), id, `backend Service ${svc.metadata.name} exposes the admin port`);
      }
    }
    const affinity = doc.metadata.annotations?.['nginx.ingress.kubernetes.io/affinity'];
    check(affinity === 'cookie', id, 'no cookie affinity (Socket.IO long-polling needs sticky sessions)');
  }

  // NetworkPolicies: gRPC ports only from named callers; admin gRPC ports only from the gateway; the gateway admin port only from the namespace.
  for (const policy of policies) {
    const id = `NetworkPolicy/${policy.metadata.name}`;
    check((policy.spec?.policyTypes ?? []).includes('Ingress'), id, 'policyTypes lacks Ingress');
    for (const rule of policy.spec?.ingress ?? []) {
      const ports = (rule.ports ?? []).map((p) => p.port);
      if (ports.includes('grpc') && policy.spec.podSelector?.matchLabels?.['app.kubernetes.io/component'] !== 'gateway') {
        check((rule.from ?? []).length > 0 && rule.from.every((f) => f.podSelector && !f.namespaceSelector && !f.ipBlock),
          id, 'gRPC port open beyond pods of this namespace');
        check(rule.from.every((f) => f.podSelector?.matchExpressions?.length || Object.keys(f.podSelector?.matchLabels ?? {}).includes('app.kubernetes.io/component')),
          id, 'gRPC port open to every pod, not only the calling services');
      }
      if (ports.includes('grpc-admin')) {
        // Admin RPCs: only the components named in adminCallers (the gateway), never the namespace at large.
        check((rule.from ?? []).length > 0 && rule.from.every((f) => f.podSelector && !f.namespaceSelector && !f.ipBlock
          && (f.podSelector.matchExpressions ?? []).some((e) => e.key === 'app.kubernetes.io/component' && e.operator === 'In'
            && e.values.length > 0 && e.values.every((v) => v === 'gateway'))),
          id, 'admin gRPC port open to more than the gateway');
      }
      if (ports.includes('metrics')) check((rule.from ?? []).length > 0, id, 'metrics port open to anyone (networkPolicy.metricsFrom is empty)');
      if (ports.includes('admin')) {
        check((rule.from ?? []).length > 0 && rule.from.every((f) => f.podSelector && !f.namespaceSelector && !f.ipBlock),
          id, 'admin port reachable from outside the namespace');
      }
    }
  }

  // Hook Jobs run before the release's regular objects exist: they must not depend on them.
  for (const { where, doc } of byKind('Job')) {
    const id = `${where} Job/${doc.metadata.name}`;
    const podSpec = podSpecOf(doc) ?? {};
    checkPodSecurity(id, podSpec);
    check(podSpec.restartPolicy === 'Never' || podSpec.restartPolicy === 'OnFailure', id, 'restartPolicy must be Never/OnFailure');
    const hook = hookOf(doc);
    if (!hook.includes('pre-install')) continue;
    const hookSecretNames = new Set(docs.filter((d) => d.doc.kind === 'Secret' && hookOf(d.doc).includes('pre-install')).map((d) => d.doc.metadata.name));
    const regularSecrets = named('Secret', regular);
    const regularAccounts = named('ServiceAccount', regular);
    for (const c of podSpec.containers ?? []) {
      for (const e of c.env ?? []) {
        const ref = e.valueFrom?.secretKeyRef?.name;
        if (ref) check(!regularSecrets.has(ref) || hookSecretNames.has(ref), id, `env ${e.name} reads Secret ${ref}, which does not exist yet at pre-install`);
        const cm = e.valueFrom?.configMapKeyRef?.name;
        if (cm) check(!configMaps.has(cm), id, `env ${e.name} reads ConfigMap ${cm}, which does not exist yet at pre-install`);
      }
      for (const e of c.envFrom ?? []) {
        if (e.configMapRef) check(!configMaps.has(e.configMapRef.name), id, `envFrom ConfigMap ${e.configMapRef.name} does not exist yet at pre-install`);
        if (e.secretRef) check(!regularSecrets.has(e.secretRef.name), id, `envFrom Secret ${e.secretRef.name} does not exist yet at pre-install`);
      }
    }
    check(!regularAccounts.has(podSpec.serviceAccountName), id, `ServiceAccount ${podSpec.serviceAccountName} does not exist yet at pre-install`);
  }

  return {
    kinds: Object.entries(docs.reduce((acc, d) => ({ ...acc, [d.doc.kind]: (acc[d.doc.kind] ?? 0) + 1 }), {}))
      .map(([k, n]) => `${n} ${k}`).join(', '),
    deployments: deployments.map((d) => d.doc.metadata.name),
  };
}

// ------------------------------------------------------------------------------------------------- main

const dirs = process.argv.slice(2);
if (dirs.length === 0) {
  console.error('usage: node scripts/validate-manifests.mjs <render-dir> [<render-dir> ...]');
  process.exit(2);
}

for (const dir of dirs) {
  const before = failures.length;
  const docs = readRelease(dir);
  const valid = docs.filter(checkDocument);
  const summary = checkRelease(dir, valid);
  const status = failures.length === before ? 'ok' : `${failures.length - before} problem(s)`;
  console.log(`validate ${dir}: ${docs.length} documents (${summary.kinds}) -> ${status}`);
  console.log(`  services: ${summary.deployments.join(', ')}`);
}

console.log('checked: YAML parses (no duplicate keys); apiVersion/kind/metadata.name; Kubernetes 1.27 OpenAPI schema per kind;');
console.log('  unique names; labels; Deployments: resources, non-root, read-only root fs, no privilege escalation, caps drop ALL,');
console.log('  seccomp RuntimeDefault, /tmp emptyDir, liveness+readiness probes (native gRPC for gRPC services), checksum');
console.log('  annotations, own ConfigMap, a PDB (not blocking drains), a NetworkPolicy; HPA targets; Service selectors/ports;');
console.log('  Ingress backends, no admin port, cookie affinity; NetworkPolicy caller restrictions; hook Jobs independent of');
console.log('  regular objects; rollouts with maxUnavailable 0, a preStop pause and a grace period above pause + delay + drain;');
console.log('  every internal address dns:/// of a headless Service whose pods listen on its port.');
console.log(`${checks} checks, ${failures.length} failure(s)`);
if (failures.length) {
  for (const f of failures) console.error(`FAIL ${f}`);
  process.exit(1);
}
