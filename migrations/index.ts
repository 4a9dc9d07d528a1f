// Every migration, in order. Listed by hand rather than globbed so that the
// same list works compiled (dist/) and from TypeScript (tests, tsx).
import { UsersDevicesReminders1764662400000 } from './1764662400000-UsersDevicesReminders.js';
import { JobQueue1764662500000 } from './1764662500000-JobQueue.js';
import { PushDeliveries1764662600000 } from './1764662600000-PushDeliveries.js';
import { ReminderOccurrences1764662700000 } from './1764662700000-ReminderOccurrences.js';
import { OccurrenceStates1764662800000 } from './1764662800000-OccurrenceStates.js';
import { JobQueueControls1764662900000 } from './1764662900000-JobQueueControls.js';
import { DeliveryHealthIndex1764663800000 } from './1764663800000-DeliveryHealthIndex.js';
import { JobClaimIndex1764663900000 } from './1764663900000-JobClaimIndex.js';
import { CategoryPreferences1764664000000 } from './1764664000000-CategoryPreferences.js';
import { Events1764664100000 } from './1764664100000-Events.js';
import { JobTraceContext1764664200000 } from './1764664200000-JobTraceContext.js';
import { WebAndExpoPlatforms1764664300000 } from './1764664300000-WebAndExpoPlatforms.js';
import { PushFields1764664400000 } from './1764664400000-PushFields.js';
import { LocalizedText1764664500000 } from './1764664500000-LocalizedText.js';
import { SimulatedPayload1764664600000 } from './1764664600000-SimulatedPayload.js';
import { PushPacing1764664700000 } from './1764664700000-PushPacing.js';
import { Apps1764664800000 } from './1764664800000-Apps.js';
import { IdempotencyAnswerVerbatim1764664900000 } from './1764664900000-IdempotencyAnswerVerbatim.js';
import { JobDeadCounts1764665000000 } from './1764665000000-JobDeadCounts.js';
import { JobFinishedByStatus1764665100000 } from './1764665100000-JobFinishedByStatus.js';
import { JobSuccessCounts1764665200000 } from './1764665200000-JobSuccessCounts.js';
import { OccurrenceTimeZone1764665300000 } from './1764665300000-OccurrenceTimeZone.js';

export const migrations = [
  UsersDevicesReminders1764662400000,
  JobQueue1764662500000,
  PushDeliveries1764662600000,
  ReminderOccurrences1764662700000,
  OccurrenceStates1764662800000,
  JobQueueControls1764662900000,
  DeliveryHealthIndex1764663800000,
  JobClaimIndex1764663900000,
  CategoryPreferences1764664000000,
  Events1764664100000,
  JobTraceContext1764664200000,
  WebAndExpoPlatforms1764664300000,
  PushFields1764664400000,
  LocalizedText1764664500000,
  SimulatedPayload1764664600000,
  PushPacing1764664700000,
  Apps1764664800000,
  IdempotencyAnswerVerbatim1764664900000,
  JobDeadCounts1764665000000,
  JobFinishedByStatus1764665100000,
  JobSuccessCounts1764665200000,
  OccurrenceTimeZone1764665300000,
];
