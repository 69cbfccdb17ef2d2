/**
 * Running helm in tests: the binary ($HELM, then .tools/bin/helm from `make tools`, then PATH), the
 * chart and its value-set fixtures, and parsing rendered manifests.
 */
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { parseAllDocuments } from 'yaml';
import { REPO_ROOT } from './harness.js';

/** The chart under test. */
export const CHART = join(REPO_ROOT, 'charts/plinth');
/** The documented value sets (test/fixtures/helm/<set>.yaml). */
export const FIXTURES = join(REPO_ROOT, 'test/fixtures/helm');

/** The helm to use: $HELM, then .tools/bin/helm (from `make tools`), then PATH. */
export function helmPath(): string {
  if (process.env['HELM']) return process.env['HELM'];
  const local = join(REPO_ROOT, '.tools/bin/helm');
  return existsSync(local) ? local : 'helm';
}

/** A finished helm (or other) command. */
export interface Run {
  code: number;
  stdout: string;
  stderr: string;
}

/** Runs a command without blocking the event loop (an in-process plinth must keep answering it). */
export function run(file: string, args: string[], env: Record<string, string> = {}): Promise<Run> {
  return new Promise((resolve) => {
    execFile(file, args, { env: { ...process.env, ...env }, maxBuffer: 64 * 1024 * 1024 }, (err, stdout, stderr) => {
      const code = err ? (typeof err.code === 'number' ? err.code : 1) : 0;
      resolve({ code, stdout, stderr });
    });
  });
}

/** Runs helm. */
export function helm(args: string[], env: Record<string, string> = {}): Promise<Run> {
  return run(helmPath(), args, env);
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- rendered Kubernetes objects
export type Obj = any;

/** The objects of a multi-document YAML stream (empty documents dropped). */
export function parseManifests(text: string): Obj[] {
  return parseAllDocuments(text)
    .map((d) => {
      assert.equal(d.errors.length, 0, `invalid YAML rendered: ${d.errors.map(String).join('; ')}`);
      return d.toJS();
    })
    .filter((o) => o);
}

/** The path of a value set. */
export const values = (set: string): string => join(FIXTURES, `${set}.yaml`);

/** The release and namespace the rendering tests use, and the chart's full name for them. */
export const NS = 'plinth-system';
export const RELEASE = 'api';
export const FULLNAME = 'api-plinth';

/** `helm template` of a value set (plus extra helm arguments), parsed. */
export async function render(set: string, extra: string[] = []): Promise<Obj[]> {
  const r = await helm(['template', RELEASE, CHART, '-n', NS, '-f', values(set), ...extra]);
  assert.equal(r.code, 0, `helm template ${set} failed:\n${r.stderr}`);
  return parseManifests(r.stdout);
}

/** The first rendered object of `kind` (and `name`). */
export function find(objs: Obj[], kind: string, name?: string): Obj | undefined {
  return objs.find((o) => o.kind === kind && (name === undefined || o.metadata.name === name));
}

/** Like find(), failing the test when there is none. */
export function get(objs: Obj[], kind: string, name?: string): Obj {
  const o = find(objs, kind, name);
  assert.ok(o, `no ${kind}${name ? ` ${name}` : ''} rendered`);
  return o;
}

/** The plinth-apiserver container of a Deployment. */
export const container = (deploy: Obj): Obj => deploy.spec.template.spec.containers[0];
/** The plinth-apiserver arguments of the rendered Deployment. */
export const argsOf = (objs: Obj[]): string[] => container(get(objs, 'Deployment')).args;
/** The value of `--flag=value` in `args`. */
export const arg = (args: string[], flag: string): string | undefined => args.find((a) => a.startsWith(`${flag}=`))?.slice(flag.length + 1);
/** A rendered Secret's key, decoded. */
export const secretData = (objs: Obj[], name: string, key: string): string => Buffer.from(get(objs, 'Secret', name).data[key], 'base64').toString('utf8');
