/** The migrated template database of the test cluster (global-setup.ts). */
export const TEMPLATE = 'gk_template'
