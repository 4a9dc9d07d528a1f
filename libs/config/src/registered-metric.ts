/**
 * The registry's metric of that name, else the one `create` makes (and
 * registers): one per registry, so that the API and a worker in one process,
 * or two modules, share a metric instead of failing to register it twice.
 */
export function registeredMetric<T>(registry: { getSingleMetric(name: string): unknown }, name: string, create: () => T): T {
  return (registry.getSingleMetric(name) as T | undefined) ?? create();
}
