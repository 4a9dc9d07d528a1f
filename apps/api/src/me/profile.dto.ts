import { ApiProperty, ApiPropertyOptional, PartialType } from '@nestjs/swagger';
import { IsBoolean, IsOptional, Matches } from 'class-validator';
import type { UserEntity } from '@nudge/users';
import { IsIanaTimeZone, IsLocale, LOCAL_TIME_PATTERN, NullableNested, Omittable } from '../http/validators.js';

export class QuietHoursDto {
  @ApiProperty({ example: '22:00', description: 'local start, HH:mm' })
  @Matches(LOCAL_TIME_PATTERN, { message: 'start must be a time HH:mm from 00:00 to 23:59' })
  start: string;

  @ApiProperty({ example: '07:00', description: 'local end, HH:mm (a window may cross midnight)' })
  @Matches(LOCAL_TIME_PATTERN, { message: 'end must be a time HH:mm from 00:00 to 23:59' })
  end: string;
}

export class PutProfileDto {
  @ApiProperty({ example: 'America/Chicago', description: 'IANA time zone name; offsets and abbreviations are refused' })
  @IsIanaTimeZone()
  timeZone: string;

  @ApiPropertyOptional({ example: 'en-US', nullable: true })
  @IsOptional()
  @IsLocale()
  locale?: string | null;

  @ApiPropertyOptional({ type: QuietHoursDto, nullable: true })
  @NullableNested(QuietHoursDto)
  quietHours?: QuietHoursDto | null;

  @ApiPropertyOptional({ default: true, description: "a device reporting a new zone moves the user's zone (travel)" })
  @Omittable()
  @IsBoolean()
  followDeviceTimeZone?: boolean;

  @ApiPropertyOptional({ default: true })
  @Omittable()
  @IsBoolean()
  notificationsEnabled?: boolean;
}

/**
 * Any subset of the profile; the same rules apply to each field given. A field
 * may be left out but not set to null unless it is nullable (locale,
 * quietHours): `timeZone: null` is a 400, not a NOT NULL violation (500).
 */
export class PatchProfileDto extends PartialType(PutProfileDto, { skipNullProperties: false }) {}

export class ProfileDto {
  @ApiProperty() userId: string;
  @ApiProperty() timeZone: string;
  @ApiProperty({ nullable: true, type: String }) locale: string | null;
  @ApiProperty({ type: QuietHoursDto, nullable: true }) quietHours: QuietHoursDto | null;
  @ApiProperty() followDeviceTimeZone: boolean;
  @ApiProperty() notificationsEnabled: boolean;
  @ApiProperty() createdAt: string;
  @ApiProperty() updatedAt: string;

  static from(user: UserEntity): ProfileDto {
    return {
      userId: user.id,
      timeZone: user.timeZone,
      locale: user.locale,
      quietHours: user.quietHoursStart && user.quietHoursEnd ? { start: user.quietHoursStart, end: user.quietHoursEnd } : null,
      followDeviceTimeZone: user.followDeviceTimeZone,
      notificationsEnabled: user.notificationsEnabled,
      createdAt: user.createdAt.toISOString(),
      updatedAt: user.updatedAt.toISOString(),
    };
  }
}
