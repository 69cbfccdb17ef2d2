/**
 * A small HTTPS client for plinth: bearer token, keep-alive Agent, JSON bodies. Streams (watches)
 * use `openStream`, one connection each.
 */
import { Agent, request as httpsRequest } from 'node:https';
import { connect as tlsConnect } from 'node:tls';
import type { IncomingMessage } from 'node:http';

export interface HttpResponse {
  status: number;
  body: Buffer;
}

export interface KubeConfigInfo {
  server: string;
  caPem: string;
  token: string;
}

/** server, CA and token from the admin kubeconfig plinth writes (a token user, one cluster). */
export function parseKubeconfig(text: string): KubeConfigInfo {
  const server = /^\s*server:\s*(\S+)/m.exec(text)?.[1];
  const ca = /^\s*certificate-authority-data:\s*(\S+)/m.exec(text)?.[1];
  const token = /^\s*token:\s*(\S+)/m.exec(text)?.[1];
  if (!server || !ca || !token) throw new Error('kubeconfig without server, certificate-authority-data or token');
  const unquote = (s: string): string => s.replace(/^["']|["']$/g, '');
  return { server: unquote(server), caPem: Buffer.from(unquote(ca), 'base64').toString('utf8'), token: unquote(token) };
}

export class KubeClient {
  readonly #agent: Agent;
  readonly #base: URL;
  readonly #auth: string;
  readonly info: KubeConfigInfo;

  constructor(info: KubeConfigInfo, maxSockets = 64) {
    this.info = info;
    this.#base = new URL(info.server);
    this.#auth = `Bearer ${info.token}`;
    this.#agent = new Agent({ ca: info.caPem, keepAlive: true, maxSockets, maxFreeSockets: maxSockets });
  }

  /** `contentType` names the body's media type (a patch type, YAML); JSON by default. */
  request(method: string, path: string, body?: Buffer, contentType = 'application/json'): Promise<HttpResponse> {
    const headers: Record<string, string> = { authorization: this.#auth, accept: 'application/json' };
    if (body) {
      headers['content-type'] = contentType;
      headers['content-length'] = String(body.length);
    }
    return new Promise((resolve, reject) => {
      const req = httpsRequest(
        { protocol: 'https:', hostname: this.#base.hostname, port: this.#base.port, path, method, headers, agent: this.#agent },
        (res) => {
          const chunks: Buffer[] = [];
          res.on('data', (c: Buffer) => chunks.push(c));
          res.on('end', () => resolve({ status: res.statusCode ?? 0, body: chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks) }));
          res.on('error', reject);
        },
      );
      req.on('error', reject);
      req.end(body);
    });
  }

  /** Sends the request and parses the JSON answer; a status other than `expect` throws. */
  async json<T>(method: string, path: string, body: Buffer | undefined, expect: number | number[]): Promise<T> {
    const res = await this.request(method, path, body);
    const ok = Array.isArray(expect) ? expect.includes(res.status) : res.status === expect;
    if (!ok) throw new Error(`${method} ${path}: ${res.status} ${res.body.toString('utf8').slice(0, 300)}`);
    return JSON.parse(res.body.toString('utf8')) as T;
  }

  /**
   * Opens a streaming GET on its own connection (`agent`) and hands every chunk to `onData`.
   * Resolves once the response headers arrive.
   */
  openStream(path: string, agent: Agent, onData: (chunk: Buffer) => void): Promise<{ res: IncomingMessage; close(): void }> {
    return new Promise((resolve, reject) => {
      const req = httpsRequest(
        { protocol: 'https:', hostname: this.#base.hostname, port: this.#base.port, path, method: 'GET', headers: { authorization: this.#auth }, agent },
        (res) => {
          if (res.statusCode !== 200) {
            reject(new Error(`watch ${path}: ${res.statusCode}`));
            res.resume();
            return;
          }
          res.on('data', onData);
          res.on('error', () => undefined);
          resolve({ res, close: () => req.destroy() });
        },
      );
      req.on('error', (e) => reject(e));
      req.end();
    });
  }

  /**
   * A streaming GET on a TLS connection of its own, with no HTTP client on the receiving side:
   * after the status line is checked, every byte (chunk framing included) goes to `onData`. A fan-out
   * load generator reading 1,000 streams spends its time in Node's HTTP client otherwise; the
   * events' bytes are the same. Resolves once the response's status line arrived.
   */
  openRawStream(path: string, onData: (chunk: Buffer) => void): Promise<{ close(): void }> {
    return new Promise((resolve, reject) => {
      const host = this.#base.hostname;
      const socket = tlsConnect({ host, port: Number(this.#base.port), ca: this.info.caPem, servername: isIPAddress(host) ? undefined : host }, () => {
        socket.setNoDelay(true);
        socket.write(`GET ${path} HTTP/1.1\r\nHost: ${this.#base.host}\r\nAuthorization: ${this.#auth}\r\nAccept: application/json\r\n\r\n`);
      });
      let started = false;
      socket.on('data', (chunk: Buffer) => {
        if (!started) {
          started = true;
          const status = chunk.subarray(0, 12).toString('latin1');
          if (status !== 'HTTP/1.1 200') {
            socket.destroy();
            reject(new Error(`watch ${path}: ${chunk.subarray(0, 200).toString('latin1')}`));
            return;
          }
          resolve({ close: () => socket.destroy() });
        }
        onData(chunk);
      });
      socket.on('error', (e) => {
        if (!started) reject(e);
      });
    });
  }

  /** A new Agent with this server's CA, for stream connections. */
  streamAgent(): Agent {
    return new Agent({ ca: this.info.caPem, keepAlive: false, maxSockets: Infinity });
  }

  close(): void {
    this.#agent.destroy();
  }
}

function isIPAddress(host: string): boolean {
  return /^[\d.]+$/.test(host) || host.includes(':');
}
