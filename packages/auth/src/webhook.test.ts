import { describe, it, after } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { resolveKubeconfig, KubeconfigError } from './kubeconfig.js';
import { createCachedTokenLookup, tokenCacheKey, type TokenLookupResult } from './token-cache.js';
import { createGenericWebhook, interpretWebhookResponse, isRetryableWebhookError, withExponentialBackoff, WebhookError } from './webhook-client.js';
import { createWebhookTokenReviewer, decodeTokenReview, tokenReviewRequest } from './webhook.js';

const b64 = (s: string): string => Buffer.from(s).toString('base64');

/** A file reader over a fixed table, recording what was asked for. */
function files(table: Record<string, string>): { readFile: (p: string) => Buffer; read: string[] } {
  const read: string[] = [];
  return {
    read,
    readFile(p) {
      read.push(p);
      if (!(p in table)) throw Object.assign(new Error(`ENOENT: ${p}`), { code: 'ENOENT' });
      return Buffer.from(table[p]!);
    },
  };
}

const KUBECONFIG = `
apiVersion: v1
kind: Config
clusters:
- name: other
  cluster: {server: "https://other.example"}
- name: authn
  cluster:
    server: https://authn.example:8443/a/b/?q=1#frag
    certificate-authority: certs/ca.pem
users:
- name: apiserver
  user:
    client-certificate: certs/client.pem
    client-key: /abs/client.key
    tokenFile: token.txt
contexts:
- name: first
  context: {cluster: other, user: apiserver}
- name: webhook
  context: {cluster: authn, user: apiserver}
current-context: webhook
`;

describe('kubeconfig for a webhook, as client-go reads it', () => {
  it('uses current-context and resolves relative paths against the kubeconfig directory', () => {
    const fs = files({ '/etc/kube/certs/ca.pem': 'CA', '/etc/kube/certs/client.pem': 'CERT', '/abs/client.key': 'KEY', '/etc/kube/token.txt': ' tok \n' });
    const c = resolveKubeconfig(KUBECONFIG, 'kc', '/etc/kube', fs);
    assert.equal(c.url.href, 'https://authn.example:8443/a/b');
    assert.equal(c.ca?.toString(), 'CA');
    assert.equal(c.clientCert?.cert.toString(), 'CERT');
    assert.equal(c.clientCert?.key.toString(), 'KEY');
    assert.equal(c.bearerToken, 'tok');
    assert.equal(c.bearerTokenFile, '/etc/kube/token.txt');
    assert.equal(c.insecureSkipTLSVerify, false);
  });

  it('decodes the -data fields and posts to "/" when the server has no path', () => {
    const text = JSON.stringify({
      clusters: [{ name: 'c', cluster: { server: 'https://10.0.0.1', 'certificate-authority-data': b64('CA') } }],
      users: [{ name: 'u', user: { 'client-certificate-data': b64('CERT'), 'client-key-data': b64('KEY'), token: 'static' } }],
      contexts: [{ name: 'x', context: { cluster: 'c', user: 'u' } }],
      'current-context': 'x',
    });
    const c = resolveKubeconfig(text, 'kc', '/nowhere', files({}));
    assert.equal(c.url.href, 'https://10.0.0.1/');
    assert.equal(c.ca?.toString(), 'CA');
    assert.equal(c.clientCert?.key.toString(), 'KEY');
    assert.equal(c.bearerToken, 'static');
  });

  it('has no context without current-context (no fall-back to the first)', () => {
    const text = KUBECONFIG.replace('current-context: webhook', '');
    assert.throws(() => resolveKubeconfig(text, 'kc', '/etc/kube', files({})), /no configuration has been provided/);
    assert.throws(() => resolveKubeconfig(KUBECONFIG.replace('current-context: webhook', 'current-context: gone'), 'kc', '/', files({})), /context was not found for specified context: gone/);
  });

  it('rejects what client-go rejects, listing every problem', () => {
    const kc = (cluster: object, user: object): string =>
      JSON.stringify({ clusters: [{ name: 'c', cluster }], users: [{ name: 'u', user }], contexts: [{ name: 'x', context: { cluster: 'c', user: 'u' } }], 'current-context': 'x' });
    const problems = (text: string): readonly string[] => {
      try {
        resolveKubeconfig(text, 'kc', '/', files({ '/ca': 'CA', '/crt': 'C' }));
      } catch (e) {
        assert.ok(e instanceof KubeconfigError);
        return e.problems;
      }
      assert.fail('accepted');
    };
    assert.match(problems(kc({ server: 'https://h', 'certificate-authority': '/ca', 'certificate-authority-data': b64('x') }, {})).join(), /certificate-authority-data and certificate-authority are both specified/);
    assert.match(problems(kc({ server: 'https://h', 'certificate-authority': '/ca', 'insecure-skip-tls-verify': true }, {})).join(), /root certificates file with the insecure flag/);
    assert.match(problems(kc({ server: 'https://h' }, { 'client-certificate': '/crt' })).join(), /client-key-data or client-key must be specified/);
    assert.match(problems(kc({ server: 'https://h' }, { token: 't', username: 'a', password: 'b' })).join(), /more than one authentication method/);
    assert.match(problems(kc({ server: 'https://h', 'certificate-authority': '/missing' }, {})).join(), /unable to read certificate-authority \/missing/);
    assert.match(problems(kc({ server: 'https://h' }, { exec: { command: 'x' } })).join(), /exec is not supported/);
    const both = problems(kc({ 'certificate-authority-data': b64('x'), 'certificate-authority': '/ca' }, { 'client-certificate': '/crt' }));
    assert.ok(both.length >= 3, `every problem listed: ${both.join('; ')}`);
    const dup = JSON.stringify({ clusters: [{ name: 'c', cluster: {} }, { name: 'c', cluster: {} }], 'current-context': '' });
    assert.match(problems(dup).join(), /duplicate name "c" in clusters/);
  });

  it('sends no credentials to a plain-http server (client-go reads them only for TLS)', () => {
    const text = JSON.stringify({
      clusters: [{ name: 'c', cluster: { server: 'http://127.0.0.1:1/x' } }],
      users: [{ name: 'u', user: { token: 'secret' } }],
      contexts: [{ name: 'x', context: { cluster: 'c', user: 'u' } }],
      'current-context': 'x',
    });
    const c = resolveKubeconfig(text, 'kc', '/', files({}));
    assert.equal(c.bearerToken, undefined);
    assert.equal(c.url.href, 'http://127.0.0.1:1/x');
  });

  it('never quotes the file in a parse error (it may hold a token)', () => {
    const e = (() => {
      try {
        resolveKubeconfig('users:\n- name: u\n  user: {token: "s3cr3t-value"\n', 'kc', '/', files({}));
      } catch (err) {
        return err as Error;
      }
      return undefined;
    })();
    assert.ok(e instanceof KubeconfigError);
    assert.doesNotMatch(e.message, /s3cr3t/);
  });
});

describe('token cache keys', () => {
  const k1 = Buffer.alloc(32, 1);
  const k2 = Buffer.alloc(32, 2);

  it('are an HMAC of the token and audiences, never the token', () => {
    const key = tokenCacheKey(k1, 'my-secret-token', ['api']);
    assert.equal(key, tokenCacheKey(k1, 'my-secret-token', ['api']));
    assert.doesNotMatch(key, /my-secret-token/);
    assert.equal(Buffer.from(key, 'base64').length, 32, 'a SHA-256 digest');
    // Another cache (another random secret) keys the same token differently.
    assert.notEqual(key, tokenCacheKey(k2, 'my-secret-token', ['api']));
  });

  it('tell tokens and audience lists apart, length-prefixed', () => {
    const keys = [
      tokenCacheKey(k1, 'ab', ['c']),
      tokenCacheKey(k1, 'a', ['bc']),
      tokenCacheKey(k1, 'a', ['b', 'c']),
      tokenCacheKey(k1, 'a', ['bc', '']),
      tokenCacheKey(k1, 'abc', undefined),
      tokenCacheKey(k1, 'ab', ['d']),
    ];
    assert.equal(new Set(keys).size, keys.length);
    assert.equal(tokenCacheKey(k1, 't', undefined), tokenCacheKey(k1, 't', []));
  });
});

describe('token cache', () => {
  const user = { name: 'alice', groups: [] };
  function harness(answer: (token: string) => TokenLookupResult | Promise<TokenLookupResult>, ttl = { success: 1000, failure: 500 }, maxEntries?: number) {
    let clock = 0;
    const calls: string[] = [];
    const cache = createCachedTokenLookup({
      lookup: async (token) => {
        calls.push(token);
        return answer(token);
      },
      cacheErrors: false,
      successTTLms: ttl.success,
      failureTTLms: ttl.failure,
      now: () => clock,
      ...(maxEntries ? { maxEntries } : {}),
    });
    return { cache, calls, advance: (ms: number) => (clock += ms) };
  }

  it('keeps valid answers for the success TTL and invalid ones for the failure TTL', async () => {
    const h = harness((t) => (t === 'good' ? { ok: true, user } : { ok: false }));
    assert.equal((await h.cache.lookup('good', ['a'])).ok, true);
    assert.equal((await h.cache.lookup('bad', ['a'])).ok, false);
    h.advance(499);
    await h.cache.lookup('good', ['a']);
    await h.cache.lookup('bad', ['a']);
    assert.deepEqual(h.calls, ['good', 'bad']);
    h.advance(1);
    await h.cache.lookup('bad', ['a']);
    assert.deepEqual(h.calls, ['good', 'bad', 'bad'], 'the failure expired');
    h.advance(500);
    await h.cache.lookup('good', ['a']);
    assert.deepEqual(h.calls, ['good', 'bad', 'bad', 'good'], 'the success expired');
    // Other audiences are another entry.
    await h.cache.lookup('good', ['b']);
    assert.equal(h.calls.length, 5);
  });

  it('never keeps errors, and a TTL of 0 keeps nothing', async () => {
    const h = harness(() => ({ ok: false, error: new Error('webhook down') }));
    assert.equal((await h.cache.lookup('t', undefined)).error?.message, 'webhook down');
    await h.cache.lookup('t', undefined);
    assert.equal(h.calls.length, 2);
    const z = harness(() => ({ ok: true, user }), { success: 0, failure: 0 });
    await z.cache.lookup('t', undefined);
    await z.cache.lookup('t', undefined);
    assert.equal(z.calls.length, 2);
  });

  it('shares one lookup among concurrent callers, errors included', async () => {
    let release!: (r: TokenLookupResult) => void;
    const h = harness(() => new Promise<TokenLookupResult>((r) => (release = r)));
    const waiting = [h.cache.lookup('t', ['a']), h.cache.lookup('t', ['a']), h.cache.lookup('t', ['a'])];
    await new Promise((r) => setImmediate(r));
    release({ ok: false, error: new Error('boom') });
    const results = await Promise.all(waiting);
    assert.equal(h.calls.length, 1);
    for (const r of results) assert.equal(r.error?.message, 'boom');
    // Not cached: the next caller asks again.
    const next = h.cache.lookup('t', ['a']);
    await new Promise((r) => setImmediate(r));
    release({ ok: true, user });
    assert.equal((await next).ok, true);
    assert.equal(h.calls.length, 2);
  });

  it('is bounded, evicting the least recently used entry', async () => {
    const h = harness(() => ({ ok: true, user }), { success: 10_000, failure: 10_000 }, 2);
    await h.cache.lookup('a', undefined);
    await h.cache.lookup('b', undefined);
    await h.cache.lookup('a', undefined); // a is now the most recent
    await h.cache.lookup('c', undefined); // evicts b
    assert.equal(h.cache.size, 2);
    await h.cache.lookup('a', undefined);
    assert.deepEqual(h.calls, ['a', 'b', 'c']);
    await h.cache.lookup('b', undefined);
    assert.deepEqual(h.calls, ['a', 'b', 'c', 'b']);
  });
});

describe('TokenReview exchange', () => {
  it('sends kube\'s TokenReview shape for each version', () => {
    assert.deepEqual(tokenReviewRequest('v1beta1', 'tok', ['api']), {
      kind: 'TokenReview',
      apiVersion: 'authentication.k8s.io/v1beta1',
      metadata: { creationTimestamp: null },
      spec: { token: 'tok', audiences: ['api'] },
      status: { user: {} },
    });
    assert.deepEqual(tokenReviewRequest('v1', 'tok', undefined).spec, { token: 'tok' });
  });

  it('reads only a TokenReview of the configured version', () => {
    const ok = decodeTokenReview({ apiVersion: 'authentication.k8s.io/v1', kind: 'TokenReview', status: { authenticated: true, user: { username: 'a', groups: ['g'], extra: { k: ['v'], n: null } } } }, 'v1');
    assert.deepEqual(ok.user, { username: 'a', uid: '', groups: ['g'], extra: { k: ['v'], n: [] } });
    // kind and apiVersion default to the expected ones.
    assert.equal(decodeTokenReview({ status: { authenticated: true } }, 'v1beta1').authenticated, true);
    assert.throws(() => decodeTokenReview({ apiVersion: 'authentication.k8s.io/v1', kind: 'TokenReview' }, 'v1beta1'), /not a authentication.k8s.io\/v1beta1 TokenReview/);
    assert.throws(() => decodeTokenReview({ apiVersion: 'v1', kind: 'Status', status: 'Success' }, 'v1'), /not a/);
    assert.throws(() => decodeTokenReview([], 'v1'), /not a/);
    assert.throws(() => decodeTokenReview({ status: { user: { groups: 'admins' } } }, 'v1'), /groups must be a list/);
    assert.throws(() => decodeTokenReview({ status: { authenticated: 'yes' } }, 'v1'), /authenticated must be a boolean/);
  });

  function reviewer(status: object | Error, implicit = ['api']) {
    const sent: any[] = [];
    const review = createWebhookTokenReviewer({
      version: 'v1',
      implicitAudiences: implicit,
      webhook: {
        async post(body) {
          sent.push(body);
          if (status instanceof Error) throw status;
          return { apiVersion: 'authentication.k8s.io/v1', kind: 'TokenReview', status };
        },
      },
    });
    return { sent, review: (token: string, auds?: string[]) => review(token, auds, new AbortController().signal) };
  }

  it('maps the answer as kube does, audiences included', async () => {
    const user = { username: 'alice', uid: '42', groups: ['dev'], extra: { scope: ['x'] } };
    let r = reviewer({ authenticated: true, user });
    assert.deepEqual(await r.review('t', ['api']), { ok: true, user: { name: 'alice', uid: '42', groups: ['dev'], extra: { scope: ['x'] } }, audiences: ['api'] });
    assert.deepEqual(r.sent[0].spec, { token: 't', audiences: ['api'] });
    // The answer's audiences must meet the wanted ones; without any, the API audiences stand in.
    assert.equal((await reviewer({ authenticated: true, user, audiences: ['elsewhere'] }).review('t', ['api'])).ok, false);
    assert.deepEqual((await reviewer({ authenticated: true, user, audiences: ['elsewhere', 'other'] }).review('t', ['other', 'api'])).audiences, ['other']);
    assert.equal((await reviewer({ authenticated: true, user }).review('t', ['other'])).ok, false);
    assert.equal((await reviewer({ authenticated: true, user }).review('t', undefined)).ok, true, 'no audience check without wanted audiences');
    // Refused: plain, or with an error (which the cache will not keep).
    assert.deepEqual(await reviewer({ authenticated: false }).review('t', ['api']), { ok: false });
    r = reviewer({ authenticated: false, error: 'token tok-123 expired' });
    const refused = await r.review('tok-123', ['api']);
    assert.equal(refused.ok, false);
    assert.equal(refused.error?.message, 'token [redacted] expired');
  });

  it('turns a failed call into an error that does not contain the token', async () => {
    const r = reviewer(new Error('server said: bad token abc.def'));
    const res = await r.review('abc.def', ['api']);
    assert.equal(res.ok, false);
    assert.ok(res.error);
    assert.doesNotMatch(res.error.message, /abc\.def/);
  });
});

describe('webhook calls: kube\'s retry rules', () => {
  const res = (status: number, body: string, headers: Record<string, string> = {}) => ({ status, headers, body: Buffer.from(body) });
  const retryable = (r: ReturnType<typeof res>): boolean => {
    try {
      interpretWebhookResponse(r);
    } catch (e) {
      return isRetryableWebhookError(e);
    }
    return false;
  };

  it('retries 500, 504, 429 and answers suggesting a delay; not 400, 401 or a plain 503', () => {
    assert.equal(retryable(res(500, 'oops', { 'content-type': 'text/plain' })), true);
    assert.equal(retryable(res(502, '')), true);
    assert.equal(retryable(res(504, '')), true);
    assert.equal(retryable(res(429, '')), true);
    assert.equal(retryable(res(503, '')), false);
    assert.equal(retryable(res(503, '', { 'retry-after': '1' })), true);
    assert.equal(retryable(res(400, '')), false);
    assert.equal(retryable(res(401, '')), false);
    // A Status body speaks for itself.
    assert.equal(retryable(res(500, JSON.stringify({ kind: 'Status', apiVersion: 'v1', status: 'Failure', reason: 'BadRequest', code: 400 }))), false);
    assert.equal(retryable(res(200, JSON.stringify({ kind: 'Status', apiVersion: 'v1', status: 'Failure', reason: 'InternalError', code: 500 }))), true);
    assert.equal(isRetryableWebhookError(new WebhookError('transport', 'reset', { errno: 'ECONNRESET' })), true);
    assert.equal(isRetryableWebhookError(new WebhookError('transport', 'refused', { errno: 'ECONNREFUSED' })), false);
    assert.equal(isRetryableWebhookError(new WebhookError('timeout', 'slow')), false);
  });

  it('accepts any 2xx JSON body and refuses empty or non-JSON ones', () => {
    assert.deepEqual(interpretWebhookResponse(res(201, '{"a":1}')), { a: 1 });
    assert.throws(() => interpretWebhookResponse(res(200, '')), /0-length response/);
    assert.throws(() => interpretWebhookResponse(res(200, '<html>')), /not JSON/);
  });

  it('tries five times, then gives the last error; a non-retryable error at once', async () => {
    const backoff = { initialMs: 1, factor: 1.5, jitter: 0.2, steps: 5 };
    const signal = new AbortController().signal;
    let n = 0;
    await assert.rejects(
      withExponentialBackoff(backoff, signal, async () => {
        throw new WebhookError('status', `attempt ${++n}`, { code: 500, reason: 'InternalError' });
      }, isRetryableWebhookError),
      /attempt 5/,
    );
    assert.equal(n, 5);
    n = 0;
    await assert.rejects(
      withExponentialBackoff(backoff, signal, async () => {
        throw new WebhookError('status', `attempt ${++n}`, { code: 400, reason: 'BadRequest' });
      }, isRetryableWebhookError),
      /attempt 1/,
    );
    n = 0;
    assert.equal(await withExponentialBackoff(backoff, signal, async () => (++n < 3 ? Promise.reject(new WebhookError('transport', 'reset', { errno: 'ECONNRESET' })) : 'ok'), isRetryableWebhookError), 'ok');
    assert.equal(n, 3);
  });
});

describe('webhook calls over HTTP', () => {
  const servers: Server[] = [];
  after(() => {
    for (const s of servers) s.closeAllConnections();
    for (const s of servers) s.close();
  });
  async function serve(handler: (req: IncomingMessage, body: string) => { status: number; body: string; headers?: Record<string, string> }): Promise<string> {
    const s = createServer((req, res) => {
      let body = '';
      req.on('data', (c: Buffer) => (body += c.toString()));
      req.on('end', () => {
        const out = handler(req, body);
        res.writeHead(out.status, { 'content-type': 'application/json', ...(out.headers ?? {}) });
        res.end(out.body);
      });
    });
    servers.push(s);
    await new Promise<void>((r) => s.listen(0, '127.0.0.1', r));
    return `http://127.0.0.1:${(s.address() as AddressInfo).port}`;
  }
  const backoff = { initialMs: 1, factor: 1, jitter: 0, steps: 5 };

  it('posts JSON and honours Retry-After before kube\'s backoff', async () => {
    const seen: string[] = [];
    const base = await serve((req, body) => {
      seen.push(`${req.method} ${req.url} ${req.headers['content-type']} ${body}`);
      return seen.length < 3 ? { status: 429, body: '', headers: { 'retry-after': '0' } } : { status: 200, body: '{"ok":true}' };
    });
    const w = createGenericWebhook({ config: { url: new URL(`${base}/review`), insecureSkipTLSVerify: false }, retryBackoff: backoff });
    try {
      assert.deepEqual(await w.post({ x: 1 }, new AbortController().signal), { ok: true });
    } finally {
      w.close();
    }
    assert.equal(seen.length, 3);
    assert.equal(seen[0], 'POST /review application/json {"x":1}');
  });

  // A retry would wait an hour: the test's own timeout catches it.
  it('does not retry a refused connection, and times a slow answer out', { timeout: 20_000 }, async () => {
    const dead = await serve(() => ({ status: 200, body: '{}' }));
    const s = servers.pop()!;
    await new Promise((r) => s.close(r));
    const w = createGenericWebhook({ config: { url: new URL(dead), insecureSkipTLSVerify: false }, retryBackoff: { ...backoff, initialMs: 3_600_000 } });
    await assert.rejects(w.post({}, new AbortController().signal), (e: unknown) => e instanceof WebhookError && e.errno === 'ECONNREFUSED');
    w.close();

    const slow = createServer(() => {
      /* never answers */
    });
    servers.push(slow);
    await new Promise<void>((r) => slow.listen(0, '127.0.0.1', r));
    const w2 = createGenericWebhook({ config: { url: new URL(`http://127.0.0.1:${(slow.address() as AddressInfo).port}`), insecureSkipTLSVerify: false }, retryBackoff: backoff, requestTimeoutMs: 200 });
    await assert.rejects(w2.post({}, new AbortController().signal), (e: unknown) => e instanceof WebhookError && e.kind === 'timeout');
    w2.close();
  });
});
