import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { Transform } from 'class-transformer';
import { IsIn, IsOptional, IsString, Length, Matches } from 'class-validator';
import type { DeviceEntity, Platform } from '@nudge/users';
import { APP_ID_PATTERN, DEFAULT_APP_ID, maskPushToken, PUSH_PLATFORMS } from '@nudge/push';
import { IsIanaTimeZone, IsLocale } from '../http/validators.js';

export class PutDeviceDto {
  @ApiProperty({ enum: PUSH_PLATFORMS })
  @IsIn(PUSH_PLATFORMS)
  platform: Platform;

  @ApiProperty({
    description:
      "APNs device token, FCM registration token, or for `web` the browser's subscription as JSON " +
      '(`JSON.stringify(pushSubscription)`: {endpoint, keys: {p256dh, auth}}), or that object itself; never shown back in full',
  })
  // A web app naturally sends `pushSubscription.toJSON()` as it is: the object is taken as its JSON text.
  @Transform(({ value, obj }) => (obj.platform === 'web' && isPlainObject(value) ? JSON.stringify(value) : value))
  @IsString()
  @Length(1, 4096)
  @Matches(/^[\x21-\x7e]+$/, { message: 'pushToken must be printable ASCII without spaces' })
  pushToken: string;

  @ApiPropertyOptional({ example: 'Europe/Lisbon' })
  @IsOptional()
  @IsIanaTimeZone()
  timeZone?: string;

  @ApiPropertyOptional({ example: '3.2.1' })
  @IsOptional()
  @IsString()
  @Length(1, 64)
  appVersion?: string;

  @ApiPropertyOptional({ example: 'pt-PT' })
  @IsOptional()
  @IsLocale()
  locale?: string;

  @ApiPropertyOptional({
    example: 'shop-ios',
    description:
      'the app whose push credentials reach this device (PUT /v1/ops/apps/{appId}); `default`: the credentials of the environment; omitted: a new device gets the default app, a known one keeps its app',
  })
  @IsOptional()
  @IsString()
  @Matches(APP_ID_PATTERN, {
    message: 'appId must be 1 to 64 lower-case letters, digits, ".", "_" or "-", starting with a letter or digit',
  })
  appId?: string;
}

export class DeviceDto {
  @ApiProperty() installationId: string;
  @ApiProperty({ enum: PUSH_PLATFORMS }) platform: Platform;
  @ApiProperty({ example: '…a1b2', description: 'masked: only the last four characters' }) pushToken: string;
  @ApiProperty() active: boolean;
  @ApiProperty({ nullable: true, type: String }) deactivatedReason: string | null;
  @ApiProperty({ nullable: true, type: String }) timeZone: string | null;
  @ApiProperty({ nullable: true, type: String }) appVersion: string | null;
  @ApiProperty({ nullable: true, type: String }) locale: string | null;
  @ApiProperty({ example: 'default', description: 'the app whose credentials reach it; `default`: the environment’s' }) appId: string;
  @ApiProperty() lastSeenAt: string;

  static from(device: DeviceEntity): DeviceDto {
    return {
      installationId: device.installationId,
      platform: device.platform,
      pushToken: maskPushToken(device.pushToken),
      active: device.active,
      deactivatedReason: device.deactivatedReason,
      timeZone: device.timeZone,
      appVersion: device.appVersion,
      locale: device.locale,
      appId: device.appId ?? DEFAULT_APP_ID,
      lastSeenAt: device.lastSeenAt.toISOString(),
    };
  }
}

export class DeviceListDto {
  @ApiProperty({ type: [DeviceDto] }) devices: DeviceDto[];
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
