import { Module } from '@nestjs/common';
import { WebhookDeliveryHandler } from './webhook-delivery.handler.js';
import { WebhooksService } from './webhooks.service.js';

/** Events out: the webhooks and the feed (API), the delivery and prune jobs (worker). */
@Module({
  providers: [WebhooksService, WebhookDeliveryHandler],
  exports: [WebhooksService, WebhookDeliveryHandler],
})
export class EventsModule {}
