import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { IsBoolean } from 'class-validator';
import type { CategoryPreference } from '@nudge/users';
import { NullableNested, Omittable } from '../http/validators.js';
import { QuietHoursDto } from './profile.dto.js';

export class PutPreferenceDto {
  @ApiProperty({ example: false, description: "false: the category's reminders and notifications are skipped (category_disabled)" })
  @IsBoolean()
  enabled: boolean;

  @ApiPropertyOptional({
    type: QuietHoursDto,
    nullable: true,
    description: "the category's own quiet hours, in the user's zone, replacing the user's; omitted or null: the user's apply",
  })
  @NullableNested(QuietHoursDto)
  quietHours?: QuietHoursDto | null;

  @ApiPropertyOptional({
    default: true,
    description: "false: the category's time-sensitive pushes wait out quiet hours and go out as ordinary ones",
  })
  @Omittable()
  @IsBoolean()
  allowTimeSensitive?: boolean;
}

export class PreferenceDto {
  @ApiProperty({ example: 'medication', description: 'lower case' }) category: string;
  @ApiProperty() enabled: boolean;
  @ApiProperty({ type: QuietHoursDto, nullable: true, description: "null: the user's quiet hours apply" }) quietHours: QuietHoursDto | null;
  @ApiProperty() allowTimeSensitive: boolean;
  @ApiProperty() updatedAt: string;

  static from(preference: CategoryPreference): PreferenceDto {
    return {
      category: preference.category,
      enabled: preference.enabled,
      quietHours:
        preference.quietHoursStart && preference.quietHoursEnd
          ? { start: preference.quietHoursStart, end: preference.quietHoursEnd }
          : null,
      allowTimeSensitive: preference.allowTimeSensitive,
      updatedAt: preference.updatedAt.toISOString(),
    };
  }
}

export class PreferenceListDto {
  @ApiProperty({ type: [PreferenceDto], description: "the user's stored category preferences, by category" })
  preferences: PreferenceDto[];
}
