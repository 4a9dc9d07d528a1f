import type { NextFunction, Request, Response } from 'express';
import { Counter, Histogram, type Registry } from 'prom-client';

/** The label of a request that matched no route (404s, scanners): one series, whatever the URL. */
export const UNMATCHED_ROUTE = 'unmatched';

/**
 * The route pattern that served the request (`/v1/ops/jobs/:id`), never the
 * raw URL: ids in labels would make a series per job. Express sets
 * `request.route` when a route's handler runs, guards and filters included,
 * so a 401 from the guard is labelled with its route too.
 */
export function routeLabel(request: Request): string {
  const path: unknown = request.route?.path;
  return typeof path === 'string' ? `${request.baseUrl ?? ''}${path}` : UNMATCHED_ROUTE;
}

/**
 * HTTP request counts and latency by method, route and status, for /metrics.
 * A middleware (not an interceptor) so that requests refused before a handler
 * runs — by the auth guard, the body parser or the 404 handler — are counted.
 */
export function httpMetrics(registry: Registry) {
  const registers = [registry];
  const labelNames = ['method', 'route', 'status'] as const;
  const requests = new Counter({
    name: 'http_requests_total',
    help: 'HTTP requests answered, by route pattern and status',
    labelNames,
    registers,
  });
  const duration = new Histogram({
    name: 'http_request_duration_seconds',
    help: 'Time to answer an HTTP request, by route pattern and status',
    labelNames,
    buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
    registers,
  });
  return (request: Request, response: Response, next: NextFunction) => {
    const started = process.hrtime.bigint();
    response.on('finish', () => {
      const labels = { method: request.method, route: routeLabel(request), status: String(response.statusCode) };
      requests.inc(labels);
      duration.observe(labels, Number(process.hrtime.bigint() - started) / 1e9);
    });
    next();
  };
}
