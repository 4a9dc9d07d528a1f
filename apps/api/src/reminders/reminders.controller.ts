import { Body, Controller, Delete, Get, HttpCode, Param, Patch, Post, Query } from '@nestjs/common';
import { ApiBearerAuth, ApiCreatedResponse, ApiNoContentResponse, ApiOkResponse, ApiTags } from '@nestjs/swagger';
import type { EntityManager } from 'typeorm';
import { OccurrencesService, ReminderDeliveriesService, RemindersService } from '@nudge/reminders';
import { Auth } from '../auth/auth.decorators.js';
import type { TokenClaims } from '../auth/jwt.js';
import { ApiProblems } from '../http/api-problems.decorator.js';
import { Idempotent, RequestTransaction } from '../http/idempotency.interceptor.js';
import {
  CreateReminderDto,
  DeliveryListDto,
  ListRemindersQuery,
  OccurrenceDto,
  OccurrenceListDto,
  OccurrencesQuery,
  ReminderDto,
  ReminderPageDto,
  SnoozeDto,
  UpdateReminderDto,
} from './reminder.dto.js';

@ApiTags('reminders')
@ApiBearerAuth()
@ApiProblems(400, 401, 404, 409)
@Controller('v1/reminders')
export class RemindersController {
  constructor(
    private readonly reminders: RemindersService,
    private readonly occurrencesOf: OccurrencesService,
    private readonly deliveriesOf: ReminderDeliveriesService,
  ) {}

  @Post()
  @Idempotent()
  @ApiCreatedResponse({ type: ReminderDto, description: 'the reminder, with its next occurrence' })
  async create(@Auth() auth: TokenClaims, @Body() body: CreateReminderDto, @RequestTransaction() tx?: EntityManager): Promise<ReminderDto> {
    return this.reminders.create(auth.userId, body, tx);
  }

  @Get()
  @ApiOkResponse({ type: ReminderPageDto })
  async list(@Auth() auth: TokenClaims, @Query() query: ListRemindersQuery): Promise<ReminderPageDto> {
    return this.reminders.list(auth.userId, query.limit ?? 50, query.cursor);
  }

  @Get(':id')
  @ApiOkResponse({ type: ReminderDto })
  async get(@Auth() auth: TokenClaims, @Param('id') id: string): Promise<ReminderDto> {
    return this.reminders.get(auth.userId, id);
  }

  @Patch(':id')
  @ApiOkResponse({ type: ReminderDto, description: 'the reminder, version bumped, with its new next occurrence' })
  async update(@Auth() auth: TokenClaims, @Param('id') id: string, @Body() body: UpdateReminderDto): Promise<ReminderDto> {
    return this.reminders.update(auth.userId, id, body);
  }

  @Delete(':id')
  @HttpCode(204)
  @ApiNoContentResponse({ description: 'the reminder removed and its pending job cancelled' })
  async delete(@Auth() auth: TokenClaims, @Param('id') id: string): Promise<void> {
    await this.reminders.delete(auth.userId, id);
  }

  @Get(':id/occurrences')
  @ApiOkResponse({ type: OccurrenceListDto, description: 'past occurrences with what happened, future ones as planned' })
  async occurrences(@Auth() auth: TokenClaims, @Param('id') id: string, @Query() query: OccurrencesQuery): Promise<OccurrenceListDto> {
    return {
      occurrences: await this.occurrencesOf.list(auth.userId, id, {
        count: query.count ?? 10,
        after: query.after ? new Date(query.after) : undefined,
        before: query.before ? new Date(query.before) : undefined,
      }),
    };
  }

  @Post(':id/occurrences/:localDate/done')
  @HttpCode(200)
  @ApiOkResponse({ type: OccurrenceDto, description: 'marked done; before delivery it is not delivered' })
  async done(@Auth() auth: TokenClaims, @Param('id') id: string, @Param('localDate') localDate: string): Promise<OccurrenceDto> {
    return this.occurrencesOf.done(auth.userId, id, localDate);
  }

  @Post(':id/occurrences/:localDate/skip')
  @HttpCode(200)
  @ApiOkResponse({ type: OccurrenceDto, description: 'skipped (before delivery only; after: 409)' })
  async skip(@Auth() auth: TokenClaims, @Param('id') id: string, @Param('localDate') localDate: string): Promise<OccurrenceDto> {
    return this.occurrencesOf.skip(auth.userId, id, localDate);
  }

  @Post(':id/occurrences/:localDate/snooze')
  @HttpCode(200)
  @ApiOkResponse({
    type: OccurrenceDto,
    description:
      'delivered again once at now + minutes (quiet hours apply); after delivery only, and only while the reminder is enabled and notifications are on (else 409)',
  })
  async snooze(
    @Auth() auth: TokenClaims,
    @Param('id') id: string,
    @Param('localDate') localDate: string,
    @Body() body: SnoozeDto,
  ): Promise<OccurrenceDto> {
    return this.occurrencesOf.snooze(auth.userId, id, localDate, body.minutes);
  }

  @Get(':id/deliveries')
  @ApiOkResponse({ type: DeliveryListDto })
  async deliveries(@Auth() auth: TokenClaims, @Param('id') id: string): Promise<DeliveryListDto> {
    return { deliveries: await this.deliveriesOf.list(auth.userId, id) };
  }
}
