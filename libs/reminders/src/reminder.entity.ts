import type { PushOptions } from '@nudge/push';
import { Column, CreateDateColumn, Entity, PrimaryGeneratedColumn, UpdateDateColumn } from 'typeorm';

@Entity('reminders')
export class ReminderEntity {
  @PrimaryGeneratedColumn('uuid')
  id: string;

  @Column({ name: 'user_id', type: 'text' })
  userId: string;

  @Column({ type: 'text' })
  title: string;

  @Column({ type: 'text', nullable: true })
  body: string | null;

  /** The title by BCP 47 tag; null: the plain `title`. `title` then holds the default language's text. */
  @Column({ name: 'title_i18n', type: 'jsonb', nullable: true })
  titleI18n: Record<string, string> | null;

  /** The body by BCP 47 tag; null: the plain `body` (which then holds the default language's text). */
  @Column({ name: 'body_i18n', type: 'jsonb', nullable: true })
  bodyI18n: Record<string, string> | null;

  /** The language shown when none fits the device or user; null when title and body are plain strings. */
  @Column({ name: 'default_locale', type: 'text', nullable: true })
  defaultLocale: string | null;

  @Column({ name: 'local_time', type: 'text' })
  localTime: string;

  /** Null: the reminder follows the user's zone, also after travel. */
  @Column({ name: 'time_zone', type: 'text', nullable: true })
  timeZone: string | null;

  /** Null: a one-off reminder (one occurrence, on startDate). */
  @Column({ type: 'text', nullable: true })
  recurrence: string | null;

  @Column({ name: 'start_date', type: 'text' })
  startDate: string;

  @Column({ type: 'boolean', default: true })
  enabled: boolean;

  /** Breaks through quiet hours (and, on iOS, Focus as a time-sensitive notification). */
  @Column({ name: 'time_sensitive', type: 'boolean', default: false })
  timeSensitive: boolean;

  /** The notification category (lower case) whose user preference governs it; null: the user's settings alone. */
  @Column({ type: 'text', nullable: true })
  category: string | null;

  @Column({ type: 'jsonb', nullable: true })
  data: Record<string, unknown> | null;

  /** sound, badge, threadId, imageUrl, androidChannelId, interruptionLevel (passive, active), silent: only those set. */
  @Column({ name: 'push_options', type: 'jsonb', default: () => `'{}'` })
  pushOptions: PushOptions;

  @Column({ type: 'integer', default: 1 })
  version: number;

  @CreateDateColumn({ name: 'created_at', type: 'timestamptz' })
  createdAt: Date;

  @UpdateDateColumn({ name: 'updated_at', type: 'timestamptz' })
  updatedAt: Date;
}
