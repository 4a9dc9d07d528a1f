import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { Type } from 'class-transformer';
import {
  ArrayMaxSize,
  ArrayNotEmpty,
  IsArray,
  IsIn,
  IsInt,
  IsOptional,
  IsString,
  IsUrl,
  Length,
  Matches,
  Max,
  MaxLength,
  Min,
  ValidateBy,
} from 'class-validator';
import { ALL_EVENTS, EVENT_TYPES } from '@nudge/events';
import { Omittable } from '../http/validators.js';

const EVENT_NAMES = [...EVENT_TYPES, ALL_EVENTS];

export class WebhookIdParam {
  @ApiProperty({ example: 'crm', description: 'your name for the webhook: 1–64 letters, digits, `.`, `_` or `-`' })
  @Matches(/^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/, {
    message: 'id must be 1 to 64 letters, digits, ".", "_" or "-", starting with a letter or digit',
  })
  id: string;
}

/**
 * A URL with `user:password@` is refused: fetch cannot send to one (every
 * delivery would fail for 24 h), and the password would be shown back by GET
 * and quoted in each failure. The receiver checks Nudge-Signature instead.
 */
function HasNoCredentials() {
  return ValidateBy({
    name: 'hasNoCredentials',
    validator: {
      validate: (value: unknown) => {
        const url = typeof value === 'string' && URL.canParse(value) ? new URL(value) : null;
        return url === null || (url.username === '' && url.password === '');
      },
      defaultMessage: () => 'url must not carry a user name or password (user:password@): verify the Nudge-Signature header instead',
    },
  });
}

export class PutWebhookDto {
  @ApiProperty({ example: 'https://example.com/nudge-events', description: 'where events are POSTed (http or https)' })
  @IsString()
  @MaxLength(2048)
  @IsUrl(
    { protocols: ['http', 'https'], require_protocol: true, require_tld: false },
    { message: 'url must be an http:// or https:// URL' },
  )
  @HasNoCredentials()
  url: string;

  @ApiProperty({ enum: EVENT_NAMES, isArray: true, example: ['delivery.failed', 'device.deactivated'], description: '`*`: every type' })
  @IsArray()
  @ArrayNotEmpty()
  @ArrayMaxSize(20)
  @IsIn(EVENT_NAMES, { each: true, message: `events must each be one of ${EVENT_NAMES.join(', ')}` })
  events: string[];

  @ApiPropertyOptional({
    minLength: 16,
    maxLength: 256,
    description: 'the HMAC key of Nudge-Signature; omitted: a new webhook gets a generated one (shown once), an existing one keeps its own',
  })
  @Omittable()
  @IsString()
  @Length(16, 256)
  @Matches(/^[\x21-\x7e]+$/, { message: 'secret must be printable ASCII without spaces' })
  secret?: string;
}

export class WebhookDto {
  @ApiProperty({ example: 'crm' }) id: string;
  @ApiProperty({ example: 'https://example.com/nudge-events' }) url: string;
  @ApiProperty({ enum: EVENT_NAMES, isArray: true }) events: string[];
  @ApiProperty() createdAt: string;
  @ApiProperty() updatedAt: string;
}

export class PutWebhookResponseDto extends WebhookDto {
  @ApiPropertyOptional({ description: 'only when Nudge generated it (a new webhook without one): shown this once, never again' })
  secret?: string;
}

export class WebhookListDto {
  @ApiProperty({ type: [WebhookDto] }) webhooks: WebhookDto[];
}

export class EventsQuery {
  @ApiPropertyOptional({ description: 'the nextCursor of the previous page; omitted: from the oldest event kept' })
  @IsOptional()
  @IsString()
  @MaxLength(64)
  after?: string;

  @ApiPropertyOptional({ default: 100, minimum: 1, maximum: 1000 })
  @IsOptional()
  @Type(() => Number)
  @IsInt()
  @Min(1)
  @Max(1000)
  limit?: number;
}

export class EventDto {
  @ApiProperty({ format: 'uuid', description: 'the same in the feed and in every webhook POST: deduplicate on it' }) id: string;
  @ApiProperty({ enum: EVENT_TYPES }) type: string;
  @ApiProperty({ description: 'when the change was made' }) createdAt: string;
  @ApiProperty({ nullable: true, type: String }) userId: string | null;
  @ApiProperty({ type: Object, description: 'what changed; per type in docs/webhooks.md' }) data: Record<string, unknown>;
}

export class EventPageDto {
  @ApiProperty({ type: [EventDto], description: 'in commit order' }) events: EventDto[];
  @ApiProperty({ description: 'pass as `after` for the next page (the same cursor when nothing new was ready)' }) nextCursor: string;
}
