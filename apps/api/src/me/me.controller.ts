import { Body, Controller, Delete, Get, HttpCode, Patch, Put, Res } from '@nestjs/common';
import { ApiBearerAuth, ApiCreatedResponse, ApiNoContentResponse, ApiOkResponse, ApiTags } from '@nestjs/swagger';
import type { Response } from 'express';
import { UsersService } from '@nudge/users';
import { Auth } from '../auth/auth.decorators.js';
import type { TokenClaims } from '../auth/jwt.js';
import { ApiProblems } from '../http/api-problems.decorator.js';
import { PatchProfileDto, ProfileDto, PutProfileDto } from './profile.dto.js';

@ApiTags('users')
@ApiBearerAuth()
@ApiProblems(400, 401, 404)
@Controller('v1/me')
export class MeController {
  constructor(private readonly users: UsersService) {}

  @Put()
  @ApiOkResponse({ type: ProfileDto, description: 'the profile, updated' })
  @ApiCreatedResponse({ type: ProfileDto, description: 'the profile, created' })
  async put(@Auth() auth: TokenClaims, @Body() body: PutProfileDto, @Res({ passthrough: true }) res: Response): Promise<ProfileDto> {
    const { user, created } = await this.users.put(auth.userId, body);
    res.status(created ? 201 : 200);
    return ProfileDto.from(user);
  }

  @Get()
  @ApiOkResponse({ type: ProfileDto })
  async get(@Auth() auth: TokenClaims): Promise<ProfileDto> {
    return ProfileDto.from(await this.users.get(auth.userId));
  }

  @Patch()
  @ApiOkResponse({ type: ProfileDto })
  async patch(@Auth() auth: TokenClaims, @Body() body: PatchProfileDto): Promise<ProfileDto> {
    return ProfileDto.from(await this.users.patch(auth.userId, body));
  }

  @Delete()
  @HttpCode(204)
  @ApiNoContentResponse({ description: 'the user, devices and reminders removed; pending jobs cancelled' })
  async delete(@Auth() auth: TokenClaims): Promise<void> {
    await this.users.delete(auth.userId);
  }
}
