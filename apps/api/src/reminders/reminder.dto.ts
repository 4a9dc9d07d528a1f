import { ApiProperty, ApiPropertyOptional, OmitType, PartialType } from '@nestjs/swagger';
import { Type } from 'class-transformer';
import { IsBoolean, IsInt, IsISO8601, IsObject, IsOptional, IsString, Matches, Max, MaxLength, Min, ValidateIf } from 'class-validator';
import { CATEGORY_PATTERN, CATEGORY_RULE } from '@nudge/users';
import { INTERRUPTION_LEVELS, type LocalizedText } from '@nudge/push';
import { PushFieldsDto } from '../http/push-fields.dto.js';
import {
  DefaultLocaleProperty,
  IsIanaTimeZone,
  IsLocalDate,
  IsRecurrence,
  LOCAL_TIME_PATTERN,
  localizedTextSchema,
  LocalizedTextProperty,
  Omittable,
} from '../http/validators.js';

export class CreateReminderDto extends PushFieldsDto {
  @LocalizedTextProperty('title', 200, 'Stretch', { en: 'Take your pill', de: 'Tablette nehmen' })
  title: LocalizedText;

  @LocalizedTextProperty('body', 1000, 'Two minutes, standing up', { en: 'With water', de: 'Mit Wasser' })
  body?: LocalizedText | null;

  @DefaultLocaleProperty()
  defaultLocale?: string;

  @ApiProperty({ example: '08:00', description: 'local wall-clock time, HH:mm' })
  @Matches(LOCAL_TIME_PATTERN, { message: 'localTime must be a time HH:mm from 00:00 to 23:59' })
  localTime: string;

  @ApiPropertyOptional({ example: 'Europe/Berlin', description: "IANA zone; omitted: follow the user's zone, also after travel" })
  @IsOptional()
  @IsIanaTimeZone()
  timeZone?: string;

  @ApiPropertyOptional({
    example: 'FREQ=WEEKLY;BYDAY=MO,TU,WE,TH,FR',
    nullable: true,
    description: 'RFC 5545 RRULE without DTSTART; omitted or null: a one-off reminder, once at startDate + localTime',
  })
  @IsOptional()
  @ValidateIf((_o, v) => v !== null)
  @IsRecurrence()
  recurrence?: string | null;

  @ApiPropertyOptional({ example: '2027-01-04', description: 'YYYY-MM-DD; default: today in the zone' })
  @Omittable()
  @IsLocalDate()
  startDate?: string;

  @ApiPropertyOptional({ default: true })
  @Omittable()
  @IsBoolean()
  enabled?: boolean;

  @ApiPropertyOptional({ default: false, description: 'breaks through quiet hours (and iOS Focus, as a time-sensitive notification)' })
  @Omittable()
  @IsBoolean()
  timeSensitive?: boolean;

  @ApiPropertyOptional({
    example: 'medication',
    nullable: true,
    description: "1–64 letters, digits, '.', '_', ':' or '-', case-insensitive (stored lower case): the user's preference for it applies",
  })
  @IsOptional()
  @ValidateIf((_o, v) => v !== null)
  @IsString()
  @Matches(CATEGORY_PATTERN, { message: CATEGORY_RULE })
  category?: string | null;

  @ApiPropertyOptional({ description: 'passed through to the app in the push (deep links)', nullable: true })
  @IsOptional()
  @ValidateIf((_o, v) => v !== null)
  @IsObject()
  data?: Record<string, unknown> | null;
}

// Fields may be left out, but null only where the field is nullable (body, data, timeZone).
export class UpdateReminderDto extends PartialType(OmitType(CreateReminderDto, ['timeZone'] as const), { skipNullProperties: false }) {
  @ApiPropertyOptional({ nullable: true, description: "null: follow the user's zone from now on" })
  @IsOptional()
  @ValidateIf((_o, v) => v !== null)
  @IsIanaTimeZone()
  timeZone?: string | null;
}

export class NextOccurrenceDto {
  @ApiProperty({ example: '2027-01-04T07:00:00.000Z', description: 'the nominal instant, UTC (before jitter and quiet hours)' }) at: string;
  @ApiProperty({ example: '2027-01-04T08:00:00.000+01:00' }) local: string;
}

export class OccurrenceDto {
  @ApiProperty({ example: '2027-01-04', description: "the local date: the occurrence's identity in actions" }) localDate: string;
  @ApiProperty({ example: '2027-01-04T07:00:00.000Z' }) at: string;
  @ApiProperty({ example: '2027-01-04T08:00:00.000+01:00' }) local: string;
  @ApiProperty({ enum: ['scheduled', 'sent', 'done', 'snoozed', 'skipped'] }) status: string;
  @ApiPropertyOptional({
    enum: ['stale', 'rescheduled', 'disabled', 'category_disabled', 'no_device', 'failed', 'user'],
    description: 'why it was skipped',
  })
  reason?: string;
  @ApiPropertyOptional() sentAt?: string;
  @ApiPropertyOptional({ description: 'when the user marked it done, skipped or snoozed' }) actedAt?: string;
  @ApiPropertyOptional({ description: 'when a snoozed occurrence is delivered again' }) snoozedUntil?: string;
}

export class SnoozeDto {
  @ApiProperty({ minimum: 1, maximum: 1440, example: 10 })
  @IsInt()
  @Min(1)
  @Max(1440)
  minutes: number;
}

export class ReminderDto {
  @ApiProperty({ format: 'uuid' }) id: string;
  @ApiProperty(localizedTextSchema(200, { en: 'Take your pill', de: 'Tablette nehmen' })) title: LocalizedText;
  @ApiProperty({ nullable: true, ...localizedTextSchema(1000, { en: 'With water', de: 'Mit Wasser' }) }) body: LocalizedText | null;
  @ApiProperty({
    nullable: true,
    type: String,
    description: 'the default language of a localized title or body (canonical tag); null: plain strings',
  })
  defaultLocale: string | null;
  @ApiProperty() localTime: string;
  @ApiProperty() timeZone: string;
  @ApiProperty() followsUserTimeZone: boolean;
  @ApiProperty({ nullable: true, type: String, description: 'null: a one-off reminder' }) recurrence: string | null;
  @ApiProperty() startDate: string;
  @ApiProperty() enabled: boolean;
  @ApiProperty() timeSensitive: boolean;
  @ApiProperty({ nullable: true, type: String, description: 'lower case; null: none' }) category: string | null;
  @ApiProperty({ nullable: true, type: Object }) data: Record<string, unknown> | null;
  @ApiProperty({ nullable: true, type: String, description: "'default' unless set; null: none" }) sound: string | null;
  @ApiProperty({ nullable: true, type: Number }) badge: number | null;
  @ApiProperty({ nullable: true, type: String }) threadId: string | null;
  @ApiProperty({ nullable: true, type: String }) imageUrl: string | null;
  @ApiProperty({ nullable: true, type: String }) androidChannelId: string | null;
  @ApiProperty({ enum: INTERRUPTION_LEVELS, description: "'active' unless set; 'time-sensitive' when timeSensitive" })
  interruptionLevel: string;
  @ApiProperty() silent: boolean;
  @ApiProperty({ type: NextOccurrenceDto, nullable: true }) nextOccurrence: NextOccurrenceDto | null;
  @ApiProperty() version: number;
  @ApiProperty() createdAt: string;
  @ApiProperty() updatedAt: string;
}

export class ReminderPageDto {
  @ApiProperty({ type: [ReminderDto] }) items: ReminderDto[];
  @ApiProperty({ nullable: true, type: String }) nextCursor: string | null;
}

export class ListRemindersQuery {
  @ApiPropertyOptional({ default: 50, minimum: 1, maximum: 100 })
  @IsOptional()
  @Type(() => Number)
  @IsInt()
  @Min(1)
  @Max(100)
  limit?: number;

  @ApiPropertyOptional()
  @IsOptional()
  @IsString()
  @MaxLength(512)
  cursor?: string;
}

export class OccurrencesQuery {
  @ApiPropertyOptional({ default: 10, minimum: 1, maximum: 100 })
  @IsOptional()
  @Type(() => Number)
  @IsInt()
  @Min(1)
  @Max(100)
  count?: number;

  @ApiPropertyOptional({ example: '2027-01-01T00:00:00Z', description: 'occurrences strictly after this instant; default: now' })
  @IsOptional()
  @IsISO8601({ strict: true })
  after?: string;

  @ApiPropertyOptional({
    example: '2027-01-01T00:00:00Z',
    description: 'history: the latest recorded occurrences strictly before this instant',
  })
  @IsOptional()
  @IsISO8601({ strict: true })
  before?: string;
}

export class OccurrenceListDto {
  @ApiProperty({ type: [OccurrenceDto] }) occurrences: OccurrenceDto[];
}

export class DeviceDeliveryDto {
  @ApiProperty({ nullable: true, type: String }) installationId: string | null;
  @ApiProperty() platform: string;
  @ApiProperty() provider: string;
  @ApiProperty({ enum: ['sending', 'sent', 'failed', 'invalid_token', 'skipped'] }) status: string;
  @ApiProperty({ nullable: true, type: String }) error: string | null;
  @ApiProperty() updatedAt: string;
}

export class DeliveryDto {
  @ApiProperty() jobId: string;
  @ApiProperty() localDate: string;
  @ApiProperty() dueAt: string;
  @ApiProperty() version: number;
  @ApiProperty({ enum: ['regular', 'snooze'] }) purpose: string;
  @ApiProperty({ nullable: true, type: String, description: 'the job: queued, running, succeeded, dead, cancelled (null once pruned)' })
  status: string | null;
  @ApiProperty({ nullable: true, type: Number }) attempts: number | null;
  @ApiProperty({ nullable: true, type: String }) lastError: string | null;
  @ApiProperty({ type: [DeviceDeliveryDto] }) devices: DeviceDeliveryDto[];
}

export class DeliveryListDto {
  @ApiProperty({ type: [DeliveryDto] }) deliveries: DeliveryDto[];
}
