import { eng } from 'stopword'

/** English stop words from the maintained `stopword` list (lowercase). */
export const STOP_WORDS: ReadonlySet<string> = new Set(eng)
