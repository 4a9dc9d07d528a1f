import { Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { DeviceEntity } from './device.entity.js';
import { DevicesService } from './devices.service.js';
import { UserEntity } from './user.entity.js';
import { UserEvents } from './user-events.js';
import { UsersService } from './users.service.js';

@Module({
  imports: [TypeOrmModule.forFeature([UserEntity, DeviceEntity])],
  providers: [UsersService, DevicesService, UserEvents],
  exports: [UsersService, DevicesService, UserEvents],
})
export class UsersModule {}
