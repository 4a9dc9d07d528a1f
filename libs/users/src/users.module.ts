import { Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { DeviceEntity } from './device.entity.js';
import { DevicesService } from './devices.service.js';
import { PreferencesService } from './preferences.service.js';
import { UserEntity } from './user.entity.js';
import { UserEvents } from './user-events.js';
import { UsersService } from './users.service.js';

@Module({
  imports: [TypeOrmModule.forFeature([UserEntity, DeviceEntity])],
  providers: [UsersService, DevicesService, PreferencesService, UserEvents],
  exports: [UsersService, DevicesService, PreferencesService, UserEvents],
})
export class UsersModule {}
