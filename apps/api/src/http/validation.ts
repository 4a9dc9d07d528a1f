import { ValidationPipe, type ArgumentMetadata, type ValidationError } from '@nestjs/common';
import { DomainError, type FieldError } from '@nudge/config';
import { LOCALIZED_TEXT } from './validators.js';

/**
 * The rules that say what kind of value a field takes. A value of the wrong kind (or none) breaks
 * them and, alongside, every rule about the value's size or form ("badge must not be greater than
 * 99999" for `"3"`): those say nothing about that value, so only the kind is reported.
 */
const KIND_RULES = new Set(['isString', 'isInt', 'isNumber', 'isBoolean', 'isObject', 'isArray']);

/** Flattens class-validator's tree into `{path, message}` pairs, one per broken rule. */
export function fieldErrors(errors: ValidationError[], parent = ''): FieldError[] {
  return errors.flatMap((error) => {
    const path = parent ? `${parent}.${error.property}` : error.property;
    // A nested section that is not an object breaks IsObject and ValidateNested's own
    // rule ("must be either object or array") at once: the first says it.
    const broken = Object.entries(error.constraints ?? {});
    const kinds = broken.filter(([rule]) => KIND_RULES.has(rule));
    const rules = kinds.length > 0 ? kinds : broken.length > 1 ? broken.filter(([rule]) => rule !== 'nestedValidation') : broken;
    const own = rules.flatMap(([rule, message]) =>
      // Localized text: one `path<TAB>message` line per offending variant (`title.de`).
      rule === LOCALIZED_TEXT
        ? message.split('\n').map((line) => {
            const [own, text] = line.split('\t');
            return { path: parent ? `${parent}.${own}` : own!, message: text ?? line };
          })
        : [{ path, message }],
    );
    return [...own, ...fieldErrors(error.children ?? [], path)];
  });
}

/**
 * DTO validation for every route: unknown fields are refused, every bad field
 * is listed in the 400, and a body that is not a JSON object is a 400 too.
 */
export function validationPipe(): ValidationPipe {
  return new BodyValidationPipe({
    whitelist: true,
    forbidNonWhitelisted: true,
    transform: true,
    forbidUnknownValues: true,
    validationError: { target: false, value: false },
    exceptionFactory: (errors) => DomainError.invalid(fieldErrors(errors)),
  });
}

/**
 * A DTO body must be a JSON object: an array (which Express's JSON parser lets through) would be
 * checked as an object with fields `0`, `1`… and refused as "property 0 should not exist".
 */
class BodyValidationPipe extends ValidationPipe {
  override transform(value: unknown, metadata: ArgumentMetadata): Promise<unknown> {
    if (metadata.type === 'body' && Array.isArray(value) && metadata.metatype && this.toValidate(metadata)) {
      throw DomainError.invalid(
        [{ path: '', message: 'the body must be a JSON object, not an array' }],
        'The request body must be a JSON object.',
      );
    }
    return super.transform(value, metadata);
  }
}
