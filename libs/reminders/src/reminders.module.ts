import { Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { UsersModule } from '@nudge/users';
import { ReminderEntity } from './reminder.entity.js';
import { OccurrenceScheduler } from './occurrence-scheduler.js';
import { OccurrencesService } from './occurrences.service.js';
import { ReminderDeliveriesService } from './reminder-deliveries.service.js';
import { RemindersService } from './reminders.service.js';

/** Reminder schedules for the API; the worker adds the send_reminder handler and the sweep (apps/worker). */
@Module({
  imports: [TypeOrmModule.forFeature([ReminderEntity]), UsersModule],
  providers: [RemindersService, ReminderDeliveriesService, OccurrencesService, OccurrenceScheduler],
  exports: [RemindersService, ReminderDeliveriesService, OccurrencesService, OccurrenceScheduler],
})
export class RemindersModule {}
