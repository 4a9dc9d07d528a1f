import { Body, Controller, HttpCode, Post } from '@nestjs/common';
import { ApiAcceptedResponse, ApiBearerAuth, ApiTags } from '@nestjs/swagger';
import type { EntityManager } from 'typeorm';
import { TokenCleanupService } from '@nudge/push';
import { RequireScope } from '../auth/auth.decorators.js';
import { ApiProblems } from '../http/api-problems.decorator.js';
import { Idempotent, RequestTransaction } from '../http/idempotency.interceptor.js';
import { TokenCleanupAcceptedDto, TokenCleanupDto } from './token-cleanup.dto.js';

@ApiTags('ops')
@ApiBearerAuth()
@ApiProblems(400, 401, 403, 409)
@RequireScope('ops')
@Controller('v1/ops')
export class TokenCleanupController {
  constructor(private readonly cleanup: TokenCleanupService) {}

  @Post('token-cleanup')
  @HttpCode(202)
  @Idempotent()
  @ApiAcceptedResponse({
    type: TokenCleanupAcceptedDto,
    description: 'removes devices the providers rejected and devices unseen for inactiveDays',
  })
  cleanUp(@Body() body: TokenCleanupDto, @RequestTransaction() tx?: EntityManager): Promise<TokenCleanupAcceptedDto> {
    return this.cleanup.request(body.inactiveDays, tx);
  }
}
