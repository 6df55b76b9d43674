import type Database from 'better-sqlite3'
import { createRequire } from 'node:module'

/**
 * The better-sqlite3 release this Node.js loads. Release 12 wraps its objects in node::ObjectWrap,
 * which from Node.js 24.19 on registers an environment cleanup hook in the addon's own code: built
 * against those headers (any build from source, where the prebuilt binary cannot be fetched), it
 * aborts the process (`Assertion failed: (env) != nullptr`) when the GC finalizes a statement
 * outside JavaScript; test/http/sessions.test.ts did, every run. Release 13 (Node-API, its binaries
 * inside the npm package) has no such hook but needs Node.js 22: on 20 it segfaults. So Node.js 20
 * loads 12 (`better-sqlite3`) and later lines 13 (`better-sqlite3-13`), until Node.js 20 is dropped.
 */
const require = createRequire(import.meta.url)
const NODE_MAJOR = Number(process.versions.node.split('.')[0])

/** The driver module's path (the checkpoint worker loads the same one). */
export const DRIVER = NODE_MAJOR >= 22 ? require.resolve('better-sqlite3-13') : require.resolve('better-sqlite3')
export const Sqlite = require(DRIVER) as typeof Database
