import { Body, Controller, HttpCode, Post } from '@nestjs/common';
import { ApiAcceptedResponse, ApiBearerAuth, ApiTags } from '@nestjs/swagger';
import type { EntityManager } from 'typeorm';
import { NotificationsService } from '@nudge/push';
import { RequireScope } from '../auth/auth.decorators.js';
import { ApiProblems } from '../http/api-problems.decorator.js';
import { Idempotent, RequestTransaction } from '../http/idempotency.interceptor.js';
import { CreateNotificationDto, NotificationAcceptedDto } from './notification.dto.js';

/** Event pushes from the app's own backend (service-to-service, scope ops). */
@ApiTags('notifications')
@ApiBearerAuth()
@ApiProblems(400, 401, 403, 409)
@RequireScope('ops')
@Controller('v1/notifications')
export class NotificationsController {
  constructor(private readonly notifications: NotificationsService) {}

  @Post()
  @HttpCode(202)
  @Idempotent()
  @ApiAcceptedResponse({ type: NotificationAcceptedDto, description: 'queued; the same idempotencyKey again returns the same job' })
  async create(@Body() body: CreateNotificationDto, @RequestTransaction() tx?: EntityManager): Promise<NotificationAcceptedDto> {
    const { jobId } = await this.notifications.send(body, tx);
    return { jobId };
  }
}
