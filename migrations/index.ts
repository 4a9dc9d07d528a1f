// Every migration, in order. Listed by hand rather than globbed so that the
// same list works compiled (dist/) and from TypeScript (tests, tsx).
import { UsersDevicesReminders1764662400000 } from './1764662400000-UsersDevicesReminders.js';

export const migrations = [UsersDevicesReminders1764662400000];
