import { randomUUID } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { answeringAfter } from './latency.js';

/** What the fake answers for one token's next message: a ticket, and later a receipt for it. */
export interface FakeExpoScript {
  ticket?: { status: 'error'; error: string; message?: string };
  receipt?: { status: 'error'; error: string; message?: string };
}

/** A request-level answer: the whole POST fails (429, 5xx, 401…). */
export interface FakeExpoFailure {
  status: number;
  headers?: Record<string, string>;
  errors?: { code: string; message: string }[];
}

export interface FakeExpoRequest {
  path: string;
  authorization: string | undefined;
  body: unknown;
  status: number;
}

export interface FakeExpo {
  baseUrl: string;
  requests: FakeExpoRequest[];
  /** Every message accepted (a ticket issued), with when it arrived (Date.now()). */
  arrivals: { token: string; at: number }[];
  /** Send requests refused with 429 by `limitPerSecond`. */
  throttled(): number;
  /** Every message sent to a token, in order. */
  messagesTo(token: string): Record<string, unknown>[];
  /** The ticket ids issued to a token. */
  ticketsOf(token: string): string[];
  script(token: string, ...scripts: FakeExpoScript[]): void;
  failNext(...failures: FakeExpoFailure[]): void;
  stop(): Promise<void>;
}

/**
 * A local stand-in for Expo's push API (exp.host): `POST /--/api/v2/push/send`
 * answers a ticket per message (at most 100 a request, as Expo enforces) and
 * `POST /--/api/v2/push/getReceipts` the receipts of tickets it issued.
 */
export async function startFakeExpo(
  options: {
    accessToken?: string;
    latencyMs?: number;
    /** Answer 429 TOO_MANY_REQUESTS to a send that would take the messages of the last second past this. */
    limitPerSecond?: number;
  } = {},
): Promise<FakeExpo> {
  const requests: FakeExpoRequest[] = [];
  const arrivals: { token: string; at: number }[] = [];
  const lastSecond: number[] = [];
  let throttled = 0;
  const messages: { token: string; message: Record<string, unknown> }[] = [];
  const scripts = new Map<string, FakeExpoScript[]>();
  const failures: FakeExpoFailure[] = [];
  const tickets = new Map<string, { token: string; receipt: FakeExpoScript['receipt'] }>();

  const server = http.createServer(
    answeringAfter(options.latencyMs, (req: http.IncomingMessage, res: http.ServerResponse) => {
      let text = '';
      req.setEncoding('utf8');
      req.on('data', (chunk: string) => (text += chunk));
      req.on('end', () => {
        const reply = (status: number, body: unknown, headers: Record<string, string> = {}) => {
          requests.push({ path: req.url ?? '', authorization: req.headers.authorization, body: safeJson(text), status });
          res.writeHead(status, { 'content-type': 'application/json', ...headers });
          res.end(JSON.stringify(body));
        };
        if (options.accessToken && req.headers.authorization !== `Bearer ${options.accessToken}`) {
          return reply(401, { errors: [{ code: 'UNAUTHORIZED', message: 'The bearer token is invalid' }] });
        }
        const failure = failures.shift();
        if (failure)
          return reply(
            failure.status,
            { errors: failure.errors ?? [{ code: 'ERROR', message: `failure ${failure.status}` }] },
            failure.headers,
          );
        const body = safeJson(text);
        if (req.url === '/--/api/v2/push/send' && Array.isArray(body)) {
          if (body.length > 100) return reply(400, { errors: [{ code: 'PUSH_TOO_MANY_NOTIFICATIONS', message: 'max 100' }] });
          const at = Date.now();
          if (options.limitPerSecond !== undefined) {
            while (lastSecond.length > 0 && lastSecond[0]! <= at - 1000) lastSecond.shift();
            if (lastSecond.length + body.length > options.limitPerSecond) {
              throttled++;
              return reply(429, { errors: [{ code: 'TOO_MANY_REQUESTS', message: 'too many requests' }] });
            }
            for (let i = 0; i < body.length; i++) lastSecond.push(at);
          }
          for (const message of body as { to?: unknown }[]) arrivals.push({ token: String(message.to), at });
          const data = (body as Record<string, unknown>[]).map((message) => {
            const token = String(message.to);
            messages.push({ token, message });
            const script = scripts.get(token)?.shift() ?? {};
            if (script.ticket) {
              return {
                status: 'error',
                message: script.ticket.message ?? script.ticket.error,
                details: { error: script.ticket.error, expoPushToken: token },
              };
            }
            const id = randomUUID();
            tickets.set(id, { token, receipt: script.receipt });
            return { status: 'ok', id };
          });
          return reply(200, { data });
        }
        if (req.url === '/--/api/v2/push/getReceipts' && body && Array.isArray((body as { ids?: unknown }).ids)) {
          const data: Record<string, unknown> = {};
          for (const id of (body as { ids: string[] }).ids) {
            const ticket = tickets.get(id);
            if (!ticket) continue;
            data[id] = ticket.receipt
              ? { status: 'error', message: ticket.receipt.message ?? ticket.receipt.error, details: { error: ticket.receipt.error } }
              : { status: 'ok' };
          }
          return reply(200, { data });
        }
        reply(404, { errors: [{ code: 'NOT_FOUND', message: 'no such endpoint' }] });
      });
    }),
  );
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;

  return {
    baseUrl,
    requests,
    arrivals,
    throttled: () => throttled,
    messagesTo: (token) => messages.filter((m) => m.token === token).map((m) => m.message),
    ticketsOf: (token) => [...tickets].filter(([, t]) => t.token === token).map(([id]) => id),
    script(token, ...more) {
      scripts.set(token, [...(scripts.get(token) ?? []), ...more]);
    },
    failNext(...more) {
      failures.push(...more);
    },
    stop: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

function safeJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}
