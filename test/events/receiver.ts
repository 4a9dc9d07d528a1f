import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface ReceivedPost {
  headers: IncomingHttpHeaders;
  rawBody: string;
}

/**
 * A webhook receiver on a random local port: records every POST and answers
 * with the next status of `answers` (then `otherwise`), after `delayMs`.
 */
export class WebhookReceiver {
  readonly posts: ReceivedPost[] = [];
  answers: number[] = [];
  otherwise = 200;
  delayMs = 0;
  private server?: Server;
  url = '';

  async start(): Promise<this> {
    this.server = createServer((request, response) => {
      let body = '';
      request.on('data', (chunk) => (body += String(chunk)));
      request.on('end', () => {
        this.posts.push({ headers: request.headers, rawBody: body });
        const status = this.answers.shift() ?? this.otherwise;
        setTimeout(() => response.writeHead(status).end(), this.delayMs);
      });
    });
    await new Promise<void>((resolve) => this.server!.listen(0, '127.0.0.1', resolve));
    this.url = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}/hook`;
    return this;
  }

  /** Event ids received, each once. */
  ids(): Set<string> {
    return new Set(this.posts.map((p) => String(p.headers['nudge-event-id'])));
  }

  async stop(): Promise<void> {
    this.server?.closeAllConnections();
    await new Promise<void>((resolve) => (this.server ? this.server.close(() => resolve()) : resolve()));
  }
}
