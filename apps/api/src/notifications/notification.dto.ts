import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { IsBoolean, IsInt, IsObject, IsOptional, IsString, Length, Matches, Max, Min, ValidateIf } from 'class-validator';
import { type LocalizedText, MAX_TTL_SECONDS } from '@nudge/push';
import { CATEGORY_PATTERN, CATEGORY_RULE } from '@nudge/users';
import { IDEMPOTENCY_KEY_PATTERN } from '../http/idempotency.interceptor.js';
import { PushFieldsDto } from '../http/push-fields.dto.js';
import { DefaultLocaleProperty, LocalizedTextProperty } from '../http/validators.js';

export class CreateNotificationDto extends PushFieldsDto {
  @ApiProperty({
    example: 'alice',
    maxLength: 128,
    description: 'a user without a profile or devices is accepted: the job records skipped (no_device)',
  })
  @IsString()
  @Length(1, 128)
  userId: string;

  @LocalizedTextProperty('title', 200, 'Your order shipped', { en: 'Your order shipped', de: 'Ihre Bestellung ist unterwegs' })
  title: LocalizedText;

  @LocalizedTextProperty('body', 2000, 'Arriving Thursday', { en: 'Arriving Thursday', de: 'Ankunft Donnerstag' })
  body?: LocalizedText | null;

  @DefaultLocaleProperty()
  defaultLocale?: string;

  @ApiPropertyOptional({ description: 'passed through to the app in the push (deep links)', nullable: true })
  @IsOptional()
  @ValidateIf((_o, v) => v !== null)
  @IsObject()
  data?: Record<string, unknown> | null;

  @ApiProperty({ example: 'order-1234-shipped', description: 'the event id: the same key twice makes one job (another body with it: 409)' })
  @IsString()
  @Matches(IDEMPOTENCY_KEY_PATTERN, { message: 'idempotencyKey must be 1 to 255 printable ASCII characters' })
  idempotencyKey: string;

  @ApiPropertyOptional({ default: false, description: "delivered through the user's quiet hours" })
  @IsOptional()
  @IsBoolean()
  timeSensitive?: boolean;

  @ApiPropertyOptional({
    example: 'orders',
    nullable: true,
    description:
      "1–64 letters, digits, '.', '_', ':' or '-', case-insensitive: the user's preference for it applies (GET /v1/me/preferences)",
  })
  @IsOptional()
  @ValidateIf((_o, v) => v !== null)
  @IsString()
  @Matches(CATEGORY_PATTERN, { message: CATEGORY_RULE })
  category?: string | null;

  @ApiPropertyOptional({
    minimum: 0,
    maximum: MAX_TTL_SECONDS,
    description:
      "seconds the push service keeps it for an offline device, from when it is sent; 0: now or never; omitted: the provider's default",
  })
  @IsOptional()
  @IsInt()
  @Min(0)
  @Max(MAX_TTL_SECONDS)
  ttlSeconds?: number;
}

export class NotificationAcceptedDto {
  @ApiProperty({ example: '42', description: 'the send_notification job (GET /v1/ops/jobs/{id})' }) jobId: string;
}
