/** Rank statistics for the quality bench: average ranks for ties, as the usual definitions use. */

/** 1-based ranks, ties sharing their average rank. */
export function ranks(xs: readonly number[]): number[] {
  const order = xs.map((x, i) => [x, i] as const).sort((a, b) => a[0] - b[0])
  const out = new Array<number>(xs.length)
  for (let i = 0; i < order.length;) {
    let j = i
    while (j + 1 < order.length && order[j + 1]![0] === order[i]![0]) j++
    for (let k = i; k <= j; k++) out[order[k]![1]] = (i + j) / 2 + 1
    i = j + 1
  }
  return out
}

export function pearson(x: readonly number[], y: readonly number[]): number {
  const n = x.length
  const mx = x.reduce((a, b) => a + b, 0) / n
  const my = y.reduce((a, b) => a + b, 0) / n
  let sxy = 0
  let sxx = 0
  let syy = 0
  for (let i = 0; i < n; i++) {
    const dx = x[i]! - mx
    const dy = y[i]! - my
    sxy += dx * dy
    sxx += dx * dx
    syy += dy * dy
  }
  return sxy / Math.sqrt(sxx * syy)
}

export function spearman(x: readonly number[], y: readonly number[]): number {
  return pearson(ranks(x), ranks(y))
}

/** ROC-AUC via the Mann–Whitney U statistic (ties count one half). */
export function rocAuc(scores: readonly number[], positive: readonly boolean[]): number {
  const r = ranks(scores)
  let nPos = 0
  let rankSum = 0
  positive.forEach((p, i) => {
    if (p) {
      nPos++
      rankSum += r[i]!
    }
  })
  const nNeg = positive.length - nPos
  return (rankSum - (nPos * (nPos + 1)) / 2) / (nPos * nNeg)
}
