import { Body, Controller, Get, Param, Put, Res } from '@nestjs/common';
import { ApiBearerAuth, ApiCreatedResponse, ApiOkResponse, ApiTags } from '@nestjs/swagger';
import type { Response } from 'express';
import { AppsService } from '@nudge/push';
import { RequireScope } from '../auth/auth.decorators.js';
import { ApiProblems } from '../http/api-problems.decorator.js';
import { AppDto, AppIdParam, AppListDto, PutAppDto } from './apps.dto.js';

// Several apps with their own push credentials (docs/apps.md).
@ApiTags('ops')
@ApiBearerAuth()
@ApiProblems(400, 401, 403, 404, 503)
@RequireScope('ops')
@Controller('v1/ops/apps')
export class AppsController {
  constructor(private readonly apps: AppsService) {}

  @Put(':appId')
  @ApiOkResponse({ type: AppDto, description: 'the app, its credentials replaced (secrets masked)' })
  @ApiCreatedResponse({ type: AppDto, description: 'the app, created (secrets masked)' })
  async put(@Param() params: AppIdParam, @Body() body: PutAppDto, @Res({ passthrough: true }) res: Response) {
    const { app, created } = await this.apps.put(params.appId, body);
    res.status(created ? 201 : 200);
    return app;
  }

  @Get()
  @ApiOkResponse({ type: AppListDto })
  list() {
    return this.apps.list();
  }

  @Get(':appId')
  @ApiOkResponse({ type: AppDto, description: 'secrets masked' })
  get(@Param() params: AppIdParam) {
    return this.apps.get(params.appId);
  }
}
