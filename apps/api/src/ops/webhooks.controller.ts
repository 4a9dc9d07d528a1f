import { Body, Controller, Delete, Get, HttpCode, Param, Put, Query, Res } from '@nestjs/common';
import { ApiBearerAuth, ApiCreatedResponse, ApiNoContentResponse, ApiOkResponse, ApiTags } from '@nestjs/swagger';
import type { Response } from 'express';
import { WebhooksService } from '@nudge/events';
import { RequireScope } from '../auth/auth.decorators.js';
import { ApiProblems } from '../http/api-problems.decorator.js';
import {
  EventPageDto,
  EventsQuery,
  PutWebhookDto,
  PutWebhookResponseDto,
  WebhookDto,
  WebhookIdParam,
  WebhookListDto,
} from './webhooks.dto.js';

// Events out: webhooks and the pull feed (docs/webhooks.md).
@ApiTags('ops')
@ApiBearerAuth()
@ApiProblems(400, 401, 403, 404)
@RequireScope('ops')
@Controller('v1/ops')
export class WebhooksController {
  constructor(private readonly webhooks: WebhooksService) {}

  @Put('webhooks/:id')
  @ApiOkResponse({ type: PutWebhookResponseDto, description: 'the webhook, replaced' })
  @ApiCreatedResponse({ type: PutWebhookResponseDto, description: 'the webhook, created (with its generated secret when none was given)' })
  async put(@Param() params: WebhookIdParam, @Body() body: PutWebhookDto, @Res({ passthrough: true }) res: Response) {
    const { webhook, created, secret } = await this.webhooks.put(params.id, body);
    res.status(created ? 201 : 200);
    return secret === undefined ? webhook : { ...webhook, secret };
  }

  @Get('webhooks')
  @ApiOkResponse({ type: WebhookListDto })
  async list() {
    return { webhooks: await this.webhooks.list() };
  }

  @Get('webhooks/:id')
  @ApiOkResponse({ type: WebhookDto, description: 'without its secret' })
  get(@Param() params: WebhookIdParam) {
    return this.webhooks.get(params.id);
  }

  @Delete('webhooks/:id')
  @HttpCode(204)
  @ApiNoContentResponse({ description: 'removed; its deliveries still queued end without sending' })
  async delete(@Param() params: WebhookIdParam): Promise<void> {
    await this.webhooks.delete(params.id);
  }

  @Get('events')
  @ApiOkResponse({ type: EventPageDto, description: 'events after the cursor, oldest first' })
  events(@Query() query: EventsQuery) {
    return this.webhooks.feed(query.after, query.limit ?? 100);
  }
}
