import { Body, Controller, Delete, Get, HttpCode, Param, Put, Res } from '@nestjs/common';
import { ApiBearerAuth, ApiCreatedResponse, ApiNoContentResponse, ApiOkResponse, ApiParam, ApiTags } from '@nestjs/swagger';
import type { Response } from 'express';
import { PreferencesService } from '@nudge/users';
import { Auth } from '../auth/auth.decorators.js';
import type { TokenClaims } from '../auth/jwt.js';
import { ApiProblems } from '../http/api-problems.decorator.js';
import { PreferenceDto, PreferenceListDto, PutPreferenceDto } from './preference.dto.js';

const CATEGORY_PARAM = {
  name: 'category',
  example: 'medication',
  description: '1–64 letters, digits, ".", "_", ":" or "-"; case-insensitive (stored lower case)',
};

@ApiTags('users')
@ApiBearerAuth()
@ApiProblems(400, 401, 404, 409)
@Controller('v1/me/preferences')
export class PreferencesController {
  constructor(private readonly preferences: PreferencesService) {}

  @Put(':category')
  @ApiParam(CATEGORY_PARAM)
  @ApiOkResponse({ type: PreferenceDto, description: 'the preference, replaced' })
  @ApiCreatedResponse({ type: PreferenceDto, description: 'the preference, created' })
  async put(
    @Auth() auth: TokenClaims,
    @Param('category') category: string,
    @Body() body: PutPreferenceDto,
    @Res({ passthrough: true }) res: Response,
  ): Promise<PreferenceDto> {
    const { preference, created } = await this.preferences.put(auth.userId, category, body);
    res.status(created ? 201 : 200);
    return PreferenceDto.from(preference);
  }

  @Get()
  @ApiOkResponse({ type: PreferenceListDto })
  async list(@Auth() auth: TokenClaims): Promise<PreferenceListDto> {
    return { preferences: (await this.preferences.list(auth.userId)).map(PreferenceDto.from) };
  }

  @Delete(':category')
  @HttpCode(204)
  @ApiParam(CATEGORY_PARAM)
  @ApiNoContentResponse({ description: "the preference removed: the user's settings alone govern the category again" })
  async delete(@Auth() auth: TokenClaims, @Param('category') category: string): Promise<void> {
    await this.preferences.delete(auth.userId, category);
  }
}
