import { Body, Controller, Delete, Get, HttpCode, Param, Put, Res } from '@nestjs/common';
import { ApiBearerAuth, ApiCreatedResponse, ApiNoContentResponse, ApiOkResponse, ApiTags } from '@nestjs/swagger';
import type { Response } from 'express';
import { devicePushToken } from '@nudge/push';
import { DevicesService } from '@nudge/users';
import { Auth } from '../auth/auth.decorators.js';
import type { TokenClaims } from '../auth/jwt.js';
import { ApiProblems } from '../http/api-problems.decorator.js';
import { InstallationIdPipe } from '../http/validators.js';
import { DeviceDto, DeviceListDto, PutDeviceDto } from './device.dto.js';

@ApiTags('devices')
@ApiBearerAuth()
@ApiProblems(400, 401, 404, 409)
@Controller('v1/me/devices')
export class DevicesController {
  constructor(private readonly devices: DevicesService) {}

  @Put(':installationId')
  @ApiOkResponse({ type: DeviceDto, description: 'the device, updated' })
  @ApiCreatedResponse({ type: DeviceDto, description: 'the device, registered' })
  async put(
    @Auth() auth: TokenClaims,
    @Param('installationId', InstallationIdPipe) installationId: string,
    @Body() body: PutDeviceDto,
    @Res({ passthrough: true }) res: Response,
  ): Promise<DeviceDto> {
    const pushToken = devicePushToken(body.platform, body.pushToken);
    const { device, created } = await this.devices.put(auth.userId, installationId, { ...body, pushToken });
    res.status(created ? 201 : 200);
    return DeviceDto.from(device);
  }

  @Get()
  @ApiOkResponse({ type: DeviceListDto })
  async list(@Auth() auth: TokenClaims): Promise<DeviceListDto> {
    return { devices: (await this.devices.list(auth.userId)).map(DeviceDto.from) };
  }

  @Delete(':installationId')
  @HttpCode(204)
  @ApiNoContentResponse({ description: 'the device removed' })
  async delete(@Auth() auth: TokenClaims, @Param('installationId', InstallationIdPipe) installationId: string): Promise<void> {
    await this.devices.delete(auth.userId, installationId);
  }
}
