import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { Type } from 'class-transformer';
import { IsInt, IsOptional, IsString, Length, Max, MaxLength, Min } from 'class-validator';
import { PUSH_PLATFORMS, PUSH_PROVIDER_NAMES } from '@nudge/push';
import { DeviceDto } from '../devices/device.dto.js';
import { ProfileDto } from '../me/profile.dto.js';
import { ReminderDto } from '../reminders/reminder.dto.js';

export class UserIdParam {
  @ApiProperty({ example: 'alice', description: "the user's id (an opaque string of at most 128 characters)" })
  @IsString()
  @Length(1, 128)
  userId: string;
}

export class TimelineQuery {
  @ApiPropertyOptional({ default: 50, minimum: 1, maximum: 200 })
  @IsOptional()
  @Type(() => Number)
  @IsInt()
  @Min(1)
  @Max(200)
  limit?: number;

  @ApiPropertyOptional({ description: 'nextCursor of the previous page' })
  @IsOptional()
  @IsString()
  @MaxLength(300)
  cursor?: string;
}

/** A device as its user sees it (DeviceDto), with what an operator needs besides. */
export class OpsDeviceDto extends DeviceDto {
  @ApiProperty({ format: 'uuid' }) id: string;
  @ApiProperty({ nullable: true, type: String, description: "why it was deactivated, e.g. the provider's invalid-token answer" })
  declare deactivatedReason: string | null;
  @ApiProperty({ nullable: true, type: String }) deactivatedAt: string | null;
  @ApiProperty() createdAt: string;
}

export class TimelineJobDto {
  @ApiProperty() id: string;
  @ApiProperty({ enum: ['regular', 'snooze', 'notification'] }) purpose: string;
  @ApiProperty({ nullable: true, type: String, description: 'the job status; null once the job was pruned' }) status: string | null;
  @ApiProperty({ nullable: true, type: Number }) attempts: number | null;
  @ApiProperty({ nullable: true, type: String }) lastError: string | null;
  @ApiProperty({ nullable: true, type: String }) runAt: string | null;
}

export class TimelineDeliveryDto {
  @ApiProperty() jobId: string;
  @ApiProperty({ nullable: true, type: String, description: 'null: no device (skipped no_device) or a device since removed' })
  installationId: string | null;
  @ApiProperty({ nullable: true, type: String, example: '…a1b2', description: 'masked' }) pushToken: string | null;
  @ApiProperty({ description: 'the device was deleted since (token cleanup, DELETE)' }) deviceRemoved: boolean;
  @ApiProperty({ nullable: true, type: String, enum: PUSH_PLATFORMS }) platform: string | null;
  @ApiProperty({ nullable: true, type: String, enum: PUSH_PROVIDER_NAMES }) provider: string | null;
  @ApiProperty({ enum: ['sending', 'sent', 'failed', 'invalid_token', 'skipped'] }) status: string;
  @ApiProperty({
    nullable: true,
    type: String,
    description: "the provider's answer, or why nothing was sent (disabled, category_disabled, rate_limited, stale, no_device…)",
  })
  reason: string | null;
  @ApiProperty() attempts: number;
  @ApiProperty({ description: 'when the row last changed' }) at: string;
}

export class TimelineEntryDto {
  @ApiProperty({ enum: ['occurrence', 'notification'] }) kind: string;
  @ApiProperty({ description: "an occurrence's nominal instant; a notification's first send" }) at: string;
  @ApiProperty({ nullable: true, type: String }) title: string | null;
  @ApiProperty({ nullable: true, type: String, format: 'uuid' }) reminderId: string | null;
  @ApiProperty({ nullable: true, type: String, example: '2027-01-04' }) localDate: string | null;
  @ApiProperty({
    description: 'an occurrence: scheduled, sent, done, snoozed, skipped; a notification: sent, skipped, failed, sending',
  })
  status: string;
  @ApiProperty({
    nullable: true,
    type: String,
    description: 'why: stale, quiet_hours, disabled, category_disabled, rate_limited, no_device, rescheduled, a provider answer…',
  })
  reason: string | null;
  @ApiProperty({ nullable: true, type: String, description: 'the earliest allowed delivery (jitter, end of quiet hours)' })
  earliestAt: string | null;
  @ApiProperty({ nullable: true, type: String }) sentAt: string | null;
  @ApiProperty({ nullable: true, type: String, description: 'when the user marked it done, skipped or snoozed' }) actedAt: string | null;
  @ApiProperty({ nullable: true, type: String }) snoozedUntil: string | null;
  @ApiProperty({ type: [TimelineJobDto], description: 'the jobs that carried it' }) jobs: TimelineJobDto[];
  @ApiProperty({ type: [TimelineDeliveryDto], description: 'per device and job' }) deliveries: TimelineDeliveryDto[];
}

export class TimelinePageDto {
  @ApiProperty({ type: [TimelineEntryDto], description: 'newest first, from now back' }) items: TimelineEntryDto[];
  @ApiProperty({ nullable: true, type: String }) nextCursor: string | null;
}

export class OpsUserDto {
  @ApiProperty() generatedAt: string;
  @ApiProperty({ type: ProfileDto }) profile: ProfileDto;
  @ApiProperty({ type: [OpsDeviceDto] }) devices: OpsDeviceDto[];
  @ApiProperty({ type: [ReminderDto], description: 'the first 100, with their next occurrence' }) reminders: ReminderDto[];
  @ApiProperty({ description: 'the user has more than 100 reminders' }) moreReminders: boolean;
  @ApiProperty({ type: TimelinePageDto, description: 'the first page of the timeline' }) timeline: TimelinePageDto;
}

export class ProviderCountsDto {
  @ApiProperty({ enum: PUSH_PROVIDER_NAMES }) provider: string;
  @ApiProperty() sent: number;
  @ApiProperty() failed: number;
  @ApiProperty() invalidToken: number;
}

export class ProviderHealthDto extends ProviderCountsDto {
  @ApiProperty({ description: 'failed / all sends, 0..1' }) failureRatio: number;
}

export class ProviderMinuteDto extends ProviderCountsDto {
  @ApiProperty({ description: 'start of the minute' }) minute: string;
}

export class ProviderAnswerDto {
  @ApiProperty() provider: string;
  @ApiProperty({ enum: ['failed', 'invalid_token'] }) status: string;
  @ApiProperty({ example: 'simulated: 500 InternalServerError' }) answer: string;
  @ApiProperty() count: number;
}

export class DeliveryHealthDto {
  @ApiProperty() generatedAt: string;
  @ApiProperty() from: string;
  @ApiProperty() to: string;
  @ApiProperty({ type: [ProviderHealthDto], description: 'the last hour, per provider' }) providers: ProviderHealthDto[];
  @ApiProperty({
    type: [ProviderMinuteDto],
    description: 'sends by the minute first attempted, with their outcome so far; minutes without sends are absent',
  })
  lastHourByMinute: ProviderMinuteDto[];
  @ApiProperty({ type: [ProviderAnswerDto], description: 'the failure answers seen most in the last hour' })
  topAnswers: ProviderAnswerDto[];
}

export class DueMinuteDto {
  @ApiProperty({ description: 'start of the minute' }) minute: string;
  @ApiProperty({ example: 'send_reminder' }) kind: string;
  @ApiProperty({ description: 'queued jobs that come due in that minute' }) due: number;
}

export class KindDueDto {
  @ApiProperty() kind: string;
  @ApiProperty() due: number;
}

export class UpcomingDto {
  @ApiProperty() generatedAt: string;
  @ApiProperty() from: string;
  @ApiProperty() to: string;
  @ApiProperty({ type: [KindDueDto], description: 'queued jobs due in the next 24 hours, per kind' }) kinds: KindDueDto[];
  @ApiProperty({ type: [DueMinuteDto], description: 'the five busiest minutes' }) peaks: DueMinuteDto[];
  @ApiProperty({ type: [DueMinuteDto], description: 'per minute and kind, oldest first; minutes with nothing are absent' })
  byMinute: DueMinuteDto[];
}
