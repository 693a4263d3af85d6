/**
 * The Fastify versions the plugins register with (fastify-plugin's `fastify` range, which Fastify checks against its
 * own version at `register`): 4.23, where `request.routeOptions.config` arrived, and later. The conformance suites
 * run on Fastify 4 and 5.
 */
export const FASTIFY_VERSIONS = '^4.23.0 || 5.x'
