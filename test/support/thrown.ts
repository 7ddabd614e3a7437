/** The error a call throws (fails the test when it returns), for asserting its class, message and details. */
export function thrown(fn: () => unknown): Error {
  try {
    fn();
  } catch (error) {
    return error as Error;
  }
  throw new Error('expected the call to throw');
}
