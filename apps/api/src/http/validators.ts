import { applyDecorators, type PipeTransform, Injectable } from '@nestjs/common';
import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { Type } from 'class-transformer';
import {
  IsObject,
  IsOptional,
  registerDecorator,
  ValidateIf,
  ValidateNested,
  type ValidationArguments,
  type ValidationOptions,
} from 'class-validator';
import { DomainError } from '@nudge/config';
import { localeProblem, MAX_LOCALIZED_VARIANTS, normalizeLocalizedText } from '@nudge/push';
import { parseLocalDate, parseRecurrence, validateTimeZone } from '@nudge/scheduling';

export const LOCAL_TIME_PATTERN = /^([01]\d|2[0-3]):[0-5]\d$/;

/**
 * A field that may be left out but is never null (unlike @IsOptional, which
 * lets null through to a NOT NULL column: a 500 instead of a 400).
 */
export const Omittable = () => ValidateIf((_object, value) => value !== undefined);

/**
 * An object of the given class, checked field by field, that may be left out
 * or null (IsOptional skips both). IsObject comes first: ValidateNested alone walks an array's
 * elements, so `[]` would pass and reach the service as the section itself.
 */
export const NullableNested = (type: new () => object) =>
  applyDecorators(
    IsOptional(),
    IsObject(),
    ValidateNested(),
    Type(() => type),
  );

/**
 * A class-validator rule backed by a scheduling parser, so that the API refuses
 * exactly what the scheduler cannot compute, with the parser's own message.
 */
function fromParser(name: string, check: (value: string) => string | undefined, options?: ValidationOptions) {
  return (object: object, propertyName: string | symbol) => {
    const messages = new WeakMap<object, string>();
    registerDecorator({
      name,
      target: object.constructor,
      propertyName: String(propertyName),
      options,
      validator: {
        validate(value: unknown, args: ValidationArguments) {
          const problem = typeof value === 'string' ? check(value) : `${args.property} must be a string`;
          if (problem) messages.set(args.object, problem);
          return problem === undefined;
        },
        defaultMessage(args: ValidationArguments) {
          return `${args.property}: ${messages.get(args.object) ?? 'invalid value'}`;
        },
      },
    });
  };
}

const firstError = (result: { ok: true } | { ok: false; errors: string[] }) => (result.ok ? undefined : result.errors.join('; '));

export const IsIanaTimeZone = (options?: ValidationOptions) =>
  fromParser('isIanaTimeZone', (value) => firstError(validateTimeZone(value)), options);

export const IsLocalDate = (options?: ValidationOptions) =>
  fromParser('isLocalDate', (value) => firstError(parseLocalDate(value)), options);

export const IsRecurrence = (options?: ValidationOptions) =>
  fromParser('isRecurrence', (value) => firstError(parseRecurrence(value)), options);

// BCP 47 (en, en-US, zh-Hant-TW): the one check of tags, shared with localized text.
export const IsLocale = (options?: ValidationOptions) => fromParser('isLocale', localeProblem, options);

export const LOCALIZED_TEXT = 'isLocalizedText';

/**
 * A string, or a map by BCP 47 tag of 1–50 strings (`title.de`), each within
 * the limits. Its message has one `path: problem` line per offending variant:
 * fieldErrors turns each into an error of its own path.
 */
export function IsLocalizedText(limits: { minLength: number; maxLength: number }, options?: ValidationOptions) {
  return (object: object, propertyName: string | symbol) => {
    const messages = new WeakMap<object, string>();
    registerDecorator({
      name: LOCALIZED_TEXT,
      target: object.constructor,
      propertyName: String(propertyName),
      options,
      validator: {
        validate(value: unknown, args: ValidationArguments) {
          const { errors } = normalizeLocalizedText(args.property, value, limits);
          if (errors.length > 0) messages.set(args.object, errors.map((e) => `${e.path}\t${e.message}`).join('\n'));
          return errors.length === 0;
        },
        defaultMessage(args: ValidationArguments) {
          return messages.get(args.object) ?? `${args.property}\t${args.property} is invalid`;
        },
      },
    });
  };
}

/** The OpenAPI schema of localized text: a string, or an object of strings by BCP 47 tag. */
export function localizedTextSchema(maxLength: number, example: Record<string, string>, minLength = 0) {
  return {
    oneOf: [
      { type: 'string', ...(minLength > 0 ? { minLength } : {}), maxLength },
      {
        type: 'object',
        additionalProperties: { type: 'string', ...(minLength > 0 ? { minLength } : {}), maxLength },
        minProperties: 1,
        maxProperties: MAX_LOCALIZED_VARIANTS,
        example,
        description: "one text per BCP 47 language tag; each device gets its locale, else its user's, else defaultLocale",
      },
    ],
  };
}

/**
 * A localized `title` (required, 1 to `maxLength` characters a variant) or
 * `body` (optional, nullable, up to `maxLength`): validation and OpenAPI.
 */
export function LocalizedTextProperty(field: 'title' | 'body', maxLength: number, example: string, localized: Record<string, string>) {
  const schema = { example, ...localizedTextSchema(maxLength, localized, field === 'title' ? 1 : 0) };
  return field === 'title'
    ? applyDecorators(ApiProperty(schema), IsLocalizedText({ minLength: 1, maxLength }))
    : applyDecorators(
        ApiPropertyOptional({ ...schema, nullable: true }),
        IsOptional(),
        ValidateIf((_o, v) => v !== null),
        IsLocalizedText({ minLength: 0, maxLength }),
      );
}

/** `defaultLocale`: the language of a localized title and body shown when none fits. */
export const DefaultLocaleProperty = () =>
  applyDecorators(
    ApiPropertyOptional({
      example: 'en',
      description:
        'the language of title and body shown when none fits the device or user; must be a key of each map; default: the first key of title',
    }),
    Omittable(),
    IsLocale(),
  );

const INSTALLATION_ID = /^[A-Za-z0-9._:-]{1,128}$/;

/** Installation ids come from the app: 1–128 letters, digits, `.`, `_`, `:` or `-`. */
@Injectable()
export class InstallationIdPipe implements PipeTransform<string, string> {
  transform(value: string): string {
    if (!INSTALLATION_ID.test(value)) {
      throw DomainError.invalid([
        { path: 'installationId', message: 'installationId must be 1 to 128 letters, digits, ".", "_", ":" or "-"' },
      ]);
    }
    return value;
  }
}
