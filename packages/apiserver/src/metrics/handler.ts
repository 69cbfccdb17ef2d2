/** GET /metrics: the Prometheus text exposition (kube's legacyregistry handler). */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { ApiserverMetrics } from './apiserver.js';
import { PROMETHEUS_CONTENT_TYPE } from './registry.js';
import { sendBody } from '../http.js';

export function metricsHandler(metrics: ApiserverMetrics): (req: IncomingMessage, res: ServerResponse) => Promise<void> {
  return async (req, res) => {
    const body = await metrics.scrape();
    res.statusCode = 200;
    res.setHeader('Content-Type', PROMETHEUS_CONTENT_TYPE);
    sendBody(req, res, body);
  };
}
