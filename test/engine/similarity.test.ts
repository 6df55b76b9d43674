import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { bagCosine, cosineToText, EVIDENCE_SCALE, goalBag, liftLowEvidence, NEUTRAL_SIMILARITY, weightedBag, wordWeight } from '../../src/engine/similarity/enhanced-similarity.js'
import { normalizeText } from '../../src/engine/similarity/text-normalize.js'
import { createScorer, SIMILARITY_MODES, textSimilarity } from '../../src/engine/similarity/goal-scorer.js'

const GOAL = 'Cancel reservation PEP4E0 for the flight from Seattle to Boston and request a refund'

describe('enhanced similarity', () => {
  it('is deterministic and stays in [0, 1] for any text', () => {
    const scorer = createScorer(GOAL, 'enhanced')
    fc.assert(
      fc.property(fc.string({ maxLength: 300 }), (text) => {
        const a = scorer.similarity(text)
        expect(a).toBeGreaterThanOrEqual(0)
        expect(a).toBeLessThanOrEqual(1)
        expect(createScorer(GOAL, 'enhanced').similarity(text)).toBe(a)
      }),
    )
  })

  it('gives an identical text the highest score', () => {
    fc.assert(
      fc.property(fc.array(fc.constantFrom('cancel', 'flight', 'seattle', 'refund', 'hotel', 'weather', 'pep4e0', 'boston', 'baggage'), { minLength: 1, maxLength: 8 }), (words) => {
        const text = words.join(' ')
        expect(createScorer(GOAL, 'enhanced').similarity(GOAL)).toBeCloseTo(1, 12)
        expect(createScorer(GOAL, 'enhanced').similarity(text)).toBeLessThanOrEqual(1 + 1e-12)
      }),
    )
  })

  it('ranks on-topic steps above off-topic ones', () => {
    const scorer = createScorer(GOAL, 'enhanced')
    const onTopic = [
      'cancel_reservation({"reservation_id": "PEP4E0"})',
      'Your Seattle to Boston flight has been cancelled; the refund will reach your card in 5 days.',
      'Looking up the refund policy for cancelled flights out of Seattle.',
    ]
    const offTopic = [
      'Writing unit tests for the CSV parser in the billing module.',
      'The weather in Madrid is sunny with a high of 31 degrees.',
      'Summarised the quarterly marketing report for the sales team.',
    ]
    const worstOn = Math.min(...onTopic.map((t) => scorer.similarity(t)))
    const bestOff = Math.max(...offTopic.map((t) => scorer.similarity(t)))
    expect(worstOn).toBeGreaterThan(bestOff)
  })

  it('weights a rare shared word above a common one', () => {
    expect(wordWeight('seattle')).toBeGreaterThan(wordWeight('flight'))
    expect(wordWeight('pep4e0')).toBeGreaterThan(wordWeight('seattle'))
    const scorer = createScorer('Book a flight to Seattle', 'enhanced')
    expect(scorer.similarity('hotel in Seattle')).toBeGreaterThan(scorer.similarity('flight to a hotel'))
  })

  it('meets inflected forms and ISO dates', () => {
    const scorer = createScorer('Rebook the cancelled flight on May 20th', 'enhanced')
    expect(scorer.similarity('cancelling flights')).toBeGreaterThan(0)
    expect(normalizeText('on 2024-05-20 and the 3rd')).toBe('on 2024 may 20 and the 3')
    expect(scorer.similarity('search_direct_flight({"date": "2024-05-20"})')).toBeGreaterThan(scorer.similarity('search_direct_flight({"date": "2024-06-11"})'))
  })

  it('returns 0.5 (no signal) when either side has no content words', () => {
    expect(createScorer(GOAL, 'enhanced').similarity('the and of it')).toBe(0.5)
    expect(createScorer('', 'enhanced').similarity('cancel the flight')).toBe(0.5)
  })

  it('uses context to recognise plan steps the goal does not name, at reduced weight', () => {
    const goal = 'Migrate the user database to PostgreSQL'
    const plan = ['Export tables with pg_dump', 'Rewrite the SQLite queries', 'Run integration tests']
    const step = 'Ran pg_dump on the production server'
    expect(cosineToText(goalBag(goal), step, 0.5)).toBe(0) // shares no goal word
    const withPlan = createScorer(goal, 'enhanced', { context: plan })
    expect(withPlan.similarity(step)).toBeGreaterThan(createScorer(goal, 'enhanced').similarity(step))
    expect(cosineToText(goalBag(goal, plan), step, 0.5)).toBeGreaterThan(0)
    // A goal word keeps its full weight even when the plan repeats it.
    expect(goalBag(goal, plan).weights.get('databas')).toBe(goalBag(goal).weights.get('databas'))
    // Without context the scorer is exactly the goal-only scorer.
    expect(createScorer(goal, 'enhanced', { context: [] }).similarity('postgresql database')).toBe(createScorer(goal, 'enhanced').similarity('postgresql database'))
  })

  it('textSimilarity is symmetric for enhanced and matches a goal scorer', () => {
    const a = 'A man is playing a guitar on stage.'
    const b = 'Someone plays the guitar in a concert.'
    expect(textSimilarity('enhanced', a, b)).toBeCloseTo(textSimilarity('enhanced', b, a), 12)
    const both = (createScorer(a, 'enhanced').similarity(b) + createScorer(b, 'enhanced').similarity(a)) / 2
    expect(textSimilarity('enhanced', a, b)).toBe(both)
  })

  it('ignores the JSON keys of a tool call but keeps its name and values', () => {
    expect(normalizeText('get_reservation_details({"reservation_id": "PEP4E0", "flight_number": 2})')).toBe('get_reservation_details({: "pep4e0", : 2})')
    const scorer = createScorer('Look up the passenger details of my Seattle trip', 'enhanced')
    // "passenger" only as a key: no signal; as the function name or a value it counts.
    const keyOnly = scorer.similarity('lookup({"passengers": "PX9", "trip_id": "QQ1"})')
    expect(keyOnly).toBe(scorer.similarity('lookup(PX9, QQ1)'))
    expect(scorer.similarity('get_passengers({"id": "PX9"})')).toBeGreaterThan(keyOnly)
    expect(scorer.similarity('lookup({"city": "Seattle"})')).toBeGreaterThan(keyOnly)
    // Prose with a colon but no quoted key is untouched.
    expect(normalizeText('Passenger details: Seattle')).toBe('passenger details: seattle')
  })

  it('weights a word the goal repeats by 1 + ln(tf), the checked text as a set', () => {
    const bag = goalBag('Refund the ticket, a full refund, nothing but a refund')
    expect(bag.weights.get('refund')).toBeCloseTo(wordWeight('refund') * (1 + Math.log(3)), 12)
    expect(bag.weights.get('ticket')).toBeCloseTo(wordWeight('ticket'), 12)
    const scorer = createScorer('Refund the ticket, a full refund, nothing but a refund', 'enhanced')
    expect(scorer.similarity('refund refund refund')).toBe(scorer.similarity('refund'))
    // The goal's focus word outranks a word it names once, beyond their IDF difference.
    const once = createScorer('Refund the ticket', 'enhanced')
    const ratio = (sc: typeof scorer) => sc.similarity('refund') / sc.similarity('ticket')
    expect(ratio(scorer)).toBeGreaterThan(ratio(once))
  })
})

describe('the low-evidence lift', () => {
  it('pulls a low cosine toward the neutral value, the more the shorter the text, and keeps higher ones', () => {
    fc.assert(
      fc.property(fc.double({ min: 0, max: 1, noNaN: true }), fc.double({ min: 1, max: 1e4, noNaN: true }), (cos, n) => {
        const lifted = liftLowEvidence(cos, n)
        if (cos >= NEUTRAL_SIMILARITY) expect(lifted).toBe(cos)
        else {
          expect(lifted).toBeGreaterThanOrEqual(cos)
          expect(lifted).toBeLessThanOrEqual(NEUTRAL_SIMILARITY)
          expect(liftLowEvidence(cos, n * 2)).toBeLessThanOrEqual(lifted) // more evidence, less lift
        }
      }),
    )
    expect(liftLowEvidence(0, EVIDENCE_SCALE)).toBeCloseTo(NEUTRAL_SIMILARITY / 2, 12)
  })

  it('flags a long text that shares nothing with the goal more than a short one', () => {
    const scorer = createScorer(GOAL, 'enhanced')
    const short = scorer.similarity('Thanks, have a great day!')
    const long = scorer.similarity('Summarised the quarterly marketing report for the sales team and scheduled the product launch webinar with the design agency')
    expect(long).toBeLessThan(short)
    expect(short).toBeLessThan(NEUTRAL_SIMILARITY)
    expect(scorer.similarity('cancel_reservation({"reservation_id": "PEP4E0"})')).toBeGreaterThan(short)
  })
})

describe('createScorer modes', () => {
  it('keeps lexical exactly its formula', () => {
    const scorer = createScorer('deploy the payment service', 'lexical')
    expect(scorer.similarity('deploy the payment service')).toBe(1)
    expect(scorer.similarity('')).toBe(0.5)
    expect(scorer.mode).toBe('lexical')
  })

  it('every mode scores identical texts at least as high as any other text', () => {
    for (const mode of SIMILARITY_MODES) {
      const scorer = createScorer(GOAL, mode)
      fc.assert(fc.property(fc.string({ minLength: 1, maxLength: 120 }), (t) => scorer.similarity(t) <= scorer.similarity(GOAL) + 1e-12))
    }
  })
})

describe('the one-pass check path', () => {
  it('equals the cosine of the two bags for any text', () => {
    const bag = goalBag(GOAL, ['refund to the original card'])
    fc.assert(
      fc.property(fc.string({ maxLength: 200 }), fc.constantFrom('', ' Seattle refund PEP4E0 2024-05-20 cancelled'), (text, extra) => {
        const t = text + extra
        expect(cosineToText(bag, t, 0.5)).toBeCloseTo(bagCosine(bag, weightedBag(t), 0.5), 12)
      }),
    )
  })
})
