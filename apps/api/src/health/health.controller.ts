import { Controller, Get, HttpCode, Inject, Res } from '@nestjs/common';
import { ApiOkResponse, ApiServiceUnavailableResponse, ApiTags } from '@nestjs/swagger';
import type { Response } from 'express';
import pg from 'pg';
import { PG_POOL, pendingMigrations } from '@nudge/database';
import { Public } from '../auth/auth.decorators.js';

@ApiTags('health')
@Controller('health')
@Public()
export class HealthController {
  constructor(@Inject(PG_POOL) private readonly pool: pg.Pool) {}

  /** The process is up; orchestrators restart it when this fails. */
  @Get('live')
  @ApiOkResponse({ schema: { type: 'object', properties: { status: { type: 'string', example: 'ok' } } } })
  @HttpCode(200)
  live() {
    return { status: 'ok' };
  }

  /** Ready to serve: the database answers and every migration this build knows is applied. */
  @Get('ready')
  @ApiOkResponse({
    schema: { type: 'object', properties: { status: { type: 'string', example: 'ok' }, database: { type: 'string', example: 'up' } } },
  })
  @ApiServiceUnavailableResponse({
    description: 'the database is down or migrations are pending',
    schema: {
      type: 'object',
      properties: {
        status: { type: 'string', example: 'unavailable' },
        database: { type: 'string', enum: ['up', 'down'] },
        pendingMigrations: { type: 'array', items: { type: 'string' } },
      },
    },
  })
  async ready(@Res({ passthrough: true }) response: Response) {
    try {
      const pending = await pendingMigrations((sql) => this.pool.query(sql));
      if (pending.length > 0) {
        response.status(503);
        return { status: 'unavailable', database: 'up', pendingMigrations: pending };
      }
      return { status: 'ok', database: 'up' };
    } catch {
      response.status(503);
      return { status: 'unavailable', database: 'down' };
    }
  }
}
