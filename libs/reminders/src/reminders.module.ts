import { Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { UsersModule } from '@nudge/users';
import { ReminderEntity } from './reminder.entity.js';
import { OccurrenceScheduler } from './occurrence-scheduler.js';
import { OccurrencesService } from './occurrences.service.js';
import { RemindersService } from './reminders.service.js';

/** Reminder schedules for the API; the worker adds the send_reminder handler and the sweep (apps/worker). */
@Module({
  imports: [TypeOrmModule.forFeature([ReminderEntity]), UsersModule],
  providers: [RemindersService, OccurrencesService, OccurrenceScheduler],
  exports: [RemindersService, OccurrencesService, OccurrenceScheduler],
})
export class RemindersModule {}
