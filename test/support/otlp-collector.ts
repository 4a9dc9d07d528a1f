import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';

// A fake OpenTelemetry collector: keeps what OTLP/HTTP exporters POST to /v1/traces (JSON).

export interface OtlpSpan {
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  name: string;
  attributes: { key: string; value: Record<string, unknown> }[];
  links?: { traceId: string; spanId: string }[];
}

interface ExportRequest {
  resourceSpans: { resource: { attributes: { key: string; value: { stringValue?: string } }[] }; scopeSpans: { spans: OtlpSpan[] }[] }[];
}

export interface OtlpCollector {
  /** The base URL to set as OTEL_EXPORTER_OTLP_ENDPOINT. */
  endpoint: string;
  /** Content types of the requests received. */
  contentTypes: (string | undefined)[];
  /** Every span received, with its process's service.name. */
  spans(): (OtlpSpan & { service: string | undefined })[];
  /** Everything received, as text (to look for what must never be exported). */
  text(): string;
  close(): Promise<void>;
}

export async function startOtlpCollector(): Promise<OtlpCollector> {
  const received: ExportRequest[] = [];
  const contentTypes: (string | undefined)[] = [];
  const server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      if (request.method === 'POST' && request.url === '/v1/traces') {
        contentTypes.push(request.headers['content-type']);
        received.push(JSON.parse(Buffer.concat(chunks).toString('utf8')) as ExportRequest);
      }
      response.writeHead(200, { 'content-type': 'application/json' }).end('{}');
    });
  });
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
  return {
    endpoint: `http://127.0.0.1:${(server.address() as AddressInfo).port}/`,
    contentTypes,
    spans: () =>
      received.flatMap((r) =>
        r.resourceSpans.flatMap((rs) => {
          const service = rs.resource.attributes.find((a) => a.key === 'service.name')?.value.stringValue;
          return rs.scopeSpans.flatMap((ss) => ss.spans.map((span) => ({ ...span, service })));
        }),
      ),
    text: () => JSON.stringify(received),
    close: () => new Promise<void>((done) => server.close(() => done())),
  };
}
