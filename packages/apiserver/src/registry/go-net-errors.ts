/**
 * How Go's net/http words a failed request (`Get "<url>": <cause>`), for answers kube passes on
 * verbatim: ComponentStatus messages, proxy errors.
 */

/** Go's text for a dial or TLS failure of `hostPort` (Node's error codes mapped onto Go's messages). */
export function goDialError(err: unknown, hostPort: string): string {
  const e = err as NodeJS.ErrnoException;
  switch (e?.code) {
    case 'ECONNREFUSED':
      return `dial tcp ${hostPort}: connect: connection refused`;
    case 'EHOSTUNREACH':
      return `dial tcp ${hostPort}: connect: no route to host`;
    case 'ENETUNREACH':
      return `dial tcp ${hostPort}: connect: network is unreachable`;
    case 'ECONNRESET':
      // A connection cut before any answer: what Go's http.Client reports.
      return 'EOF';
    case 'ENOTFOUND':
    case 'EAI_AGAIN':
      return `dial tcp: lookup ${hostPort.replace(/:\d+$/, '').replace(/^\[|\]$/g, '')}: no such host`;
    case 'ETIMEDOUT':
      return `dial tcp ${hostPort}: i/o timeout`;
    case 'UNABLE_TO_VERIFY_LEAF_SIGNATURE':
    case 'SELF_SIGNED_CERT_IN_CHAIN':
    case 'DEPTH_ZERO_SELF_SIGNED_CERT':
    case 'UNABLE_TO_GET_ISSUER_CERT_LOCALLY':
      return 'x509: certificate signed by unknown authority';
    default:
      return e instanceof Error ? e.message : String(err);
  }
}

/** Go's http.Client error for a request that got no answer: `<Method> "<url>": <cause>`. */
export function goClientError(method: string, url: string, cause: string): string {
  return `${method[0]}${method.slice(1).toLowerCase()} ${JSON.stringify(url)}: ${cause}`;
}

/** Go's http.Client text when its Timeout passes before the answer's headers. */
export const GO_CLIENT_TIMEOUT = 'context deadline exceeded (Client.Timeout exceeded while awaiting headers)';
