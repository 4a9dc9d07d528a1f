import { context, ROOT_CONTEXT, SpanKind, SpanStatusCode, trace } from '@opentelemetry/api';
import {
  ATTR_HTTP_REQUEST_METHOD,
  ATTR_HTTP_RESPONSE_STATUS_CODE,
  ATTR_HTTP_ROUTE,
  ATTR_URL_PATH,
} from '@opentelemetry/semantic-conventions';
import type { NextFunction, Request, Response } from 'express';
import { parseTraceparent, tracer, tracingEnabled } from '@nudge/queue';

/**
 * An `HTTP <method> <route>` server span per request, a child of the caller's
 * W3C `traceparent` when it sends one; the rest of the request (the enqueue
 * of its jobs) runs in its context. Mounted after the body parser: a
 * parser's callbacks run outside the context a middleware before it set, so
 * a request the parser refuses (413) has no span. Tracing off: `next()`.
 */
export function requestTracing() {
  return (request: Request, response: Response, next: NextFunction) => {
    if (!tracingEnabled()) return next();
    const header = request.headers.traceparent;
    const remote = parseTraceparent(typeof header === 'string' ? header : undefined);
    const parent = remote ? trace.setSpanContext(ROOT_CONTEXT, remote) : ROOT_CONTEXT;
    const span = tracer.startSpan(
      `HTTP ${request.method}`,
      {
        kind: SpanKind.SERVER,
        // The path without its query: cursors and ids in a query are never needed to follow a request.
        attributes: { [ATTR_HTTP_REQUEST_METHOD]: request.method, [ATTR_URL_PATH]: request.originalUrl.split('?')[0] },
      },
      parent,
    );
    let ended = false;
    const end = () => {
      if (ended) return;
      ended = true;
      // The route template (`/v1/reminders/:id`), known once the router matched it.
      const route = (request.route as { path?: unknown } | undefined)?.path;
      if (typeof route === 'string') {
        span.updateName(`HTTP ${request.method} ${route}`);
        span.setAttribute(ATTR_HTTP_ROUTE, route);
      }
      span.setAttribute(ATTR_HTTP_RESPONSE_STATUS_CODE, response.statusCode);
      if (response.statusCode >= 500) span.setStatus({ code: SpanStatusCode.ERROR });
      span.end();
    };
    response.on('finish', end);
    response.on('close', end);
    context.with(trace.setSpan(parent, span), next);
  };
}
