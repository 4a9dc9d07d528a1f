import { Body, Controller, Get, HttpCode, Param, Post, Query } from '@nestjs/common';
import { ApiBearerAuth, ApiOkResponse, ApiTags } from '@nestjs/swagger';
import { RequireScope } from '../auth/auth.decorators.js';
import { ApiProblems } from '../http/api-problems.decorator.js';
import {
  JobDetailDto,
  JobIdParam,
  JobPageDto,
  KindParam,
  KindPauseDto,
  ListJobsQuery,
  QueueStatsDto,
  RetriedJobsDto,
  RetryJobsBody,
} from './ops.dto.js';
import { QueueOpsService } from './queue-ops.service.js';

// Dates in the service's answers serialise to the ISO strings the DTOs document.
@ApiTags('ops')
@ApiBearerAuth()
@ApiProblems(400, 401, 403, 404, 409)
@RequireScope('ops')
@Controller('v1/ops')
export class OpsController {
  constructor(private readonly ops: QueueOpsService) {}

  @Get('queue')
  @ApiOkResponse({ type: QueueStatsDto })
  queue() {
    return this.ops.stats();
  }

  @Get('jobs')
  @ApiOkResponse({ type: JobPageDto })
  jobs(@Query() query: ListJobsQuery) {
    return this.ops.list({ ...query, limit: query.limit ?? 50 });
  }

  @Get('jobs/:id')
  @ApiOkResponse({ type: JobDetailDto })
  job(@Param() params: JobIdParam) {
    return this.ops.get(params.id);
  }

  @Post('jobs/retry')
  @HttpCode(200)
  @ApiOkResponse({ type: RetriedJobsDto, description: 'every dead job of the kind back to queued, attempts reset' })
  retryMany(@Body() body: RetryJobsBody) {
    return this.ops.retryDead(body.kind);
  }

  @Post('kinds/:kind/pause')
  @HttpCode(200)
  @ApiOkResponse({ type: KindPauseDto, description: 'no worker claims the kind from its next claim on; running jobs finish' })
  pause(@Param() params: KindParam) {
    return this.ops.pause(params.kind);
  }

  @Post('kinds/:kind/resume')
  @HttpCode(200)
  @ApiOkResponse({ type: KindPauseDto, description: 'workers claim the kind again' })
  resume(@Param() params: KindParam) {
    return this.ops.resume(params.kind);
  }

  @Post('jobs/:id/retry')
  @HttpCode(200)
  @ApiOkResponse({ type: JobDetailDto, description: 'a dead or cancelled job back to queued, attempts reset' })
  retry(@Param() params: JobIdParam) {
    return this.ops.retry(params.id);
  }

  @Post('jobs/:id/cancel')
  @HttpCode(200)
  @ApiOkResponse({ type: JobDetailDto, description: 'a queued job cancelled' })
  cancel(@Param() params: JobIdParam) {
    return this.ops.cancel(params.id);
  }
}
