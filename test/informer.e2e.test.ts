/**
 * End-to-end: a @kubernetes/client-node informer (ListWatch) on ServiceAccounts keeps seeing every
 * change, exactly once and in order, across restarts of the real executable on the same port:
 * first resuming its watch, then (after etcd compaction) relisting after 410 Gone.
 *
 * client-node 1.4.0's ListWatch (dist/cache.js): when the watch stream ends cleanly it re-watches
 * from the last resourceVersion it saw; on a 410 (HTTP status or ERROR event) it relists; on any
 * other failure (e.g. connection refused while the server is down) it calls the 'error' handlers
 * and stops — the caller restarts it with `informer.start()`, which keeps the resourceVersion.
 * A relist only fires 'add'/'update'/'delete' for objects whose resourceVersion changed, so an
 * unchanged relist is silent.
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { rmSync } from 'node:fs';
import { KubeConfig, CoreV1Api, makeInformer, type V1ServiceAccount, type Informer, type ObjectCache } from '@kubernetes/client-node';
import { startProcess, tempDir, eventually, type PlinthProcess } from './harness.js';

const NS = 'informer';
const SA_PATH = `/api/v1/namespaces/${NS}/serviceaccounts`;

let dataDir: string;
let plinth: PlinthProcess;

before(async () => {
  dataDir = tempDir('plinth-informer-');
  plinth = await startProcess(dataDir);
});

after(async () => {
  await plinth?.stop();
  rmSync(dataDir, { recursive: true, force: true });
});

interface Seen {
  event: 'add' | 'update' | 'delete';
  name: string;
  label: string;
  rv: string;
}

function serverLog(): string {
  return `\n--- server log ---\n${plinth.output().slice(-3000)}`;
}

async function api(method: 'GET' | 'POST' | 'PUT' | 'DELETE', path: string, body?: unknown): Promise<any> {
  const r = await plinth.client.request(method, path, body === undefined ? {} : { body });
  assert.ok(r.status >= 200 && r.status < 300, `${method} ${path} -> ${r.status} ${r.raw.toString()}${serverLog()}`);
  return r.body;
}

const create = (name: string, label: string): Promise<any> =>
  api('POST', SA_PATH, { apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name, labels: { step: label } } });
/** Read-modify-write (PUT with the read resourceVersion), as a controller updates. */
async function relabel(name: string, label: string): Promise<any> {
  const sa = await api('GET', `${SA_PATH}/${name}`);
  sa.metadata.labels = { ...sa.metadata.labels, step: label };
  return api('PUT', `${SA_PATH}/${name}`, sa);
}
const remove = (name: string): Promise<any> => api('DELETE', `${SA_PATH}/${name}`);

test('an informer sees every change exactly once and in order across server restarts on the same port (resume, then relist after 410)', async (t) => {
  const port = new URL(plinth.client.base).port;
  assert.ok(port && port !== '0');
  await api('POST', '/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: NS } });

  const kc = new KubeConfig();
  kc.loadFromFile(plinth.kubeconfig);
  // A fresh API client per list, as a reconnecting controller would build it from its config.
  let lists = 0;
  const listFn = () => {
    lists++;
    return kc.makeApiClient(CoreV1Api).listNamespacedServiceAccount({ namespace: NS });
  };
  const informer: Informer<V1ServiceAccount> & ObjectCache<V1ServiceAccount> = makeInformer(kc, SA_PATH, listFn);

  const seen: Seen[] = [];
  const record = (event: Seen['event']) => (sa: V1ServiceAccount) => {
    const name = sa.metadata?.name ?? '';
    // The namespace's `default` service account belongs to a controller, not to this script.
    if (!name.startsWith('sa-')) return;
    seen.push({ event, name, label: sa.metadata?.labels?.['step'] ?? '', rv: sa.metadata?.resourceVersion ?? '' });
  };
  informer.on('add', record('add'));
  informer.on('update', record('update'));
  informer.on('delete', record('delete'));
  let connects = 0;
  const errors: unknown[] = [];
  let stopping = false;
  let restartTimer: NodeJS.Timeout | undefined;
  // While `hold` is set, the informer stays down after an error (to make changes it must catch up on).
  let hold = false;
  let waitingToRestart = false;
  const restartInformer = (): void => {
    clearTimeout(restartTimer);
    restartTimer = setTimeout(() => {
      if (stopping) return;
      if (hold) {
        waitingToRestart = true;
        return;
      }
      void informer.start();
    }, 250);
  };
  informer.on('connect', () => connects++);
  informer.on('error', (err) => {
    errors.push(err);
    // client-node does not restart the informer after an error: do it as its docs say, after a delay.
    if (!stopping) restartInformer();
  });

  const strings = (): string[] => seen.map((s) => `${s.event}:${s.name}:${s.label}`);
  const waitFor = async (expected: string[], what: string): Promise<void> => {
    try {
      await eventually(async () => strings().length >= expected.length, 20_000, what);
    } catch (e) {
      assert.fail(`${(e as Error).message}\nseen: ${JSON.stringify(strings())}\nexpected: ${JSON.stringify(expected)}\nerrors: ${errors.map(String).join('; ')}${serverLog()}`);
    }
    // Let any duplicate that would follow arrive before comparing.
    await new Promise((r) => setTimeout(r, 300));
    assert.deepEqual(strings(), expected, `${what}; errors: ${errors.map(String).join('; ')}`);
  };

  try {
    // Sync: the informer lists (the `default` SA may or may not exist yet) and starts watching.
    await informer.start();
    // start() resolves once the list is in the cache and the watch request has been answered.
    assert.deepEqual(errors, []);
    assert.equal(connects, 1);
    assert.equal(lists, 1);

    const expected: string[] = [];

    // Before the restart: a burst of changes without waiting in between.
    await create('sa-1', 'a');
    await create('sa-2', 'a');
    await relabel('sa-1', 'b');
    await remove('sa-2');
    await create('sa-3', 'a');
    await relabel('sa-3', 'b');
    expected.push('add:sa-1:a', 'add:sa-2:a', 'update:sa-1:b', 'delete:sa-2:a', 'add:sa-3:a', 'update:sa-3:b');
    await waitFor(expected, 'changes before the restart');
    const uid1 = informer.get('sa-1', NS)?.metadata?.uid;
    assert.ok(uid1);

    // Restart on the same port with the same data dir: the informer's KubeConfig stays valid
    // (the admin token and the serving certificate live in the data dir).
    // A write elsewhere moves the store's resourceVersion past the informer's last one: kube's
    // watch cache, starting after the restart at the current resourceVersion, answers a watch from
    // the informer's older one with 410 Gone and the informer relists (which changes nothing here,
    // so it must report nothing); a server that can replay from there may also just resume.
    await api('POST', '/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: `${NS}-other` } });
    await api('POST', `/api/v1/namespaces/${NS}-other/serviceaccounts`, { apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name: 'sa-elsewhere' } });
    const connectsBefore = connects;
    await plinth.stop();
    plinth = await startProcess(dataDir, [`--secure-port=${port}`]);
    assert.equal(new URL(plinth.client.base).port, port, 'the restarted server listens on the old port');

    // One change first, waiting for it: it proves the informer reconnected.
    await create('sa-4', 'a');
    expected.push('add:sa-4:a');
    await waitFor(expected, 'first change after the restart');
    assert.ok(connects > connectsBefore, 'the informer reconnected');

    // Then another burst.
    await relabel('sa-1', 'c');
    await remove('sa-3');
    await create('sa-5', 'a');
    await relabel('sa-4', 'b');
    await remove('sa-1');
    await create('sa-1', 'd'); // same name again: a new object
    expected.push('update:sa-1:c', 'delete:sa-3:b', 'add:sa-5:a', 'update:sa-4:b', 'delete:sa-1:c', 'add:sa-1:d');
    await waitFor(expected, 'changes after the restart');
    assert.notEqual(informer.get('sa-1', NS)?.metadata?.uid, uid1, 'sa-1 was recreated');

    t.diagnostic(`first restart: ${connects} connects, ${lists} lists, ${errors.length} errors while the server was down`);

    // Second restart; this time the informer stays disconnected while the collection changes, and
    // must catch up (by watching from its resourceVersion or by relisting) when it comes back.
    // The server compacts etcd every second, so by the time the informer comes back its
    // resourceVersion is gone (410 Gone) and it has to relist: the relist must report exactly the
    // changes, and nothing for the objects that did not change.
    hold = true;
    const listsBefore = lists;
    const lastRv = seen[seen.length - 1]!.rv;
    await plinth.stop();
    plinth = await startProcess(dataDir, [`--secure-port=${port}`, '--etcd-compaction-interval=1s']);
    await eventually(async () => waitingToRestart, 10_000, 'the informer to be down after the second restart');
    await relabel('sa-5', 'b');
    await remove('sa-4');
    await create('sa-6', 'a');
    await eventually(
      async () => {
        const r = await plinth.client.watch(`${SA_PATH}?watch=1&resourceVersion=${lastRv}`, (ev) => ev.length > 0, 1000);
        return r.status === 410 || (r.events[0]?.type === 'ERROR' && r.events[0]?.object?.code === 410);
      },
      20_000,
      `a watch from resourceVersion ${lastRv} to be answered with 410 Gone after compaction`,
    );
    hold = false;
    waitingToRestart = false;
    restartInformer();
    // Within this gap the order between different objects is not defined (a relist reports
    // deletions first, then the list in name order), but each change shows up exactly once.
    const gap = ['update:sa-5:b', 'delete:sa-4:b', 'add:sa-6:a'];
    await eventually(async () => strings().length >= expected.length + gap.length, 20_000, 'the informer to catch up').catch((e: Error) =>
      assert.fail(`${e.message}\nseen: ${JSON.stringify(strings())}\nerrors: ${errors.map(String).join('; ')}${serverLog()}`),
    );
    await new Promise((r) => setTimeout(r, 300));
    assert.deepEqual(strings().slice(0, expected.length), expected);
    assert.deepEqual(strings().slice(expected.length).sort(), [...gap].sort(), 'changes made while the informer was down');
    expected.push(...strings().slice(expected.length));

    assert.equal(lists, listsBefore + 1, 'the informer relisted once after 410 Gone');

    // And it keeps watching afterwards.
    await relabel('sa-6', 'b');
    expected.push('update:sa-6:b');
    await waitFor(expected, 'a change after catching up');

    t.diagnostic(`in all: ${connects} connects, ${lists} lists, ${errors.length} errors while the server was down`);

    // No object version was delivered twice (a relist that changes nothing is silent).
    const versions = seen.filter((s) => s.event !== 'delete').map((s) => `${s.name}@${s.rv}`);
    assert.equal(new Set(versions).size, versions.length, `duplicate versions: ${JSON.stringify(versions)}`);

    // The cache equals the server's list.
    const list = await plinth.client.get(SA_PATH);
    assert.equal(list.status, 200);
    const summary = (items: readonly V1ServiceAccount[] | any[]): string[] =>
      items.map((i: any) => `${i.metadata.name}@${i.metadata.resourceVersion}:${i.metadata.labels?.step ?? ''}:${i.metadata.uid}`).sort();
    await eventually(async () => JSON.stringify(summary(informer.list(NS))) === JSON.stringify(summary(list.body.items)), 10_000, 'cache to match the server').catch(() => {
      assert.deepEqual(summary(informer.list(NS)), summary(list.body.items), 'informer cache vs server list');
    });
    assert.deepEqual(
      informer
        .list(NS)
        .map((s) => s.metadata?.name)
        .filter((n) => n?.startsWith('sa-'))
        .sort(),
      ['sa-1', 'sa-5', 'sa-6'],
    );
  } finally {
    stopping = true;
    clearTimeout(restartTimer);
    await informer.stop();
  }
});
