import { Column, CreateDateColumn, Entity, PrimaryColumn, UpdateDateColumn } from 'typeorm';

@Entity('users')
export class UserEntity {
  @PrimaryColumn({ type: 'text' })
  id: string;

  @Column({ name: 'time_zone', type: 'text' })
  timeZone: string;

  @Column({ type: 'text', nullable: true })
  locale: string | null;

  @Column({ name: 'quiet_hours_start', type: 'text', nullable: true })
  quietHoursStart: string | null;

  @Column({ name: 'quiet_hours_end', type: 'text', nullable: true })
  quietHoursEnd: string | null;

  @Column({ name: 'follow_device_time_zone', type: 'boolean', default: true })
  followDeviceTimeZone: boolean;

  @Column({ name: 'notifications_enabled', type: 'boolean', default: true })
  notificationsEnabled: boolean;

  @CreateDateColumn({ name: 'created_at', type: 'timestamptz' })
  createdAt: Date;

  @UpdateDateColumn({ name: 'updated_at', type: 'timestamptz' })
  updatedAt: Date;
}
