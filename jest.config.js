/** One jest run for every package and the cross-package suites; tests run against the TypeScript sources. */
/** @type {import('jest').Config} */
module.exports = {
  testEnvironment: 'node',
  roots: ['<rootDir>/packages', '<rootDir>/test', '<rootDir>/bench'],
  testMatch: ['**/test/**/*.test.ts'],
  testPathIgnorePatterns: ['/node_modules/', '/dist/'],
  transform: {
    '^.+\\.ts$': ['ts-jest', { tsconfig: '<rootDir>/tsconfig.test.json' }],
    '^.+\\.lua$': '<rootDir>/scripts/jest-text-transform.js',
  },
  moduleFileExtensions: ['ts', 'js', 'json', 'lua'],
  moduleNameMapper: {
    '^@sluice/core/store$': '<rootDir>/packages/core/src/store-index.ts',
    '^@sluice/core/internal$': '<rootDir>/packages/core/src/internal-index.ts',
    '^@sluice/fetch/hono$': '<rootDir>/packages/fetch/src/hono.ts',
    '^@sluice/express/compat$': '<rootDir>/packages/express/src/compat/index.ts',
    '^@sluice/(core|redis|express|koa|fastify|client|fetch)$': '<rootDir>/packages/$1/src/index.ts',
  },
  reporters: ['default', '<rootDir>/scripts/jest-summary-reporter.js'],
  maxWorkers: 2,
  testTimeout: 30000,
}
