/**
 * The handler, run `ms` after each request arrives: a fake that answers in
 * the 20–50 ms a real push service takes over the internet (the clients
 * bench). Unset or 0: at once, as the tests want. The request's body waits,
 * paused, until the handler attaches its listeners.
 */
export function answeringAfter<A extends unknown[]>(ms: number | undefined, handler: (...args: A) => void): (...args: A) => void {
  if (!ms) return handler;
  return (...args) => void setTimeout(() => handler(...args), ms);
}
