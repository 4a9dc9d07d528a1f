// OpenTelemetry at process start (docs/tracing.md). With an OTLP endpoint
// configured, a tracer provider batches spans to it over OTLP/HTTP; without
// one nothing is registered, and the spans the code asks for are the API's
// no-op ones (the call sites check before building anything).
import { context, propagation, trace } from '@opentelemetry/api';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { resourceFromAttributes } from '@opentelemetry/resources';
import { BatchSpanProcessor, type SpanProcessor } from '@opentelemetry/sdk-trace-base';
import { NodeTracerProvider } from '@opentelemetry/sdk-trace-node';
import { ATTR_SERVICE_NAME } from '@opentelemetry/semantic-conventions';
import type { Logger } from 'pino';
import type { Config } from './config.schema.js';

export interface Tracing {
  /** Exports the spans still buffered, then unregisters the provider. */
  shutdown(): Promise<void>;
}

export interface TracingOptions {
  /** OTEL_SERVICE_NAME's default for this process: `nudge-api`, `nudge-worker`, `nudge` (both in one). */
  serviceName: string;
  /** Says at boot where spans go (the collector's origin: never a path, query or credentials). */
  logger?: Pick<Logger, 'info'>;
  /** Tests: where spans go instead of (or beside) the OTLP exporter; tracing starts even without an endpoint. */
  spanProcessors?: SpanProcessor[];
}

/** Registers a tracer provider when OTEL_EXPORTER_OTLP_ENDPOINT is set (or a test passes processors); undefined otherwise. */
export function startTracing(config: Pick<Config, 'tracing'>, options: TracingOptions): Tracing | undefined {
  const { otlpEndpoint, serviceName } = config.tracing;
  const processors = [...(options.spanProcessors ?? [])];
  // The base endpoint, as the OpenTelemetry spec reads OTEL_EXPORTER_OTLP_ENDPOINT: traces go to its /v1/traces.
  // OTEL_EXPORTER_OTLP_HEADERS (an API key of a hosted collector) is read by the exporter itself.
  if (otlpEndpoint)
    processors.push(new BatchSpanProcessor(new OTLPTraceExporter({ url: `${otlpEndpoint.replace(/\/+$/, '')}/v1/traces` })));
  if (processors.length === 0) return undefined;
  const service = serviceName ?? options.serviceName;
  const provider = new NodeTracerProvider({
    resource: resourceFromAttributes({ [ATTR_SERVICE_NAME]: service }),
    spanProcessors: processors,
  });
  // The AsyncLocalStorage context manager (a request's span follows its awaits) and the W3C propagator.
  provider.register();
  if (otlpEndpoint)
    options.logger?.info({ collector: new URL(otlpEndpoint).origin, service }, 'tracing: spans are exported over OTLP/HTTP');
  return {
    async shutdown() {
      await provider.shutdown();
      trace.disable();
      context.disable();
      propagation.disable();
    },
  };
}
