import { Controller, Get, Param, Query } from '@nestjs/common';
import { ApiBearerAuth, ApiOkResponse, ApiTags } from '@nestjs/swagger';
import { RequireScope } from '../auth/auth.decorators.js';
import { ApiProblems } from '../http/api-problems.decorator.js';
import { DeliveryOpsService } from './delivery-ops.service.js';
import { DeliveryHealthDto, OpsUserDto, TimelinePageDto, TimelineQuery, UpcomingDto, UserIdParam } from './user-ops.dto.js';
import { UserOpsService } from './user-ops.service.js';

// "Why didn't Alice get her 8 AM reminder?": one user's view, delivery health and what is coming.
@ApiTags('ops')
@ApiBearerAuth()
@ApiProblems(400, 401, 403, 404)
@RequireScope('ops')
@Controller('v1/ops')
export class UserOpsController {
  constructor(
    private readonly users: UserOpsService,
    private readonly delivery: DeliveryOpsService,
  ) {}

  @Get('users/:userId')
  @ApiOkResponse({ type: OpsUserDto, description: 'profile, devices (tokens masked), reminders and the first page of the timeline' })
  user(@Param() params: UserIdParam) {
    return this.users.overview(params.userId);
  }

  @Get('users/:userId/timeline')
  @ApiOkResponse({ type: TimelinePageDto, description: "the user's occurrences and notifications, newest first, with per-device outcomes" })
  timeline(@Param() params: UserIdParam, @Query() query: TimelineQuery) {
    return this.users.timeline(params.userId, query.cursor, query.limit ?? 50);
  }

  @Get('delivery-health')
  @ApiOkResponse({ type: DeliveryHealthDto, description: 'the last hour of sends per provider and minute, and the answers seen most' })
  health() {
    return this.delivery.health();
  }

  @Get('upcoming')
  @ApiOkResponse({ type: UpcomingDto, description: 'queued jobs coming due per minute over the next 24 hours' })
  upcoming() {
    return this.delivery.upcoming();
  }
}
