export * from './reminder.entity.js';
export * from './reminder-plan.js';
export * from './reminder.view.js';
export * from './reminders.module.js';
export * from './reminders.service.js';
export * from './send-reminder.handler.js';
export * from './reminder-sweep.js';
