/**
 * The service-account issuer discovery endpoints (kube's pkg/routes/openidmetadata.go):
 * `/.well-known/openid-configuration` (application/json) and `/openid/v1/jwks`
 * (application/jwk-set+json), each cacheable for an hour. Served only when the issuer is an https
 * URL, as kube.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { JWKS_CONTENT_TYPE, JWKS_PATH, OPENID_CACHE_CONTROL, OPENID_CONFIG_PATH, openIDDiscoveryProblem, type TokenIssuer } from '@plinth/auth';
import type { Handler } from './context.js';
import type { Logger } from './log.js';

function writeJSON(res: ServerResponse, contentType: string, body: string): void {
  res.statusCode = 200;
  res.setHeader('Content-Type', contentType);
  res.setHeader('Cache-Control', OPENID_CACHE_CONTROL);
  res.end(body);
}

/**
 * The routes, by path; empty (with the reason logged, as kube) when the issuer cannot be an OIDC
 * issuer. `bindAddress` names the server's external host the way discovery does; the port is the
 * one the request came in on.
 */
export function openIDMetadataRoutes(issuer: TokenIssuer, issuerURL: string, bindAddress: string, log: Logger): Map<string, Handler> {
  const routes = new Map<string, Handler>();
  const problem = openIDDiscoveryProblem(issuerURL);
  if (problem) {
    log.error('Could not construct pre-rendered responses for ServiceAccountIssuerDiscovery endpoints. Endpoints will not be enabled.', { error: problem });
    return routes;
  }
  const host = bindAddress === '0.0.0.0' || bindAddress === '::' ? '127.0.0.1' : bindAddress;
  const hostForURL = host.includes(':') ? `[${host}]` : host;
  const configs = new Map<number, string>();
  const keyset = JSON.stringify(issuer.jwks());
  routes.set(OPENID_CONFIG_PATH, async (req: IncomingMessage, res: ServerResponse) => {
    const port = req.socket.localPort ?? 0;
    let body = configs.get(port);
    if (body === undefined) configs.set(port, (body = JSON.stringify(issuer.openidConfiguration(`${hostForURL}:${port}`))));
    writeJSON(res, 'application/json', body);
  });
  routes.set(JWKS_PATH, async (_req: IncomingMessage, res: ServerResponse) => writeJSON(res, JWKS_CONTENT_TYPE, keyset));
  return routes;
}
