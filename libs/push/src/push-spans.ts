// A `push <provider>` span per device a job sends to (docs/tracing.md): a
// child of the job's span, with the provider's answer. Never the push token
// or the message: only which provider, platform, job, device and outcome.
import { type Context, context, type Span, SpanKind, SpanStatusCode, trace } from '@opentelemetry/api';
import { failSpan, tracer } from '@nudge/queue';
import type { PushOutcome, PushPlatform, PushProviderName } from './push-provider.js';

export interface TracedSend {
  request: { jobId: string; traceContext?: Context };
  device: { id: string; platform: PushPlatform };
}

/** Starts the span of one send, when the job's (or the active) context is being traced. */
export function startPushSpan(provider: PushProviderName, send: TracedSend): Span | undefined {
  const parent = send.request.traceContext ?? context.active();
  if (!trace.getSpan(parent)?.isRecording()) return undefined;
  return tracer.startSpan(
    `push ${provider}`,
    {
      kind: SpanKind.CLIENT,
      attributes: {
        'nudge.push.provider': provider,
        'nudge.push.platform': send.device.platform,
        'nudge.job.id': send.request.jobId,
        'nudge.device.id': send.device.id,
      },
    },
    parent,
  );
}

/** Ends a send's span with the provider's answer; a failure to answer (a throw) marks it failed. */
export function endPushSpan(span: Span | undefined, outcome: PushOutcome | undefined, error?: unknown): void {
  if (!span) return;
  if (outcome) {
    span.setAttribute('nudge.push.outcome', outcome.kind);
    if (outcome.kind !== 'sent') span.setStatus({ code: SpanStatusCode.ERROR, message: outcome.reason });
  } else {
    failSpan(span, error);
  }
  span.end();
}
