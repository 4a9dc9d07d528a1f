import { Column, CreateDateColumn, Entity, PrimaryGeneratedColumn, UpdateDateColumn } from 'typeorm';

export type Platform = 'ios' | 'android' | 'web' | 'expo';

@Entity('devices')
export class DeviceEntity {
  @PrimaryGeneratedColumn('uuid')
  id: string;

  @Column({ name: 'user_id', type: 'text' })
  userId: string;

  @Column({ name: 'installation_id', type: 'text' })
  installationId: string;

  @Column({ type: 'text' })
  platform: Platform;

  @Column({ name: 'push_token', type: 'text' })
  pushToken: string;

  @Column({ type: 'boolean', default: true })
  active: boolean;

  @Column({ name: 'deactivated_reason', type: 'text', nullable: true })
  deactivatedReason: string | null;

  @Column({ name: 'deactivated_at', type: 'timestamptz', nullable: true })
  deactivatedAt: Date | null;

  @Column({ name: 'time_zone', type: 'text', nullable: true })
  timeZone: string | null;

  @Column({ name: 'app_version', type: 'text', nullable: true })
  appVersion: string | null;

  @Column({ type: 'text', nullable: true })
  locale: string | null;

  /** NULL: the default app (the environment's push credentials). */
  @Column({ name: 'app_id', type: 'text', nullable: true })
  appId: string | null;

  @Column({ name: 'last_seen_at', type: 'timestamptz' })
  lastSeenAt: Date;

  @CreateDateColumn({ name: 'created_at', type: 'timestamptz' })
  createdAt: Date;

  @UpdateDateColumn({ name: 'updated_at', type: 'timestamptz' })
  updatedAt: Date;
}
