/**
 * The request examples of the session operations (what Swagger UI's "Try it out" sends) follow one
 * task, so running them in order gives aligned steps, no drift and a recitation that names the
 * goal and the plan step in progress.
 */
export const EXAMPLE_GOAL = 'Limit the public search API to 100 requests per minute per API key'
export const EXAMPLE_PLAN = [
  'Measure the current request rates per API key from the access logs',
  'Add a token-bucket rate limiter keyed by API key to the search API middleware',
  'Load-test the search API at 150 requests per minute with one key and check the 429 responses',
]
