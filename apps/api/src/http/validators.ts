import { type PipeTransform, Injectable } from '@nestjs/common';
import { registerDecorator, ValidateIf, type ValidationArguments, type ValidationOptions } from 'class-validator';
import { DomainError } from '@nudge/config';
import { parseLocalDate, parseRecurrence, validateTimeZone } from '@nudge/scheduling';

export const LOCAL_TIME_PATTERN = /^([01]\d|2[0-3]):[0-5]\d$/;

/**
 * A field that may be left out but is never null (unlike @IsOptional, which
 * lets null through to a NOT NULL column: a 500 instead of a 400).
 */
export const Omittable = () => ValidateIf((_object, value) => value !== undefined);

/**
 * A class-validator rule backed by a scheduling parser, so that the API refuses
 * exactly what the scheduler cannot compute, with the parser's own message.
 */
function fromParser(name: string, check: (value: string) => string | undefined, options?: ValidationOptions) {
  return (object: object, propertyName: string) => {
    const messages = new WeakMap<object, string>();
    registerDecorator({
      name,
      target: object.constructor,
      propertyName,
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

// BCP 47 shape (en, en-US, zh-Hant-TW); the language tag is checked by Intl.
export const IsLocale = (options?: ValidationOptions) =>
  fromParser(
    'isLocale',
    (value) => {
      if (value.length > 35 || !/^[A-Za-z]{2,3}(-[A-Za-z0-9]{2,8})*$/.test(value)) return 'must be a BCP 47 language tag such as en-US';
      try {
        Intl.getCanonicalLocales(value);
        return undefined;
      } catch {
        return 'must be a BCP 47 language tag such as en-US';
      }
    },
    options,
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
