import { ApiPropertyOptional } from '@nestjs/swagger';
import { IsBoolean, IsIn, IsInt, IsOptional, IsString, IsUrl, Matches, Max, MaxLength, Min, ValidateIf } from 'class-validator';
import {
  INTERRUPTION_LEVELS,
  type InterruptionLevel,
  MAX_ANDROID_CHANNEL_ID_LENGTH,
  MAX_BADGE,
  MAX_IMAGE_URL_LENGTH,
  MAX_THREAD_ID_LENGTH,
  SOUND_PATTERN,
} from '@nudge/push';
import { Omittable } from './validators.js';

/**
 * The push fields of reminders and notifications (docs/push-fields.md for
 * what each platform makes of them). Left out: the platform's default; null
 * clears a field (for `sound`: no sound).
 */
export class PushFieldsDto {
  @ApiPropertyOptional({
    example: 'chime.caf',
    nullable: true,
    description: "'default', a sound the app bundles (1–64 of A–Z a–z 0–9 . _ -), or null for none; omitted: 'default'",
  })
  @IsOptional()
  @ValidateIf((_o, v) => v !== null)
  @IsString()
  @Matches(SOUND_PATTERN, { message: "sound must be 'default' or 1 to 64 letters, digits, '.', '_' or '-'" })
  sound?: string | null;

  @ApiPropertyOptional({ minimum: 0, maximum: MAX_BADGE, nullable: true, description: "the app icon's count; 0 clears it" })
  @IsOptional()
  @ValidateIf((_o, v) => v !== null)
  @IsInt()
  @Min(0)
  @Max(MAX_BADGE)
  badge?: number | null;

  @ApiPropertyOptional({
    maxLength: MAX_THREAD_ID_LENGTH,
    nullable: true,
    description: 'groups pushes: APNs thread-id; Android and Web: the tag (a newer push of the thread replaces the shown one)',
  })
  @IsOptional()
  @ValidateIf((_o, v) => v !== null)
  @IsString()
  @MaxLength(MAX_THREAD_ID_LENGTH)
  threadId?: string | null;

  @ApiPropertyOptional({
    format: 'uri',
    maxLength: MAX_IMAGE_URL_LENGTH,
    nullable: true,
    description: 'https only; iOS: mutable-content, for the app’s Notification Service Extension',
  })
  @IsOptional()
  @ValidateIf((_o, v) => v !== null)
  @IsString()
  @MaxLength(MAX_IMAGE_URL_LENGTH)
  @IsUrl({ protocols: ['https'], require_protocol: true, require_tld: false }, { message: 'imageUrl must be an https URL' })
  imageUrl?: string | null;

  @ApiPropertyOptional({ maxLength: MAX_ANDROID_CHANNEL_ID_LENGTH, nullable: true, description: 'FCM and Expo on Android' })
  @IsOptional()
  @ValidateIf((_o, v) => v !== null)
  @IsString()
  @MaxLength(MAX_ANDROID_CHANNEL_ID_LENGTH)
  androidChannelId?: string | null;

  @ApiPropertyOptional({
    enum: INTERRUPTION_LEVELS,
    nullable: true,
    description: "iOS; 'time-sensitive' is the same as timeSensitive: true (and breaks through quiet hours)",
  })
  @IsOptional()
  @ValidateIf((_o, v) => v !== null)
  @IsIn(INTERRUPTION_LEVELS)
  interruptionLevel?: InterruptionLevel | null;

  @ApiPropertyOptional({
    default: false,
    description: 'a background / data-only push: nothing shown; APNs content-available, FCM data-only, Expo _contentAvailable',
  })
  @Omittable()
  @IsBoolean()
  silent?: boolean;
}
