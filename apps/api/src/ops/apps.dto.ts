import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { applyDecorators } from '@nestjs/common';
import { IsBoolean, IsDefined, IsString, Length, Matches, MaxLength } from 'class-validator';
import { APP_ID_PATTERN } from '@nudge/push';
import { NullableNested, Omittable } from '../http/validators.js';

// PUT /v1/ops/apps/{appId} and GET /v1/ops/apps (docs/apps.md). The shapes are
// checked here; whether a key parses (and fits its public key) is checked by
// the service, which names the field too. Secrets are never shown back.

export class AppIdParam {
  @ApiProperty({ example: 'shop-ios', description: '1–64 lower-case letters, digits, `.`, `_` or `-`; `default` is the environment’s' })
  @Matches(APP_ID_PATTERN, {
    message: 'appId must be 1 to 64 lower-case letters, digits, ".", "_" or "-", starting with a letter or digit',
  })
  appId: string;
}

export class ApnsCredentialsDto {
  @ApiProperty({ description: 'the contents of the `.p8` token key (PEM); encrypted at rest, never shown back' })
  @IsString()
  @MaxLength(4096)
  key: string;

  @ApiProperty({ example: 'ABC123DEFG' }) @IsString() @MaxLength(64) keyId: string;
  @ApiProperty({ example: 'TEAM123456' }) @IsString() @MaxLength(64) teamId: string;
  @ApiProperty({ example: 'com.example.shop', description: 'the app bundle id' }) @IsString() @MaxLength(255) topic: string;

  @ApiPropertyOptional({ default: false, description: 'api.push.apple.com when true, else the sandbox' })
  @Omittable()
  @IsBoolean()
  production?: boolean;
}

export class FcmCredentialsDto {
  @ApiProperty({
    oneOf: [{ type: 'object' }, { type: 'string' }],
    description: 'the Firebase service-account JSON (as an object or as its text); encrypted at rest, never shown back',
  })
  @IsDefined()
  serviceAccount: string | Record<string, unknown>;
}

export class ExpoCredentialsDto {
  @ApiProperty({ description: 'an Expo access token (enhanced push security); encrypted at rest, never shown back' })
  @IsString()
  accessToken: string;
}

export class WebPushCredentialsDto {
  @ApiProperty({ description: 'VAPID public key, base64url' }) @IsString() @MaxLength(256) publicKey: string;
  @ApiProperty({ description: 'VAPID private key, base64url; encrypted at rest, never shown back' })
  @IsString()
  @MaxLength(256)
  privateKey: string;

  @ApiProperty({ example: 'mailto:push@example.com' }) @IsString() @MaxLength(512) subject: string;
}

const Section = (type: new () => object, what: string) =>
  applyDecorators(
    ApiPropertyOptional({ type, nullable: true, description: `${what}; null removes them, omitted keeps them` }),
    NullableNested(type),
  );

export class PutAppDto {
  @ApiProperty({ example: 'Shop (iOS, production)' })
  @IsString()
  @Length(1, 200)
  name: string;

  @Section(ApnsCredentialsDto, 'APNs token-key credentials')
  apns?: ApnsCredentialsDto | null;

  @Section(FcmCredentialsDto, 'the FCM service account')
  fcm?: FcmCredentialsDto | null;

  @Section(ExpoCredentialsDto, 'the Expo access token')
  expo?: ExpoCredentialsDto | null;

  @Section(WebPushCredentialsDto, 'the Web Push VAPID keys')
  webPush?: WebPushCredentialsDto | null;
}

class SecretDto {
  @ApiProperty({ example: true }) set: true;
  @ApiProperty({ example: '…3fa2', description: 'the last 4 hex characters of its SHA-256: tells two secrets apart, reveals nothing' })
  fingerprint: string;
}

class ApnsViewDto {
  @ApiProperty() keyId: string;
  @ApiProperty() teamId: string;
  @ApiProperty() topic: string;
  @ApiProperty() production: boolean;
  @ApiProperty({ type: SecretDto }) key: SecretDto;
}

class FcmViewDto {
  @ApiProperty() projectId: string;
  @ApiProperty() clientEmail: string;
  @ApiProperty({ type: SecretDto }) serviceAccount: SecretDto;
}

class ExpoViewDto {
  @ApiProperty({ type: SecretDto }) accessToken: SecretDto;
}

class WebPushViewDto {
  @ApiProperty() publicKey: string;
  @ApiProperty() subject: string;
  @ApiProperty({ type: SecretDto }) privateKey: SecretDto;
}

export class ProviderFailureDto {
  @ApiProperty({ enum: ['apns', 'fcm', 'expo'] }) provider: string;
  @ApiProperty({ example: '403 InvalidProviderToken: APNs rejected the signing key (key id, team id or key)' }) reason: string;
  @ApiProperty({ description: 'failing since' }) since: string;
  @ApiProperty({ description: 'last tried; its sends wait until the next try' }) checkedAt: string;
}

export class AppDto {
  @ApiProperty({ example: 'shop-ios' }) id: string;
  @ApiProperty() name: string;
  @ApiProperty({ description: 'bumped by every PUT; workers use the new credentials from their next send' }) version: number;
  @ApiProperty({ type: ApnsViewDto, nullable: true }) apns: ApnsViewDto | null;
  @ApiProperty({ type: FcmViewDto, nullable: true }) fcm: FcmViewDto | null;
  @ApiProperty({ type: ExpoViewDto, nullable: true }) expo: ExpoViewDto | null;
  @ApiProperty({ type: WebPushViewDto, nullable: true }) webPush: WebPushViewDto | null;
  @ApiProperty({ type: [ProviderFailureDto], description: "providers that rejected these credentials: the app's sends to them wait" })
  failing: ProviderFailureDto[];

  @ApiProperty() createdAt: string;
  @ApiProperty() updatedAt: string;
}

class DefaultAppDto {
  @ApiProperty({ type: [ProviderFailureDto], description: 'providers that rejected the credentials of the environment' })
  failing: ProviderFailureDto[];
}

export class AppListDto {
  @ApiProperty({ type: [AppDto] }) apps: AppDto[];
  @ApiProperty({ type: DefaultAppDto, description: 'the default app: devices without an appId, the credentials of the environment' })
  defaultApp: DefaultAppDto;
}
