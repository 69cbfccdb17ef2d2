import { test } from 'node:test';
import assert from 'node:assert/strict';
import { parseFlags, parseDuration, FlagError } from './flags.js';

test('defaults follow kube-apiserver and the embedded mode', () => {
  const o = parseFlags([]);
  assert.equal(o.securePort, 6443);
  assert.equal(o.bindAddress, '0.0.0.0');
  assert.deepEqual(o.etcdServers, []);
  assert.equal(o.etcdPrefix, '/registry');
  assert.equal(o.dataDir, './data');
  assert.equal(o.watchCache, true);
  assert.equal(o.etcdCompactionInterval, 5 * 60_000);
  assert.equal(o.maxRequestsInflight, 400);
  assert.equal(o.maxMutatingRequestsInflight, 200);
});

test('both pflag forms, bare booleans and -v', () => {
  const o = parseFlags(['--secure-port', '7443', '--etcd-servers=http://a:2379,http://b:2379', '--watch-cache=false', '-v=4', '--help']);
  assert.equal(o.securePort, 7443);
  assert.deepEqual(o.etcdServers, ['http://a:2379', 'http://b:2379']);
  assert.equal(o.watchCache, false);
  assert.equal(o.verbosity, 4);
  assert.equal(o.help, true);
  assert.equal(parseFlags(['--v', '2']).verbosity, 2);
});

test('unknown flags and bad values fail with a clear message', () => {
  assert.throws(() => parseFlags(['--nope']), (e) => e instanceof FlagError && e.message === 'unknown flag: --nope');
  assert.throws(() => parseFlags(['--secure-port=abc']), /invalid argument "abc" for "--secure-port" flag/);
  assert.throws(() => parseFlags(['--secure-port=70000']), /valid port number/);
  assert.throws(() => parseFlags(['--bind-address=not-an-ip']), /failed to parse IP/);
  assert.throws(() => parseFlags(['--etcd-servers=localhost2379']), /not a URL/);
  assert.throws(() => parseFlags(['--etcd-compaction-interval=5x']), /invalid duration/);
  assert.throws(() => parseFlags(['--tls-cert-file=a.crt']), /must be given together/);
  assert.throws(() => parseFlags(['--secure-port']), /flag needs an argument/);
  assert.throws(() => parseFlags(['serve']), /unexpected argument/);
});

test('Go durations', () => {
  assert.equal(parseDuration('5m'), 300_000);
  assert.equal(parseDuration('1h30m'), 5_400_000);
  assert.equal(parseDuration('250ms'), 250);
  assert.equal(parseDuration('0'), 0);
  assert.throws(() => parseDuration('10'));
});

test('--event-ttl: a Go duration, kube-apiserver\'s default of one hour', () => {
  assert.equal(parseFlags([]).eventTtl, 3_600_000);
  assert.equal(parseFlags(['--event-ttl=2s']).eventTtl, 2000);
  assert.equal(parseFlags(['--event-ttl', '1h30m']).eventTtl, 5_400_000);
  assert.equal(parseFlags(['--event-ttl=0']).eventTtl, 0);
  assert.throws(() => parseFlags(['--event-ttl=2']), (e) => e instanceof FlagError && /^invalid argument "2" for "--event-ttl" flag/.test(e.message));
  assert.throws(() => parseFlags(['--event-ttl=-1s']), /invalid argument "-1s" for "--event-ttl" flag/);
});

test('list flags: StringSlice splits on commas, StringArray does not, both append when repeated', () => {
  const o = parseFlags([
    '--service-account-issuer=https://a.example',
    '--service-account-issuer', 'https://b.example,still-one',
    '--api-audiences=x,y',
    '--api-audiences=z',
    '--oidc-required-claim=hd=example.com',
    '--oidc-required-claim', 'tier=a=b,c',
  ]);
  assert.deepEqual(o.serviceAccountIssuer, ['https://a.example', 'https://b.example,still-one']);
  assert.deepEqual(o.apiAudiences, ['x', 'y', 'z']);
  assert.deepEqual(o.oidcRequiredClaim, { hd: 'example.com', tier: 'a=b,c' });
  // A list flag's first occurrence replaces its default.
  assert.deepEqual(parseFlags([]).oidcSigningAlgs, ['RS256']);
  assert.deepEqual(parseFlags(['--oidc-signing-algs=ES256', '--oidc-signing-algs=RS512']).oidcSigningAlgs, ['ES256', 'RS512']);
  assert.throws(() => parseFlags(['--oidc-required-claim=novalue']), /key=value/);
});

test('authentication defaults are kube-apiserver 1.24\'s', () => {
  const o = parseFlags([]);
  assert.equal(o.anonymousAuth, true);
  assert.equal(o.serviceAccountLookup, true);
  assert.equal(o.enableBootstrapTokenAuth, false);
  assert.equal(o.oidcUsernameClaim, 'sub');
  assert.equal(o.authenticationTokenWebhookCacheTtl, 120_000);
  assert.equal(o.authenticationTokenWebhookVersion, 'v1beta1');
  assert.equal(parseFlags(['--anonymous-auth=false']).anonymousAuth, false);
});

test('leader election flags: kube-controller-manager\'s defaults and client-go\'s checks', () => {
  const o = parseFlags([]);
  assert.equal(o.leaderElect, true);
  assert.equal(o.leaderElectLeaseDuration, 15_000);
  assert.equal(o.leaderElectRenewDeadline, 10_000);
  assert.equal(o.leaderElectRetryPeriod, 2_000);
  assert.equal(o.leaderElectResourceLock, 'leases');
  assert.equal(o.leaderElectResourceNamespace, 'kube-system');
  assert.throws(() => parseFlags(['--leader-elect-lease-duration=10s']), /leaseDuration must be greater than renewDeadline/);
  assert.throws(() => parseFlags(['--leader-elect-retry-period=9s']), /renewDeadline must be greater than retryPeriod\*JitterFactor/);
  assert.throws(() => parseFlags(['--leader-elect-resource-lock=endpoints']), /only "leases"/);
  // Without election the durations are not checked (kube: only applicable if enabled).
  assert.equal(parseFlags(['--leader-elect=false', '--leader-elect-lease-duration=1s']).leaderElect, false);
});

test('etcd client TLS flags go together and need --etcd-servers', () => {
  const o = parseFlags(['--etcd-servers=https://127.0.0.1:2379', '--etcd-cafile=/ca', '--etcd-certfile=/c', '--etcd-keyfile=/k']);
  assert.deepEqual([o.etcdCafile, o.etcdCertfile, o.etcdKeyfile], ['/ca', '/c', '/k']);
  assert.throws(() => parseFlags(['--etcd-servers=https://127.0.0.1:2379', '--etcd-certfile=/c']), /--etcd-certfile and --etcd-keyfile must be given together/);
  assert.throws(() => parseFlags(['--etcd-cafile=/ca']), /need --etcd-servers/);
});

test('Service network flags: kube-apiserver names, defaults and pflag messages', () => {
  const o = parseFlags([]);
  assert.equal(o.serviceClusterIpRange, '');
  assert.equal(o.serviceNodePortRange, '30000-32767');
  assert.equal(o.advertiseAddress, '');
  const set = parseFlags(['--service-cluster-ip-range=10.96.0.0/12,fd00::/108', '--service-node-port-range', '30000+100', '--advertise-address= 10.1.2.3']);
  assert.equal(set.serviceClusterIpRange, '10.96.0.0/12,fd00::/108');
  assert.equal(set.serviceNodePortRange, '30000+100');
  assert.equal(set.advertiseAddress, '10.1.2.3');
  const msg = (args: string[]): string => {
    try {
      parseFlags(args);
    } catch (e) {
      return (e as Error).message;
    }
    return '';
  };
  assert.equal(msg(['--advertise-address=nope']), 'invalid argument "nope" for "--advertise-address" flag: failed to parse IP: "nope"');
  assert.equal(msg(['--service-node-port-range=30000-x']), 'invalid argument "30000-x" for "--service-node-port-range" flag: strconv.Atoi: parsing "x": invalid syntax');
  assert.equal(msg(['--service-node-port-range=32767-30000']), 'invalid argument "32767-30000" for "--service-node-port-range" flag: end port cannot be less than start port: 32767-30000');
});

test('--default-not-ready-toleration-seconds and --default-unreachable-toleration-seconds: kube\'s 300 each', () => {
  const d = parseFlags([]);
  assert.equal(d.defaultNotReadyTolerationSeconds, 300);
  assert.equal(d.defaultUnreachableTolerationSeconds, 300);
  const f = parseFlags(['--default-not-ready-toleration-seconds=60', '--default-unreachable-toleration-seconds', '120']);
  assert.equal(f.defaultNotReadyTolerationSeconds, 60);
  assert.equal(f.defaultUnreachableTolerationSeconds, 120);
  assert.throws(() => parseFlags(['--default-not-ready-toleration-seconds=soon']), FlagError);
});
