/**
 * InjectionBudgetManager: several context injections (budget warnings, reminders,
 * the goal reminder, the recitation, ...) compete for one token budget; the more important ones
 * (lower priority number) go first, the rest are cut or dropped. The budget holds on real
 * (o200k) token counts, and content is cut to its cap.
 */
import { countTokens } from '../similarity/text.js'
import { cachedClip, cachedTokenCount, clipToTokens } from './token-fit.js'

/** Priorities of the known slots; lower is more important. */
export const DEFAULT_INJECTION_PRIORITIES: Readonly<Record<string, number>> = {
  budget_warning: 0,
  timeout_wrapup: 0,
  doom_loop: 1,
  failure_context: 2,
  learning_context: 2,
  recitation: 3,
  exploration_nudge: 4,
  phase_guidance: 4,
}
export const UNKNOWN_INJECTION_PRIORITY = 5
export const DEFAULT_INJECTION_BUDGET = 1500
/** A part that does not fit is cut to the remaining budget only when more than this remains. */
export const MIN_TRUNCATION_TOKENS = 100
export const BUDGET_TRUNCATION_MARKER = '\n...(truncated for context budget)'

export interface InjectionBudgetConfig {
  max_total_tokens?: number
  /** Per-name priorities; they win over a proposal's own priority and the defaults. */
  priorities?: Record<string, number>
}

export interface InjectionProposal {
  name: string
  priority?: number
  content: string
  /** Cap for this part alone; longer content is cut to it first. */
  max_tokens?: number
}

export interface AcceptedInjection {
  name: string
  priority: number
  content: string
  tokens: number
  truncated: boolean
}

export interface AllocationResult {
  accepted: AcceptedInjection[]
  dropped: string[]
  stats: { proposed_tokens: number; accepted_tokens: number; dropped_count: number; truncated_count: number }
}

export interface InjectionBudgetJSON {
  max_total_tokens: number
  priorities: Record<string, number>
}

export class InjectionBudgetManager {
  private maxTokens: number
  private readonly priorities: Record<string, number>

  constructor(config: InjectionBudgetConfig = {}) {
    this.maxTokens = checkBudget(config.max_total_tokens ?? DEFAULT_INJECTION_BUDGET)
    this.priorities = { ...config.priorities }
  }

  get maxTotalTokens(): number {
    return this.maxTokens
  }

  setMaxTokens(max: number): void {
    this.maxTokens = checkBudget(max)
  }

  /** Configured priority, else the proposal's own, else the default table, else 5. */
  getPriority(name: string, own?: number): number {
    return this.priorities[name] ?? own ?? DEFAULT_INJECTION_PRIORITIES[name] ?? UNKNOWN_INJECTION_PRIORITY
  }

  /**
   * Accepts parts by priority (stable: equal priorities keep their order) while they fit; the
   * first part that does not fit is cut to the remainder when more than 100 tokens remain (and
   * then the budget is spent), otherwise dropped. The accepted parts' token counts never sum
   * above the budget; joining them with a separator costs that separator's tokens on top.
   */
  allocate(proposals: readonly InjectionProposal[]): AllocationResult {
    const ranked = proposals.map((p) => ({ ...p, priority: this.getPriority(p.name, p.priority) })).sort((a, b) => a.priority - b.priority)
    const accepted: AcceptedInjection[] = []
    const dropped: string[] = []
    let remaining = this.maxTokens
    let proposed = 0
    let truncatedCount = 0
    for (const p of ranked) {
      let content = p.content
      let tokens = cachedTokenCount(content)
      proposed += tokens
      let truncated = false
      if (p.max_tokens !== undefined && tokens > p.max_tokens) {
        content = clipToTokens(content, Math.max(0, Math.floor(p.max_tokens)), BUDGET_TRUNCATION_MARKER)
        tokens = countTokens(content)
        truncated = true
      }
      if (tokens > remaining) {
        if (remaining <= MIN_TRUNCATION_TOKENS) {
          dropped.push(p.name)
          continue
        }
        // Memoized: turn after turn the same reminder is cut at the same remaining budget.
        content = cachedClip(content, remaining, BUDGET_TRUNCATION_MARKER)
        tokens = cachedTokenCount(content)
        truncated = true
        remaining = 0
      } else {
        remaining -= tokens
      }
      if (truncated) truncatedCount++
      accepted.push({ name: p.name, priority: p.priority, content, tokens, truncated })
    }
    return {
      accepted,
      dropped,
      stats: {
        proposed_tokens: proposed,
        accepted_tokens: accepted.reduce((s, a) => s + a.tokens, 0),
        dropped_count: dropped.length,
        truncated_count: truncatedCount,
      },
    }
  }

  toJSON(): InjectionBudgetJSON {
    return { max_total_tokens: this.maxTokens, priorities: { ...this.priorities } }
  }

  static fromJSON(json: InjectionBudgetJSON): InjectionBudgetManager {
    return new InjectionBudgetManager(json)
  }
}

function checkBudget(n: number): number {
  if (!(Number.isInteger(n) && n >= 0)) throw new RangeError('max_total_tokens must be an integer >= 0')
  return n
}
