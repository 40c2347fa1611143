// Checks skaffold.yaml offline (CI: run by scripts/check-chart.sh; alone: `node scripts/check-skaffold.mjs`).
//
// 1. The file validates against skaffold's schema for its apiVersion: the subset vendored in
//    deploy/skaffold/ (its $comment names the source), or the official file given as SKAFFOLD_SCHEMA=<path>.
// 2. For the default pipeline and every profile (a profile's build/deploy/portForward replace the
//    top-level ones, as skaffold applies them): each artifact's context and Dockerfile exist; each
//    Helm release renders with `helm template` exactly as skaffold would call it (values files,
//    setValues, setValueTemplates filled in for the built images); every container image of the
//    rendered objects is one skaffold builds; every port-forward names a rendered Service.
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Ajv } from 'ajv';
import { parse, parseAllDocuments } from 'yaml';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const helm = process.env.HELM ?? join(root, 'node_modules/.bin/helm');
const schemaPath = process.env.SKAFFOLD_SCHEMA ?? join(root, 'deploy/skaffold/skaffold-v4beta13.subset.schema.json');
const config = parse(readFileSync(join(root, 'skaffold.yaml'), 'utf8'));
const problems = [];
const step = (label, ok) => {
  console.log(`${label.padEnd(64)}${ok ? 'ok' : 'FAILED'}`);
  return ok;
};

const ajv = new Ajv({ strict: false, allErrors: true });
const schema = JSON.parse(readFileSync(schemaPath, 'utf8'));
if (!step(`schema ${schemaPath.replace(`${root}/`, '')}`, ajv.validate(schema, config))) {
  for (const e of ajv.errors ?? []) problems.push(`skaffold.yaml${e.instancePath}: ${e.message} ${JSON.stringify(e.params)}`);
}

const pipelines = [{ name: '(default)', build: config.build, deploy: config.deploy, portForward: config.portForward }];
for (const profile of config.profiles ?? []) {
  pipelines.push({
    name: profile.name,
    build: profile.build ?? config.build,
    deploy: profile.deploy ?? config.deploy,
    portForward: profile.portForward ?? config.portForward,
  });
}
for (const required of ['dev', 'prod']) {
  if (!pipelines.some((p) => p.name === required)) problems.push(`skaffold.yaml: no profile "${required}"`);
}

for (const pipeline of pipelines) {
  const artifacts = pipeline.build?.artifacts ?? [];
  // What skaffold hands the templates for each built image (stand-ins for the real repo, tag, digest).
  const built = new Map(artifacts.map((a) => [a.image, { repo: `registry.invalid/${a.image}`, tag: 'checktag', digest: `sha256:${'0'.repeat(64)}` }]));
  let ok = artifacts.length > 0;
  for (const artifact of artifacts) {
    const context = join(root, artifact.context ?? '.');
    const dockerfile = join(context, artifact.docker?.dockerfile ?? 'Dockerfile');
    if (!existsSync(context) || !existsSync(dockerfile)) {
      ok = false;
      problems.push(`${pipeline.name}: artifact ${artifact.image}: ${dockerfile} missing`);
    }
  }
  const fill = (template) =>
    template.replace(/\{\{\s*\.IMAGE_(REPO|TAG|DIGEST)_([A-Za-z0-9_]+)\s*\}\}/g, (_m, part, image) => {
      const b = built.get(image);
      if (!b) problems.push(`${pipeline.name}: template names ${image}, which no artifact builds`);
      return b ? b[part.toLowerCase()] : '';
    });
  const services = new Set();
  for (const release of pipeline.deploy?.helm?.releases ?? []) {
    const args = ['template', release.name, join(root, release.chartPath), '--namespace', release.namespace ?? 'default', '--kube-version', '1.27.0'];
    for (const file of release.valuesFiles ?? []) {
      if (!existsSync(join(root, file))) problems.push(`${pipeline.name}: values file ${file} missing`);
      args.push('-f', join(root, file));
    }
    for (const [key, value] of Object.entries(release.setValues ?? {})) args.push('--set-string', `${key}=${value}`);
    for (const [key, value] of Object.entries(release.setValueTemplates ?? {})) args.push('--set-string', `${key}=${fill(value)}`);
    let rendered = '';
    try {
      rendered = execFileSync(helm, args, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'], maxBuffer: 64 * 1024 * 1024 });
    } catch (error) {
      ok = false;
      problems.push(`${pipeline.name}: helm template ${release.name} failed: ${error.stderr ?? error.message}`);
      continue;
    }
    const images = new Set();
    for (const doc of parseAllDocuments(rendered)) {
      const object = doc.toJS();
      if (!object) continue;
      if (object.kind === 'Service') services.add(object.metadata.name);
      const pod = object.spec?.template?.spec ?? object.spec?.jobTemplate?.spec?.template?.spec;
      for (const c of [...(pod?.containers ?? []), ...(pod?.initContainers ?? [])]) images.add(c.image);
    }
    const expected = [...built.values()].flatMap((b) => [`${b.repo}:${b.tag}`, `${b.repo}:${b.tag}@${b.digest}`, `${b.repo}@${b.digest}`]);
    const foreign = [...images].filter((image) => !expected.includes(image));
    if (images.size === 0 || foreign.length) {
      ok = false;
      problems.push(`${pipeline.name}: release ${release.name} runs images skaffold does not build: ${foreign.join(', ') || '(none rendered)'}`);
    }
  }
  for (const forward of pipeline.portForward ?? []) {
    if (forward.resourceType === 'service' && !services.has(forward.resourceName)) {
      ok = false;
      problems.push(`${pipeline.name}: port-forward to service ${forward.resourceName}, which the release does not render`);
    }
  }
  step(`profile ${pipeline.name}: builds ${artifacts.length}, renders, runs only built images`, ok);
}

if (problems.length) {
  for (const p of problems) console.error(`  ${p}`);
  process.exit(1);
}
console.log('== skaffold OK');
