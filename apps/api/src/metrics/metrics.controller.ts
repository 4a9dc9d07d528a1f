import { Controller, Get, Header } from '@nestjs/common';
import { ApiExcludeController } from '@nestjs/swagger';
import { Registry } from 'prom-client';
import { Public } from '../auth/auth.decorators.js';

/** Prometheus text format. Queue gauges are read from the database at scrape time (libs/queue metrics). */
@ApiExcludeController()
@Public()
@Controller('metrics')
export class MetricsController {
  constructor(private readonly registry: Registry) {}

  @Get()
  @Header('Cache-Control', 'no-store')
  async metrics(): Promise<string> {
    return this.registry.metrics();
  }
}
