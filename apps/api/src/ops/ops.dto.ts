import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { Type } from 'class-transformer';
import { IsIn, IsInt, IsOptional, IsString, Matches, Max, MaxLength, Min } from 'class-validator';
import { JOB_STATUSES, type JobStatus } from '@nudge/queue';

export class KindStatsDto {
  @ApiProperty({ example: 'send_reminder' }) kind: string;
  @ApiProperty({ description: 'queued and due' }) ready: number;
  @ApiProperty({ description: 'queued for later' }) scheduled: number;
  @ApiProperty() running: number;
  @ApiProperty({ description: 'running past their lease' }) stuck: number;
  @ApiProperty() dead: number;
  @ApiProperty({ description: 'age of the oldest ready job, seconds' }) oldestReadyAgeSeconds: number;
  @ApiProperty() succeededLastHour: number;
  @ApiProperty() failedLastHour: number;
  @ApiProperty({ description: 'paused by an operator: no worker claims it' }) paused: boolean;
}

export class MinuteThroughputDto {
  @ApiProperty({ example: '2026-03-02T11:59:00.000Z', description: 'start of the minute' }) minute: string;
  @ApiProperty({ description: 'jobs that succeeded in that minute' }) succeeded: number;
  @ApiProperty({ description: 'attempts that failed (retried, dead, lease expired) in that minute' }) failed: number;
}

export class QueueStatsDto {
  @ApiProperty() generatedAt: string;
  @ApiProperty({ type: [KindStatsDto] }) kinds: KindStatsDto[];
  @ApiProperty({
    type: [MinuteThroughputDto],
    description: 'all kinds, the last 60 minutes, oldest first; minutes with nothing are absent',
  })
  lastHourByMinute: MinuteThroughputDto[];
}

export class JobRunDto {
  @ApiProperty() attempt: number;
  @ApiProperty({ nullable: true, type: String }) worker: string | null;
  @ApiProperty({ nullable: true, type: String }) startedAt: string | null;
  @ApiProperty() finishedAt: string;
  @ApiProperty({ enum: ['succeeded', 'failed', 'dead', 'snoozed', 'lease_expired', 'interrupted'] }) outcome: string;
  @ApiProperty({ nullable: true, type: String }) error: string | null;
  @ApiProperty({ nullable: true, type: String }) nextRunAt: string | null;
}

export class JobDto {
  @ApiProperty() id: string;
  @ApiProperty() kind: string;
  @ApiProperty({ enum: JOB_STATUSES }) status: string;
  @ApiProperty({ type: Object, description: 'secrets and tokens masked' }) payload: unknown;
  @ApiProperty({ nullable: true, type: String }) idempotencyKey: string | null;
  @ApiProperty() priority: number;
  @ApiProperty() runAt: string;
  @ApiProperty() attempts: number;
  @ApiProperty() maxAttempts: number;
  @ApiProperty({ nullable: true, type: String }) lastError: string | null;
  @ApiProperty({ nullable: true, type: String }) lockedAt: string | null;
  @ApiProperty({ nullable: true, type: String }) lockedUntil: string | null;
  @ApiProperty({ nullable: true, type: String }) lockedBy: string | null;
  @ApiProperty({ nullable: true, type: String }) finishedAt: string | null;
  @ApiProperty() createdAt: string;
  @ApiProperty() updatedAt: string;
}

export class JobOccurrenceDto {
  @ApiProperty({ format: 'uuid' }) reminderId: string;
  @ApiProperty({ example: '2027-01-04' }) localDate: string;
  @ApiProperty({
    enum: ['regular', 'snooze'],
    description: "this job's part: the occurrence's delivery, or a re-delivery the user asked for",
  })
  purpose: string;
  @ApiProperty({ enum: ['scheduled', 'sent', 'done', 'snoozed', 'skipped'] }) status: string;
  @ApiProperty({
    nullable: true,
    type: String,
    enum: ['stale', 'rescheduled', 'disabled', 'category_disabled', 'no_device', 'failed', 'user'],
    description: 'why it was skipped',
  })
  reason: string | null;
  @ApiProperty({ description: 'the nominal instant' }) dueAt: string;
  @ApiProperty({ description: 'the earliest allowed delivery (jitter, end of quiet hours): staleness counts from here' })
  earliestAt: string;
  @ApiProperty({ nullable: true, type: String }) sentAt: string | null;
  @ApiProperty({ nullable: true, type: String, description: 'when the user marked it done, skipped or snoozed' }) actedAt: string | null;
}

export class JobDetailDto extends JobDto {
  @ApiProperty({ type: [JobRunDto] }) history: JobRunDto[];
  @ApiPropertyOptional({
    type: JobOccurrenceDto,
    nullable: true,
    description: 'send_reminder jobs: the occurrence it carries and its state',
  })
  occurrence?: JobOccurrenceDto | null;
}

export class JobPageDto {
  @ApiProperty({ type: [JobDto] }) items: JobDto[];
  @ApiProperty({ nullable: true, type: String }) nextCursor: string | null;
}

export class ListJobsQuery {
  @ApiPropertyOptional({ enum: JOB_STATUSES })
  @IsOptional()
  @IsIn(JOB_STATUSES)
  status?: JobStatus;

  @ApiPropertyOptional({ example: 'send_reminder' })
  @IsOptional()
  @IsString()
  @MaxLength(100)
  kind?: string;

  @ApiPropertyOptional({ default: 50, minimum: 1, maximum: 500 })
  @IsOptional()
  @Type(() => Number)
  @IsInt()
  @Min(1)
  @Max(500)
  limit?: number;

  @ApiPropertyOptional()
  @IsOptional()
  @IsString()
  @MaxLength(200)
  cursor?: string;
}

export class KindParam {
  @ApiProperty({ example: 'send_reminder', description: 'a job kind' })
  @Matches(/^[A-Za-z0-9_.:-]{1,100}$/, { message: 'kind must be a job kind (letters, digits, _ . : -)' })
  kind: string;
}

export class KindPauseDto {
  @ApiProperty({ example: 'send_reminder' }) kind: string;
  @ApiProperty({ description: 'whether workers now leave the kind alone' }) paused: boolean;
}

export class RetryJobsBody {
  @ApiProperty({ example: 'send_notification' })
  @IsString()
  @Matches(/^[A-Za-z0-9_.:-]{1,100}$/, { message: 'kind must be a job kind (letters, digits, _ . : -)' })
  kind: string;

  @ApiProperty({ enum: ['dead'], description: 'which jobs of the kind: only dead ones can be retried in bulk' })
  @IsIn(['dead'])
  status: 'dead';
}

export class RetriedJobsDto {
  @ApiProperty({ description: 'how many jobs went back to the queue' }) retried: number;
}

export class JobIdParam {
  @ApiProperty({ example: '42', description: 'a job id (a positive integer)' })
  @Matches(/^[1-9]\d{0,18}$/, { message: 'id must be a job id (a positive integer)' })
  id: string;
}
