import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { IsInt, IsOptional, Max, Min } from 'class-validator';

export class TokenCleanupDto {
  @ApiPropertyOptional({ default: 60, minimum: 1, maximum: 3650, description: 'also remove devices not seen for this many days' })
  @IsOptional()
  @IsInt()
  @Min(1)
  @Max(3650)
  inactiveDays?: number;
}

export class TokenCleanupAcceptedDto {
  @ApiProperty({ example: '42', description: 'the token_cleanup job; its log line and nudge_tokens_removed_total say how many went' })
  jobId: string;
}
