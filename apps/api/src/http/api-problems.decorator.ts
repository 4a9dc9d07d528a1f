import { applyDecorators } from '@nestjs/common';
import { ApiExtraModels, ApiProperty, ApiPropertyOptional, ApiResponse, getSchemaPath } from '@nestjs/swagger';

class FieldErrorDto {
  @ApiProperty({ example: 'timeZone' }) path: string;
  @ApiProperty() message: string;
}

/** RFC 9457 problem details, as every error response carries them. */
export class ProblemDto {
  @ApiProperty({ example: 'https://nudge.dev/problems/bad-request' }) type: string;
  @ApiProperty({ example: 'Bad Request' }) title: string;
  @ApiProperty({ example: 400 }) status: number;
  @ApiProperty() detail: string;
  @ApiPropertyOptional() instance?: string;
  @ApiPropertyOptional({ type: [FieldErrorDto] }) errors?: FieldErrorDto[];
}

const DESCRIPTIONS: Record<number, string> = {
  400: 'invalid input: every bad field is listed in `errors`; nothing was written',
  401: 'no bearer token, or an invalid or expired one',
  403: 'the token lacks the scope this endpoint needs',
  404: 'not found (or owned by another user)',
  409: 'conflict with the current state',
  413: 'body over 64 KiB',
  429: 'rate limited; see Retry-After',
  503: 'a dependency is missing or unreachable (the detail says which); nothing was written',
};

/** Documents the problem+json answers an endpoint can give. */
export function ApiProblems(...statuses: number[]) {
  return applyDecorators(
    ApiExtraModels(ProblemDto),
    ...[...statuses, 413, 429].map((status) =>
      ApiResponse({
        status,
        description: DESCRIPTIONS[status],
        content: { 'application/problem+json': { schema: { $ref: getSchemaPath(ProblemDto) } } },
      }),
    ),
  );
}
